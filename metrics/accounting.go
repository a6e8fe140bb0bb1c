package metrics

import (
	"runtime"
	"sort"

	"github.com/schedlens/schedlens/timeline"
)

// Window is a closed time interval on the trace clock. Intervals that cross
// its edges count only their part inside.
type Window struct {
	Start timeline.Time
	End   timeline.Time
}

// DefaultWindow is the valid window of tl: from where every CPU's buffer has
// data to the last event.
func DefaultWindow(tl *timeline.Timeline) Window {
	return Window{Start: tl.ValidStart, End: tl.End}
}

func (w Window) clip(s, e timeline.Time) int64 {
	if s < w.Start {
		s = w.Start
	}
	if e > w.End {
		e = w.End
	}
	if e <= s {
		return 0
	}
	return int64(e - s)
}

func (w Window) has(t timeline.Time) bool { return t >= w.Start && t <= w.End }

// Filter selects tasks. A zero Filter selects every task.
type Filter struct {
	PIDs  []timeline.TID // any of these pids
	Comms []string       // any of these comms (exact match on any name the task had)
}

// Match reports whether task id passes the filter.
func (f Filter) Match(tl *timeline.Timeline, id timeline.TaskID) bool {
	if len(f.PIDs) == 0 && len(f.Comms) == 0 {
		return true
	}
	tk := &tl.Tasks[id]
	for _, p := range f.PIDs {
		if tk.PID == p {
			return true
		}
	}
	for _, c := range f.Comms {
		for _, ch := range tk.Comms {
			if tl.Strings.Get(ch.Comm) == c {
				return true
			}
		}
		if tl.Strings.Get(tk.Comm) == c {
			return true
		}
	}
	return false
}

// TaskTimes is the per-task accounting of `schedlens tasks`. Times are
// nanoseconds on the trace clock, clipped to the window.
type TaskTimes struct {
	ID   timeline.TaskID `json:"-"`
	PID  timeline.TID    `json:"pid"`
	TGID *int32          `json:"tgid"`
	Comm string          `json:"comm"`

	RunNs int64 `json:"run_ns"`
	// RunnableNs = WakeupLatencyNs + PreemptWaitNs: from becoming runnable
	// (sched_waking, or sched_wakeup without waking, sched_wakeup_new, or a
	// switch-out in R/R+) to the next switch-in.
	RunnableNs      int64 `json:"runnable_ns"`
	WakeupLatencyNs int64 `json:"wakeup_latency_ns"`
	PreemptWaitNs   int64 `json:"preempt_wait_ns"`
	// RqWaitNs starts at enqueue (sched_wakeup / sched_wakeup_new / the R
	// switch-out); nil when the trace has no sched_wakeup events.
	RqWaitNs  *int64 `json:"rq_wait_ns"`
	SleepNs   int64  `json:"sleep_ns"`
	BlockedNs int64  `json:"blocked_ns"`
	StoppedNs int64  `json:"stopped_ns"`
	UnknownNs int64  `json:"unknown_ns"`

	SwitchesIn  int64 `json:"switches_in"`
	Preemptions int64 `json:"preemptions"`
	Wakeups     int64 `json:"wakeups"`
	Migrations  int64 `json:"migrations"`
	// Inconsistencies counts trace contradictions that touched this task;
	// the intervals they make uncertain are in UnknownNs.
	Inconsistencies int64 `json:"inconsistencies"`
	// OpenAtEnd: the task was runnable or running when the window or trace
	// ended, or across a gap: some intervals were cut (censored).
	Censored bool `json:"censored"`

	rq int64
	// last is where the task's last run in the window ended, or the
	// window's end when it was running or runnable there (hasLast: it
	// ran in the window); see Completion.
	last    timeline.Time
	hasLast bool
}

// CPUTimes is the per-CPU accounting of `schedlens cpus`.
type CPUTimes struct {
	CPU           timeline.CPU `json:"cpu"`
	BusyNs        int64        `json:"busy_ns"`
	IdleNs        int64        `json:"idle_ns"`
	UnobservedNs  int64        `json:"unobserved_ns"` // no task known to run: before the buffer starts, in gaps, after inconsistencies
	Switches      int64        `json:"context_switches"`
	MigrationsIn  int64        `json:"migrations_in"`
	MigrationsOut int64        `json:"migrations_out"`
	LostEvents    int64        `json:"lost_events"`
	Gaps          int          `json:"gaps"`
	// LostUnknown counts the gaps whose number of lost events the trace
	// does not give (LostEvents sums the others).
	LostUnknown int `json:"gaps_lost_unknown,omitempty"`
}

