package replay

import (
	"math/rand/v2"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Now returns the current simulated time.
func (s *Sim) Now() timeline.Time { return s.now }

// Topology returns the simulated machine.
func (s *Sim) Topology() *topology.Topology { return s.topo }

// NCPU returns the number of CPUs.
func (s *Sim) NCPU() int { return len(s.cpus) }

// Workload returns the workload being replayed.
func (s *Sim) Workload() *Workload { return s.w }

// Task returns task t of the workload.
func (s *Sim) Task(t int) *Task { return &s.w.Tasks[t] }

// NTask returns the number of tasks.
func (s *Sim) NTask() int { return len(s.tasks) }

// HZ returns the tick rate and TickNS the tick period in ns.
func (s *Sim) HZ() int { return s.opts.HZ }

// TickNS returns the tick period (TICK_NSEC).
func (s *Sim) TickNS() int64 { return s.tick }

// Rand returns the run's deterministic random source.
func (s *Sim) Rand() *rand.Rand { return s.rng }

// Context returns the CPU whose handler is running (-1 outside handlers).
func (s *Sim) Context() int { return s.ctx }

// TaskCPU returns the CPU task t is on or last ran on.
func (s *Sim) TaskCPU(t int) int { return int(s.tasks[t].cpu) }

// TaskState returns the engine state of task t.
func (s *Sim) TaskState(t int) TaskState { return s.tasks[t].state }

// Allowed reports whether task t may run on cpu under its current affinity.
func (s *Sim) Allowed(t, cpu int) bool {
	a := s.tasks[t].allowed
	return len(a) == 0 || a.Has(cpu)
}

// AllowedCount returns how many CPUs task t may run on.
func (s *Sim) AllowedCount(t int) int { return s.tasks[t].nAllowed }

// Curr returns the task executing on cpu, -1 when the CPU idles or is
// between tasks.
func (s *Sim) Curr(cpu int) int { return int(s.cpus[cpu].curr) }

// CPUState returns what cpu is doing.
func (s *Sim) CPUState(cpu int) CPUState { return s.cpus[cpu].state }

// WakePending returns the number of wakeups on their way to cpu's wake list
// (the kernel's ttwu_pending).
func (s *Sim) WakePending(cpu int) int { return int(s.cpus[cpu].wakePending) }

// NeedResched reports whether cpu has a reschedule pending.
func (s *Sim) NeedResched(cpu int) bool { return s.cpus[cpu].needResched || s.cpus[cpu].ipiPending }

// SameLLC reports whether two CPUs share a last-level cache.
func (s *Sim) SameLLC(a, b int) bool { return s.cpus[a].llc == s.cpus[b].llc }

// Counter returns the counter called name, creating it at 0. Counters end up
// in Result.Counters.
func (s *Sim) Counter(name string) *int64 {
	if c, ok := s.counters[name]; ok {
		return c
	}
	c := new(int64)
	s.counters[name] = c
	return c
}

// Resched asks cpu to reschedule: at once when called from cpu's own
// handler, after an IPI otherwise.
func (s *Sim) Resched(cpu int) {
	c := &s.cpus[cpu]
	if c.needResched {
		return
	}
	local := int64(0)
	if cpu == s.ctx && c.state == CPURunning {
		local = s.opts.TaskReschedDist.draw(s.rng, s.opts.TaskResched)
		if s.inIRQ {
			local = s.opts.IRQReschedDist.draw(s.rng, s.opts.IRQResched)
		}
	}
	if cpu == s.ctx && (local <= 0 || c.state != CPURunning) {
		c.needResched = true
		s.markDirty(cpu)
		return
	}
	if c.ipiPending {
		return
	}
	d, paid := local, int64(0) // on cpu itself: the interrupt or the waker's system call returns, then schedule()
	if cpu != s.ctx {
		*s.cIPI++
		d, paid = s.ipiTo(cpu)
	}
	if d <= 0 {
		c.needResched = true
		s.markDirty(cpu)
		return
	}
	c.ipiPending = true
	// The kernel's need_resched flag is the running task's: if that task
	// leaves the CPU before the request takes effect, it goes with it.
	target := int32(-1)
	if c.state == CPURunning {
		target = c.curr
	}
	s.push(event{at: s.now + timeline.Time(d), kind: evIPI, a: int32(cpu), b: target, arg: paid})
}

// ipiTo draws the delay of an IPI to cpu. To an idle CPU with
// Options.IdleWakeDist set it is a draw from that distribution, which holds
// the exit from idle too: paid is then 1, and the CPU skips IdleExit when
// the IPI reaches it still idle. To a busy CPU with Options.BusyIPIDist
// set it is a draw from that one.
func (s *Sim) ipiTo(cpu int) (d, paid int64) {
	if s.cpus[cpu].state == CPUIdle {
		if len(s.opts.IdleWakeDist) > 0 {
			return s.opts.IdleWakeDist.draw(s.rng, 0), 1
		}
	} else if len(s.opts.BusyIPIDist) > 0 {
		return s.opts.BusyIPIDist.draw(s.rng, 0), 0
	}
	return s.ipiDelay(), 0
}

// ipiDelay draws the latency of one IPI: IPIDelay plus up to IPIJitter.
func (s *Sim) ipiDelay() int64 {
	d := s.opts.IPIDelay
	if s.opts.IPIJitter > 0 {
		d += s.rng.Int64N(s.opts.IPIJitter + 1)
	}
	return d
}

// After calls the policy's Timer(cpu, kind, arg) at time at (not before now).
func (s *Sim) After(at timeline.Time, cpu, kind int, arg int64) {
	if at < s.now {
		at = s.now
	}
	s.push(event{at: at, kind: evPolicy, a: int32(cpu), b: int32(kind), arg: arg})
}

// StopCPU runs the policy's Stop(cpu, kind, arg) on cpu as the kernel's
// stopper would: the running task is preempted and put back first. It
// takes an IPI when cpu is not the calling handler's CPU.
func (s *Sim) StopCPU(cpu, kind int, arg int64) {
	s.addStop(cpu, stopItem{kind: kind, arg: arg})
}

// Migrate moves queued (runnable, not running) task t to dst: the policy's
// Dequeue on the old CPU, a sched_migrate_task event, Enqueue on dst and the
// preemption check there. It reports false, doing nothing, when t is not
// queued or dst is not allowed.
func (s *Sim) Migrate(t, dst int) bool {
	tr := &s.tasks[t]
	if tr.state != TaskQueued || !s.Allowed(t, dst) {
		return false
	}
	src := int(tr.cpu)
	if src == dst {
		return true
	}
	if s.cpus[src].onCPU == int32(t) {
		return false // still on its CPU until the switch completes
	}
	s.pol.Dequeue(src, t, DeqMigrate)
	s.emitMigrate(t, src, dst)
	tr.cpu = int32(dst)
	tr.movedAt = s.now
	*s.cMoved++
	s.pol.Enqueue(dst, t, EnqMigrated)
	s.checkPreempt(dst, t)
	return true
}
