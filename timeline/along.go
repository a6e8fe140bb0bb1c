package timeline

import (
	"math"
	"slices"
	"sort"
)

// alongEvery is how many events a Builder adds between two hand-overs to a
// walk along it.
var alongEvery = 1 << 14

// Along is a walk of a Builder's events that runs on a goroutine of its own
// while they are still being added, so that a command that loads a trace to
// walk it once (tasks, cpus) walks while the reader reads. It hands out the
// spans Timeline.Walk would hand out over the finished Timeline, in the same
// order, and stops short, leaving the caller to walk the Timeline itself,
// whenever it cannot be sure of that.
//
// A walk needs, before its first event, figures of the whole trace: the
// CPUs, each CPU's first event (the valid start and the clipped gaps),
// whether the trace has wakeup events, and the gaps. Along starts once every
// CPU the producer declared has an event, with those figures as the events
// so far give them; it steps only the events before the earliest of the
// CPUs' latest events (a loss a later event reveals begins at its CPU's
// latest record, so no gap can open behind the walk), and the Builder's
// Finish lets it catch up. Along.Finish then checks every figure it started
// from against the finished Timeline's (a CPU whose first event came late,
// a first wakeup event, a gap out of order: any difference) and either ends
// the walk exactly as Walk would or reports that it did not.
type Along struct {
	ncpu  int
	start func(prov *Timeline) AlongSinks
	// guess: no CPU count was declared; ncpu is the events' until the
	// walk starts
	guess bool

	// the Builder's side
	started, abandoned bool
	sentGaps           int
	ch                 chan alongState
	done               chan struct{}

	// the walk's side, read by Finish once done is closed
	prov   *Timeline // the figures the walk started from
	w      *walker
	sinks  AlongSinks
	walked int  // events stepped
	lastT  Time // time of the last event stepped
	failed bool // a gap began behind the walk
}

// alongState is what the Builder hands the walk: the events so far (a
// Timeline of their columns and task instances), the frontier before which
// events may be stepped, and the gaps found since the last hand-over.
type alongState struct {
	evs      *Timeline
	frontier Time
	gaps     []Gap
}

// AlongSinks are where a walk along a Builder hands out what it walks:
// Span gets each closed span, as from Walk; Events (if not nil) each chunk
// of events before the spans it closes, as a Timeline with that chunk's
// columns and the task instances so far, as from NewStreamWalk; Final (if
// not nil) the finished Timeline, before the walk's last events and the
// spans still open at the trace's end, whose figures (End among them) are
// final only then.
type AlongSinks struct {
	Span   func(*Span)
	Events func(chunk *Timeline)
	Final  func(tl *Timeline)
}

// WalkAlong asks b for a walk beside its Adds (see Along) of a trace whose
// producer declares ncpu CPUs; with ncpu 0 (unknown) the walk takes the
// CPUs the events name when every one of them has an event, and stops
// short if another comes later. The walk starts from the coverage set on
// b before (SetCoverage; unknown if none); a different one at Finish is a
// figure that differs. When the walk can start, start is called on the
// walk's goroutine with a Timeline that has the trace's figures as known
// then (its End is not final) and no events, and returns where the walk
// hands out what it walks. Call it before the first Add, on a Builder
// that requires order (RequireOrder); Finish the Along with the Builder's
// Timeline.
func (b *Builder) WalkAlong(ncpu int, start func(prov *Timeline) AlongSinks) *Along {
	a := &Along{ncpu: ncpu, start: start, guess: ncpu <= 0}
	if !b.ordered || b.sum != nil {
		a.abandoned = true
	}
	b.along, b.alongLeft = a, alongEvery
	return a
}

// handOver gives the walk what b added since the last call, starting the
// walk first when it can start. It runs on the Builder's goroutine.
func (a *Along) handOver(b *Builder) {
	if a.abandoned {
		return
	}
	s, r := b.osum, b.online
	if s != nil && a.guess && !a.started {
		a.ncpu = len(s.first)
	}
	if s == nil || r == nil || b.unordered || b.err != nil || len(s.first) > a.ncpu || s.kindCounts[KindBufferStart] > 0 {
		a.abandon()
		return
	}
	if !a.started {
		if a.ncpu == 0 {
			return
		}
		if len(s.first) < a.ncpu || slices.Contains(s.first, NoTime) {
			return
		}
		a.begin(b)
	}
	frontier := Time(math.MaxInt64)
	for _, t := range s.last {
		frontier = min(frontier, t)
	}
	n := len(b.times)
	st := alongState{frontier: frontier, evs: &Timeline{
		Times: b.times[:n], CPUs: b.cpus[:n], Kinds: b.kinds[:n], Ctxs: b.ctxs[:n], States: b.states[:n],
		Prios: b.prios[:n], Comms: b.comms[:n], Args: b.args[:n], Args2: b.args2[:n],
		TaskOf: r.taskOf[:n], Other: r.other[:n], Tasks: r.tasks[:len(r.tasks):len(r.tasks)]}}
	if len(s.gaps) > a.sentGaps {
		// copies: Finish sorts the summary's gaps in place
		st.gaps = slices.Clone(s.gaps[a.sentGaps:])
		a.sentGaps = len(s.gaps)
	}
	a.ch <- st
}