// Accounting holds both tables.
type Accounting struct {
	Window Window
	Tasks  []TaskTimes
	CPUs   []CPUTimes
	Walk   timeline.WalkStats
}

// Account computes per-task and per-CPU times over win in one walk.
func Account(tl *timeline.Timeline, win Window) *Accounting {
	a := NewAccountant(tl, win)
	ws := Feed(tl, a)
	return a.Result(ws)
}

// A Sink is a metric's state, fed by a walk it does not run: Events with
// the events (a whole Timeline, or a chunk of a streamed one: a Timeline
// with that chunk's columns and the task instances so far), Span with each
// span the walk closes. A streamed walk (timeline.StreamWalk) calls Events
// for a chunk before the spans that chunk closes; Feed, over a loaded
// Timeline, calls Events once for all of it, beside the walk, so a Sink's
// Events and Span must not write the same memory.
type Sink interface {
	Events(events *timeline.Timeline)
	Span(s *timeline.Span)
}

// Sinks is several Sinks as one, for a streamed walk that feeds them all
// (timeline.StreamWalk, ingest.StreamWalk): each gets every chunk and
// every span, in turn.
type Sinks []Sink

// Events hands the chunk to each sink.
func (ks Sinks) Events(chunk *timeline.Timeline) {
	for _, k := range ks {
		k.Events(chunk)
	}
}

// Span hands the span to each sink.
func (ks Sinks) Span(s *timeline.Span) {
	for _, k := range ks {
		k.Span(s)
	}
}

// Feed walks tl once for every sink: each one's Events runs on a goroutine
// of its own beside the walk, which hands every span to each Span in turn.
// With several sinks, more than one core and relayMin events or more, the
// first sink's Spans run on a goroutine of their own too, a chunk of spans
// behind the walk (spanRelay); each sink still gets every span in the
// walk's order.
func Feed(tl *timeline.Timeline, sinks ...Sink) timeline.WalkStats {
	done := make(chan struct{}, len(sinks))
	for _, k := range sinks {
		go func() {
			k.Events(tl)
			done <- struct{}{}
		}()
	}
	var ws timeline.WalkStats
	switch {
	case len(sinks) == 1:
		ws = tl.Walk(sinks[0].Span)
	case runtime.GOMAXPROCS(0) > 1 && tl.Len() >= relayMin:
		r := newSpanRelay(sinks[0])
		rest := Sinks(sinks[1:])
		ws = tl.Walk(func(s *timeline.Span) {
			r.Span(s)
			rest.Span(s)
		})
		r.close()
	default:
		ws = tl.Walk(Sinks(sinks).Span)
	}
	for range sinks {
		<-done
	}
	return ws
}

// A spanRelay hands the spans of a walk to a sink on a goroutine of its
// own, in chunks, so that the sink's work and the walk's (with the other
// sinks') take two cores: report, whose analysis feeds Analyze's collector
// beside the Accountant and the affinity inference, 0.303 -> 0.276 s on a
// 188 MB perf.data, 0.325 -> 0.292 s on 137 MB of ftrace text (15
// interleaved pairs each), for 4% more CPU.
type spanRelay struct {
	cur  []timeline.Span
	full chan []timeline.Span
	free chan []timeline.Span
	done chan struct{}
}

const (
	relayChunk   = 2048 // spans
	relayBuffers = 4
)

// relayMin is how many events a Timeline needs for Feed to relay (a
// relay's goroutine and its 512 KiB of chunks are not worth it for the
// small analyses that what-if runs make by the hundred). Tests change it.
var relayMin = 1 << 16

func newSpanRelay(k Sink) *spanRelay {
	r := &spanRelay{full: make(chan []timeline.Span, relayBuffers), free: make(chan []timeline.Span, relayBuffers), done: make(chan struct{})}
	for range relayBuffers {
		r.free <- make([]timeline.Span, 0, relayChunk)
	}
	r.cur = <-r.free
	go func() {
		defer close(r.done)
		for c := range r.full {
			for i := range c {
				k.Span(&c[i])
			}
			r.free <- c[:0]
		}
	}()
	return r
}

