package replay

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Workload is what a replay re-runs: per task instance, a chain of CPU-demand
// segments separated by blocking, each started by a Wake that names its
// cause.
//
// Work is measured in nanoseconds of a speed-1024 CPU at full frequency: a
// segment that ran 3 ms on a CPU of speed 383 is 3 ms × 383/1024 ≈ 1.12 ms
// of work, and replays in 1.12 ms on a CPU of speed 1024. A CPU's speed is
// its capacity unless the trace or the user says otherwise (SpeedMode).
type Workload struct {
	Name string `json:"name,omitempty"`
	// Start is the time origin of the workload (the recording's valid
	// start); absolute times in Wakes are on the same clock.
	Start timeline.Time `json:"start_ns"`
	// End is the recorded end; Options.End overrides it. 0 with Start 0
	// means "until every task is done".
	End timeline.Time `json:"end_ns"`
	// WakeAfterBlock holds a task wake that fires before its wakee has
	// blocked until the wakee blocks, and then wakes it at once, instead of
	// letting the wakee go on without sleeping (the kernel's ttwu on a
	// running task). Extract sets it: every recorded wake ended a recorded
	// sleep, so a wake that overtakes the block in the replay is a timing
	// shift of the replay, not a sleep the recording skipped.
	WakeAfterBlock bool `json:"wake_after_block,omitempty"`
	// WakeRule says which task wake ends a sleep that a task wake ended in
	// the recording: the recorded one (the zero value), any, the recorded
	// one or any once overslept, or the recorded one kept after its
	// wakee's block (see WakeRule).
	WakeRule WakeRule `json:"wake_rule,omitempty"`
	// HZ and Kernel are what the recording says (0 and "" if unknown).
	HZ     int    `json:"hz,omitempty"`
	Kernel string `json:"kernel,omitempty"`

	Tasks []Task `json:"tasks"`
	// Groups are the task groups tasks belong to (Task.Group); none: every
	// task is in the root group.
	Groups []Group `json:"groups,omitempty"`
	// WakeDelays is what the recording shows of the delays between a
	// wakeup and the switch it causes (Extract fills it; zero counts when
	// the recording has no such wakeups).
	WakeDelays WakeDelays `json:"wake_delays,omitzero"`
	// WakeCosts are the recorded costs of task wakes to their wakers
	// (Wake.Cost), split by whether the wake sent a resched IPI.
	WakeCosts WakeCosts `json:"wake_costs,omitzero"`
	// TickRuns is what the recording shows of the tick: runs of a task
	// ended by a preemption (R) in favour of a task that waited through the
	// whole run, with no wakeup onto the CPU meanwhile (Extract fills it).
	TickRuns TickRuns `json:"tick_runs,omitzero"`
	// Speed is the speed of each CPU of the recording machine (1024 = the
	// fastest) at which Extract turned run time into work. The replay runs
	// CPU i at Speed[i] when the topology has as many CPUs, else at
	// topology.Perf: the same recorded burst then takes as long as it
	// took. Nil: topology.Perf.
	Speed []int `json:"cpu_speed,omitempty"`
	// Unobserved lists the recording's gaps (lost events, clipped
	// buffers). The replay copies them into its timeline, so that the
	// modeled run is measured only where the recorded one was observed:
	// what the recording does not show cannot be compared.
	Unobserved []timeline.Gap `json:"unobserved,omitempty"`
	// Assumptions lists what the workload takes for granted because the
	// source could not tell.
	Assumptions []Assumption `json:"assumptions,omitempty"`
	// Busy is what the recording shows of its tasks' running time
	// (Extract fills it); Simulate refuses a workload whose running time
	// would take implausibly many ticks for its events. Zero: no check (a
	// scenario spec).
	Busy Busy `json:"busy,omitzero"`
}

