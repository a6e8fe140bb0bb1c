package timeline

import (
	"reflect"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/topology"
)

// TestRenumberCPUs: every CPU number a timeline holds moves, and nothing
// else: a waking's target, a migration's two CPUs, cpu_idle's cpu_id, an
// exit's argument (not a CPU) left alone, a target of -1 kept.
func TestRenumberCPUs(t *testing.T) {
	tl := &Timeline{
		NCPU:     2,
		Times:    []Time{1, 2, 3, 4, 5},
		CPUs:     []int16{0, 1, 1, 0, 1},
		Kinds:    []Kind{KindWaking, KindMigrate, KindIdle, KindWakeup, KindExit},
		Args:     []int32{1, 0, 2, -1, 1},
		Args2:    []int32{0, 1, 1, 0, 1},
		Gaps:     []Gap{{CPU: 1, Start: 2, End: 3}},
		CPUFirst: []Time{1, 2},
		CPULast:  []Time{4, 5},
		Affinity: []AffinityChange{{TID: 7, CPUs: topology.NewCPUSet(1)}, {TID: 8}},
		Topology: topology.Symmetric(2),
	}
	tl.incs = &incsCache{}
	tl.keepInconsistencies([]Inconsistency{{Time: 4, CPU: 0}})
	if err := tl.RenumberCPUs([]int{3, 4095}, 4096); err != nil {
		t.Fatal(err)
	}
	want := struct {
		CPUs        []int16
		Args, Args2 []int32
	}{
		CPUs:  []int16{3, 4095, 4095, 3, 4095},
		Args:  []int32{4095, 3, 2, -1, 1},   // waking target, migrate dest; idle state, unknown target, exit arg unchanged
		Args2: []int32{0, 4095, 4095, 0, 1}, // migrate orig, idle cpu_id; the rest not CPUs
	}
	if !reflect.DeepEqual(tl.CPUs, want.CPUs) || !reflect.DeepEqual(tl.Args, want.Args) || !reflect.DeepEqual(tl.Args2, want.Args2) {
		t.Errorf("columns CPUs %v Args %v Args2 %v, want %v %v %v", tl.CPUs, tl.Args, tl.Args2, want.CPUs, want.Args, want.Args2)
	}
	if tl.NCPU != 4096 || len(tl.CPUFirst) != 4096 || len(tl.CPULast) != 4096 {
		t.Fatalf("NCPU %d, %d first and %d last events, want 4096", tl.NCPU, len(tl.CPUFirst), len(tl.CPULast))
	}
	if tl.CPUFirst[3] != 1 || tl.CPULast[3] != 4 || tl.CPUFirst[4095] != 2 || tl.CPULast[4095] != 5 || tl.CPUFirst[0] != NoTime || tl.CPULast[1] != NoTime {
		t.Errorf("first/last: CPU 3 %d..%d, CPU 4095 %d..%d, CPU 0 first %d, CPU 1 last %d", tl.CPUFirst[3], tl.CPULast[3], tl.CPUFirst[4095], tl.CPULast[4095], tl.CPUFirst[0], tl.CPULast[1])
	}
	if tl.Gaps[0].CPU != 4095 || tl.Inconsistencies()[0].CPU != 3 {
		t.Errorf("gap on CPU %d, inconsistency on CPU %d; want 4095 and 3", tl.Gaps[0].CPU, tl.Inconsistencies()[0].CPU)
	}
	if got := tl.Affinity[0].CPUs.String(); got != "4095" || !tl.Affinity[1].CPUs.Empty() {
		t.Errorf("affinity %q and %q, want 4095 and every CPU (empty)", got, tl.Affinity[1].CPUs)
	}
	if tl.Topology != nil {
		t.Errorf("the dense machine's topology kept")
	}

	for _, c := range []struct {
		ids  []int
		ncpu int
		err  string
	}{
		{[]int{0}, 8, "renumbering 1 CPUs, the timeline has 2"},
		{[]int{4, 4}, 8, "CPU 1 renumbered 4: want ascending"},
		{[]int{0, 8}, 8, "CPU 1 renumbered 8: want ascending CPUs below 8"},
		{[]int{-1, 2}, 8, "CPU 0 renumbered -1"},
	} {
		tl := &Timeline{NCPU: 2}
		if err := tl.RenumberCPUs(c.ids, c.ncpu); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("RenumberCPUs(%v, %d): %v, want %q", c.ids, c.ncpu, err, c.err)
		}
	}
}
