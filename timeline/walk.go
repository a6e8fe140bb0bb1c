package timeline

import "sort"

// SpanState is what a task did over a Span.
type SpanState uint8

// Span states.
const (
	SpanUnknown   SpanState = iota // not known: before the task's first event, across a gap, or made uncertain by an inconsistency
	SpanRunning                    // on CPU
	SpanWoken                      // runnable after a wakeup (sched_waking, or sched_wakeup without waking, or sched_wakeup_new), until switch-in
	SpanPreempted                  // runnable after a switch-out in R/R+, until switch-in
	SpanSleeping                   // S, I and other interruptible or idle sleeps
	SpanBlocked                    // D
	SpanStopped                    // T, t
	SpanNew                        // forked, not yet woken
	SpanDead                       // after exit, until free
)

func (s SpanState) String() string {
	return [...]string{"unknown", "running", "woken", "preempted", "sleeping", "blocked", "stopped", "new", "dead"}[s]
}

// Span flags.
const (
	// SpanOpenEnd: the interval was still open where it ends (trace end or
	// the start of a gap): its length is a lower bound, and a latency
	// sample it would have given is censored.
	SpanOpenEnd uint8 = 1 << iota
	// SpanNoWaking: a SpanWoken that starts at sched_wakeup because no
	// sched_waking was seen for it.
	SpanNoWaking
	// SpanWokenNew: a SpanWoken that starts at sched_wakeup_new.
	SpanWokenNew
	// SpanAfterRace: a SpanPreempted of a task whose sched_waking arrived
	// while it was still on its CPU, going to sleep: it left the CPU in S or
	// D but was runnable again at once, so it never slept. It is runnable
	// from the switch-out, like a preemption (the kernel's run_delay and
	// perf sched timehist's "wait time" treat it so), not a wakeup-latency
	// sample.
	SpanAfterRace
	// SpanSameTimeWake: a SpanWoken whose sched_waking has the same
	// timestamp as the task's switch-out; at that resolution the order of
	// the two is unknown, and it is taken as sleep, then wakeup.
	SpanSameTimeWake
	// SpanNoWakeInfo: a SpanSleeping ended by a switch-in in a trace with no
	// wakeup events at all: sleep and wait cannot be told apart.
	SpanNoWakeInfo
)

// Span is one closed interval of a task's (or a CPU's) state.
type Span struct {
	Task  TaskID // the task; idle tasks are per-CPU instances
	State SpanState
	CPU   CPU // SpanRunning: the CPU; SpanWoken/SpanPreempted: the CPU it was switched in on (NoCPU if open)
	Start Time
	End   Time
	Flags uint8

	// SpanWoken only.
	Waking   Time    // when it became runnable (== Start)
	Enqueue  Time    // sched_wakeup (enqueue) time, NoTime if none was seen
	Waker    TaskID  // the task running where the waking was recorded, NoTask if unknown
	WakerCtx Context // execution context of the waking
	WakeCPU  CPU     // CPU that recorded the waking
	Target   CPU     // target CPU of the wakeup
	Prio     int16   // the task's prio at the wakeup, -1 if unknown
}

// Open reports whether the span was cut before it ended.
func (s *Span) Open() bool { return s.Flags&SpanOpenEnd != 0 }

// CPUUnknownSpan is handed out for intervals where a CPU's running task is not
// known (Task == NoTask, State == SpanUnknown).

type tstate struct {
	st      SpanState
	cpu     CPU
	since   Time
	enq     Time
	waking  Time // pending sched_waking while running
	wakeup  Time // pending sched_wakeup while running
	race    Time // switch-out time of a task woken while going to sleep
	waker   TaskID
	wctx    Context
	wcpu    CPU
	target  CPU
	prio    int16
	flags   uint8
	tent    bool // state derived from an unknown one (tentative)
	plainR  bool // SpanPreempted after a switch-out in R, not R+ (it was not preempted: it stayed TASK_RUNNING)
	seen    bool
	exiting bool
}

type cstate struct {
	cur      TaskID
	since    Time
	obsStart Time // cur unknown: the CPU's stream is complete from here; NoTime if its current task cannot be revealed
	known    bool
}

type walker struct {
	tl     *Timeline
	ts     []tstate
	cs     []cstate
	emit   func(*Span)
	incs   []Inconsistency
	active int // gaps open now
	span   Span

	// The gaps by start and by end, and how many of each were opened
	// and closed (see steps).
	gapStarts, gapEnds []Gap
	si, ei             int

	// counters, per task
	wakeRun, wakeQueued []int32
}