// WakeDelays holds medians of the recorded wake-to-run time (sched_waking
// to the switch-in), each with its sample count, and the distributions the
// replay draws from. Local and Remote are tasks woken onto an idle CPU that
// ran them first: raised on that CPU itself (an interrupt: leaving the
// idle state and schedule()), and raised on another CPU (an IPI on top of
// that). Each distribution (the ...Q fields) holds the samples of at most
// maxDelayNs, and is nil with fewer than minDelaySamples of them.
type WakeDelays struct {
	LocalNs  int64     `json:"local_ns"`
	Local    int       `json:"local"`
	LocalQ   DelayDist `json:"local_q,omitempty"`
	RemoteNs int64     `json:"remote_ns"`
	Remote   int       `json:"remote"`
	RemoteQ  DelayDist `json:"remote_q,omitempty"`
	// IRQPreemptNs is the median wake-to-run time of wakeups raised by an
	// interrupt on a busy CPU whose task they preempted at once.
	IRQPreemptNs int64     `json:"irq_preempt_ns"`
	IRQPreempt   int       `json:"irq_preempt"`
	IRQPreemptQ  DelayDist `json:"irq_preempt_q,omitempty"`
	// TaskPreemptNs is the median wake-to-run time of wakeups and forks
	// raised by a task that preempted that task at its next switch.
	TaskPreemptNs int64     `json:"task_preempt_ns"`
	TaskPreempt   int       `json:"task_preempt"`
	TaskPreemptQ  DelayDist `json:"task_preempt_q,omitempty"`
	// BusyIPINs is the median wake-to-run time of wakeups raised on
	// another CPU that preempted the task running on the wakee's CPU at
	// its next switch: the waker's wakeup path (which sends the resched
	// IPI), the IPI's delivery and the switch. It measures an IPI to a
	// busy CPU.
	BusyIPINs int64     `json:"busy_ipi_ns"`
	BusyIPI   int       `json:"busy_ipi"`
	BusyIPIQ  DelayDist `json:"busy_ipi_q,omitempty"`
}

// WakeCosts summarise the recorded Wake.Cost of task wakes: those that
// sent no resched IPI (a wakeup onto the waker's own CPU, or onto another
// that it did not preempt) and those that did. Each distribution holds the
// costs of at most maxDelayNs and is nil with fewer than minDelaySamples.
type WakeCosts struct {
	PlainNs int64     `json:"plain_ns"`
	Plain   int       `json:"plain"`
	PlainQ  DelayDist `json:"plain_q,omitempty"`
	IPINs   int64     `json:"ipi_ns"`
	IPI     int       `json:"ipi"`
	IPIQ    DelayDist `json:"ipi_q,omitempty"`
}

// text is the wake-cost note.
func (c WakeCosts) text() string {
	s := fmt.Sprintf("a task's wake costs its waker what the recording shows (sched_waking to sched_wakeup on the waker's CPU): without a resched IPI %s, with one %s",
		usText(c.PlainNs, c.Plain), usText(c.IPINs, c.IPI))
	if len(c.PlainQ) == 0 || len(c.IPIQ) == 0 {
		return s + fmt.Sprintf(" (%d and %d wakes, fewer than %d of one kind): every wake keeps its recorded cost", c.Plain, c.IPI, minDelaySamples)
	}
	return s + fmt.Sprintf(" (%d and %d wakes); a wake that sends a resched IPI in the model and did not in the recording, or the reverse, costs its waker a draw of the other kind instead of its recorded cost", c.Plain, c.IPI)
}

// TickRuns summarises the runs a tick ended: their number and median
// length (ns).
type TickRuns struct {
	N        int   `json:"n"`
	MedianNs int64 `json:"median_ns"`
}

// Tick-run calibration: with at least minTickRuns such runs whose median
// is over slowTickFactor ticks of the default HZ, the recording machine
// delivered its ticks late (an emulated or overcommitted guest, whose vCPU
// threads the host deschedules: a run lasts until the next tick the vCPU
// actually takes), and the replay ticks at the rate the runs show.
const (
	minTickRuns    = 20
	slowTickFactor = 2
	defaultHZ      = 250
)

// TickHZ returns the tick rate the recording's tick-ended runs imply, and
// why; 0 when they do not call for one (too few runs, or runs no longer
// than a tick or two of the default HZ: a slice ended them).
func (w *Workload) TickHZ() (int, string) {
	tr := w.TickRuns
	tick := int64(1e9 / defaultHZ)
	switch {
	case tr.N < minTickRuns:
		return 0, fmt.Sprintf("%d runs ended by the tick (a preemption in favour of a task that waited through the run, no wakeup onto the CPU), fewer than %d: HZ %d", tr.N, minTickRuns, defaultHZ)
	case tr.MedianNs <= slowTickFactor*tick:
		return 0, fmt.Sprintf("%d runs ended by the tick, median %s: within %d ticks of HZ %d, which the replay keeps", tr.N, usText(tr.MedianNs, tr.N), slowTickFactor, defaultHZ)
	}
	hz := max(int(1e9/tr.MedianNs), 10)
	return hz, fmt.Sprintf("%d runs ended by the tick, median %s, over %d ticks of HZ %d: the recording machine delivered its ticks late (a guest whose vCPUs the host deschedules), so the replay ticks at HZ %d, once per median run", tr.N, usText(tr.MedianNs, tr.N), slowTickFactor, defaultHZ, hz)
}

