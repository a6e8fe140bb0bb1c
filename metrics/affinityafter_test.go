package metrics

import (
	"testing"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/timeline"
)

// TestAffinityAfterOneWalk: an analysis whose affinity inference is fed by
// its own walk (Also) and made into the map once the walk has ended
// (AffinityAfter) gives the analysis of one handed the map that a walk of
// the inference's own made first (affinity.Build), on real traces where
// the inference pins tasks, with events dropped and kept.
func TestAffinityAfterOneWalk(t *testing.T) {
	for _, rel := range []string{
		"qemu-smt8-pingpong/trace.txt.zst",
		"qemu-smt8-hackbench/trace.txt.zst",
		"qemu-juno-asym/trace.txt.zst",
	} {
		t.Run(rel, func(t *testing.T) {
			for _, drop := range []bool{false, true} {
				want, one := loadFresh(t, rel), loadFresh(t, rel)
				topo := fixtureTopology(t, want)
				m, err := affinity.Build(want.Timeline, affinity.BuildOptions{})
				if err != nil {
					t.Fatal(err)
				}
				a, acc, err := AnalyzeAccount(want.Timeline, Options{Topology: topo, Affinity: m, DropEvents: drop})
				if err != nil {
					t.Fatal(err)
				}
				tl := one.Timeline
				b, bacc, got := analyzeInferring(t, tl, Options{Topology: topo, DropEvents: drop})
				if rel == "qemu-smt8-pingpong/trace.txt.zst" && len(got.Inferences) == 0 {
					t.Fatal("no inference: the test shows nothing")
				}
				if len(got.Inferences) != len(m.Inferences) {
					t.Errorf("drop %v: %d inferences, want %d", drop, len(got.Inferences), len(m.Inferences))
				}
				for id := range tl.Tasks {
					g, gs := got.At(timeline.TaskID(id), tl.End)
					w, ws := m.At(timeline.TaskID(id), tl.End)
					if g.String() != w.String() || gs != ws {
						t.Errorf("drop %v: task %d allowed %s (%s), want %s (%s)", drop, id, g, gs, w, ws)
					}
				}
				if d := analysisDiffs(a, acc, b, bacc); d != nil {
					t.Errorf("drop %v: %v differ", drop, d)
				}
			}
		})
	}
}
