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
	if keep.Count() == n {
		return nil, nil, fmt.Errorf("cpus=%s: every CPU of the recording; a CPU what-if needs fewer", keep)
	}
	nt, kept, moved, err := renumberCPUs(w, topo, keep)
	if err != nil {
		return nil, nil, fmt.Errorf("cpus=%s: %v", keep, err)
	}
	nt.Source = topo.Source + " restricted to CPUs " + keep.String()
	nt.Notes = append(nt.Notes, fmt.Sprintf("CPUs %s of the recording kept, renumbered 0-%d; sched domains derived from them", keep, len(kept)-1))
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

// renumberCPUs is the renumbering restrictCPUs describes: the CPUs of keep
// become CPUs 0..k-1 of the returned topology (kept[i] is what CPU i was),
// and w is rewritten for it. moved lists the tasks allowed only on CPUs
// outside keep, which it allows everywhere.
func renumberCPUs(w *replay.Workload, topo *topology.Topology, keep topology.CPUSet) (nt *topology.Topology, kept []int, moved []string, err error) {
	n := topo.NCPU()
	newID := make([]int, n)
	for i := range n {
		newID[i] = -1
		if keep.Has(i) {
			newID[i] = len(kept)
			kept = append(kept, i)
		}
	}
	nt = topo.Clone()
	nt.CPUs = nil
	for _, old := range kept {
		c := topo.CPUs[old]
		c.ID = len(nt.CPUs)
		nt.CPUs = append(nt.CPUs, c)
	}
	nt.Kernel = nil
	if err := nt.Validate(); err != nil {
		return nil, nil, nil, err
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
			t.Segments[j].Wake.CPU = int32(mapCPU(int(t.Segments[j].Wake.CPU)))
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
	return nt, kept, moved, nil
}

// presentCPUs returns the CPUs a recording can show, when that is fewer
// than its topology lists:
//
//   - when the topology was assumed rather than read (Source "default":
//     identical CPUs numbered up to the highest CPU the trace names), the
//     CPUs with events and those the workload names (where a task starts
//     or a wakeup is raised, an allowed set short of every CPU, a gap);
//   - when it was read, every CPU but those it marks offline (CPU.Offline:
//     offline when it was captured, as `schedlens record` and the capture
//     scripts read it with the trace) that show no event, start no task,
//     raise no wakeup and hold no gap. Allowed sets do not count here: a
//     task's mask keeps the CPUs that went offline. A CPU of a read
//     topology that shows nothing is otherwise kept: it existed and was
//     idle.
//
// ok is false when that is every CPU of topo.
//
// A trace that names CPUs 0 and 4095 and no other is a two-CPU recording:
// modeling the 4094 CPUs it never shows would cost the model's per-CPU work
// (load balancing visits every CPU) for CPUs of which nothing is known. A
// recording made with CPU 1 of 2 offline is a one-CPU recording: modeling
// CPU 1 would give the workload a CPU it never had.
func presentCPUs(tl *timeline.Timeline, w *replay.Workload, topo *topology.Topology) (topology.CPUSet, bool) {
	n := topo.NCPU()
	seen := make([]bool, n)
	if topo.Source != "default" {
		offline := false
		for c := range n {
			seen[c] = !topo.CPUs[c].Offline
			offline = offline || topo.CPUs[c].Offline
		}
		if !offline {
			return nil, false
		}
	}
	mark := func(c int) {
		if c >= 0 && c < n {
			seen[c] = true
		}
	}
	for c, t := range tl.CPUFirst {
		if t != timeline.NoTime {
			mark(c)
		}
	}
	for _, c := range tl.CPUs {
		mark(int(c)) // a timeline built without per-CPU bounds
	}
	markSet := func(s topology.CPUSet) {
		if topo.Source != "default" {
			return // a mask names offline CPUs: the kernel keeps them in it
		}
		for _, c := range s.CPUs() {
			mark(c)
		}
	}
	for i := range w.Tasks {
		t := &w.Tasks[i]
		mark(t.CPU)
		markSet(t.CPUs)
		for _, a := range t.Affinity {
			markSet(a.CPUs)
		}
		for j := range t.Segments {
			mark(int(t.Segments[j].Wake.CPU))
		}
	}
	for _, g := range w.Unobserved {
		mark(int(g.CPU))
	}
	var keep topology.CPUSet
	for c := n - 1; c >= 0; c-- { // highest first: one allocation
		if seen[c] {
			keep = keep.With(c)
		}
	}
	if keep.Empty() || keep.Count() == n {
		return nil, false
	}
	return keep, true
}

// denseCPUs renumbers the CPUs of keep (presentCPUs) 0..k-1 for the model,
// with the workload, and notes it. kept[i] is the recording's number of
// model CPU i.
func denseCPUs(w *replay.Workload, topo *topology.Topology, keep topology.CPUSet) (*topology.Topology, []int, error) {
	nt, kept, _, err := renumberCPUs(w, topo, keep)
	if err != nil {
		return nil, nil, fmt.Errorf("CPUs %s of the trace: %v", keep, err)
	}
	nt.Notes = append(nt.Notes, fmt.Sprintf("CPUs %s (the CPUs the trace shows) modeled as CPUs 0-%d", keep, len(kept)-1))
	detail := fmt.Sprintf("no topology: the machine is the %d CPUs the trace shows (%s), not every CPU up to the highest", len(kept), keep)
	if topo.Source != "default" {
		var off topology.CPUSet
		for c := topo.NCPU() - 1; c >= 0; c-- {
			if !keep.Has(c) {
				off = off.With(c)
			}
		}
		what := fmt.Sprintf("CPUs %s were offline when the topology was read and the trace shows nothing of them", off)
		if off.Count() == 1 {
			what = fmt.Sprintf("CPU %s was offline when the topology was read and the trace shows nothing of it", off)
		}
		machine := fmt.Sprintf("CPUs %s", keep)
		if keep.Count() == 1 {
			machine = fmt.Sprintf("CPU %s", keep)
		}
		detail = what + ": the machine is " + machine
	}
	w.Assumptions = append(w.Assumptions, replay.Assumption{Name: "cpus-present", Detail: detail +
		"; the modeled schedule is reported under the trace's CPU numbers"})
	return nt, kept, nil
}
