package timeline

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// A trace file too large to hold as a Timeline is analysed in two reads.
// The first feeds a Builder in summary mode (NewSummaryBuilder), which keeps
// no events: its Finish returns a summary Timeline with every figure a walk
// needs before it starts (each CPU's first and last event, the gaps, the
// valid window, whether the trace has wakeup events) and the markers, but
// no event columns. The second read feeds a StreamWalk, which resolves task
// instances and walks the events a chunk at a time, handing out the same
// Spans as Timeline.Walk, and fills in the summary's tasks and
// inconsistencies at the end. Memory grows with tasks and CPUs, not events.
// Only input in time order (every text format) streams: the walk cannot
// wait for a late event.

// ErrNotTimeOrdered is what a summary Builder's Finish returns when an
// event arrived before the one added before it: the trace must be merged
// as a whole (Builder) instead of streamed.
var ErrNotTimeOrdered = errors.New("events are not in time order")

// NewSummaryBuilder returns a Builder in summary mode, for the first read
// of a streamed analysis: Add keeps no event, and Finish returns a summary
// Timeline (Summary reports true) for NewStreamWalk.
func NewSummaryBuilder(strs *Strings, ncpu int) *Builder {
	b := NewBuilder(strs, ncpu)
	b.online = nil
	b.sum = &summary{}
	return b
}

// addSummary is Add in summary mode.
func (b *Builder) addSummary(ev *Event) {
	if s := b.sum; s.n > 0 && ev.Time < s.end {
		b.unordered = true
	}
	b.sum.addEvent(ev)
	if ev.Kind == KindMarker {
		b.markers = append(b.markers, Marker{Time: ev.Time, CPU: ev.CPU, Text: b.strs.Get(CommID(clamp32(ev.Arg)))})
	}
}

// finishSummary is Finish in summary mode.
func (b *Builder) finishSummary() (*Timeline, error) {
	if b.unordered {
		return nil, ErrNotTimeOrdered
	}
	ncpu := max(b.ncpu, len(b.sum.first))
	tl := &Timeline{Strings: b.strs, NCPU: ncpu, Start: NoTime, End: NoTime, ValidStart: NoTime,
		summary: &summaryOnly{events: b.sum.n, markers: b.markers, coverage: b.coverage, evidence: b.evidence}}
	b.finishAttrs(tl)
	b.sum.apply(tl, b.coverage, b.evidence)
	return tl, nil
}

// summaryOnly marks a summary Timeline: its event count and markers stand
// for the columns it does not have.
type summaryOnly struct {
	events   int
	markers  []Marker
	walked   bool
	coverage Coverage // what the first read's reader proved
	evidence string
	// gaps added besides the events' (AddGaps), which the second read's
	// events do not show either
	added []Gap
}

// AddGaps adds stretches that no event shows to a summary Timeline not yet
// walked (a modeled schedule's, where the recording it replays saw
// nothing), as a loaded Timeline's caller appends them to Gaps: kept in
// the order of their ends, after the gaps of the same end already there.
// The walk then treats them as it does the events' gaps.
func (tl *Timeline) AddGaps(gs []Gap) error {
	if tl.summary == nil || tl.summary.walked {
		return errors.New("AddGaps: not a summary timeline that a walk has yet to read")
	}
	tl.summary.added = append(tl.summary.added, gs...)
	tl.Gaps = append(tl.Gaps, gs...)
	sortGaps(tl.Gaps)
	return nil
}

// SummaryCopy returns a copy of the summary Timeline tl, not yet walked,
// for one more walk of the same events (timeline.EventLog can hand them
// out again): it has tl's figures, and its own tasks and inconsistencies
// once walked.
func (tl *Timeline) SummaryCopy() (*Timeline, error) {
	if tl.summary == nil || tl.summary.walked {
		return nil, errors.New("SummaryCopy: not a summary timeline that a walk has yet to read")
	}
	c := *tl
	so := *tl.summary
	c.summary = &so
	c.Gaps = slices.Clone(tl.Gaps)
	c.CPUFirst, c.CPULast = slices.Clone(tl.CPUFirst), slices.Clone(tl.CPULast)
	return &c, nil
}