func (w *walker) countWakeRunning(id TaskID, n int32) { w.wakeRun[id] += n }
func (w *walker) countWakeQueued(id TaskID)           { w.wakeQueued[id]++ }

func newWalker(tl *Timeline) *walker {
	w := &walker{tl: tl, cs: make([]cstate, tl.NCPU)}
	w.grow(len(tl.Tasks))
	for c := range w.cs {
		obs := tl.CPUFirst[c]
		if obs != NoTime && tl.ValidStartRule == StartFirstEvent {
			// Recorded from the start: a late first event ends a quiet
			// stretch, and the task revealed by the CPU's first switch ran
			// there since the trace's first event.
			obs = tl.Start
		}
		w.cs[c] = cstate{cur: NoTask, since: NoTime, obsStart: obs}
	}
	return w
}

// grow gives the walker state for n tasks (a streamed walk meets them as
// it goes).
func (w *walker) grow(n int) {
	for len(w.ts) < n {
		w.ts = append(w.ts, tstate{st: SpanUnknown, cpu: NoCPU, since: NoTime, enq: NoTime, waking: NoTime, wakeup: NoTime, race: NoTime, waker: NoTask, prio: -1})
		w.wakeRun = append(w.wakeRun, 0)
		w.wakeQueued = append(w.wakeQueued, 0)
	}
}

// Walk runs the task state machine over the timeline and calls fn with each
// closed Span in order of their end. The Span is reused: copy it to keep it.
// Intervals still open at the end are handed out with SpanOpenEnd, ending at
// tl.End. CPU intervals whose running task is unknown are handed out as
// Spans with Task NoTask.
func (tl *Timeline) Walk(fn func(*Span)) WalkStats {
	if tl.summary != nil {
		panic("timeline: Walk of a summary Timeline, which has no events: walk it with NewStreamWalk")
	}
	w := newWalker(tl)
	w.run(fn)
	tl.keepInconsistencies(w.incs)
	return w.stats()
}

// stats is what the walker counted besides spans.
func (w *walker) stats() WalkStats {
	st := WalkStats{WakeupsOfRunningBy: w.wakeRun, WakeupsOfQueuedBy: w.wakeQueued}
	for i := range w.wakeRun {
		st.WakeupsOfRunning += int64(w.wakeRun[i])
		st.WakeupsOfQueued += int64(w.wakeQueued[i])
	}
	return st
}

// WalkStats counts what Walk saw besides spans.
type WalkStats struct {
	WakeupsOfRunning int64 // wakeups of a task that was running: not latency samples
	WakeupsOfQueued  int64 // wakeups of a task already runnable: not latency samples
	// The same counts per TaskID, for figures that honour a task filter.
	WakeupsOfRunningBy, WakeupsOfQueuedBy []int32
}

func (w *walker) out(task TaskID, st SpanState, cpu CPU, start, end Time, flags uint8) {
	if w.emit == nil || start == NoTime || end < start {
		return
	}
	s := &w.span
	*s = Span{Task: task, State: st, CPU: cpu, Start: start, End: end, Flags: flags, Waking: NoTime, Enqueue: NoTime, Waker: NoTask, WakeCPU: NoCPU, Target: NoCPU, Prio: -1}
	w.emit(s)
}

// closeTask hands out the task's current interval up to end, with the given
// override state if st != keep.
func (w *walker) closeTask(id TaskID, end Time, unknown bool, flags uint8, cpuIn CPU) {
	t := &w.ts[id]
	if t.since == NoTime || w.emit == nil {
		return
	}
	st := t.st
	if unknown {
		st = SpanUnknown
	}
	s := &w.span
	*s = Span{Task: id, State: st, CPU: t.cpu, Start: t.since, End: end, Flags: flags | t.flags, Waking: NoTime, Enqueue: NoTime, Waker: NoTask, WakeCPU: NoCPU, Target: NoCPU, Prio: t.prio}
	if st == SpanWoken || st == SpanPreempted {
		s.CPU = cpuIn
		s.Waking = t.since
		s.Enqueue = t.enq
		s.Waker, s.WakerCtx, s.WakeCPU, s.Target = t.waker, t.wctx, t.wcpu, t.target
	}
	if end < s.Start {
		return
	}
	w.emit(s)
}