// minDelaySamples is how many wakeups of at most maxDelayNs a delay needs
// before CalibratedOptions draws it from the recording (a longer one is a
// trace that misses switches, not a CPU).
const (
	minDelaySamples = delayQuantiles
	maxDelayNs      = 1_000_000
)

// CalibratedOptions returns DefaultOptions with each delay drawn from what
// w's recording shows (WakeDelays), each by its own evidence:
//
//   - IdleExitDist: wakeups raised on an idle CPU by an interrupt there,
//     which measure the exit from idle alone;
//   - IdleWakeDist: wakeups onto an idle CPU raised on another CPU, which
//     measure the IPI and the exit together, so nothing is subtracted;
//   - IRQReschedDist, TaskReschedDist: wakeups preempting the task running
//     on their CPU, raised by an interrupt or by that task;
//   - BusyIPIDist: wakeups raised on another CPU that preempt the task
//     running on the wakee's CPU, which measure an IPI to a busy CPU and
//     the switch it causes (several microseconds on a virtual machine,
//     where sending an IPI exits to the host).
//
// A delay with fewer than minDelaySamples samples keeps the default:
// IdleExit, IRQResched and TaskResched 0 (at once), an IPI IPIDelay plus up
// to IPIJitter (2 + 0..2 µs), and a remote wakeup onto an idle CPU pays
// that IPI and then the idle exit.
func CalibratedOptions(w *Workload) Options {
	o := DefaultOptions()
	if w.HZ == 0 {
		if hz, _ := w.TickHZ(); hz > 0 {
			o.HZ = hz
		}
	}
	iw := w.WakeDelays
	if len(iw.LocalQ) > 0 {
		o.IdleExitDist, o.IdleExit = iw.LocalQ, iw.LocalQ.Median()
	}
	o.IdleWakeDist = iw.RemoteQ
	if len(iw.IRQPreemptQ) > 0 {
		o.IRQReschedDist, o.IRQResched = iw.IRQPreemptQ, iw.IRQPreemptQ.Median()
	}
	if len(iw.TaskPreemptQ) > 0 {
		o.TaskReschedDist, o.TaskResched = iw.TaskPreemptQ, iw.TaskPreemptQ.Median()
	}
	o.BusyIPIDist = iw.BusyIPIQ
	if len(w.WakeCosts.PlainQ) > 0 && len(w.WakeCosts.IPIQ) > 0 {
		o.WakeCostPlain, o.WakeCostIPI = w.WakeCosts.PlainQ, w.WakeCosts.IPIQ
	}
	return o
}

// delaysText says, for the wake-delays note, what CalibratedOptions takes
// from d.
func delaysText(d WakeDelays, local, remote, irq, task, busy []int64) string {
	one := func(what string, samples []int64, q DelayDist, dflt string) string {
		kept := 0
		for _, v := range samples {
			if v <= maxDelayNs {
				kept++
			}
		}
		if len(q) == 0 {
			return fmt.Sprintf("%s: %d wakeups (%d within 1 ms), fewer than %d: default %s", what, len(samples), kept, minDelaySamples, dflt)
		}
		return fmt.Sprintf("%s: drawn from %d wakeups within 1 ms (of %d; p10 %s, p50 %s, p90 %s)", what, kept, len(samples),
			usText(q[len(q)/10], 1), usText(q.Median(), 1), usText(q[len(q)*9/10], 1))
	}
	return strings.Join([]string{
		one("exit from idle (wakeups raised on the idle CPU itself)", local, d.LocalQ, "0 us"),
		one("wakeup onto an idle CPU from another CPU, IPI and exit together", remote, d.RemoteQ, "an IPI of 2 us + 0..2 us, then the exit from idle"),
		one("an interrupt's wakeup preempting the running task", irq, d.IRQPreemptQ, "0 us"),
		one("a task's wakeup or fork preempting that task", task, d.TaskPreemptQ, "0 us"),
		one("a wakeup from another CPU preempting the running task, IPI and switch together", busy, d.BusyIPIQ, "an IPI of 2 us + 0..2 us"),
	}, "; ")
}