// Span takes a span of the walk.
func (r *spanRelay) Span(s *timeline.Span) {
	r.cur = append(r.cur, *s)
	if len(r.cur) == cap(r.cur) {
		r.full <- r.cur
		r.cur = <-r.free
	}
}

// close hands over the last spans and waits until the sink has taken them
// all.
func (r *spanRelay) close() {
	if len(r.cur) > 0 {
		r.full <- r.cur
	}
	close(r.full)
	<-r.done
}

// Accountant is Account's state as a Sink, for a walk that feeds other
// metrics too (Options.Also) or a streamed one; Result gives the
// accounting once the walk has ended. Its Events counts switches,
// preemptions and migrations on fields its Span does not write.
type Accountant struct {
	tl    *timeline.Timeline
	win   Window
	known []timeline.Task // the task instances met so far
	tasks []TaskTimes
	cpus  []CPUTimes
	// seen: the task has a span in the window; counted: an event of the
	// window names it.
	seen, counted []bool
	// Per-CPU coverage to derive unobserved time: what the walk hands out
	// covers known time; the rest of the window is unobserved.
	covered []int64
}

// NewAccountant starts the accounting of tl over win.
func NewAccountant(tl *timeline.Timeline, win Window) *Accountant {
	a := &Accountant{tl: tl, win: win, cpus: make([]CPUTimes, tl.NCPU), covered: make([]int64, tl.NCPU)}
	for c := range a.cpus {
		a.cpus[c].CPU = timeline.CPU(c)
	}
	a.grow(tl.Tasks)
	return a
}

// grow makes room for the task instances known; it writes nothing when
// there is room already (Events of a loaded Timeline, beside Span).
func (a *Accountant) grow(known []timeline.Task) {
	if len(known) <= len(a.known) && len(known) <= len(a.tasks) {
		return
	}
	a.known = known
	for len(a.tasks) < len(known) {
		a.tasks = append(a.tasks, TaskTimes{})
		a.seen = append(a.seen, false)
		a.counted = append(a.counted, false)
	}
}

// Events counts the switches, preemptions and migrations of a chunk of
// events (a Timeline holding that chunk and the task instances so far).
func (a *Accountant) Events(chunk *timeline.Timeline) {
	a.grow(chunk.Tasks)
	countEvents(chunk, a.win, a.tasks, a.cpus, a.counted)
}

// Span adds one closed span of the walk.
func (a *Accountant) Span(s *timeline.Span) {
	win := a.win
	d := win.clip(s.Start, s.End)
	if s.Task == timeline.NoTask {
		return // unobserved CPU time: computed in Result
	}
	cpus := a.cpus
	if a.known[s.Task].Idle {
		if s.State == timeline.SpanRunning && s.CPU >= 0 {
			cpus[s.CPU].IdleNs += d
			a.covered[s.CPU] += d
		}
		return
	}
	tt := &a.tasks[s.Task]
	if d > 0 || win.has(s.Start) {
		a.seen[s.Task] = true
	}
	if s.Open() && d > 0 && s.State != timeline.SpanSleeping && s.State != timeline.SpanBlocked {
		tt.Censored = true
	}
	if s.Start < win.End {
		// Completion: the end of the last run in the window, or the
		// window's end when the task is still runnable there.
		switch {
		case s.State == timeline.SpanRunning && s.End > win.Start:
			if e := min(s.End, win.End); !tt.hasLast || e > tt.last {
				tt.last, tt.hasLast = e, true
			}
		case (s.State == timeline.SpanWoken || s.State == timeline.SpanPreempted) && s.End >= win.End:
			tt.last, tt.hasLast = win.End, true
		}
	}
	switch s.State {
	case timeline.SpanRunning:
		tt.RunNs += d
		if s.CPU >= 0 {
			cpus[s.CPU].BusyNs += d
			a.covered[s.CPU] += d
		}
	case timeline.SpanWoken:
		tt.RunnableNs += d
		tt.WakeupLatencyNs += d
		if s.Enqueue != timeline.NoTime {
			tt.rq += win.clip(s.Enqueue, s.End)
		}
		if win.has(s.Start) {
			tt.Wakeups++
		}
	case timeline.SpanPreempted:
		tt.RunnableNs += d
		tt.PreemptWaitNs += d
		tt.rq += d
	case timeline.SpanSleeping:
		tt.SleepNs += d
	case timeline.SpanBlocked:
		tt.BlockedNs += d
	case timeline.SpanStopped:
		tt.StoppedNs += d
	case timeline.SpanUnknown:
		tt.UnknownNs += d
	}
}

