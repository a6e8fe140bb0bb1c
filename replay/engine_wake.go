package replay

import "github.com/schedlens/schedlens/timeline"

// irqCPU returns the CPU a time-driven wake of task t's segment seg is
// raised on, or -1 for the start of a task (no interrupt involved).
func (s *Sim) irqCPU(t, seg int) int {
	tr := &s.tasks[t]
	wk := s.w.Tasks[t].Segments[seg].Wake
	if seg == 0 && tr.state == TaskNew && wk.Kind == WakeStart {
		return -1
	}
	cpu := int(wk.CPU)
	if cpu < 0 || cpu >= len(s.cpus) {
		cpu = int(tr.cpu)
	}
	return cpu
}

// taskWakeEvent handles a time-driven wake (start, timer, interrupt,
// outside event) of task t's segment seg.
func (s *Sim) taskWakeEvent(t, seg int) {
	tr := &s.tasks[t]
	tk := &s.w.Tasks[t]
	wk := tk.Segments[seg].Wake
	if wk.Kind == WakeAt {
		// An absolute wake anchors a periodic series that follows it.
		tr.lastTmr, tr.tmrSeg = wk.At, int32(seg)
	}
	if seg == 0 && tr.state == TaskNew {
		if wk.Kind == WakeTimer || wk.Kind == WakeIRQ {
			tr.state = TaskBlocked
			tr.seg = -1
		} else {
			s.start(t, wk)
			return
		}
	}
	cpu := int(wk.CPU)
	if cpu < 0 || cpu >= len(s.cpus) {
		cpu = int(tr.cpu)
	}
	s.ctx = cpu
	waker := int(s.cpus[cpu].curr)
	s.inIRQ = true
	s.wakeSeg(t, seg, cpu, waker, false, true)
	s.inIRQ = false
}

// taskWake is a wake issued by task waker running on cpu.
func (s *Sim) taskWake(t, seg, cpu, waker int, sync bool) {
	tr := &s.tasks[t]
	if seg == 0 && tr.state == TaskNew {
		// A first segment woken by another task: the task existed asleep.
		tr.state = TaskBlocked
		tr.seg = -1
	}
	s.wakeSeg(t, seg, cpu, waker, sync, false)
}

// wakeSeg issues a wake aimed at segment seg of task t, under the
// workload's wake rule: it wakes t if t is blocked just before seg, and
// otherwise is remembered for when t blocks.
func (s *Sim) wakeSeg(t, seg, cpu, waker int, sync, irq bool) {
	if r := s.w.WakeRule; (r == WakeAny || r == WakeLateAny) && !irq && seg > 0 && s.w.Tasks[t].Segments[seg].Wake.Kind == WakeTask {
		if r == WakeAny {
			s.wakeAny(t, cpu, waker, sync)
		} else {
			s.wakeLate(t, seg, cpu, waker, sync)
		}
		return
	}
	tr := &s.tasks[t]
	if tr.state == TaskBlocked && !tr.stalled && int(tr.seg)+1 == seg {
		s.wake(t, seg, cpu, waker, sync, irq)
		return
	}
	if tr.state != TaskDone && seg < len(tr.fired) {
		tr.fired[seg] = true
	}
}

// start makes a task that exists from time At (WakeStart) or from an
// outside event (WakeAt on a first segment) runnable.
func (s *Sim) start(t int, wk Wake) {
	tr := &s.tasks[t]
	tk := &s.w.Tasks[t]
	if wk.Kind == WakeAt {
		tr.state = TaskBlocked
		tr.seg = -1
		cpu := int(wk.CPU)
		if cpu < 0 || cpu >= len(s.cpus) {
			cpu = int(tr.cpu)
		}
		s.ctx = cpu
		s.wake(t, 0, cpu, int(s.cpus[cpu].curr), false, true)
		return
	}
	cpu := tk.CPU
	if cpu < 0 || !s.Allowed(t, cpu) {
		from := s.firstAllowed(t)
		tr.cpu = int32(from)
		cpu = s.pol.SelectCPU(t, from, -1, WakeForkFlag|WakeStartup)
		if cpu < 0 || cpu >= len(s.cpus) || !s.Allowed(t, cpu) {
			cpu = from
		}
	}
	s.ctx = cpu
	tr.cpu = int32(cpu)
	s.startSegment(t, 0)
	tr.state = TaskQueued
	tr.queued = s.now
	tr.res.Wakeups++
	s.pol.Enqueue(cpu, t, EnqNew)
	if s.now > s.w.Start {
		tr.waking = s.now
		s.emit(timeline.Event{Time: s.now, CPU: timeline.CPU(cpu), Kind: timeline.KindWakeupNew, Task: tk.TID, Comm: tr.comm, Prio: tr.prio, Arg: int64(cpu), Other: 0, OComm: s.cpus[cpu].idleComm, TGID: tk.TGID})
	}
	s.checkPreempt(cpu, t)
}

