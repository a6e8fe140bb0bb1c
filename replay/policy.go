package replay

// Policy makes every scheduling decision of a replay. The engine owns time,
// work, wakeup causality, IPIs, the tick and the event record; the policy
// owns the run queues and the model of the kernel (classes, EEVDF, PELT,
// wake placement, load balancing, core scheduling).
//
// Task and CPU arguments are indices: t into Workload.Tasks, cpu into
// Topology.CPUs. All calls happen at Sim.Now(), on the engine's goroutine,
// and may call back into the Sim's services (Resched, Migrate, After, ...).
//
// The call protocol mirrors the kernel's:
//   - a wakeup calls Requeue, then (if it returned false) SelectCPU, then
//     Enqueue with EnqWakeup, then WakeupPreempt when the CPU runs a task;
//   - a task that blocks or exits is Dequeued (DeqSleep or DeqExit) while it
//     is still the CPU's current task, then Pick is called with it as prev
//     and prevQueued false;
//   - a preempted task stays queued: Pick is called with it as prev and
//     prevQueued true, and may return it again (no switch happens then);
//   - Pick may return a Delay instead of a task (time spent balancing
//     before the switch, as in newidle balancing): the engine calls Pick
//     again after it with prev -1; wakeups arriving meanwhile are Enqueued;
//   - the stopper (StopCPU) takes the CPU's current task off the CPU with
//     PutPrev, runs Stop, then calls Pick with prev -1.
type Policy interface {
	// Name identifies the policy and its knobs, e.g. "6.12+resched-ineligible".
	Name() string
	// Attach is called once before the run, after the engine sized its state.
	Attach(s *Sim) error
	// SelectCPU returns the CPU a waking, forked or re-homed task should be
	// queued on (select_task_rq). from is the CPU the request runs on and
	// waker the task running there (-1 for an interrupt or the idle task).
	// The engine uses the answer only if it is an allowed CPU of t.
	SelectCPU(t, from, waker int, flags WakeFlags) int
	// Enqueue makes t runnable on cpu.
	Enqueue(cpu, t int, flags EnqueueFlags)
	// Dequeue takes t off cpu's queue (it slept, exited or moves away).
	Dequeue(cpu, t int, flags DequeueFlags)
	// Requeue is asked first when a sleeping task is woken. A policy that
	// still holds the task queued (the kernel's delayed dequeue) requeues
	// it where it is and returns its CPU and true; the engine then skips
	// CPU selection.
	Requeue(t int) (cpu int, ok bool)
	// WakeupPreempt says whether cpu's current task must yield to t, which
	// was just enqueued on cpu (wakeup, fork or migration).
	WakeupPreempt(cpu, t int) bool
	// Pick chooses what cpu runs next; see the protocol above.
	Pick(cpu, prev int, prevQueued bool) Pick
	// PutPrev takes cpu's running task prev off the CPU; it stays queued.
	PutPrev(cpu, prev int)
	// Tick is the scheduler tick on a CPU that runs a task.
	Tick(cpu int)
	// Timer delivers a callback requested with Sim.After.
	Timer(cpu, kind int, arg int64)
	// Stop runs stopper work requested with Sim.StopCPU, after the CPU's
	// current task was put back on its queue.
	Stop(cpu, kind int, arg int64)
	// NrRunning returns the number of runnable tasks queued on cpu, the
	// running one included (rq->nr_running).
	NrRunning(cpu int) int
}

// Pick is a Policy's answer to Pick: a task to run (Task >= 0), the idle
// task (Task -1), or, when Delay > 0, "still deciding: ask again after Delay
// ns" (Task is then ignored).
type Pick struct {
	Task  int
	Delay int64
}

// WakeFlags qualify a SelectCPU request.
type WakeFlags uint8

// Wake flags, after the kernel's WF_*.
const (
	WakeTTWU     WakeFlags = 1 << iota // a wakeup of a sleeping task (WF_TTWU)
	WakeForkFlag                       // placement of a new task (WF_FORK)
	WakeSyncFlag                       // the waker is about to sleep (WF_SYNC)
	WakeAffinity                       // the task's CPU is no longer allowed: re-home it
	WakeStartup                        // a task present when the workload starts, with no recorded CPU
)

// EnqueueFlags qualify an Enqueue.
type EnqueueFlags uint8

// Enqueue flags, after the kernel's ENQUEUE_*.
const (
	EnqWakeup   EnqueueFlags = 1 << iota // a wakeup (ENQUEUE_WAKEUP)
	EnqMigrated                          // the task comes from another CPU (ENQUEUE_MIGRATED)
	EnqNew                               // a new task: fork or start (ENQUEUE_INITIAL)
)

// DequeueFlags qualify a Dequeue.
type DequeueFlags uint8

// Dequeue flags.
const (
	DeqSleep   DequeueFlags = 1 << iota // the task blocks (DEQUEUE_SLEEP)
	DeqExit                             // the task exits: it never comes back
	DeqMigrate                          // the task moves to another CPU
)

// CPUState is what a CPU does from the engine's point of view.
type CPUState uint8

// CPU states.
const (
	CPUIdle    CPUState = iota // runs the idle task
	CPURunning                 // runs a task
	CPUPicking                 // between a switch-out and the switch-in: the policy asked for a Delay
)

// TaskState is a task's state from the engine's point of view.
type TaskState uint8

// Task states.
const (
	TaskNew     TaskState = iota // not started yet
	TaskBlocked                  // sleeping (a policy may still hold it queued: delayed dequeue)
	TaskWaking                   // woken, on its way to the target CPU's wake list
	TaskQueued                   // runnable, not running
	TaskRunning                  // on a CPU
	TaskDone                     // exited, or asleep for good after its last segment
)

func (s TaskState) String() string {
	return [...]string{"new", "blocked", "waking", "queued", "running", "done"}[s]
}
