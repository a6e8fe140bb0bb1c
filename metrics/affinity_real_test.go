package metrics

import (
	"testing"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/timeline"
)

// TestPingpongAffinity: on the pinned ping-pong capture (seed 003's test:
// a pair pinned to CPUs 0 and 2, two hogs pinned to each other CPU; the
// masks are known from the workload, affinity.txt) the inference finds
// every pinned thread's CPU, and idle-with-runnable under the inferred
// masks is within 2x of its value under the true ones. Assumed free, every
// hog's wait counts while CPUs 0 and 2 idle: 97% of idle time.
func TestPingpongAffinity(t *testing.T) {
	const dir = "qemu-smt8-pingpong/"
	ld := loadFixture(t, dir+"trace.txt.zst")
	tl := ld.Timeline
	topo := fixtureTopology(t, ld)
	rules, err := affinity.ReadRules(fixtureDir + dir + "affinity.txt")
	if err != nil {
		t.Fatal(err)
	}
	truth, err := affinity.Build(tl, affinity.BuildOptions{Rules: rules, NoInfer: true})
	if err != nil {
		t.Fatal(err)
	}
	inferred, err := affinity.Build(tl, affinity.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	free, err := affinity.Build(tl, affinity.BuildOptions{NoInfer: true})
	if err != nil {
		t.Fatal(err)
	}
	// Every thread the file pins ends up on its CPU in the inference.
	for _, r := range rules {
		if r.PID == timeline.NoTID || r.CPUs.Count() != 1 {
			continue
		}
		for id := range tl.Tasks {
			if tl.Tasks[id].PID != r.PID {
				continue
			}
			got, src := inferred.At(timeline.TaskID(id), tl.End)
			if src != affinity.Inferred || got.String() != r.CPUs.String() {
				t.Errorf("pid %d at the end: inferred %q (%s), want %s", r.PID, got, src, r.CPUs)
			}
		}
	}
	idleWith := func(m *affinity.Map) int64 {
		a, err := Analyze(tl, Options{Topology: topo, Affinity: m})
		if err != nil {
			t.Fatal(err)
		}
		return a.Idle.IdleWithRunnableNs
	}
	tr, inf, fr := idleWith(truth), idleWith(inferred), idleWith(free)
	t.Logf("idle with runnable: true masks %.1f ms, inferred %.1f ms, assumed free %.1f ms", float64(tr)/1e6, float64(inf)/1e6, float64(fr)/1e6)
	if tr <= 0 || inf > 2*tr || 2*inf < tr {
		t.Errorf("inferred %d ns, not within 2x of %d ns under the true masks", inf, tr)
	}
	if fr < 10*tr {
		t.Errorf("assumed free gives %d ns, want far more than the true masks' %d ns (the hogs' waits count)", fr, tr)
	}
}
