package timeline

import (
	"fmt"

	"github.com/schedlens/schedlens/topology"
)

// RenumberCPUs moves every CPU number of tl from i to ids[i] and makes the
// timeline ncpu CPUs wide: the CPU column, the CPUs that sched_waking,
// sched_wakeup(_new), sched_migrate_task and cpu_idle events carry in
// their arguments, gaps, inconsistencies, each CPU's first and last event
// and the affinity sets. It serves a run made on a machine of dense CPU
// indices (the CPUs a trace shows, renumbered 0..k-1) to be reported under
// the trace's own CPU numbers. ids must be ascending (so that CPU order,
// and with it every tie-break by CPU, is kept), cover tl.NCPU CPUs and stay
// below ncpu. The timeline's Topology, which described the dense machine,
// is cleared.
func (tl *Timeline) RenumberCPUs(ids []int, ncpu int) error {
	if len(ids) < tl.NCPU {
		return fmt.Errorf("timeline: renumbering %d CPUs, the timeline has %d", len(ids), tl.NCPU)
	}
	for i, id := range ids {
		if id < 0 || id >= ncpu || id > topology.MaxCPUs-1 || (i > 0 && id <= ids[i-1]) {
			return fmt.Errorf("timeline: CPU %d renumbered %d: want ascending CPUs below %d", i, id, min(ncpu, topology.MaxCPUs))
		}
	}
	if len(ids) == 0 {
		return nil
	}
	to := func(c int64) (int64, bool) {
		if c < 0 || c >= int64(len(ids)) {
			return c, false
		}
		return int64(ids[c]), true
	}
	tl.Inconsistencies() // found before anything moves
	for i, c := range tl.CPUs {
		n, _ := to(int64(c))
		tl.CPUs[i] = int16(n)
		switch tl.Kinds[i] {
		case KindWaking, KindWakeup, KindWakeupNew:
			if n, ok := to(int64(tl.Args[i])); ok {
				tl.Args[i] = int32(n)
			}
		case KindMigrate:
			if n, ok := to(int64(tl.Args[i])); ok {
				tl.Args[i] = int32(n)
			}
			if n, ok := to(int64(tl.Args2[i])); ok {
				tl.Args2[i] = int32(n)
			}
		case KindIdle:
			if n, ok := to(int64(tl.Args2[i])); ok {
				tl.Args2[i] = int32(n)
			}
		}
	}
	for i := range tl.Gaps {
		n, _ := to(int64(tl.Gaps[i].CPU))
		tl.Gaps[i].CPU = CPU(n)
	}
	// Found on the CPUs as they were, then moved.
	incs := tl.Inconsistencies()
	for i := range incs {
		n, _ := to(int64(incs[i].CPU))
		incs[i].CPU = CPU(n)
	}
	first, last := make([]Time, ncpu), make([]Time, ncpu)
	for c := range ncpu {
		first[c], last[c] = NoTime, NoTime
	}
	for c := range min(len(tl.CPUFirst), len(ids)) {
		first[ids[c]], last[ids[c]] = tl.CPUFirst[c], tl.CPULast[c]
	}
	tl.CPUFirst, tl.CPULast = first, last
	for i, a := range tl.Affinity {
		var s topology.CPUSet
		for _, c := range a.CPUs.CPUs() {
			if c < len(ids) {
				s = s.With(ids[c])
			}
		}
		tl.Affinity[i].CPUs = s
	}
	tl.NCPU = ncpu
	tl.Topology = nil
	return nil
}