// fork starts child as a new task of parent.
func (s *Sim) fork(parent, child int) {
	tr := &s.tasks[child]
	if tr.state != TaskNew {
		return
	}
	pr := &s.tasks[parent]
	ptk := &s.w.Tasks[parent]
	tk := &s.w.Tasks[child]
	from := int(pr.cpu)
	tr.cpu = int32(from)
	s.emit(timeline.Event{Time: s.now, CPU: timeline.CPU(from), Kind: timeline.KindFork, Task: tk.TID, Comm: tr.comm, Other: ptk.TID, OComm: pr.comm, Prio: -1, OPrio: pr.prio, TGID: ptk.TGID})
	cpu := from
	if tr.nAllowed > 1 || !s.Allowed(child, from) {
		cpu = s.pol.SelectCPU(child, from, parent, WakeForkFlag)
	}
	if cpu < 0 || cpu >= len(s.cpus) || !s.Allowed(child, cpu) {
		cpu = s.firstAllowed(child)
		if s.Allowed(child, from) {
			cpu = from
		}
	}
	tr.cpu = int32(cpu)
	s.startSegment(child, 0)
	tr.state = TaskQueued
	tr.queued = s.now
	tr.waking = s.now
	tr.res.Wakeups++
	s.pol.Enqueue(cpu, child, EnqNew)
	s.emit(timeline.Event{Time: s.now, CPU: timeline.CPU(from), Kind: timeline.KindWakeupNew, Task: tk.TID, Comm: tr.comm, Prio: tr.prio, Arg: int64(cpu), Other: ptk.TID, OComm: pr.comm, OPrio: pr.prio, TGID: ptk.TGID})
	s.checkPreempt(cpu, child)
}

// wake makes blocked task t runnable for segment seg; the wake is issued on
// cpu by waker (-1: an interrupt or the idle task).
func (s *Sim) wake(t, seg, cpu, waker int, sync, irq bool) {
	tr := &s.tasks[t]
	tk := &s.w.Tasks[t]
	*s.cWake++
	tr.res.Wakeups++
	ev := timeline.Event{Time: s.now, CPU: timeline.CPU(cpu), Kind: timeline.KindWaking, Task: tk.TID, Comm: tr.comm, Prio: tr.prio, Arg: int64(tr.cpu), Ctx: timeline.CtxTask}
	s.setOther(&ev, cpu)
	if irq {
		ev.Ctx = timeline.CtxHardirq
	}
	s.emit(ev)
	tr.waking = s.now
	s.startSegment(t, seg)
	if rq, ok := s.pol.Requeue(t); ok {
		tr.state = TaskQueued
		tr.queued = s.now
		ev.Kind = timeline.KindWakeup
		ev.Arg = int64(rq)
		s.emit(ev)
		if !s.Allowed(t, rq) {
			dst := s.pol.SelectCPU(t, rq, waker, WakeAffinity)
			if dst < 0 || dst >= len(s.cpus) || !s.Allowed(t, dst) {
				dst = s.firstAllowed(t)
			}
			s.Migrate(t, dst)
			return
		}
		s.checkPreempt(rq, t)
		return
	}
	prev := int(tr.cpu)
	dst := prev
	if s.cpus[prev].onCPU == int32(t) {
		// Still the switched-in task of a CPU that is between tasks (its
		// newidle balancing runs): the kernel cannot move it before the
		// switch completes (p->on_cpu) and queues the wakeup on that CPU.
		tr.state = TaskWaking
		if prev != cpu {
			s.queueWake(t, prev)
			return
		}
		s.deliver(t, prev, cpu)
		return
	}
	if tr.nAllowed > 1 || !s.Allowed(t, prev) {
		f := WakeTTWU
		if sync {
			f |= WakeSyncFlag
		}
		dst = s.pol.SelectCPU(t, cpu, waker, f)
		if dst < 0 || dst >= len(s.cpus) || !s.Allowed(t, dst) {
			dst = prev
			if !s.Allowed(t, dst) {
				dst = s.firstAllowed(t)
			}
		}
	}
	if dst != prev {
		s.emitMigrate(t, prev, dst)
		tr.cpu = int32(dst)
		tr.wakeMigrated = true
	}
	tr.state = TaskWaking
	if dst != cpu && (s.cpus[dst].state == CPUPicking ||
		(!s.opts.NoWakeList && (!s.SameLLC(dst, cpu) || s.pol.NrRunning(dst) == 0))) {
		s.queueWake(t, dst)
		return
	}
	s.deliver(t, dst, cpu)
}

// queueWake puts a wakeup on dst's wake list (ttwu_queue_wakelist): it is
// pending (ttwu_pending) at once and enqueued when dst takes the IPI.
func (s *Sim) queueWake(t, dst int) {
	s.cpus[dst].wakePending++
	*s.cIPI++
	d, paid := s.ipiTo(dst)
	s.push(event{at: s.now + timeline.Time(d), kind: evDeliver, a: int32(t), b: int32(dst), arg: paid})
}

// deliver enqueues a waking task on cpu; the sched_wakeup event is recorded
// on emitCPU.
func (s *Sim) deliver(t, cpu, emitCPU int) {
	tr := &s.tasks[t]
	tk := &s.w.Tasks[t]
	if tr.state != TaskWaking {
		return
	}
	tr.state = TaskQueued
	tr.queued = s.now
	f := EnqWakeup
	if tr.wakeMigrated {
		f |= EnqMigrated
		tr.wakeMigrated = false
	}
	tr.cpu = int32(cpu)
	s.pol.Enqueue(cpu, t, f)
	ev := timeline.Event{Time: s.now, CPU: timeline.CPU(emitCPU), Kind: timeline.KindWakeup, Task: tk.TID, Comm: tr.comm, Prio: tr.prio, Arg: int64(cpu), Ctx: timeline.CtxTask}
	s.setOther(&ev, emitCPU)
	s.emit(ev)
	s.checkPreempt(cpu, t)
}

// checkPreempt runs the wakeup-preemption check for t just enqueued on cpu.
func (s *Sim) checkPreempt(cpu, t int) {
	c := &s.cpus[cpu]
	switch c.state {
	case CPUIdle:
		s.Resched(cpu)
	case CPURunning:
		if c.needResched {
			return
		}
		if s.pol.WakeupPreempt(cpu, t) {
			s.Resched(cpu)
		}
	}
}
