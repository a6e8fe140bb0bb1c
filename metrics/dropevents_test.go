package metrics

import "testing"

// TestAnalyzeDropEvents: an analysis that drops the timeline's events once
// its walk has ended gives the analysis of one that keeps them, on real
// traces with SMT siblings, asymmetric capacities, lost events and
// core-scheduling cookies; with accounting and a filter too.
func TestAnalyzeDropEvents(t *testing.T) {
	for _, rel := range []string{
		"real/qemu-smt8-hackbench/trace.txt.zst",
		"real/qemu-juno-asym/trace.txt.zst",
		"real/ftrace-pipe-lost/trace.txt.gz",
		"seeds/004/before/run-2/trace.txt.zst",
	} {
		t.Run(rel, func(t *testing.T) {
			for _, flt := range []Filter{{}, {Comms: []string{"hackbench", "sched-messaging"}}} {
				keep, drop := loadFresh(t, "../"+rel), loadFresh(t, "../"+rel)
				topo := fixtureTopology(t, keep)
				a, acc, err := AnalyzeAccount(keep.Timeline, Options{Topology: topo, Filter: flt})
				if err != nil {
					t.Fatal(err)
				}
				b, bacc, err := AnalyzeAccount(drop.Timeline, Options{Topology: topo, Filter: flt, DropEvents: true})
				if err != nil {
					t.Fatal(err)
				}
				if !drop.Timeline.Summary() || keep.Timeline.Summary() {
					t.Fatal("DropEvents: events kept, or dropped without it")
				}
				if len(flt.Comms) == 0 && len(a.Latency.Samples) == 0 {
					t.Fatal("no samples")
				}
				if d := analysisDiffs(a, acc, b, bacc); d != nil {
					t.Errorf("filter %v: %v differ", flt, d)
				}
			}
		})
	}
}
