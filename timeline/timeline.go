package timeline

import (
	"sync"

	"github.com/schedlens/schedlens/topology"
)

// TaskID identifies a task instance: one pid over one lifetime. It indexes
// Timeline.Tasks.
type TaskID int32

// NoTask marks an absent task instance.
const NoTask TaskID = -1

// Task is one task instance: a pid from its first to its last appearance (or
// from fork to free). The idle task of each CPU is its own instance with
// PID 0 and Idle set.
type Task struct {
	PID    TID
	TGID   int32 // thread group id, -1 if the trace never said
	Comm   CommID
	Comms  []CommChange // every name the task had, in time order (the first at its first appearance)
	First  Time         // first event that names the task
	Last   Time         // last event that names the task
	Prio   int16        // last kernel prio seen (0..139), -1 if none
	Idle   bool         // a per-CPU idle task (pid 0)
	CPU    CPU          // for idle tasks, their CPU; else NoCPU
	Forked bool         // created by a fork seen in the trace
	Exited bool         // its exit was seen
}

// CommChange records a task taking a new name at Time.
type CommChange struct {
	Time Time
	Comm CommID
}

// Gap is an interval of a CPU's stream where events were lost or not
// recorded. Nothing is measured across it.
type Gap struct {
	CPU   CPU
	Start Time  // last event of CPU before the gap (or the trace start for a clipped buffer)
	End   Time  // first event of CPU after the gap
	Lost  int64 // events lost, -1 if unknown (clipped buffer start)
	Kind  GapKind
}

// GapKind says why a gap exists.
type GapKind uint8

// Gap kinds.
const (
	GapLost    GapKind = iota // "[LOST N EVENTS]", Perfetto lost_events
	GapClipped                // the CPU's buffer starts later than the trace: overwritten or not yet recording
)

func (k GapKind) String() string {
	if k == GapClipped {
		return "clipped"
	}
	return "lost"
}

// Inconsistency is a place where the trace contradicts itself, typically a
// sched_switch event that never reached the buffer.
type Inconsistency struct {
	Time     Time
	CPU      CPU
	Kind     InconsistencyKind
	Expected TaskID // the task the trace said was there (NoTask if none)
	Got      TaskID // the task the event names
}

// InconsistencyKind classifies an Inconsistency.
type InconsistencyKind uint8

// Inconsistency kinds.
const (
	// IncPrevMismatch: a switch's prev is not the task the previous switch
	// on that CPU put there.
	IncPrevMismatch InconsistencyKind = iota
	// IncRunningElsewhere: a task is switched in while the trace last put
	// it on another CPU and never took it off.
	IncRunningElsewhere
	// IncNoWakeup: a sleeping task is switched in with no wakeup event.
	IncNoWakeup
	// IncNotRunning: a task known not to run is switched out.
	IncNotRunning
	// IncWokenQueued: a task already runnable (woken, or queued since a
	// switch-out in R, not R+) is woken again. try_to_wake_up emits
	// sched_waking only for a task that is not TASK_RUNNING, so the task
	// ran and blocked where the trace does not show it.
	IncWokenQueued
)

func (k InconsistencyKind) String() string {
	switch k {
	case IncPrevMismatch:
		return "prev-mismatch"
	case IncRunningElsewhere:
		return "running-elsewhere"
	case IncNoWakeup:
		return "switch-in-without-wakeup"
	case IncNotRunning:
		return "switch-out-of-non-running"
	case IncWokenQueued:
		return "wakeup-of-queued"
	}
	return "unknown"
}

// Timeline is a merged, time-ordered scheduler history in columns. Event i
// is (Time[i], CPU[i], Kind[i], ...). Build it with a Builder.
type Timeline struct {
	Strings *Strings
	NCPU    int // number of CPUs (max CPU seen + 1 at least)

	// Columns, one entry per event, in merged order.
	Times  []Time
	CPUs   []int16
	Kinds  []Kind
	Ctxs   []Context
	States []State
	Prios  []uint8 // kernel prio of Task, NoPrio if absent
	TaskOf []TaskID
	Other  []TaskID
	Comms  []CommID
	Args   []int32
	Args2  []int32

	Tasks []Task

	Start Time // first event
	End   Time // last event
	// ValidStart is where every CPU's stream is complete: Start when the
	// trace proves nothing was overwritten or lost (StartFirstEvent), else
	// the latest first event over the CPUs that have events
	// (StartLatestCPU). ValidStartReason says why, in words.
	ValidStart       Time
	ValidStartRule   StartRule
	ValidStartReason string
	CPUFirst         []Time // first event per CPU (NoTime if none)
	CPULast          []Time

	Gaps       []Gap
	LostEvents int64 // sum of known lost counts
	HasWaking  bool  // the trace has sched_waking events
	HasWakeup  bool  // the trace has sched_wakeup events
	KindCounts [kindCount]int64

	incs *incsCache // see Inconsistencies
	// summary is set on a summary Timeline (NewSummaryBuilder), which has
	// no event columns.
	summary *summaryOnly

	Topology *topology.Topology // when the trace carried one

	// Affinity and Groups are what a recorder saw of each task's allowed
	// CPUs and task group over time (empty for tracepoint-only formats).
	Affinity []AffinityChange
	Groups   []GroupChange
}

