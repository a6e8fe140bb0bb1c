package replay

import (
	"errors"

	"github.com/schedlens/schedlens/timeline"
)

// Options configure a replay. The zero value is usable: HZ from the workload
// (else 250), no IPI delay, no jitter, run until the workload's end.
// MaxHZ bounds a tick rate (engine options, scenario specs, the command
// line): the kernel offers 100, 250, 300 and 1000 (kernel/Kconfig.hz) and
// some architectures up to 1200; 10000 leaves room and keeps a tick of at
// least 100 µs.
const MaxHZ = 10000

type Options struct {
	// Progress, when set, is told every 16,384 events and at the end how
	// much of the workload's span (End - Start, ns) the run has simulated.
	// It changes nothing in the run.
	Progress func(doneNs, totalNs int64)
	// Seed makes the run reproducible; the same workload, topology,
	// policy and seed give the same events.
	Seed uint64
	// HZ is the tick rate (CONFIG_HZ), 1 to MaxHZ. 0 takes Workload.HZ,
	// else 250.
	HZ int
	// End stops the run at this absolute time. 0 takes Workload.End when
	// it is after Workload.Start; otherwise the run lasts until no task can
	// run any more.
	End timeline.Time
	// Overrun lets the run go on past its end, by at most this much (ns),
	// while a task that exits in the workload (EndExit) has not exited:
	// so that a change that makes a job finish later than the recording
	// did shows as a later completion, not as a job cut at the end.
	// 0: stop at the end.
	Overrun timeline.Time
	// IPIDelay is the latency of a resched or wake-list IPI, from the
	// sending CPU to the target acting on it (ns). IPIJitter adds a
	// uniformly drawn 0..IPIJitter ns to each IPI.
	IPIDelay  int64
	IPIJitter int64
	// IRQResched is the time from a wakeup raised by an interrupt (a timer
	// or device wake) that preempts the running task to the switch:
	// interrupt exit and schedule() (ns). 0: at once. An idle CPU takes
	// IdleExit instead.
	IRQResched int64
	// TaskResched is the same for a wakeup raised by a task (or a fork)
	// that preempts that task: on a kernel without full preemption the
	// waker switches out where it next checks need_resched, typically on
	// its way back to user space (ns). 0: at once.
	TaskResched int64
	// IdleExit is the time an idle CPU takes from a reschedule request
	// (a wakeup enqueued on it, an IPI taken) to the pick of its next
	// task: leaving the idle state and entering schedule() (ns). 0: at once.
	IdleExit int64
	// IdleExitDist, when set, replaces IdleExit by a draw from it at each
	// exit from idle that an interrupt on the idle CPU itself caused.
	IdleExitDist DelayDist
	// IdleWakeDist, when set, is the whole delay of a wakeup raised on
	// another CPU onto an idle CPU, from the wakeup to the pick: the IPI
	// and the exit from idle together, as the recording measures them.
	// Such a wakeup then pays neither IPIDelay nor IdleExit. Unset: it
	// pays both.
	IdleWakeDist DelayDist
	// IRQReschedDist and TaskReschedDist, when set, replace IRQResched and
	// TaskResched by a draw from them.
	IRQReschedDist  DelayDist
	TaskReschedDist DelayDist
	// BusyIPIDist, when set, replaces IPIDelay and IPIJitter by a draw
	// from it for an IPI to a CPU that is not idle (a wake-list wakeup or a
	// resched request).
	BusyIPIDist DelayDist
	// WakeCostPlain and WakeCostIPI, when both are set, are the costs of a
	// task wake to its waker without and with a resched IPI (WakeCosts): a
	// wake whose kind in the model differs from the recording's
	// (Wake.CostIPI) charges its waker a draw of the model's kind instead
	// of its recorded Wake.Cost.
	WakeCostPlain DelayDist
	WakeCostIPI   DelayDist
	// NoWakeList delivers every remote wakeup from the waker's CPU at once,
	// as with TTWU_QUEUE off (PREEMPT_RT); otherwise a wakeup to another LLC
	// or to a CPU with nothing running goes through the target's wake list
	// and arrives IPIDelay later.
	NoWakeList bool
	// KeepLatencies keeps every wakeup latency sample in TaskResult.
	KeepLatencies bool
	// MaxEvents stops a run that processes more simulation events than
	// this (0: 1<<40) with ErrTooManyEvents.
	MaxEvents int64
	// Discard runs without recording a timeline: Result.Timeline is nil,
	// the per-task results and counters are kept. For parameter sweeps and
	// for measuring the simulation alone.
	Discard bool
	// Log keeps the modeled events in a compact log (Result.Events) for
	// a caller that only walks them once (to measure the run), instead of
	// a Timeline's columns: Result.Timeline is then a summary Timeline,
	// for Timeline.NewStreamWalk fed from Result.Events, that has every
	// figure of the events (the recording's unobserved stretches among its
	// gaps) but not the events. About half the memory.
	Log bool
	// Plan is the workload's NewPlan, for runs of one workload that share
	// it (nil: the run builds its own).
	Plan *Plan
}

// DefaultOptions returns the options the command line uses: HZ 250, a 2 µs
// IPI with 2 µs of jitter.
func DefaultOptions() Options {
	return Options{HZ: 250, IPIDelay: 2000, IPIJitter: 2000}
}

// ErrTooManyEvents is returned when a run exceeds Options.MaxEvents.
var ErrTooManyEvents = errors.New("replay: too many simulation events")
