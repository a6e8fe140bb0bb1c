package replay

import "github.com/schedlens/schedlens/timeline"

// onStopper marks cpuRun.onCPU while the stopper (migration/N) runs.
const onStopper = -2

// StopperTID returns the pid the replay gives cpu's stopper thread
// (migration/N): above PID_MAX_LIMIT (4194304), so it never collides with
// a recorded pid.
func StopperTID(cpu int) timeline.TID { return timeline.TID(4194304 + cpu) }

// stopItem is one piece of work queued for a CPU's stopper.
type stopItem struct {
	kind int // < 0: engine work (affinity re-home of task arg)
	arg  int64
}

const stopAffinity = -1

// addStop queues it for cpu's stopper and gets the stopper to run: at the
// end of the current handler on cpu itself, after an IPI from elsewhere.
func (s *Sim) addStop(cpu int, it stopItem) {
	c := &s.cpus[cpu]
	c.stops = append(c.stops, it)
	if c.stopPending {
		return
	}
	c.stopPending = true
	if cpu == s.ctx {
		s.markDirty(cpu)
		return
	}
	*s.cIPI++
	s.push(event{at: s.now + timeline.Time(s.ipiDelay()), kind: evStop, a: int32(cpu)})
}

// runStopper runs the stop work queued for cpu.
func (s *Sim) runStopper(cpu int) {
	c := &s.cpus[cpu]
	if !c.stopPending {
		return
	}
	c.stopPending = false
	items := c.stops
	c.stops = nil
	wasRunning := c.state == CPURunning
	if wasRunning {
		s.account(cpu)
		prev := int(c.curr)
		s.pol.PutPrev(cpu, prev)
		s.offCPU(cpu, prev)
		// The stopper thread is woken and takes the CPU: prev leaves it now.
		wk := timeline.Event{Time: s.now, CPU: timeline.CPU(cpu), Kind: timeline.KindWaking, Task: StopperTID(cpu), Comm: c.stopComm, Prio: 0, Arg: int64(cpu), Ctx: timeline.CtxTask}
		s.setOther(&wk, cpu)
		s.emit(wk)
		wk.Kind = timeline.KindWakeup
		s.emit(wk)
		s.emitSwitchTo(cpu, StopperTID(cpu), c.stopComm, 0)
		c.onCPU = onStopper
		c.outState = timeline.StateInterrupt
	}
	for _, it := range items {
		if it.kind == stopAffinity {
			t := int(it.arg)
			tr := &s.tasks[t]
			if tr.state == TaskQueued && !s.Allowed(t, int(tr.cpu)) {
				dst := s.pol.SelectCPU(t, cpu, -1, WakeAffinity)
				if dst < 0 || dst >= len(s.cpus) || !s.Allowed(t, dst) {
					dst = s.firstAllowed(t)
				}
				s.Migrate(t, dst)
			}
			continue
		}
		s.pol.Stop(cpu, it.kind, it.arg)
	}
	if wasRunning {
		c.needResched = false
		s.pick(cpu, -1, false)
	}
}
