package timeline

// Frontier follows how far a walk has gone on each CPU: the end of the
// CPU's latest running span (of a task, its idle task or an unknown one).
// A CPU's spans come in time order, so no span still to come on a CPU
// starts before its frontier, and none on any CPU before Time, the
// earliest over the CPUs with events. A metric fed by a walk uses it to
// decide, during the walk, what only the spans of every CPU up to a time
// can tell (whether a CPU idled through an interval).
type Frontier struct {
	front  []Time // per CPU: end of its latest running span, NoTime before any
	follow []int  // the CPUs with events
}

// NewFrontier starts the frontier of a walk of tl (a summary Timeline for
// a streamed walk).
func NewFrontier(tl *Timeline) *Frontier {
	f := &Frontier{front: make([]Time, tl.NCPU)}
	for cpu := range f.front {
		f.front[cpu] = NoTime
		if cpu < len(tl.CPUFirst) && tl.CPUFirst[cpu] != NoTime {
			f.follow = append(f.follow, cpu)
		}
	}
	return f
}

// Span moves the frontier of span s's CPU, if s is a running span.
func (f *Frontier) Span(s *Span) {
	if s.State == SpanRunning && s.CPU >= 0 && int(s.CPU) < len(f.front) && s.End > f.front[s.CPU] {
		f.front[s.CPU] = s.End
	}
}

// Time returns the earliest frontier of the CPUs with events: no span
// still to come starts before it. NoTime while a CPU with events has
// ended no span, or when no CPU has events.
func (f *Frontier) Time() Time {
	if len(f.follow) == 0 {
		return NoTime
	}
	t := Time(1<<63 - 1)
	for _, cpu := range f.follow {
		t = min(t, f.front[cpu])
	}
	return t
}
