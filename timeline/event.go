package timeline

import (
	"fmt"
	"strconv"
	"time"
)

// Time is a timestamp in nanoseconds on the trace clock. For counter clocks
// (x86-tsc, counter) it is the raw counter value.
type Time int64

// NoTime marks an absent timestamp.
const NoTime Time = -1 << 63

// Sub returns t-u as a time.Duration.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// Seconds formats t as seconds with microsecond precision, the way ftrace
// prints timestamps ("575.448244").
func (t Time) Seconds() string {
	if t == NoTime {
		return "-"
	}
	neg := t < 0
	if neg {
		t = -t
	}
	s := strconv.FormatInt(int64(t)/1e9, 10) + "." + fmt.Sprintf("%06d", (int64(t)%1e9)/1e3)
	if neg {
		return "-" + s
	}
	return s
}

// TID is a kernel task id (what ftrace calls pid). 0 is the per-CPU idle task.
type TID int32

// NoTID marks an absent task.
const NoTID TID = -1

// CPU is a logical CPU number.
type CPU int32

// NoCPU marks an absent CPU.
const NoCPU CPU = -1

// CommID is an interned command name; resolve it with Strings.Get.
type CommID uint32

// NoComm is the empty command name.
const NoComm CommID = 0

// Kind says what an Event is.
type Kind uint8

// The event kinds. The order of Waking, Migrate, Wakeup/WakeupNew and Switch
// is the causal tie-break order used when two events share a timestamp.
const (
	KindUnknown     Kind = iota // an event this tool does not interpret; counted only
	KindBufferStart             // "##### CPU N buffer started ####": the CPU's surviving events start here
	KindLost                    // events lost on CPU: Arg = count (or -1 if unknown), Start = last event before the gap
	KindFork                    // sched_process_fork: Other = parent, Task = child
	KindNewTask                 // task_newtask: Task = new task, Comm its comm
	KindExec                    // sched_process_exec: Task = pid after exec, Comm the new comm
	KindRename                  // task_rename: Task, Comm = new comm
	KindWaking                  // sched_waking: Task woken, Other = waker (task running on CPU), Arg = target CPU
	KindMigrate                 // sched_migrate_task: Task, Arg = dest CPU, Arg2 = orig CPU
	KindWakeup                  // sched_wakeup: Task woken (enqueued), Arg = target CPU
	KindWakeupNew               // sched_wakeup_new: Task new, Arg = target CPU
	KindSwitch                  // sched_switch: Other = prev, State = prev_state, Task = next
	KindExit                    // sched_process_exit: Task
	KindFree                    // sched_process_free: Task
	KindIdle                    // cpu_idle: Arg = state (-1 / 4294967295 means exit idle), Arg2 = cpu_id
	KindMarker                  // tracing_mark_write / print: Arg = string id of the text (Strings)
	KindSignal                  // signal_generate: Task = the signal's target, Comm its comm, Other = sender (task running on CPU), Arg = signal number, Arg2 = result (0 delivered) | group<<8
	kindCount
)

var kindNames = [...]string{
	KindUnknown:     "unknown",
	KindBufferStart: "buffer_start",
	KindLost:        "lost",
	KindFork:        "sched_process_fork",
	KindNewTask:     "task_newtask",
	KindExec:        "sched_process_exec",
	KindRename:      "task_rename",
	KindWaking:      "sched_waking",
	KindMigrate:     "sched_migrate_task",
	KindWakeup:      "sched_wakeup",
	KindWakeupNew:   "sched_wakeup_new",
	KindSwitch:      "sched_switch",
	KindExit:        "sched_process_exit",
	KindFree:        "sched_process_free",
	KindIdle:        "cpu_idle",
	KindMarker:      "marker",
	KindSignal:      "signal_generate",
}

// Known reports whether k is one of the kinds above, not KindUnknown.
func (k Kind) Known() bool { return k > KindUnknown && k < kindCount }

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Context is the execution context an event was recorded in, from the ftrace
// irq-info flags column when present.
type Context uint8

// Execution contexts.
const (
	CtxUnknown Context = iota // no flags column
	CtxTask
	CtxSoftirq
	CtxHardirq
	CtxNMI
)

func (c Context) String() string {
	switch c {
	case CtxTask:
		return "task"
	case CtxSoftirq:
		return "softirq"
	case CtxHardirq:
		return "hardirq"
	case CtxNMI:
		return "nmi"
	}
	return "unknown"
}

// Event is one scheduler occurrence on one CPU, as a reader hands it out. It
// is a small value; copy it freely. Readers reuse the Event passed to Next.
type Event struct {
	Time  Time    // ns, trace clock
	Start Time    // KindLost: time of the CPU's last event before the gap (NoTime if none)
	CPU   CPU     // CPU whose buffer recorded the event
	Kind  Kind    // what happened
	Ctx   Context // execution context from the flags column
	State State   // KindSwitch: prev_state
	Task  TID     // subject: next task for Switch, woken task for Waking/Wakeup, child for Fork
	Other TID     // Switch: prev; Fork: parent; Waking/Wakeup: the task running on CPU (waker)
	Comm  CommID  // command name of Task (as carried by the event), or NoComm
	OComm CommID  // command name of Other, or NoComm
	Prio  int16   // kernel prio of Task (0..139; 120 = nice 0), -1 if absent
	OPrio int16   // kernel prio of Other, -1 if absent
	TGID  int32   // thread group of the task running on CPU when known (record-tgid, perf pid/tid), else -1
	Arg   int64   // kind-specific, see Kind
	Arg2  int64   // kind-specific, see Kind
}

// Reset clears e to the zero event with the absent sentinels.
func (e *Event) Reset() {
	*e = Event{Start: NoTime, Task: NoTID, Other: NoTID, Prio: -1, OPrio: -1, TGID: -1, CPU: NoCPU}
}
