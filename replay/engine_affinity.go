package replay

import (
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// setAllowed sets task t's allowed CPUs to set, without the CPUs the
// machine does not have; an empty or full set is stored as nil (every CPU).
func (s *Sim) setAllowed(t int, set topology.CPUSet) {
	tr := &s.tasks[t]
	n := len(s.cpus)
	cnt := 0
	var clean topology.CPUSet
	for _, c := range set.CPUs() {
		if c < n {
			clean = clean.With(c)
			cnt++
		}
	}
	if cnt == 0 || cnt == n {
		tr.allowed, tr.nAllowed = nil, n
		return
	}
	tr.allowed, tr.nAllowed = clean, cnt
}

// firstAllowed returns the lowest CPU task t may run on.
func (s *Sim) firstAllowed(t int) int {
	a := s.tasks[t].allowed
	if len(a) == 0 {
		return 0
	}
	return a.First()
}

// affinityEvent applies task t's k-th affinity change: a queued task on a
// CPU it may no longer use is moved at once, a running one by the stopper.
//
// A change due before the task has started (a thread forked later in the
// replay than in the recording, whose recorded mask change came after its
// fork) waits for the task's first run: a thread inherits its creator's
// mask and changes it itself (pthread_setaffinity_np) once it runs, so the
// fork is placed as the kernel placed it, and the change then moves it.
func (s *Sim) affinityEvent(t, k int) {
	tk := &s.w.Tasks[t]
	tr := &s.tasks[t]
	if tr.state == TaskNew {
		tr.affLater = int32(k + 1)
		return
	}
	s.setAllowed(t, tk.Affinity[k].CPUs)
	cpu := int(tr.cpu)
	if s.Allowed(t, cpu) {
		return
	}
	switch tr.state {
	case TaskQueued:
		s.ctx = cpu
		dst := s.pol.SelectCPU(t, cpu, -1, WakeAffinity)
		if dst < 0 || dst >= len(s.cpus) || !s.Allowed(t, dst) {
			dst = s.firstAllowed(t)
		}
		s.Migrate(t, dst)
	case TaskRunning:
		s.addStop(cpu, stopItem{kind: stopAffinity, arg: int64(t)})
	}
}

// recordAffinity writes every task's allowed CPUs into the modeled
// timeline (timeline.Timeline.Affinity), as a recorder would: its set at
// the start, then each change. The modeled run is then measured under the
// masks it ran with.
func (s *Sim) recordAffinity() {
	for i := range s.w.Tasks {
		tk := &s.w.Tasks[i]
		if tk.CPUs.Empty() && len(tk.Affinity) == 0 {
			continue
		}
		s.b.AddAffinity(timeline.AffinityChange{At: s.w.Start, TID: tk.TID, CPUs: tk.CPUs})
		for _, a := range tk.Affinity {
			s.b.AddAffinity(timeline.AffinityChange{At: a.At, TID: tk.TID, CPUs: a.CPUs})
		}
	}
}