// sortGaps orders gaps by their ends, keeping the order of equal ones.
func sortGaps(gs []Gap) {
	slices.SortStableFunc(gs, func(a, b Gap) int { return cmp.Compare(a.End, b.End) })
}

// Summary reports whether tl is a summary Timeline (NewSummaryBuilder): it
// has the figures of its events but not the events, and is walked with a
// StreamWalk over a second read of its trace.
func (tl *Timeline) Summary() bool { return tl.summary != nil }

// DropEvents makes a loaded Timeline a summary one once nothing will read
// its events again: it keeps its tasks, inconsistencies (found by a walk
// now if no walk has run), markers and every figure of the events, and
// lets go of the event columns, so that what is allocated next can reuse
// their memory. A caller that needs only those figures after a walk (the
// analysis commands) drops the events before the analysis proper
// allocates. Walk then panics and NewStreamWalk fails, as on any walked
// summary. A summary Timeline is left as it is.
func (tl *Timeline) DropEvents() {
	if tl.summary != nil {
		return
	}
	tl.Inconsistencies()
	tl.summary = &summaryOnly{events: len(tl.Times), markers: tl.Markers(), walked: true}
	tl.Times, tl.CPUs, tl.Kinds, tl.Ctxs, tl.States, tl.Prios = nil, nil, nil, nil, nil, nil
	tl.TaskOf, tl.Other, tl.Comms, tl.Args, tl.Args2 = nil, nil, nil, nil, nil
}

// streamChunk is how many events a StreamWalk resolves before it walks
// them.
var streamChunk = 1 << 14

// StreamWalk walks the events of a summary Timeline's trace as a second
// read hands them out, in the order the first read did. See NewStreamWalk.
type StreamWalk struct {
	tl      *Timeline // the summary
	chunk   Timeline  // the events resolved and not walked yet
	r       *resolver
	w       *walker
	onChunk func(*Timeline)
	n       int
	prev    Time
	err     error
	// sum summarizes the second read, which Finish checks against the
	// first.
	sum summary
}

// NewStreamWalk starts the walk of the summary Timeline tl. Each closed
// Span goes to emit, as Timeline.Walk hands them out; before a chunk of
// events is walked, onChunk (if not nil) sees them as a Timeline with the
// summary's figures, its task instances so far and that chunk's columns
// (for counts that need events, not spans). Feed the events with Add, then
// call Finish, which gives tl its tasks and inconsistencies.
func (tl *Timeline) NewStreamWalk(emit func(*Span), onChunk func(chunk *Timeline)) (*StreamWalk, error) {
	if tl.summary == nil {
		return nil, errors.New("NewStreamWalk: not a summary timeline")
	}
	if tl.summary.walked {
		return nil, errors.New("NewStreamWalk: the summary timeline was walked already")
	}
	tl.summary.walked = true
	s := &StreamWalk{tl: tl, r: newResolver(), onChunk: onChunk, prev: NoTime}
	c := &s.chunk
	*c = *tl
	c.summary, c.incs = nil, nil
	c.Times = make([]Time, 0, streamChunk)
	c.CPUs = make([]int16, 0, streamChunk)
	c.Kinds = make([]Kind, 0, streamChunk)
	c.Ctxs = make([]Context, 0, streamChunk)
	c.States = make([]State, 0, streamChunk)
	c.Prios = make([]uint8, 0, streamChunk)
	c.Comms = make([]CommID, 0, streamChunk)
	c.Args = make([]int32, 0, streamChunk)
	c.Args2 = make([]int32, 0, streamChunk)
	s.r.taskOf = make([]TaskID, 0, streamChunk)
	s.r.other = make([]TaskID, 0, streamChunk)
	s.w = newWalker(c)
	s.w.emit = emit
	s.w.begin()
	return s, nil
}

// Add takes the next event of the second read.
func (s *StreamWalk) Add(ev Event) { s.AddEvent(&ev) }