func (w *walker) setState(id TaskID, st SpanState, cpu CPU, since Time) {
	t := &w.ts[id]
	t.st, t.cpu, t.since = st, cpu, since
	t.enq, t.waking, t.wakeup, t.race = NoTime, NoTime, NoTime, NoTime
	t.waker, t.wctx, t.wcpu, t.target = NoTask, CtxUnknown, NoCPU, NoCPU
	t.flags = 0
	t.tent = false
	t.plainR = false
	t.seen = true
}

func (w *walker) inc(t Time, cpu CPU, k InconsistencyKind, exp, got TaskID) {
	if w.active > 0 {
		return // an expected consequence of an open gap
	}
	w.incs = append(w.incs, Inconsistency{Time: t, CPU: cpu, Kind: k, Expected: exp, Got: got})
}

// wokenQueued handles a wakeup of a task already woken, or queued since a
// switch-out in plain R: it is TASK_RUNNING, and try_to_wake_up traces only
// a task that is not, so it ran and blocked where the trace does not show
// it. Its time since it became runnable is unknown, and the gap is an
// inconsistency.
func (w *walker) wokenQueued(id TaskID, t Time, cpu CPU) {
	w.inc(t, cpu, IncWokenQueued, NoTask, id)
	w.closeTask(id, t, true, 0, NoCPU)
}

func sleepState(s State) SpanState {
	switch {
	case s.Runnable():
		return SpanPreempted
	case s.Dead():
		return SpanDead
	case s.Blocked():
		return SpanBlocked
	case s.Stopped():
		return SpanStopped
	}
	return SpanSleeping
}

// gapBegin applies the start of a lost-event gap (or of the clipped part
// before a CPU's buffer starts) on CPU g.CPU: what ran there is unknown from
// g.Start, and every task not running on another CPU may change state
// unseen (a lost wakeup, migration or switch), so it becomes unknown.
// Inconsistencies are not recorded while a gap is open: they are its
// expected consequences.
func (w *walker) gapBegin(g Gap) {
	w.active++
	c := &w.cs[g.CPU]
	if c.known && c.cur != NoTask {
		id := c.cur
		end := g.Start
		if end < w.ts[id].since {
			end = w.ts[id].since
		}
		w.closeTask(id, end, false, SpanOpenEnd, g.CPU)
		w.setState(id, SpanUnknown, NoCPU, end)
	}
	c.cur, c.known, c.since, c.obsStart = NoTask, false, NoTime, NoTime
	w.forget(g.Start)
}

// gapEnd closes a gap: the CPU's stream is complete again from g.End (its
// current task is revealed by its next switch), and tasks whose state
// changed during the gap are unknown again, since a lost event may have
// changed it once more.
func (w *walker) gapEnd(g Gap) {
	w.active--
	c := &w.cs[g.CPU]
	c.cur, c.known, c.since, c.obsStart = NoTask, false, NoTime, g.End
	w.forget(g.Start)
}

// forget makes every task that is not running on a CPU unknown from at: its
// interval so far is handed out up to at (cut), the rest stays unknown until
// its next event.
func (w *walker) forget(at Time) {
	for id := range w.ts {
		t := &w.ts[id]
		if !t.seen || w.tl.Tasks[id].Idle {
			continue
		}
		switch t.st {
		case SpanRunning:
			if c := &w.cs[t.cpu]; c.known && c.cur == TaskID(id) {
				continue
			}
		case SpanUnknown, SpanDead:
			continue
		}
		if t.since < at {
			w.closeTask(TaskID(id), at, false, SpanOpenEnd, NoCPU)
			w.setState(TaskID(id), SpanUnknown, NoCPU, at)
		} else {
			w.setState(TaskID(id), SpanUnknown, NoCPU, t.since)
		}
	}
}

func (w *walker) run(emit func(*Span)) {
	w.emit = emit
	w.begin()
	w.steps(len(w.tl.Times))
	w.end()
}

// begin orders the gaps for steps: by start to open them, by end (as
// Timeline.Gaps are) to close them.
func (w *walker) begin() {
	w.gapEnds = w.tl.Gaps
	w.gapStarts = byStart(w.tl.Gaps)
}