// incsCache holds a timeline's inconsistencies once a walk found them.
type incsCache struct {
	once sync.Once
	list []Inconsistency
}

// Inconsistencies returns the places where the trace contradicts itself,
// in time order. The task state machine finds them: the first Walk of the
// timeline keeps what it found on the way, and a call before any Walk runs
// the machine once without handing out spans. Either way the list is the
// same, and the timeline is walked once for a command that walks it anyway.
func (tl *Timeline) Inconsistencies() []Inconsistency {
	if tl.incs == nil {
		return nil // not made by a Builder, or a summary not walked yet
	}
	tl.incs.once.Do(func() {
		w := newWalker(tl)
		w.run(nil)
		tl.incs.list = w.incs
	})
	return tl.incs.list
}

// keepInconsistencies records what a walk found, unless known already.
func (tl *Timeline) keepInconsistencies(list []Inconsistency) {
	if tl.incs != nil {
		tl.incs.once.Do(func() { tl.incs.list = list })
	}
}

// NoPrio marks an absent prio in Timeline.Prios.
const NoPrio = 255

// Len returns the number of events (of a summary Timeline, those the
// first read counted).
func (tl *Timeline) Len() int {
	if tl.summary != nil {
		return tl.summary.events
	}
	return len(tl.Times)
}

// Event returns event i as an Event value. Task and Other hold pids; use
// TaskOf[i] and Other[i] for the task instances.
func (tl *Timeline) Event(i int) Event {
	e := Event{
		Time: tl.Times[i], Start: NoTime, CPU: CPU(tl.CPUs[i]), Kind: tl.Kinds[i], Ctx: tl.Ctxs[i],
		State: tl.States[i], Task: NoTID, Other: NoTID, Comm: tl.Comms[i], Prio: -1, OPrio: -1, TGID: -1,
		Arg: int64(tl.Args[i]), Arg2: int64(tl.Args2[i]),
	}
	if t := tl.TaskOf[i]; t != NoTask {
		e.Task = tl.Tasks[t].PID
	}
	if o := tl.Other[i]; o != NoTask {
		e.Other = tl.Tasks[o].PID
		e.OComm = tl.CommAt(o, e.Time)
	}
	if p := tl.Prios[i]; p != NoPrio {
		e.Prio = int16(p)
	}
	if e.Kind == KindLost {
		for _, g := range tl.Gaps {
			if g.CPU == e.CPU && g.End == e.Time && g.Kind == GapLost {
				e.Start = g.Start
				break
			}
		}
	}
	return e
}

// CommAt returns the name task t had at time ts.
func (tl *Timeline) CommAt(t TaskID, ts Time) CommID {
	tk := &tl.Tasks[t]
	c := tk.Comm
	if len(tk.Comms) > 0 {
		c = tk.Comms[0].Comm
		for _, ch := range tk.Comms {
			if ch.Time > ts {
				break
			}
			c = ch.Comm
		}
	}
	return c
}

// TaskName returns the task's latest comm.
func (tl *Timeline) TaskName(t TaskID) string {
	if t == NoTask {
		return ""
	}
	return tl.Strings.Get(tl.Tasks[t].Comm)
}

// Marker is a tracing_mark_write / print text at a time.
type Marker struct {
	Time Time
	CPU  CPU
	Text string
}

// Markers returns the trace markers in time order.
func (tl *Timeline) Markers() []Marker {
	if tl.summary != nil {
		return tl.summary.markers
	}
	var ms []Marker
	for i, k := range tl.Kinds {
		if k == KindMarker {
			ms = append(ms, Marker{Time: tl.Times[i], CPU: CPU(tl.CPUs[i]), Text: tl.Strings.Get(CommID(tl.Args[i]))})
		}
	}
	return ms
}

// BytesPerEvent is the size of the event columns divided by the number of
// events (task, gap and string tables not included).
func (tl *Timeline) BytesPerEvent() float64 {
	if tl.Len() == 0 {
		return 0
	}
	n := cap(tl.Times)*8 + cap(tl.CPUs)*2 + cap(tl.Kinds) + cap(tl.Ctxs) + cap(tl.States)*2 + cap(tl.Prios) +
		cap(tl.TaskOf)*4 + cap(tl.Other)*4 + cap(tl.Comms)*4 + cap(tl.Args)*4 + cap(tl.Args2)*4
	return float64(n) / float64(tl.Len())
}