// Assumption is a named thing a workload takes for granted. Reports print
// them next to every replayed figure.
type Assumption struct {
	Name   string `json:"name"`
	Detail string `json:"detail"`
	Tasks  int    `json:"tasks,omitempty"` // how many tasks it concerns (0: all or not per task)
}

// Named assumptions. Extract and ParseSpec use these names.
const (
	AssumeFlatCgroups    = "flat-cgroups"        // groups unknown (no group table): every task in the root group, weighing by its own nice
	AssumeTick           = "tick"                // the tick rate, from the runs a tick ended
	AssumeFMax           = "frequency-fmax"      // CPUs ran at full frequency: work = time × speed / 1024
	AssumeCPUSpeed       = "cpu-speed"           // each CPU's speed (1024 = fastest) and where it came from
	AssumeAffinity       = "affinity"            // affinity is not traced: per-CPU kthreads pinned, every other task free
	AssumePrioMajority   = "prio-majority"       // nice from the most frequent prio (PI boosts ignored)
	AssumeNoSync         = "wake-sync-ipc"       // WF_SYNC is invisible: wakeups across processes are taken as sync, within one as non-sync
	AssumeIRQWaker       = "irq-waker"           // a wakeup recorded while a task ran, with no context flags, may be an interrupt
	AssumeWakeDelays     = "wake-delays"         // idle exit and IPI cost as measured in the recording
	AssumeRunAtEnd       = "running-at-end"      // a task running when the recording ended keeps demanding CPU
	AssumeWaitingAtEnd   = "waiting-at-end"      // a task waiting (woken or preempted) at the end demands what it ran and no more
	AssumeNoCookies      = "no-core-cookies"     // core-scheduling cookies are not in the trace: none assumed
	AssumeCookieMarkers  = "core-cookies-marked" // cookies from the trace's core_sched_cookie markers (CookieMarker)
	AssumePolicyNormal   = "policy-normal"       // SCHED_BATCH/SCHED_IDLE look like SCHED_NORMAL; RT taken as SCHED_FIFO
	AssumeStartQueued    = "start-state"         // tasks runnable at the start are queued where they were first seen
	AssumeLostGaps       = "lost-gaps"           // demand inside lost-event gaps is unknown and left out
	AssumeTimerNotTask   = "timer-not-task"      // wakeups from idle, softirq or hardirq context replay at the recorded delay
	AssumeExternalWaker  = "external-waker"      // a waker not in the trace replays at the recorded absolute time
	AssumeWakeCost       = "wake-cost"           // a waker's run includes its wakes; one that sends a resched IPI in the model and not in the recording (or the reverse) costs the other kind's recorded cost
	AssumeKilledAt       = "killed-at"           // a task a signal ended (it exited without blocking after it) ends at the signal's recorded time
	AssumeWakeAfterBlock = "wake-after-block"    // a wake that overtakes its wakee's block in the replay waits for the block
	AssumeSyncPair       = "sync-pair"           // a wakee switched in when its waker blocked right after waking it was a WF_SYNC wakeup
)

// Task is one task instance of a workload.
type Task struct {
	TID  timeline.TID `json:"tid"`
	TGID int32        `json:"tgid"`
	Comm string       `json:"comm"`
	// Prio is the kernel prio: -1 deadline, 0..99 real-time (99 -
	// rt_priority), 100..139 fair with nice = Prio - 120.
	Prio   int         `json:"prio"`
	Policy SchedPolicy `json:"policy,omitempty"`
	// CPUs is the allowed set; empty means every CPU.
	CPUs topology.CPUSet `json:"cpus,omitempty"`
	// Affinity lists changes of the allowed set at absolute times.
	Affinity []AffinityChange `json:"affinity,omitempty"`
	// Cookie is the core-scheduling cookie (0: untagged).
	Cookie uint64 `json:"cookie,omitempty"`
	// PerCPUKthread marks a kernel thread bound to one CPU: the balancer
	// never moves it.
	PerCPUKthread bool `json:"percpu_kthread,omitempty"`
	// Group is the ID of the task group the task belongs to (an index + 1
	// into Workload.Groups); 0 is the root group.
	Group int `json:"group,omitempty"`
	// CPU is where a WakeStart task is queued at its start; -1 lets the
	// policy place it like a fork.
	CPU int `json:"cpu"`
	// Segments are the task's bursts of demand in order.
	Segments []Segment `json:"segments"`
	// End says what follows the last segment.
	End TaskEnd `json:"end"`
	// KillAt, when set (not 0), ends the task at that absolute time: a
	// signal delivered while it ran or waited to run, after which it
	// exited without blocking (killed by timeout(1), kill(1), a
	// watchdog). Its work stops there, whatever of its last segment is
	// left: it exits at its next run, and the wakes and forks that
	// segment had still to do come with the exit. A task not running or
	// queued then (blocked in the model) is not killed.
	KillAt timeline.Time `json:"kill_at,omitempty"`
	// Flags names the Assumptions that concern this task.
	Flags []string `json:"flags,omitempty"`
}

