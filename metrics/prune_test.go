package metrics

import (
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// withPruneEvery runs f with pruneEvery set to n.
func withPruneEvery(n int, f func()) {
	old := pruneEvery
	pruneEvery = n
	defer func() { pruneEvery = old }()
	f()
}

// analysisDiffs names the parts of two analyses (and accountings) that
// differ.
func analysisDiffs(a *Analysis, acc *Accounting, b *Analysis, bacc *Accounting) []string {
	var out []string
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"Window", b.Window, a.Window}, {"Latency", b.Latency, a.Latency}, {"Idle", b.Idle, a.Idle},
		{"Misplaced", b.Misplaced, a.Misplaced}, {"Notes", b.Notes, a.Notes}, {"UnobservedNs", b.UnobservedNs, a.UnobservedNs},
		{"Walk", b.Walk, a.Walk}, {"CPUStrips", b.CPUStrips(), a.CPUStrips()}, {"Accounting", bacc, acc},
	} {
		if !reflect.DeepEqual(f.got, f.want) {
			out = append(out, f.name)
		}
	}
	return out
}

// TestPruneSameAsKeep: deciding during the walk which runs and waits the
// sweeps will read gives the analysis of a collector that keeps them all,
// deciding after every run and wait or every 64, on real traces with SMT siblings,
// asymmetric capacities, lost events and clipped buffers, core-scheduling
// cookies and perf script text; with a filter and a minimum window too.
// On the busy traces most runs and waits are dropped.
func TestPruneSameAsKeep(t *testing.T) {
	for _, tc := range []struct {
		rel  string
		busy bool // most segments overlap no idle time
	}{
		{"qemu-smt8-hackbench/trace.txt.zst", false},
		{"qemu-juno-asym/trace.txt.zst", false},
		{"ftrace-pipe-lost/trace.txt.gz", false},
		{"ftrace-overflow/trace.txt.gz", false},
		{"ftrace-oracle-busy/trace.txt.zst", true},
		{"ftrace-hackbench-cyclictest/trace.txt.gz", true},
		{"perf-hackbench-cyclictest/perf-script.txt.gz", false},
		{"../seeds/004/before/run-2/trace.txt.zst", false},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			ld := loadFixture(t, tc.rel)
			topo := fixtureTopology(t, ld)
			for _, opts := range []Options{
				{Topology: topo},
				{Topology: topo, Filter: Filter{Comms: []string{"hackbench", "sched-messaging", "stress-ng"}}, MinWindow: 20_000},
			} {
				sameDecidingEvery(t, ld.Timeline, opts)
			}
			kept, total := prunedShare(t, ld.Timeline, topo)
			t.Logf("kept %d of %d", kept, total)
			if !tc.busy {
				return
			}
			if total == 0 || kept*4 > total {
				t.Errorf("%d of %d runs and waits kept: want under a quarter on a busy trace", kept, total)
			}
		})
	}
}

// sameDecidingEvery checks that the analysis of tl deciding during the
// walk after every run and wait, and every 64, is that of deciding none.
func sameDecidingEvery(t *testing.T, tl *timeline.Timeline, opts Options) {
	t.Helper()
	var want *Analysis
	var wacc *Accounting
	withPruneEvery(0, func() { want, wacc = mustAnalyzeAccount(t, tl, opts) })
	for _, every := range []int{1, 64} {
		var got *Analysis
		var gacc *Accounting
		withPruneEvery(every, func() { got, gacc = mustAnalyzeAccount(t, tl, opts) })
		if d := analysisDiffs(want, wacc, got, gacc); d != nil {
			t.Errorf("every %d, filter %v: %v differ", every, opts.Filter, d)
		}
	}
}

func mustAnalyzeAccount(t *testing.T, tl *timeline.Timeline, opts Options) (*Analysis, *Accounting) {
	t.Helper()
	a, acc, err := AnalyzeAccount(tl, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a, acc
}

// prunedShare walks tl into a collector and returns how many runs and
// waits it holds at the walk's end, and how many one that decides nothing
// holds.
func prunedShare(t *testing.T, tl *timeline.Timeline, topo *topology.Topology) (kept, total int) {
	held := func(every int) (n int) {
		withPruneEvery(every, func() {
			_, c, err := prepare(tl, Options{Topology: topo})
			if err != nil {
				t.Fatal(err)
			}
			Feed(tl, c)
			n = len(c.runs) + len(c.waits)
		})
		return n
	}
	return held(1024), held(0)
}