// AddEvent is Add for an event it reads where it is, without a copy.
func (s *StreamWalk) AddEvent(ev *Event) {
	if s.err != nil {
		return
	}
	if ev.Time < s.prev {
		s.err = fmt.Errorf("event %d (%v at %s) before the one added before it: %w", s.n, ev.Kind, ev.Time.Seconds(), ErrNotTimeOrdered)
		return
	}
	if ev.CPU < 0 || int(ev.CPU) >= s.tl.NCPU {
		s.err = fmt.Errorf("event %d (%v at %s): CPU %d, not one of the %d CPUs of the first read", s.n, ev.Kind, ev.Time.Seconds(), ev.CPU, s.tl.NCPU)
		return
	}
	s.prev = ev.Time
	s.n++
	c := &s.chunk
	c.Times = append(c.Times, ev.Time)
	c.CPUs = append(c.CPUs, int16(ev.CPU))
	c.Kinds = append(c.Kinds, ev.Kind)
	c.Ctxs = append(c.Ctxs, ev.Ctx)
	c.States = append(c.States, ev.State)
	p := prioOf(ev.Prio)
	c.Prios = append(c.Prios, p)
	c.Comms = append(c.Comms, ev.Comm)
	c.Args = append(c.Args, clamp32(ev.Arg))
	c.Args2 = append(c.Args2, clamp32(ev.Arg2))
	s.r.event(ev.Time, int16(ev.CPU), ev.Kind, ev.Comm, p, ev.State, ev.Task, ev.Other, ev.OComm, ev.TGID)
	s.sum.addEvent(ev)
	if len(c.Times) == streamChunk {
		s.flush()
	}
}

// flush walks the chunk's events.
func (s *StreamWalk) flush() {
	c := &s.chunk
	if len(c.Times) == 0 {
		return
	}
	c.Tasks, c.TaskOf, c.Other = s.r.tasks, s.r.taskOf, s.r.other
	s.w.grow(len(c.Tasks))
	if s.onChunk != nil {
		s.onChunk(c)
	}
	s.w.steps(len(c.Times))
	c.Times, c.CPUs, c.Kinds, c.Ctxs, c.States = c.Times[:0], c.CPUs[:0], c.Kinds[:0], c.Ctxs[:0], c.States[:0]
	c.Prios, c.Comms, c.Args, c.Args2 = c.Prios[:0], c.Comms[:0], c.Args[:0], c.Args2[:0]
	s.r.taskOf, s.r.other = s.r.taskOf[:0], s.r.other[:0]
}

// Finish walks what is left and closes the walk: the summary Timeline gets
// its task instances and inconsistencies. It fails when the second read
// did not hand out the events the first did (a file that changed between
// them).
func (s *StreamWalk) Finish() (WalkStats, error) {
	if s.err != nil {
		return WalkStats{}, s.err
	}
	if s.n != s.tl.summary.events || s.n > 0 && s.prev != s.tl.End {
		return WalkStats{}, fmt.Errorf("the second read of the trace gave %d events ending at %s s, the first %d ending at %s s: did the file change?",
			s.n, s.prev.Seconds(), s.tl.summary.events, s.tl.End.Seconds())
	}
	if what := s.differs(); what != "" {
		return WalkStats{}, fmt.Errorf("the second read of the trace differs from the first in its %s: did the file change?", what)
	}
	s.flush() // the walker then knows every task: only events make them
	s.w.end()
	tl := s.tl
	tl.Tasks = s.r.finalTasks()
	tl.incs = &incsCache{}
	tl.keepInconsistencies(s.w.incs)
	return s.w.stats(), nil
}

// differs names the first figure in which the second read's events differ
// from the summary's, "" if none does.
func (s *StreamWalk) differs() string {
	a := s.tl
	b := &Timeline{NCPU: a.NCPU, Start: NoTime, End: NoTime, ValidStart: NoTime}
	if len(s.sum.first) > a.NCPU {
		return "CPUs"
	}
	s.sum.apply(b, a.summary.coverage, a.summary.evidence)
	if len(a.summary.added) > 0 {
		b.Gaps = append(b.Gaps, a.summary.added...)
		sortGaps(b.Gaps)
	}
	switch {
	case !slices.Equal(a.CPUFirst, b.CPUFirst):
		return "first event of each CPU"
	case !slices.Equal(a.CPULast, b.CPULast):
		return "last event of each CPU"
	case a.KindCounts != b.KindCounts:
		return "count of each kind of event"
	case !slices.Equal(a.Gaps, b.Gaps):
		return "gaps"
	case a.Start != b.Start || a.ValidStart != b.ValidStart || a.LostEvents != b.LostEvents:
		return "window"
	}
	return ""
}