// Segment is one burst of CPU demand: the task becomes runnable through
// Wake, consumes Work, then blocks (or ends, for the last segment).
type Segment struct {
	Wake Wake  `json:"wake"`
	Work int64 `json:"work"` // ns at capacity 1024
}

// AffinityChange sets a task's allowed CPUs at an absolute time.
type AffinityChange struct {
	At   timeline.Time   `json:"at_ns"`
	CPUs topology.CPUSet `json:"cpus"` // empty: every CPU
}

// SchedPolicy is a task's scheduling policy.
type SchedPolicy uint8

// Scheduling policies. PolicyDefault derives it from Prio: FIFO below 100,
// Deadline for -1, Normal otherwise.
const (
	PolicyDefault SchedPolicy = iota
	PolicyNormal
	PolicyBatch
	PolicyIdle
	PolicyFIFO
	PolicyRR
	PolicyDeadline
)

var policyNames = [...]string{"", "normal", "batch", "idle", "fifo", "rr", "deadline"}

func (p SchedPolicy) String() string {
	if int(p) < len(policyNames) && p != PolicyDefault {
		return policyNames[p]
	}
	return "default"
}

// MarshalText writes the policy name.
func (p SchedPolicy) MarshalText() ([]byte, error) {
	return []byte(policyNames[p%SchedPolicy(len(policyNames))]), nil
}

// UnmarshalText reads a policy name.
func (p *SchedPolicy) UnmarshalText(b []byte) error {
	for i, n := range policyNames {
		if n == string(b) {
			*p = SchedPolicy(i)
			return nil
		}
	}
	return fmt.Errorf("unknown scheduling policy %q: want normal, batch, idle, fifo, rr or deadline", b)
}

// TaskEnd says what a task does after its last segment.
type TaskEnd uint8

// Task ends.
const (
	EndExit  TaskEnd = iota // exits (sched_process_exit, switch-out in X/Z)
	EndSleep                // blocks and is never woken again (the recording ended while it slept)
	EndRun                  // keeps demanding CPU until the replay ends (it was runnable when the recording ended)
)

var endNames = [...]string{"exit", "sleep", "run"}

func (e TaskEnd) String() string {
	if int(e) < len(endNames) {
		return endNames[e]
	}
	return fmt.Sprintf("TaskEnd(%d)", uint8(e))
}

// MarshalText writes the end name.
func (e TaskEnd) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// UnmarshalText reads an end name.
func (e *TaskEnd) UnmarshalText(b []byte) error {
	for i, n := range endNames {
		if n == string(b) {
			*e = TaskEnd(i)
			return nil
		}
	}
	return fmt.Errorf("unknown task end %q: want exit, sleep or run", b)
}

// WakeKind names the cause that makes a task runnable.
type WakeKind uint8

// Wake causes.
const (
	// WakeStart: runnable at absolute time At, already queued (a task that
	// exists when the workload starts). No wakeup event is emitted.
	WakeStart WakeKind = iota
	// WakeFork: created by task Waker when Waker has done Work ns of work
	// (sched_process_fork, sched_wakeup_new). Only for a first segment.
	WakeFork
	// WakeTask: woken by task Waker when Waker has done Work ns of work in
	// the replay, whenever that happens.
	WakeTask
	// WakeTimer: a timer fires Delay ns after the task blocked. With
	// Period > 0 the timer is periodic: each expiry is the previous one
	// plus Period, and an expiry already past fires at once.
	WakeTimer
	// WakeIRQ: an interrupt Delay ns after the task blocked.
	WakeIRQ
	// WakeAt: an outside event at absolute time At.
	WakeAt
)

