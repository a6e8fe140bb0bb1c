package replay

import "github.com/schedlens/schedlens/timeline"

// offCPU marks cpu's running task prev as preempted (still runnable).
func (s *Sim) offCPU(cpu, prev int) {
	c := &s.cpus[cpu]
	tr := &s.tasks[prev]
	tr.state = TaskQueued
	tr.queued = s.now
	c.curr = -1
	c.gen++
	c.outState = timeline.StatePreempted
	c.state = CPUPicking
}

// resched is schedule() on cpu after a resched request.
func (s *Sim) resched(cpu int) {
	c := &s.cpus[cpu]
	c.needResched = false
	switch c.state {
	case CPUPicking:
		return
	case CPUIdle:
		exit := int64(0)
		if c.exitPaid {
			c.exitPaid = false
		} else {
			exit = s.opts.IdleExitDist.draw(s.rng, s.opts.IdleExit)
		}
		if exit > 0 {
			c.state = CPUPicking
			c.pickGen++
			s.push(event{at: s.now + timeline.Time(exit), kind: evPickResume, a: int32(cpu), gen: c.pickGen})
			return
		}
		s.pick(cpu, -1, false)
	case CPURunning:
		s.account(cpu)
		prev := int(c.curr)
		s.offCPU(cpu, prev)
		s.pick(cpu, prev, true)
	}
}

// pick asks the policy for cpu's next task.
func (s *Sim) pick(cpu, prev int, prevQueued bool) {
	c := &s.cpus[cpu]
	c.state = CPUPicking
	c.exitPaid = false
	s.afterPick(cpu, s.pol.Pick(cpu, prev, prevQueued))
}

// afterPick carries out the policy's pick p on cpu: a delay postpones the
// pick, a task is switched in (with its wait and wakeup latency charged)
// and its completion and the tick armed, no task idles the CPU.
func (s *Sim) afterPick(cpu int, p Pick) {
	c := &s.cpus[cpu]
	if p.Delay > 0 {
		c.state = CPUPicking
		c.pickGen++
		s.push(event{at: s.now + timeline.Time(p.Delay), kind: evPickResume, a: int32(cpu), gen: c.pickGen})
		return
	}
	next := p.Task
	if next >= 0 {
		if next >= len(s.tasks) {
			s.fail("policy picked task %d on CPU %d, out of range", next, cpu)
			return
		}
		tr := &s.tasks[next]
		if tr.state != TaskQueued || int(tr.cpu) != cpu {
			s.fail("policy picked task %d (%s) on CPU %d, but it is %v on CPU %d", next, s.w.Tasks[next].Comm, cpu, tr.state, tr.cpu)
			return
		}
	}
	c.needResched = false
	if int32(next) != c.onCPU {
		s.emitSwitch(cpu, next)
	}
	if next < 0 {
		c.state = CPUIdle
		c.curr = -1
		c.onCPU = -1
		s.runDeferred(cpu)
		return
	}
	tr := &s.tasks[next]
	if tr.queued != timeline.NoTime {
		tr.res.Wait += int64(s.now - tr.queued)
		tr.queued = timeline.NoTime
	}
	if tr.movedAt != timeline.NoTime {
		*s.cMovedNS += int64(s.now - tr.movedAt)
		tr.movedAt = timeline.NoTime
	}
	if tr.waking != timeline.NoTime {
		lat := int64(s.now - tr.waking)
		tr.res.LatencyN++
		tr.res.LatencySum += lat
		tr.res.LatencyMax = max(tr.res.LatencyMax, lat)
		if s.opts.KeepLatencies {
			tr.res.Latencies = append(tr.res.Latencies, lat)
		}
		tr.waking = timeline.NoTime
	}
	tr.state = TaskRunning
	c.state = CPURunning
	c.curr = int32(next)
	c.onCPU = int32(next)
	c.runStart = s.now
	s.armCompletion(cpu)
	if !c.tickArmed {
		c.tickArmed = true
		next := (int64(s.now)/s.tick + 1) * s.tick
		s.push(event{at: timeline.Time(next), kind: evTick, a: int32(cpu)})
	}
	if tr.affLater > 0 {
		k := int(tr.affLater - 1)
		tr.affLater = 0
		s.affinityEvent(next, k)
	}
	if len(c.deferred) > 0 {
		s.runDeferred(cpu)
	}
}

// runDeferred replays the interrupt-driven events cpu postponed while it
// was between tasks.
func (s *Sim) runDeferred(cpu int) {
	c := &s.cpus[cpu]
	for len(c.deferred) > 0 && c.state != CPUPicking {
		e := c.deferred[0]
		c.deferred = c.deferred[1:]
		prev := s.ctx
		s.dispatch(e)
		s.ctx = prev
	}
	if len(c.deferred) == 0 {
		c.deferred = nil
	}
}
