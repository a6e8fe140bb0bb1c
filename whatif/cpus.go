package whatif

import (
	"fmt"
	"slices"
	"strings"

	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// restrictCPUs turns a workload extracted on topo into one for the machine
// restricted to the CPUs of keep, as if the others were taken offline
// before the workload started (echo 0 > /sys/devices/system/cpu/cpuN/online):
//
//   - the kept CPUs are renumbered 0..k-1 in order (CPU i of the what-if is
//     the i-th kept CPU of the recording); their core, cluster, package and
//     node ids, capacity and speed stay; the sched domains are derived from
//     them, as the kernel rebuilds its domains on hotplug (the recording's
//     own domain listing described the whole machine);
//   - an allowed set is cut to the kept CPUs; a set left empty (a task
//     pinned only to removed CPUs) becomes every kept CPU, as
//     select_fallback_rq moves a task whose CPUs all went offline ("no
//     longer affine to cpuN"); a per-CPU kthread of a removed CPU is moved
//     the same way and is no longer per-CPU (the workqueue unbinds a
//     kworker on hotplug; the others are parked in the kernel, a replay
//     keeps their work);
//   - a task queued at its start, or a timer or interrupt raised, on a
//     removed CPU starts or is raised where the policy places it (the
//     task's last CPU);
//   - gaps of the recording on removed CPUs are dropped.
//
// It returns the new topology and notes on what was moved.
func restrictCPUs(w *replay.Workload, topo *topology.Topology, keep topology.CPUSet) (*topology.Topology, []string, error) {
	n := topo.NCPU()
	if keep.Max() >= n {
		return nil, nil, fmt.Errorf("cpus=%s: the recording has CPUs 0-%d", keep, n-1)
	}
	newID := make([]int, n)
	var kept []int
	for i := range n {
		newID[i] = -1
		if keep.Has(i) {
			newID[i] = len(kept)
			kept = append(kept, i)
		}
	}
	if len(kept) == n {
		return nil, nil, fmt.Errorf("cpus=%s: every CPU of the recording; a CPU what-if needs fewer", keep)
	}
	nt := topo.Clone()
	nt.CPUs = nil
	for _, old := range kept {
		c := topo.CPUs[old]
		c.ID = len(nt.CPUs)
		nt.CPUs = append(nt.CPUs, c)
	}
	nt.Kernel = nil
	nt.Source = topo.Source + " restricted to CPUs " + keep.String()
	nt.Notes = append(nt.Notes, fmt.Sprintf("CPUs %s of the recording kept, renumbered 0-%d; sched domains derived from them", keep, len(kept)-1))
	if err := nt.Validate(); err != nil {
		return nil, nil, fmt.Errorf("cpus=%s: %v", keep, err)
	}
	all := topology.CPURange(0, len(kept)-1)
	mapSet := func(s topology.CPUSet) (topology.CPUSet, bool) {
		if s.Empty() {
			return s, false // every CPU
		}
		var out topology.CPUSet
		for _, c := range s.CPUs() {
			if c < n && newID[c] >= 0 {
				out = out.With(newID[c])
			}
		}
		if out.Empty() {
			return all, true
		}
		return out, false
	}
	mapCPU := func(c int) int {
		if c < 0 || c >= n {
			return -1
		}
		return newID[c]
	}
	var moved []string
	for i := range w.Tasks {
		t := &w.Tasks[i]
		var m bool
		t.CPUs, m = mapSet(t.CPUs)
		for j := range t.Affinity {
			var mj bool
			t.Affinity[j].CPUs, mj = mapSet(t.Affinity[j].CPUs)
			m = m || mj
		}
		if m {
			t.PerCPUKthread = false
			moved = append(moved, fmt.Sprintf("%s-%d", t.Comm, t.TID))
		}
		t.CPU = mapCPU(t.CPU)
		for j := range t.Segments {
			t.Segments[j].Wake.CPU = mapCPU(t.Segments[j].Wake.CPU)
		}
	}
	if len(w.Speed) == n {
		sp := make([]int, 0, len(kept))
		for _, old := range kept {
			sp = append(sp, w.Speed[old])
		}
		w.Speed = sp
	}
	gaps := w.Unobserved[:0:0]
	for _, g := range w.Unobserved {
		if c := mapCPU(int(g.CPU)); c >= 0 {
			g.CPU = timeline.CPU(c)
			gaps = append(gaps, g)
		}
	}
	w.Unobserved = gaps
	notes := []string{fmt.Sprintf("cpus=%s: the machine restricted to recorded CPUs %s (what-if CPUs 0-%d), as if the others were offline from the start",
		keep, keep, len(kept)-1)}
	if len(moved) > 0 {
		slices.Sort(moved)
		list := moved
		if len(list) > 8 {
			list = append(slices.Clone(list[:8]), fmt.Sprintf("and %d more", len(moved)-8))
		}
		notes = append(notes, fmt.Sprintf("cpus=%s: %d tasks allowed only on removed CPUs were moved to every kept CPU, as select_fallback_rq does: %s",
			keep, len(moved), strings.Join(list, ", ")))
	}
	w.Assumptions = append(w.Assumptions, replay.Assumption{Name: "cpus", Detail: strings.Join(notes, "; ")})
	return nt, notes, nil
}
