package replay

import (
	"errors"
	"fmt"
	"math"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Run replays w on topo under pol and returns the simulated timeline.
func Run(w *Workload, topo *topology.Topology, pol Policy, opts Options) (*timeline.Timeline, error) {
	r, err := Simulate(w, topo, pol, opts)
	if err != nil {
		return nil, err
	}
	return r.Timeline, nil
}

// Simulate replays w on topo under pol and returns the timeline with
// per-task results and counters.
func Simulate(w *Workload, topo *topology.Topology, pol Policy, opts Options) (*Result, error) {
	if topo == nil || len(topo.CPUs) == 0 {
		return nil, errors.New("replay: no topology")
	}
	if err := topo.Validate(); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if err := w.Validate(len(topo.CPUs)); err != nil {
		return nil, fmt.Errorf("replay: workload: %w", err)
	}
	if opts.End == 0 && w.End <= w.Start {
		for i := range w.Tasks {
			if w.Tasks[i].End == EndRun {
				return nil, fmt.Errorf("replay: task %d (%s) runs until the replay ends, but the workload has no end: set Workload.End or Options.End", i, w.Tasks[i].Comm)
			}
		}
	}
	s, err := newSim(w, topo, pol, opts)
	if err != nil {
		return nil, err
	}
	if err := pol.Attach(s); err != nil {
		return nil, fmt.Errorf("replay: policy %s: %w", pol.Name(), err)
	}
	s.schedule0()
	if err := s.loop(); err != nil {
		return nil, err
	}
	if s.opts.Progress != nil {
		s.progress()
	}
	return s.finish()
}

// progress tells Options.Progress the simulated share of the workload's
// span (the overrun past its end counts as the end).
func (s *Sim) progress() {
	total := int64(s.end - s.w.Start)
	if s.end == timeline.Time(math.MaxInt64) || total <= 0 {
		total = 0
	}
	done := int64(s.now - s.w.Start)
	if total > 0 {
		done = min(max(done, 0), total)
	}
	s.opts.Progress(done, total)
}

// schedule0 queues the time-driven events known up front, and marks every
// CPU's record as complete from the start (a "buffer started" event), so
// that the timeline's valid window starts with the workload.
func (s *Sim) schedule0() {
	s.recordAffinity()
	for cpu := range s.cpus {
		s.emit(timeline.Event{Time: s.w.Start, CPU: timeline.CPU(cpu), Kind: timeline.KindBufferStart, Task: timeline.NoTID, Other: timeline.NoTID, Prio: -1, OPrio: -1})
	}
	for i := range s.w.Tasks {
		t := &s.w.Tasks[i]
		for j, sg := range t.Segments {
			switch sg.Wake.Kind {
			case WakeStart, WakeAt:
				at := max(sg.Wake.At, s.w.Start)
				s.push(event{at: at, kind: evTaskWake, a: int32(i), b: int32(j)})
			case WakeTimer, WakeIRQ:
				if j == 0 {
					// Asleep since the start: the timer runs from there.
					at := s.w.Start + timeline.Time(sg.Wake.Delay)
					if sg.Wake.Kind == WakeTimer && sg.Wake.Period > 0 {
						s.tasks[i].lastTmr, s.tasks[i].tmrSeg = at, 0
					}
					s.push(event{at: at, kind: evTaskWake, a: int32(i), b: 0})
				}
			}
		}
		for k, a := range t.Affinity {
			s.push(event{at: max(a.At, s.w.Start), kind: evAffinity, a: int32(i), b: int32(k)})
		}
		if t.KillAt > 0 {
			s.push(event{at: max(t.KillAt, s.w.Start), kind: evKill, a: int32(i)})
		}
	}
}

func (s *Sim) loop() error {
	for len(s.q) > 0 {
		e := s.q.pop()
		if e.at > s.end {
			limit := s.end
			if s.opts.Overrun > 0 && s.end < timeline.Time(math.MaxInt64)-s.opts.Overrun {
				limit = s.end + s.opts.Overrun
			}
			if s.exitsLeft == 0 || e.at > limit {
				if s.exitsLeft > 0 {
					s.now = limit // cut at the overrun's end
				}
				s.now = max(s.now, s.end)
				break
			}
			if !s.overrunning {
				// At the end, before anything past it: what enterOverrun
				// arms (a completion now) comes before e.
				s.overrunning = true
				s.now = max(s.now, s.end)
				s.ctx = -1
				s.enterOverrun()
				s.flush()
				s.push(e)
				continue
			}
		}
		if e.at > s.now {
			s.now = e.at
		}
		s.steps++
		if s.steps > s.opts.MaxEvents {
			return fmt.Errorf("%w: more than %d at %s", ErrTooManyEvents, s.opts.MaxEvents, s.now.Seconds())
		}
		if s.opts.Progress != nil && s.steps&(1<<14-1) == 0 {
			s.progress()
		}
		s.dispatch(e)
		s.flush()
		s.ctx = -1
		if s.err != nil {
			return s.err
		}
	}
	return nil
}

func (s *Sim) dispatch(e event) {
	switch e.kind {
	case evComplete:
		cpu := int(e.a)
		s.ctx = cpu
		if s.cpus[cpu].gen == e.gen && s.cpus[cpu].state == CPURunning {
			s.complete(cpu)
		}
	case evTick:
		cpu := int(e.a)
		s.ctx = cpu
		c := &s.cpus[cpu]
		if c.state == CPURunning && s.dueNow(cpu) {
			// The task reaches its next point exactly at the tick: let it
			// get there first.
			s.complete(cpu)
			s.flush()
		}
		if c.state != CPURunning {
			c.tickArmed = false
			return
		}
		s.inIRQ = true
		s.pol.Tick(cpu)
		s.inIRQ = false
		if c.state == CPURunning {
			s.push(event{at: s.now + timeline.Time(s.tick), kind: evTick, a: int32(cpu)})
		} else {
			c.tickArmed = false
		}
	case evTaskWake:
		if cpu := s.irqCPU(int(e.a), int(e.b)); cpu >= 0 && s.cpus[cpu].state == CPUPicking {
			s.cpus[cpu].deferred = append(s.cpus[cpu].deferred, e)
			return
		}
		s.taskWakeEvent(int(e.a), int(e.b))
	case evDeliver:
		cpu := int(e.b)
		if s.cpus[cpu].state == CPUPicking {
			s.cpus[cpu].deferred = append(s.cpus[cpu].deferred, e)
			return
		}
		s.ctx = cpu
		s.cpus[cpu].wakePending--
		if e.arg != 0 && s.cpus[cpu].state == CPUIdle {
			s.cpus[cpu].exitPaid = true
		}
		s.deliver(int(e.a), cpu, cpu)
	case evIPI:
		cpu := int(e.a)
		s.ctx = cpu
		c := &s.cpus[cpu]
		c.ipiPending = false
		if e.arg != 0 && c.state == CPUIdle {
			c.exitPaid = true
		}
		if e.b >= 0 && c.curr != e.b {
			*s.cReschedGone++
			return // its task has left the CPU: the request went with it
		}
		c.needResched = true
		s.markDirty(cpu)
	case evPickResume:
		cpu := int(e.a)
		s.ctx = cpu
		c := &s.cpus[cpu]
		if c.state == CPUPicking && c.pickGen == e.gen {
			s.afterPick(cpu, s.pol.Pick(cpu, -1, false))
		}
	case evPolicy:
		cpu := int(e.a)
		s.ctx = cpu
		s.pol.Timer(cpu, int(e.b), e.arg)
	case evStop:
		cpu := int(e.a)
		s.ctx = cpu
		s.runStopper(cpu)
	case evAffinity:
		s.affinityEvent(int(e.a), int(e.b))
	case evKill:
		s.kill(int(e.a))
	case evUnstall:
		w := int(e.a)
		if wr := &s.tasks[w]; wr.stalled && wr.stallGen == e.gen {
			*s.cStallTimeout++
			wr.noStall = wr.actFrom // its wake is held for the wakee instead
			s.unstall(w, int(wr.cpu), -1)
		}
	}
}

// flush reschedules the CPUs marked during a handler.
func (s *Sim) flush() {
	for len(s.dirty) > 0 && s.err == nil {
		cpu := int(s.dirty[0])
		s.dirty = s.dirty[1:]
		c := &s.cpus[cpu]
		c.dirty = false
		prevCtx := s.ctx
		s.ctx = cpu
		if c.stopPending {
			s.runStopper(cpu)
		} else if c.needResched {
			s.resched(cpu)
		}
		s.ctx = prevCtx
	}
	s.dirty = s.dirty[:0]
}

func (s *Sim) markDirty(cpu int) {
	c := &s.cpus[cpu]
	if !c.dirty {
		c.dirty = true
		s.dirty = append(s.dirty, int32(cpu))
	}
}

func (s *Sim) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("replay: %s at %s: %s", s.pol.Name(), s.now.Seconds(), fmt.Sprintf(format, args...))
	}
}