// byStart returns a copy of gaps (ordered by end, as Timeline.Gaps are)
// in the order the walk opens them: by start, ties by end.
func byStart(gaps []Gap) []Gap {
	s := append([]Gap(nil), gaps...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].Start < s[j].Start })
	return s
}

// steps applies events 0..n-1 of w.tl's columns, the next in time order.
func (w *walker) steps(n int) {
	tl := w.tl
	starts, ends := w.gapStarts, w.gapEnds
	si, ei := w.si, w.ei
	for i := 0; i < n; i++ {
		t := tl.Times[i]
		// Open the gaps that start before this event, close those that end
		// at or before it.
		for si < len(starts) && starts[si].Start < t {
			w.gapBegin(starts[si])
			si++
		}
		for ei < len(ends) && ends[ei].End <= t && ei < si {
			w.gapEnd(ends[ei])
			ei++
		}
		cpu := CPU(tl.CPUs[i])
		id := tl.TaskOf[i]
		switch tl.Kinds[i] {
		case KindSwitch:
			w.doSwitch(i, t, cpu, tl.Other[i], id)
		case KindWaking:
			w.doWaking(i, t, cpu, id)
		case KindWakeup:
			w.doWakeup(i, t, cpu, id)
		case KindWakeupNew:
			if id == NoTask {
				break
			}
			ts := &w.ts[id]
			if ts.seen && ts.st != SpanNew && ts.st != SpanUnknown {
				break
			}
			if ts.seen {
				w.closeTask(id, t, ts.st == SpanUnknown, 0, NoCPU)
			}
			w.setState(id, SpanWoken, NoCPU, t)
			ts.enq = t
			ts.flags = SpanWokenNew
			ts.waker, ts.wctx, ts.wcpu, ts.target = tl.Other[i], tl.Ctxs[i], cpu, CPU(tl.Args[i])
			if p := tl.Prios[i]; p != NoPrio {
				ts.prio = int16(p)
			}
		case KindFork, KindNewTask:
			if id != NoTask && !w.ts[id].seen {
				w.setState(id, SpanNew, NoCPU, t)
			}
		case KindMigrate:
			if id != NoTask {
				ts := &w.ts[id]
				if ts.st == SpanWoken || ts.st == SpanPreempted {
					ts.target = CPU(tl.Args[i])
				}
			}
		case KindExit:
			if id != NoTask {
				w.ts[id].exiting = true
			}
		}
	}
	w.si, w.ei = si, ei
}

// end opens and closes the gaps left, and hands out what is still open at
// the trace's end.
func (w *walker) end() {
	tl := w.tl
	starts, ends := w.gapStarts, w.gapEnds
	si, ei := w.si, w.ei
	for ; si < len(starts); si++ {
		w.gapBegin(starts[si])
	}
	for ; ei < len(ends); ei++ {
		w.gapEnd(ends[ei])
	}
	// Close everything at the end.
	end := tl.End
	for c := range w.cs {
		cs := &w.cs[c]
		if !cs.known && cs.obsStart != NoTime && cs.obsStart < end {
			w.out(NoTask, SpanUnknown, CPU(c), cs.obsStart, end, 0)
		}
	}
	for id := range w.ts {
		ts := &w.ts[id]
		if !ts.seen || ts.since == NoTime || ts.st == SpanDead {
			continue
		}
		w.closeTask(TaskID(id), end, false, SpanOpenEnd, NoCPU)
	}
}

