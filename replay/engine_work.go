package replay

import (
	"math"

	"github.com/schedlens/schedlens/timeline"
)

// account charges the running task of cpu up to now.
func (s *Sim) account(cpu int) {
	c := &s.cpus[cpu]
	if c.curr < 0 {
		return
	}
	d := int64(s.now - c.runStart)
	if d > 0 {
		tr := &s.tasks[c.curr]
		tr.done += d * c.speed
		tr.res.CPUTime += d
	}
	c.runStart = s.now
}

// dueNow reports whether cpu's running task has reached its next action or
// the end of its segment.
func (s *Sim) dueNow(cpu int) bool {
	c := &s.cpus[cpu]
	tr := &s.tasks[c.curr]
	done := tr.done + int64(s.now-c.runStart)*c.speed
	target := tr.segEnd
	if tr.actFrom < tr.actTo {
		target = min(target, s.actWork(tr))
	}
	return done >= target
}

// armCompletion schedules the next point where cpu's running task reaches
// an action or the end of its segment.
func (s *Sim) armCompletion(cpu int) {
	c := &s.cpus[cpu]
	c.gen++
	tr := &s.tasks[c.curr]
	target := tr.segEnd
	if tr.actFrom < tr.actTo {
		if a := s.actWork(tr); a < target {
			target = a
		}
	}
	if target >= math.MaxInt64/4 {
		return // runs until the end
	}
	rem := target - tr.done
	dt := int64(0)
	if rem > 0 {
		dt = (rem + c.speed - 1) / c.speed
	}
	s.push(event{at: s.now + timeline.Time(dt), kind: evComplete, a: int32(cpu), gen: c.gen})
}

// startSegment makes seg task t's current segment; the last segment of a
// task that runs until the end never ends.
func (s *Sim) startSegment(t, seg int) {
	tr := &s.tasks[t]
	tr.seg = int32(seg)
	tk := &s.w.Tasks[t]
	if seg == len(tk.Segments)-1 && tk.End == EndRun && !s.overrunning {
		tr.segEnd = math.MaxInt64 / 2
	} else {
		tr.segEnd = s.segs[t][seg]
	}
}

// complete handles the running task of cpu reaching an action or its
// segment's end.
func (s *Sim) complete(cpu int) {
	c := &s.cpus[cpu]
	s.account(cpu)
	t := int(c.curr)
	tr := &s.tasks[t]
	s.runActions(t)
	if s.cpus[cpu].curr != int32(t) || tr.state != TaskRunning {
		return
	}
	if tr.done < tr.segEnd {
		s.armCompletion(cpu)
		return
	}
	tr.done = tr.segEnd
	s.endSegment(cpu, t)
}

// actWork is the work point of tr's next action (tr.actFrom < tr.actTo).
func (s *Sim) actWork(tr *taskRun) int64 { return min(tr.actWork, tr.actCap) }

// loadAction reads the work point of tr's next action from the workload.
func (s *Sim) loadAction(tr *taskRun) {
	tr.actWork = math.MaxInt64
	if tr.actFrom < tr.actTo {
		tr.actWork = actionWork(s.w, s.acts[tr.actFrom])
	}
}

// runActions fires the wakes and forks of task t that its work has reached.
func (s *Sim) runActions(t int) {
	tr := &s.tasks[t]
	for tr.actFrom < tr.actTo && s.actWork(tr) <= tr.done {
		a := s.acts[tr.actFrom]
		wk := &s.w.Tasks[a.target].Segments[a.seg].Wake
		fork := wk.Kind == WakeFork
		if s.w.WakeRule == WakeOrdered && !fork && tr.noStall != tr.actFrom && s.mustWait(int(a.target), int(a.seg)) {
			s.stall(t, int(a.target), int(a.seg))
			return
		}
		tr.actFrom++
		s.loadAction(tr)
		if fork {
			s.fork(t, int(a.target))
		} else {
			ipis := *s.cIPI
			s.taskWake(int(a.target), int(a.seg), int(tr.cpu), t, wk.Sync)
			s.wakeCost(t, wk, *s.cIPI > ipis)
		}
	}
}

// wakeCost charges waker t the difference a wake's kind makes: a wake that
// sent a resched IPI in the model (ipi) but not in the recording, or the
// reverse, costs a draw of the model's kind (Options.WakeCostIPI or
// WakeCostPlain) instead of its recorded cost, which the waker's recorded
// work holds. The difference moves the task's progress: an added cost is
// work still to do before its next action, a saved one is work done.
func (s *Sim) wakeCost(t int, wk *Wake, ipi bool) {
	if wk.Cost <= 0 || ipi == wk.CostIPI || len(s.opts.WakeCostPlain) == 0 || len(s.opts.WakeCostIPI) == 0 {
		return
	}
	dist := s.opts.WakeCostPlain
	if ipi {
		dist = s.opts.WakeCostIPI
		*s.cCostMore++
	} else {
		*s.cCostLess++
	}
	tr := &s.tasks[t]
	delta := dist.draw(s.rng, wk.Cost) - wk.Cost
	if delta < 0 {
		// Saved work cannot take the task past its segment's end.
		delta = max(delta, -max((tr.segEnd-tr.done)>>unitShift, 0))
	}
	tr.done -= delta << unitShift
	tr.res.WakeCost += delta
}

