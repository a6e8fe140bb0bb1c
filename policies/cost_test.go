package policies

import (
	"strings"
	"testing"

	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/topology"
)

// TestCalibratedCost works the newidle cost of an 8-CPU SMT machine (4
// cores of 2 threads: SMT domains of 2 CPUs in 2 groups, one MC domain of
// 8 CPUs in 4 groups) by hand: a recording whose fast remote wakeups take
// 30 us against the e-mail's 6 us gives scale 5; an MC pass is
// 5 x (300 + 4 x 10 + (8 + 2) x 10 + 2 x 20) = 2400 ns, and the all-pinned
// walk redoes once per CPU outside the local core: 6 passes, 14.4 us.
func TestCalibratedCost(t *testing.T) {
	topo, err := topology.Preset("smt2-4")
	if err != nil {
		t.Fatal(err)
	}
	q := make(replay.DelayDist, 20)
	for i := range q {
		q[i] = 30_000 + int64(i)*1000 // the 10th percentile (q[2]) is 32 us
	}
	q[2] = 30_000
	w := &replay.Workload{WakeDelays: replay.WakeDelays{Remote: 400, RemoteQ: q}}
	c, note := CalibratedCost(w, topo)
	if c.Scale != 5 {
		t.Errorf("scale %v, want 5 (30 us / 6 us)", c.Scale)
	}
	for _, want := range []string{"scale 5.00", "SMT (2 CPUs, 2 groups) 1.9 us a pass", "MC (8 CPUs, 4 groups) 2.4 us a pass, 14.4 us an all-pinned walk of 6 passes"} {
		if !strings.Contains(note.Detail, want) {
			t.Errorf("note %q lacks %q", note.Detail, want)
		}
	}
	// SMT: 5 x (300 + 2 x 10 + (2 + 1) x 10 + 40) = 1950 ns, printed 1.9.
	// Too few wakeups: scale 1. A fast machine: never below 1.
	if c, note := CalibratedCost(&replay.Workload{WakeDelays: replay.WakeDelays{Remote: 7}}, topo); c.Scale != 1 || !strings.Contains(note.Detail, "too few") {
		t.Errorf("no evidence: scale %v (%s), want 1", c.Scale, note.Detail)
	}
	for i := range q {
		q[i] = 1000
	}
	if c, _ := CalibratedCost(w, topo); c.Scale != 1 {
		t.Errorf("1 us wakeups: scale %v, want 1 (bounded)", c.Scale)
	}
	if got := (CostModel{Scale: 2.5}).scaled(1000); got != 2500 {
		t.Errorf("scaled(1000) at 2.5 = %d", got)
	}
}

// TestCalibratedCostPingpong pins the scale on the emulated SMT guest
// (fixtures/real/qemu-smt8-pingpong): its fastest tenth of remote wakeups
// onto idle CPUs takes about 29 us, some 5 times the e-mail's 6 us.
func TestCalibratedCostPingpong(t *testing.T) {
	tl, topo := loadReal(t, "../fixtures/real/qemu-smt8-pingpong/trace.txt.zst")
	w, err := replay.Extract(tl, topo)
	if err != nil {
		t.Fatal(err)
	}
	c, note := CalibratedCost(w, topo)
	if c.Scale < 4 || c.Scale > 6 {
		t.Errorf("scale %.2f, want 4..6 (%s)", c.Scale, note.Detail)
	}
	if !strings.Contains(note.Detail, "MC (8 CPUs, 4 groups)") {
		t.Errorf("note %q does not price the recorded MC domain", note.Detail)
	}
}