func (w *walker) doSwitch(i int, t Time, cpu CPU, prev, next TaskID) {
	tl := w.tl
	c := &w.cs[cpu]
	state := tl.States[i]
	// 1. The task leaving.
	if prev != NoTask {
		p := &w.ts[prev]
		switch {
		case c.known && c.cur == prev:
			w.closeTask(prev, t, false, 0, cpu)
		case c.known && c.cur != prev:
			// A switch on this CPU never reached the buffer.
			w.inc(t, cpu, IncPrevMismatch, c.cur, prev)
			if c.cur != NoTask {
				w.closeTask(c.cur, t, true, 0, cpu)
				w.setState(c.cur, SpanUnknown, NoCPU, t)
			}
			if p.seen {
				w.closeTask(prev, t, true, 0, cpu)
			}
		default: // the CPU's current task is being revealed
			switch {
			case !p.seen || p.st == SpanUnknown || p.st == SpanNew:
				if c.obsStart != NoTime {
					if p.seen && p.since != NoTime && p.since < c.obsStart {
						w.out(prev, SpanUnknown, NoCPU, p.since, c.obsStart, 0)
					}
					w.out(prev, SpanRunning, cpu, c.obsStart, t, 0)
				} else if p.seen {
					w.closeTask(prev, t, true, 0, cpu)
				}
			case p.tent:
				// Woken while we did not know it was running here.
				w.countWakeRunning(prev, 1)
				if c.obsStart != NoTime {
					w.out(prev, SpanUnknown, NoCPU, p.since, p.since, 0)
					w.out(prev, SpanRunning, cpu, c.obsStart, t, 0)
				}
			case p.st == SpanRunning && p.cpu != cpu:
				w.inc(t, cpu, IncRunningElsewhere, NoTask, prev)
				w.closeTask(prev, t, true, 0, cpu)
				w.cs[p.cpu].cur, w.cs[p.cpu].known, w.cs[p.cpu].obsStart = NoTask, false, NoTime
			default:
				// Known to be sleeping or waiting: it ran here unseen.
				w.inc(t, cpu, IncNotRunning, NoTask, prev)
				w.closeTask(prev, t, true, 0, cpu)
			}
		}
		// New state of prev.
		race, wakeup := p.waking, p.wakeup
		pw, pctx, pcpu, ptgt := p.waker, p.wctx, p.wcpu, p.target
		ns := sleepState(state)
		if tl.Tasks[prev].Idle {
			ns = SpanSleeping
		}
		w.setState(prev, ns, cpu, t)
		if ns == SpanPreempted {
			p.enq = t
			p.target = cpu
			p.plainR = state&StatePreempted == 0
		} else if ns != SpanDead && race == t {
			// A waking in the same timestamp as the switch-out: the order of
			// the two is a matter of clock resolution (text traces print
			// microseconds; a Perfetto trace keeps no order between CPUs),
			// so it is the ordinary order, sleep then wakeup, whichever
			// came first in the input.
			p.st = SpanWoken
			p.flags |= SpanSameTimeWake
			p.waker, p.wctx, p.wcpu, p.target = pw, pctx, pcpu, ptgt
			w.countWakeRunning(prev, -1) // counted when the waking came first
			if wakeup != NoTime && wakeup >= race {
				p.enq = t
			}
		} else if ns != SpanDead && race != NoTime {
			// Woken while going to sleep: if no new waking comes before it
			// runs again, it was runnable from this switch-out.
			p.race = race
			if wakeup != NoTime && wakeup >= race {
				p.enq = t // enqueued again once it left the CPU
			}
		}
		if ns == SpanDead {
			p.since = t
		}
	}
	// 2. The task arriving.
	if next != NoTask {
		n := &w.ts[next]
		switch {
		case tl.Tasks[next].Idle:
			if n.seen && n.st != SpanRunning {
				w.closeTask(next, t, false, 0, cpu)
			}
		case !n.seen:
		case n.st == SpanRunning && n.cpu != cpu && w.cs[n.cpu].known && w.cs[n.cpu].cur == next:
			w.inc(t, cpu, IncRunningElsewhere, w.cs[n.cpu].cur, next)
			w.closeTask(next, t, true, 0, cpu)
			d := &w.cs[n.cpu]
			d.cur, d.known, d.obsStart = NoTask, false, NoTime
		case n.st == SpanWoken || n.st == SpanPreempted:
			w.closeTask(next, t, false, 0, cpu)
		case n.st == SpanSleeping || n.st == SpanBlocked || n.st == SpanStopped:
			if n.race != NoTime {
				// Woken while going to sleep: runnable since the switch-out.
				n.st = SpanPreempted
				n.flags |= SpanAfterRace
				w.closeTask(next, t, false, 0, cpu)
			} else if !tl.HasWaking && !tl.HasWakeup {
				n.flags |= SpanNoWakeInfo
				w.closeTask(next, t, false, 0, cpu)
			} else {
				w.inc(t, cpu, IncNoWakeup, NoTask, next)
				w.closeTask(next, t, true, 0, cpu)
			}
		default: // unknown, new, running on this CPU (impossible), dead
			w.closeTask(next, t, true, 0, cpu)
		}
		w.setState(next, SpanRunning, cpu, t)
		if p := tl.Prios[i]; p != NoPrio {
			n.prio = int16(p)
		}
	}
	c.cur, c.since, c.known = next, t, next != NoTask
	if !c.known {
		c.obsStart = NoTime
	}
}