var wakeNames = [...]string{"start", "fork", "task", "timer", "irq", "at"}

func (k WakeKind) String() string {
	if int(k) < len(wakeNames) {
		return wakeNames[k]
	}
	return fmt.Sprintf("WakeKind(%d)", uint8(k))
}

// MarshalText writes the kind name.
func (k WakeKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind name.
func (k *WakeKind) UnmarshalText(b []byte) error {
	for i, n := range wakeNames {
		if n == string(b) {
			*k = WakeKind(i)
			return nil
		}
	}
	return fmt.Errorf("unknown wake kind %q: want start, fork, task, timer, irq or at", b)
}

// Wake is what makes a task runnable at the start of a segment.
type Wake struct {
	// Waker is, for WakeTask and WakeFork, the index of the waking task in
	// Workload.Tasks.
	Waker int32 `json:"waker,omitempty"`
	// CPU is where a timer, interrupt or outside wakeup is raised; -1 means
	// the CPU the task last ran on.
	CPU  int32    `json:"cpu"`
	Kind WakeKind `json:"kind"`
	// Sync is the WF_SYNC hint (the waker is about to sleep).
	Sync bool `json:"sync,omitempty"`
	// CostIPI says the wake sent a resched IPI (its wakee, on another CPU,
	// preempted the task there); see Cost.
	CostIPI bool `json:"cost_ipi,omitempty"`
	// Work is the waker's cumulative work (ns at capacity 1024, counted
	// from its first segment) at which it wakes this task.
	Work   int64         `json:"work,omitempty"`
	At     timeline.Time `json:"at_ns,omitempty"`  // WakeStart, WakeAt
	Delay  int64         `json:"delay,omitempty"`  // WakeTimer, WakeIRQ: ns after blocking
	Period int64         `json:"period,omitempty"` // WakeTimer: period of a periodic timer
	// Slept is, for WakeTask, how long the sleep this wake ended lasted
	// in the recording (ns; 0 if not known). WakeLateAny uses it.
	Slept int64 `json:"slept,omitempty"`
	// Cost is, for WakeTask, what the wake cost its waker in the
	// recording: sched_waking to sched_wakeup on the waker's CPU (ns), time
	// the waker's Work includes; 0 if not measured (a wake queued on the
	// target's wake list is emitted there).
	Cost int64 `json:"cost,omitempty"`
}

// UnmarshalJSON reads a Wake; a missing "cpu" means -1.
func (w *Wake) UnmarshalJSON(b []byte) error {
	type plain Wake
	p := plain{CPU: -1}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*w = Wake(p)
	return nil
}

// UnmarshalJSON reads a Task; a missing "cpu" means -1.
func (t *Task) UnmarshalJSON(b []byte) error {
	type plain Task
	p := plain{CPU: -1}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*t = Task(p)
	return nil
}

// Class is the scheduling class a task's policy maps to.
type Class uint8

// Scheduling classes, lowest first.
const (
	ClassFair Class = iota
	ClassRT
	ClassDeadline
)

// EffectivePolicy returns the task's policy, derived from Prio when it is
// PolicyDefault: deadline for -1, FIFO for 0..99, normal otherwise.
func (t *Task) EffectivePolicy() SchedPolicy {
	if t.Policy != PolicyDefault {
		return t.Policy
	}
	switch {
	case t.Prio < 0:
		return PolicyDeadline
	case t.Prio < 100:
		return PolicyFIFO
	}
	return PolicyNormal
}

// Class returns the scheduling class of the task.
func (t *Task) Class() Class {
	switch t.EffectivePolicy() {
	case PolicyFIFO, PolicyRR:
		return ClassRT
	case PolicyDeadline:
		return ClassDeadline
	}
	return ClassFair
}

// Nice returns the nice value of a fair task (Prio - 120, clamped to
// -20..19); 0 for other classes.
func (t *Task) Nice() int {
	if t.Class() != ClassFair {
		return 0
	}
	n := t.Prio - 120
	return min(max(n, -20), 19)
}

// Demand returns the task's total work (ns at capacity 1024).
func (t *Task) Demand() int64 {
	var d int64
	for _, s := range t.Segments {
		d += s.Work
	}
	return d
}

// Validate checks the workload's internal references against a machine of
// ncpu CPUs (0: do not check CPU numbers). Every error names the task and
// segment.
func (w *Workload) Validate(ncpu int) error {
	if w.WakeRule > WakeOrdered {
		return fmt.Errorf("unknown wake rule %d", w.WakeRule)
	}
	n := len(w.Tasks)
	checkSet := func(i int, what string, s topology.CPUSet) error {
		if ncpu > 0 && s.Max() >= ncpu {
			return fmt.Errorf("task %d (%s): %s %s names CPU %d, the machine has %d", i, w.Tasks[i].Comm, what, s, s.Max(), ncpu)
		}
		return nil
	}
	for i := range w.Tasks {
		t := &w.Tasks[i]
		name := func() string { return fmt.Sprintf("task %d (%s)", i, t.Comm) }
		if len(t.Segments) == 0 {
			return fmt.Errorf("%s: no segments", name())
		}
		if t.Prio < -1 || t.Prio > 139 {
			return fmt.Errorf("%s: prio %d, want -1..139", name(), t.Prio)
		}
		if t.Policy > PolicyDeadline {
			return fmt.Errorf("%s: unknown policy %d", name(), t.Policy)
		}
		if t.End > EndRun {
			return fmt.Errorf("%s: unknown end %d", name(), t.End)
		}
		if err := checkSet(i, "cpus", t.CPUs); err != nil {
			return err
		}
		for _, a := range t.Affinity {
			if err := checkSet(i, "affinity", a.CPUs); err != nil {
				return err
			}
		}
		if ncpu > 0 && t.CPU >= ncpu {
			return fmt.Errorf("%s: start CPU %d, the machine has %d", name(), t.CPU, ncpu)
		}
		for j := range t.Segments {
			s := &t.Segments[j]
			if s.Work < 0 {
				return fmt.Errorf("%s segment %d: negative work %d", name(), j, s.Work)
			}
			wk := &s.Wake
			switch wk.Kind {
			case WakeStart, WakeFork:
				if j != 0 {
					return fmt.Errorf("%s segment %d: a %v wake may only start the first segment", name(), j, wk.Kind)
				}
			case WakeTask, WakeTimer, WakeIRQ, WakeAt:
			default:
				return fmt.Errorf("%s segment %d: unknown wake kind %d", name(), j, wk.Kind)
			}
			if wk.Kind == WakeTask || wk.Kind == WakeFork {
				if wk.Waker < 0 || int(wk.Waker) >= n {
					return fmt.Errorf("%s segment %d: waker %d out of range (%d tasks)", name(), j, wk.Waker, n)
				}
				if int(wk.Waker) == i {
					return fmt.Errorf("%s segment %d: a task cannot wake itself while it sleeps", name(), j)
				}
				if wk.Work < 0 {
					return fmt.Errorf("%s segment %d: negative waker work %d", name(), j, wk.Work)
				}
			}
			if (wk.Kind == WakeTimer || wk.Kind == WakeIRQ) && (wk.Delay < 0 || wk.Period < 0) {
				return fmt.Errorf("%s segment %d: negative timer delay or period", name(), j)
			}
			if ncpu > 0 && int(wk.CPU) >= ncpu {
				return fmt.Errorf("%s segment %d: wake CPU %d, the machine has %d", name(), j, wk.CPU, ncpu)
			}
		}
	}
	if err := w.validateGroups(); err != nil {
		return err
	}
	// Fork parents must not form a cycle: every task must be able to start.
	state := make([]uint8, n) // 0 new, 1 visiting, 2 done
	var visit func(i int) error
	visit = func(i int) error {
		for i >= 0 {
			if state[i] == 2 {
				return nil
			}
			if state[i] == 1 {
				return fmt.Errorf("task %d (%s): fork cycle", i, w.Tasks[i].Comm)
			}
			state[i] = 1
			wk := w.Tasks[i].Segments[0].Wake
			next := -1
			if wk.Kind == WakeFork {
				next = int(wk.Waker)
			}
			defer func(i int) { state[i] = 2 }(i)
			i = next
		}
		return nil
	}
	for i := range w.Tasks {
		if err := visit(i); err != nil {
			return err
		}
	}
	return nil
}
