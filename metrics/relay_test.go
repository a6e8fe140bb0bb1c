package metrics

import (
	"math"
	"runtime"
	"testing"

	"github.com/schedlens/schedlens/affinity"
)

// TestFeedRelaySameAsInline: a walk whose first sink takes its spans on a
// goroutine of its own (spanRelay) gives the analysis, accounting and
// affinity inference of one that feeds every sink in turn, on real traces
// (SMT, big.LITTLE, lost events, perf.data), including a trace whose last
// chunk of spans is not full.
func TestFeedRelaySameAsInline(t *testing.T) {
	defer func(old int) { relayMin = old }(relayMin)
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	for _, rel := range []string{
		"qemu-smt8-pingpong/trace.txt.zst",
		"qemu-juno-asym/trace.txt.zst",
		"ftrace-pipe-lost/trace.txt.gz",
		"perf-hackbench-cyclictest/perf.data.zst",
	} {
		run := func(min int) (*Analysis, *Accounting, *affinity.Map) {
			relayMin = min
			ld := loadFresh(t, rel)
			return analyzeInferring(t, ld.Timeline, Options{Topology: fixtureTopology(t, ld)})
		}
		a, acc, m := run(math.MaxInt)
		b, bacc, bm := run(0)
		if d := analysisDiffs(a, acc, b, bacc); d != nil {
			t.Errorf("%s: %v differ", rel, d)
		}
		if len(bm.Inferences) != len(m.Inferences) {
			t.Errorf("%s: %d inferences relayed, %d inline", rel, len(bm.Inferences), len(m.Inferences))
		}
	}
}
