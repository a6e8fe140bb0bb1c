package replay

import "github.com/schedlens/schedlens/timeline"

// emit records ev in the modeled timeline (and counts it), unless the run
// discards its timeline or ev falls in one of the recording's gaps.
func (s *Sim) emit(ev timeline.Event) {
	s.emitted++
	if s.opts.Discard {
		return
	}
	if ev.Start == 0 {
		ev.Start = timeline.NoTime
	}
	if ev.TGID == 0 && ev.Kind != timeline.KindSwitch {
		ev.TGID = -1
	}
	if s.unobserved != nil && s.hidden(int(ev.CPU), ev.Time) {
		return
	}
	s.b.Add(ev)
	if s.log != nil {
		s.log.Add(ev)
	}
}

// hidden reports whether time t on cpu falls strictly inside one of the
// recording's gaps. Events are emitted in time order, so a cursor per CPU
// suffices.
func (s *Sim) hidden(cpu int, t timeline.Time) bool {
	if cpu < 0 || cpu >= len(s.unobserved) {
		return false
	}
	gs := s.unobserved[cpu]
	i := s.gapAt[cpu]
	for i < len(gs) && gs[i].End <= t {
		i++
	}
	s.gapAt[cpu] = i
	return i < len(gs) && gs[i].Start < t
}

// setOther fills the event's Other with the task running on cpu (the idle
// task when none).
func (s *Sim) setOther(ev *timeline.Event, cpu int) {
	c := &s.cpus[cpu]
	if c.onCPU == onStopper {
		ev.Other, ev.OComm, ev.OPrio = StopperTID(cpu), c.stopComm, 0
		return
	}
	if c.onCPU >= 0 {
		o := int(c.onCPU)
		ev.Other = s.w.Tasks[o].TID
		ev.OComm = s.tasks[o].comm
		ev.OPrio = s.tasks[o].prio
		return
	}
	ev.Other = 0
	ev.OComm = c.idleComm
	ev.OPrio = 120
}

// emitMigrate records task t's move from src to dst (sched_migrate_task)
// on the CPU whose handler moves it.
func (s *Sim) emitMigrate(t, src, dst int) {
	tr := &s.tasks[t]
	tk := &s.w.Tasks[t]
	tr.res.Migrations++
	*s.cMigrate++
	at := s.ctx
	if at < 0 {
		at = src
	}
	s.emit(timeline.Event{Time: s.now, CPU: timeline.CPU(at), Kind: timeline.KindMigrate, Task: tk.TID, Comm: tr.comm, Prio: tr.prio, Arg: int64(dst), Arg2: int64(src), Other: timeline.NoTID, OPrio: -1, TGID: -1})
}

// emitSwitch records a sched_switch on cpu to task next (-1: the idle task).
func (s *Sim) emitSwitch(cpu, next int) {
	c := &s.cpus[cpu]
	if next >= 0 {
		s.emitSwitchTo(cpu, s.w.Tasks[next].TID, s.tasks[next].comm, s.tasks[next].prio)
		return
	}
	s.emitSwitchTo(cpu, 0, c.idleComm, 120)
}

// emitSwitchTo records a sched_switch on cpu from its current task to
// (tid, comm, prio).
func (s *Sim) emitSwitchTo(cpu int, tid timeline.TID, comm timeline.CommID, prio int16) {
	c := &s.cpus[cpu]
	*s.cSwitch++
	ev := timeline.Event{Time: s.now, CPU: timeline.CPU(cpu), Kind: timeline.KindSwitch, Ctx: timeline.CtxTask, TGID: -1}
	switch {
	case c.onCPU == onStopper:
		ev.Other = StopperTID(cpu)
		ev.OComm = c.stopComm
		ev.OPrio = 0
		ev.State = timeline.StateInterrupt
		ev.TGID = int32(ev.Other)
	case c.onCPU >= 0:
		p := int(c.onCPU)
		ev.Other = s.w.Tasks[p].TID
		ev.OComm = s.tasks[p].comm
		ev.OPrio = s.tasks[p].prio
		ev.State = c.outState
		ev.TGID = s.w.Tasks[p].TGID
		if c.outState == timeline.StatePreempted {
			*s.cPreempt++
			s.tasks[p].res.Preempted++
		}
	default:
		ev.Other = 0
		ev.OComm = c.idleComm
		ev.OPrio = 120
		ev.State = timeline.StateRunnable
		ev.TGID = 0
	}
	ev.Task, ev.Comm, ev.Prio = tid, comm, prio
	s.emit(ev)
}