// Result is the accounting once the walk (whose stats are ws) has ended
// and the timeline has its task instances and inconsistencies.
func (a *Accountant) Result(ws timeline.WalkStats) *Accounting {
	tl, win := a.tl, a.win
	a.grow(tl.Tasks)
	tasks, cpus, seen := a.tasks, a.cpus, a.seen
	for id, c := range a.counted {
		if c {
			seen[id] = true
		}
	}
	for _, inc := range tl.Inconsistencies() {
		if !win.has(inc.Time) {
			continue
		}
		for _, id := range []timeline.TaskID{inc.Expected, inc.Got} {
			if id != timeline.NoTask {
				tasks[id].Inconsistencies++
			}
		}
	}
	for _, g := range tl.Gaps {
		if int(g.CPU) < len(cpus) && g.Kind == timeline.GapLost {
			cpus[g.CPU].Gaps++
			if g.Lost > 0 {
				cpus[g.CPU].LostEvents += g.Lost
			} else if g.Lost < 0 {
				cpus[g.CPU].LostUnknown++
			}
		}
	}
	span := int64(win.End - win.Start)
	for c := range cpus {
		if u := span - a.covered[c]; u > 0 {
			cpus[c].UnobservedNs = u
		}
	}
	acc := &Accounting{Window: win, CPUs: cpus, Walk: ws}
	for id := range tasks {
		if !seen[id] || tl.Tasks[id].Idle {
			continue
		}
		tt := &tasks[id]
		tk := &tl.Tasks[id]
		tt.ID = timeline.TaskID(id)
		tt.PID = tk.PID
		if tk.TGID >= 0 {
			v := tk.TGID
			tt.TGID = &v
		}
		tt.Comm = tl.Strings.Get(tk.Comm)
		if tl.HasWakeup {
			v := tt.rq
			tt.RqWaitNs = &v
		}
		acc.Tasks = append(acc.Tasks, *tt)
	}
	sort.SliceStable(acc.Tasks, func(i, j int) bool {
		a, b := &acc.Tasks[i], &acc.Tasks[j]
		if a.RunNs != b.RunNs {
			return a.RunNs > b.RunNs
		}
		return a.PID < b.PID
	})
	return acc
}

// Completion returns where the task's last run in the window ended, or
// the window's end when it was still running or runnable there (its work
// not done); false when it did not run in the window.
func (t *TaskTimes) Completion() (timeline.Time, bool) { return t.last, t.hasLast }

// countEvents adds the switch, preemption and migration counts of the
// events in win to tasks and cpus, and marks the tasks they name in seen.
func countEvents(tl *timeline.Timeline, win Window, tasks []TaskTimes, cpus []CPUTimes, seen []bool) {
	for i := range tl.Times {
		t := tl.Times[i]
		if !win.has(t) {
			continue
		}
		c := tl.CPUs[i]
		switch tl.Kinds[i] {
		case timeline.KindSwitch:
			cpus[c].Switches++
			if n := tl.TaskOf[i]; n != timeline.NoTask && !tl.Tasks[n].Idle {
				tasks[n].SwitchesIn++
				seen[n] = true
			}
			if p := tl.Other[i]; p != timeline.NoTask && !tl.Tasks[p].Idle && tl.States[i].Runnable() {
				tasks[p].Preemptions++
			}
		case timeline.KindMigrate:
			if id := tl.TaskOf[i]; id != timeline.NoTask {
				tasks[id].Migrations++
				seen[id] = true
			}
			if d := tl.Args[i]; d >= 0 && int(d) < len(cpus) {
				cpus[d].MigrationsIn++
			}
			if o := tl.Args2[i]; o >= 0 && int(o) < len(cpus) {
				cpus[o].MigrationsOut++
			}
		}
	}
}