func (w *walker) doWaking(i int, t Time, cpu CPU, id TaskID) {
	if id == NoTask {
		return
	}
	tl := w.tl
	ts := &w.ts[id]
	switch ts.st {
	case SpanRunning:
		if ts.tent {
			w.countWakeRunning(id, 1)
			return
		}
		ts.waking = t
		ts.waker, ts.wctx, ts.wcpu, ts.target = tl.Other[i], tl.Ctxs[i], cpu, CPU(tl.Args[i])
		w.countWakeRunning(id, 1)
		return
	case SpanPreempted:
		if !ts.tent && !ts.plainR {
			// Preempted (R+) between set_current_state and schedule():
			// try_to_wake_up finds it queued and only makes it running.
			w.countWakeQueued(id)
			return
		}
	case SpanDead:
		return
	}
	wasUnknown := !ts.seen || ts.st == SpanUnknown || ts.tent
	if (ts.st == SpanWoken || ts.st == SpanPreempted) && !ts.tent {
		// Woken already (TASK_RUNNING since), or queued in R: a second
		// sched_waking means it ran and blocked unseen.
		w.countWakeQueued(id)
		w.wokenQueued(id, t, cpu)
		wasUnknown = false
	} else if ts.st == SpanWoken {
		// A tentative wakeup (the task's state before it was unknown)
		// woken again: where it was in between is not known either.
		w.closeTask(id, t, true, 0, NoCPU)
	} else if ts.seen {
		w.closeTask(id, t, false, 0, NoCPU)
	}
	w.setState(id, SpanWoken, NoCPU, t)
	ts.tent = wasUnknown
	ts.waker, ts.wctx, ts.wcpu, ts.target = tl.Other[i], tl.Ctxs[i], cpu, CPU(tl.Args[i])
	if p := tl.Prios[i]; p != NoPrio {
		ts.prio = int16(p)
	}
}

func (w *walker) doWakeup(i int, t Time, cpu CPU, id TaskID) {
	if id == NoTask {
		return
	}
	tl := w.tl
	ts := &w.ts[id]
	switch ts.st {
	case SpanWoken:
		if ts.enq == NoTime {
			ts.enq = t
			// sched_wakeup names the runqueue the task was put on;
			// sched_waking's target_cpu is only the CPU it last ran on.
			if c := CPU(tl.Args[i]); c >= 0 {
				ts.target = c
			}
		}
		return
	case SpanRunning:
		if ts.waking == NoTime && !tl.HasWaking {
			w.countWakeRunning(id, 1)
		}
		ts.wakeup = t
		return
	case SpanPreempted:
		if tl.HasWaking || ts.tent || !ts.plainR {
			if !tl.HasWaking {
				w.countWakeQueued(id)
			}
			return
		}
		w.wokenQueued(id, t, cpu)
		w.setState(id, SpanWoken, NoCPU, t)
		ts.enq = t
		ts.waker, ts.wctx, ts.wcpu, ts.target = tl.Other[i], tl.Ctxs[i], cpu, CPU(tl.Args[i])
		if p := tl.Prios[i]; p != NoPrio {
			ts.prio = int16(p)
		}
		return
	case SpanDead:
		return
	case SpanSleeping, SpanBlocked, SpanStopped:
		if ts.race != NoTime {
			// The wakeup of a task woken while going to sleep: runnable
			// since its switch-out, enqueued now.
			ts.st = SpanPreempted
			ts.enq = t
			ts.flags |= SpanAfterRace
			ts.waker, ts.wctx, ts.wcpu, ts.target = tl.Other[i], tl.Ctxs[i], cpu, CPU(tl.Args[i])
			return
		}
	}
	wasUnknown := !ts.seen || ts.st == SpanUnknown
	if ts.seen {
		w.closeTask(id, t, false, 0, NoCPU)
	}
	w.setState(id, SpanWoken, NoCPU, t)
	ts.enq = t
	ts.tent = wasUnknown
	if tl.HasWaking {
		ts.flags |= SpanNoWaking
	}
	ts.waker, ts.wctx, ts.wcpu, ts.target = tl.Other[i], tl.Ctxs[i], cpu, CPU(tl.Args[i])
	if p := tl.Prios[i]; p != NoPrio {
		ts.prio = int16(p)
	}
}