// endSegment handles running task t of cpu reaching the end of its
// segment: it goes on at once when a wake for its next segment came early
// (or, under WakeAfterBlock, blocks and is woken at once), else it exits
// or blocks (arming the timer that ends the sleep) and cpu picks again.
func (s *Sim) endSegment(cpu, t int) {
	tr := &s.tasks[t]
	tk := &s.w.Tasks[t]
	seg := int(tr.seg)
	if tr.killed {
		s.exitTask(cpu, t)
		return
	}
	if s.w.WakeRule == WakeAny && seg+1 < len(tk.Segments) && tk.Segments[seg+1].Wake.Kind == WakeTask && tr.pending > 0 {
		tr.pending--
		tr.fired[seg+1] = true
	}
	if seg+1 < len(tk.Segments) && tr.fired[seg+1] && s.w.WakeAfterBlock {
		// Woken before it could block, in a workload whose recorded wakes
		// all ended a sleep: it blocks, then the held wake fires at once.
		*s.cEarly++
		c := &s.cpus[cpu]
		tr.fired[seg+1] = false
		s.pol.Dequeue(cpu, t, DeqSleep)
		tr.state = TaskBlocked
		c.curr = -1
		c.outState = timeline.StateInterrupt
		s.pick(cpu, t, false)
		s.ctx = cpu
		s.wake(t, seg+1, cpu, -1, false, false)
		return
	}
	if seg+1 < len(tk.Segments) && tr.fired[seg+1] {
		// Woken before it could block: it goes on without sleeping.
		*s.cEarly++
		tr.res.Wakeups++
		s.startSegment(t, seg+1)
		s.armCompletion(cpu)
		return
	}
	c := &s.cpus[cpu]
	if seg+1 == len(tk.Segments) && tk.End == EndExit {
		s.exitTask(cpu, t)
		return
	}
	s.pol.Dequeue(cpu, t, DeqSleep)
	tr.state = TaskBlocked
	tr.blockedAt = s.now
	c.curr = -1
	c.outState = timeline.StateInterrupt
	if seg+1 == len(tk.Segments) {
		tr.state = TaskDone
		tr.res.Finished = true
	} else {
		s.armTimer(t, seg+1)
	}
	s.pick(cpu, t, false)
	if s.w.WakeRule == WakeOrdered {
		s.releaseWaiters(t, cpu)
	}
}

// enterOverrun is called once, when the run goes on past the workload's
// end (Options.Overrun): a task that was running or runnable when the
// recording ended (EndRun) has demanded CPU until then; past it, what it
// did is unknown, so in its last segment it stops once it has done its
// recorded work (at once if it has; startSegment does the same for a task
// that reaches that segment later). Without this a recorder or a daemon
// caught running at the end would take CPU for the whole overrun from the
// tasks being waited for.
func (s *Sim) enterOverrun() {
	for t := range s.tasks {
		tr := &s.tasks[t]
		tk := &s.w.Tasks[t]
		if tk.End != EndRun || int(tr.seg) != len(tk.Segments)-1 {
			continue
		}
		switch tr.state {
		case TaskRunning, TaskQueued:
		default:
			continue
		}
		if tr.state == TaskRunning {
			s.account(int(tr.cpu))
		}
		tr.segEnd = max(s.segs[t][tr.seg], tr.done)
		*s.cStopAtEnd++
		if tr.state == TaskRunning {
			s.armCompletion(int(tr.cpu))
		}
	}
}

// armTimer queues the timer or interrupt that ends the sleep before
// segment seg, if that is its cause.
func (s *Sim) armTimer(t, seg int) {
	tr := &s.tasks[t]
	wk := s.w.Tasks[t].Segments[seg].Wake
	switch wk.Kind {
	case WakeTimer, WakeIRQ:
	default:
		return
	}
	at := s.now + timeline.Time(wk.Delay)
	if wk.Kind == WakeTimer && wk.Period > 0 {
		if tr.tmrSeg == int32(seg-1) && tr.lastTmr != timeline.NoTime {
			at = tr.lastTmr + timeline.Time(wk.Period)
		}
		tr.lastTmr, tr.tmrSeg = at, int32(seg)
	}
	s.push(event{at: max(at, s.now), kind: evTaskWake, a: int32(t), b: int32(seg)})
}

// exitTask ends running task t of cpu: it exits and cpu picks again.
func (s *Sim) exitTask(cpu, t int) {
	tr := &s.tasks[t]
	tk := &s.w.Tasks[t]
	c := &s.cpus[cpu]
	s.emit(timeline.Event{Time: s.now, CPU: timeline.CPU(cpu), Kind: timeline.KindExit, Task: tk.TID, Comm: tr.comm, Prio: tr.prio, TGID: tk.TGID})
	s.pol.Dequeue(cpu, t, DeqExit)
	tr.state = TaskDone
	tr.res.Exit = s.now
	tr.res.Finished = true
	if tk.End == EndExit {
		s.exitsLeft--
	}
	c.curr = -1
	c.outState = timeline.StateExitDead
	if tk.TGID == int32(tk.TID) {
		c.outState = timeline.StateZombie
	}
	s.pick(cpu, t, false)
	if s.w.WakeRule == WakeOrdered {
		s.releaseWaiters(t, cpu)
	}
}

// kill ends task t at its Task.KillAt: its current segment ends where its
// work now stands (the wakes and forks it had still to do come with the
// exit) and is its last. A running task exits at once, a queued one when
// it next runs; one that is blocked or not started in the model is left
// alone (counter kill.not-runnable).
func (s *Sim) kill(t int) {
	tr := &s.tasks[t]
	switch tr.state {
	case TaskRunning, TaskQueued:
	default:
		*s.cKillMissed++
		return
	}
	*s.cKilled++
	if tr.state == TaskRunning {
		s.account(int(tr.cpu))
	}
	tr.killed = true
	tr.segEnd = tr.done
	tr.actCap = min(tr.actCap, tr.done)
	if tr.state == TaskRunning {
		s.armCompletion(int(tr.cpu))
	}
}