// begin starts the walk's goroutine with the figures of the events so far.
func (a *Along) begin(b *Builder) {
	s := b.osum
	cp := *s
	cp.first, cp.last, cp.complete = slices.Clone(s.first), slices.Clone(s.last), slices.Clone(s.complete)
	cp.gaps = slices.Clone(s.gaps)
	prov := &Timeline{Strings: b.strs, NCPU: a.ncpu, Start: NoTime, End: NoTime, ValidStart: NoTime}
	cp.apply(prov, b.coverage, b.evidence)
	a.prov = prov
	a.sentGaps = len(s.gaps)
	a.started = true
	a.ch = make(chan alongState, 64)
	a.done = make(chan struct{})
	go a.run()
}

// abandon stops the walk: the caller walks the finished Timeline instead.
func (a *Along) abandon() {
	a.abandoned = true
	a.stop()
}

// Stop abandons the walk of a Builder that will not be finished (a read
// that failed), ending its goroutine. After Finish it does nothing.
func (a *Along) Stop() {
	if a != nil {
		a.abandon()
	}
}

// stop ends the hand-overs and waits until the walk has taken them all.
func (a *Along) stop() {
	if a.ch != nil {
		close(a.ch)
		<-a.done
		a.ch = nil
	}
}

// finishAdds is the Builder's last hand-over, before its Finish.
func (a *Along) finishAdds(b *Builder) {
	a.handOver(b)
	a.stop()
}

// run is the walk's goroutine.
func (a *Along) run() {
	defer close(a.done)
	a.sinks = a.start(a.prov)
	w := newWalker(a.prov)
	w.emit = a.sinks.Span
	w.begin()
	// the walk's own gap lists, which the hand-overs extend
	w.gapEnds = slices.Clone(w.gapEnds)
	a.w = w
	for st := range a.ch {
		if !a.failed {
			a.take(&st)
		}
	}
}

// take adds the gaps found and steps the events before the frontier.
func (a *Along) take(st *alongState) {
	w := a.w
	for _, g := range st.gaps {
		if a.walked > 0 && g.Start <= a.lastT {
			a.failed = true // the walk is past where the gap begins
			return
		}
		w.gapEnds = append(w.gapEnds, g)
		// after the gaps that begin no later, as a stable sort puts it
		i := w.si + sort.Search(len(w.gapStarts)-w.si, func(j int) bool { return w.gapStarts[w.si+j].Start > g.Start })
		w.gapStarts = slices.Insert(w.gapStarts, i, g)
	}
	times := st.evs.Times
	k := a.walked + sort.Search(len(times)-a.walked, func(j int) bool { return times[a.walked+j] >= st.frontier })
	a.step(st.evs, k, a.prov)
}

// step walks events walked..k-1 of evs, with the figures of fig.
func (a *Along) step(evs *Timeline, k int, fig *Timeline) {
	if k <= a.walked {
		return
	}
	i := a.walked
	v := *fig
	v.incs, v.summary = nil, nil
	v.Times, v.CPUs, v.Kinds, v.Ctxs, v.States = evs.Times[i:k], evs.CPUs[i:k], evs.Kinds[i:k], evs.Ctxs[i:k], evs.States[i:k]
	v.Prios, v.Comms, v.Args, v.Args2 = evs.Prios[i:k], evs.Comms[i:k], evs.Args[i:k], evs.Args2[i:k]
	v.TaskOf, v.Other, v.Tasks = evs.TaskOf[i:k], evs.Other[i:k], evs.Tasks
	w := a.w
	w.tl = &v
	w.grow(len(v.Tasks))
	if a.sinks.Events != nil {
		a.sinks.Events(&v)
	}
	w.steps(k - i)
	a.walked, a.lastT = k, v.Times[k-i-1]
}

// Finish ends the walk over tl, the Timeline of the Builder the Along was
// asked of: it walks the events left and hands out what is open at the
// end, as Walk does, and gives tl the inconsistencies found. It returns
// false, having handed out nothing more, when the walk did not run or
// started from figures tl does not have: then the spans handed out so far
// are to be dropped and tl walked anew.
func (a *Along) Finish(tl *Timeline) (WalkStats, bool) {
	a.stop()
	if !a.started || a.abandoned || a.failed || !a.sameFigures(tl) {
		return WalkStats{}, false
	}
	if a.sinks.Final != nil {
		a.sinks.Final(tl)
	}
	a.step(tl, len(tl.Times), tl)
	w := a.w
	w.tl = tl
	w.grow(len(tl.Tasks))
	w.end()
	tl.keepInconsistencies(w.incs)
	return w.stats(), true
}

// sameFigures reports whether the walk started from tl's figures, and
// knew its gaps in the order Walk takes them.
func (a *Along) sameFigures(tl *Timeline) bool {
	p, w := a.prov, a.w
	if w == nil || tl.NCPU != p.NCPU || tl.Start != p.Start || tl.ValidStart != p.ValidStart ||
		tl.ValidStartRule != p.ValidStartRule || tl.HasWaking != p.HasWaking || tl.HasWakeup != p.HasWakeup ||
		!slices.Equal(tl.CPUFirst, p.CPUFirst) || !slices.Equal(tl.Gaps, w.gapEnds) {
		return false
	}
	return slices.Equal(byStart(tl.Gaps), w.gapStarts)
}
