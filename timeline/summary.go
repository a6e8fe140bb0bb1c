package timeline

import "sort"

// summary is what Finish derives from the merged events besides their
// columns: each CPU's first and last event, the event counts, the lost-event
// gaps, whether the trace has wakeup events, and where a reader proved a
// CPU's stream complete. Finish feeds it the merged columns; a Builder in
// summary mode (NewSummaryBuilder) feeds it each event as it arrives and
// keeps nothing else, so that the same figures come out either way.
type summary struct {
	n          int
	first      []Time // per CPU
	last       []Time
	complete   []Time // per CPU: from when a reader proved the stream complete
	kindCounts [kindCount]int64
	gaps       []Gap
	lost       int64
	hasWaking  bool
	hasWakeup  bool
	start, end Time
}

func (s *summary) cpu(c int16) {
	for int(c) >= len(s.first) {
		s.first = append(s.first, NoTime)
		s.last = append(s.last, NoTime)
		s.complete = append(s.complete, NoTime)
	}
}

// add takes the next event in merged order; start is a KindLost or
// KindBufferStart event's Start (NoTime if it has none).
func (s *summary) add(t Time, c int16, k Kind, start Time, arg int32) {
	s.cpu(c)
	if s.n == 0 {
		s.start = t
	}
	s.n++
	s.end = t
	s.kindCounts[k]++
	if s.first[c] == NoTime {
		s.first[c] = t
	}
	if k == KindBufferStart && start != NoTime && start > s.complete[c] {
		s.complete[c] = start
	}
	s.last[c] = t
	switch k {
	case KindWaking:
		s.hasWaking = true
	case KindWakeup:
		s.hasWakeup = true
	case KindLost:
		g := Gap{CPU: CPU(c), Start: start, End: t, Lost: int64(arg), Kind: GapLost}
		if g.Start == NoTime {
			g.Start = t
		}
		if g.Lost > 0 {
			s.lost += g.Lost
		}
		s.gaps = append(s.gaps, g)
	}
}

// addEvent is add for an event in merged order.
func (s *summary) addEvent(ev *Event) {
	start := NoTime
	if ev.Kind == KindLost || ev.Kind == KindBufferStart {
		start = ev.Start
	}
	s.add(ev.Time, int16(ev.CPU), ev.Kind, start, clamp32(ev.Arg))
}

// apply sets tl's window, per-CPU figures, gaps and counters from the
// events summarized; tl.NCPU must be set.
func (s *summary) apply(tl *Timeline, cov Coverage, evidence string) {
	ncpu := tl.NCPU
	s.cpu(int16(ncpu - 1))
	tl.CPUFirst = append([]Time(nil), s.first[:ncpu]...)
	tl.CPULast = append([]Time(nil), s.last[:ncpu]...)
	tl.KindCounts = s.kindCounts
	tl.HasWaking, tl.HasWakeup = s.hasWaking, s.hasWakeup
	tl.LostEvents = s.lost
	tl.Gaps = s.gaps
	if s.n == 0 {
		return
	}
	tl.Start, tl.End = s.start, s.end
	tl.ValidStart = tl.Start
	for c, f := range tl.CPUFirst {
		if f != NoTime && s.complete[c] != NoTime && s.complete[c] > f && s.complete[c] <= tl.End {
			tl.CPUFirst[c] = s.complete[c]
		}
	}
	// A CPU whose stream starts late is a clipped gap, unless the trace
	// proves it was recorded from the start and was quiet.
	if !observedFromStart(tl, cov, evidence) {
		for c, f := range tl.CPUFirst {
			if f == NoTime {
				continue
			}
			if f > tl.ValidStart {
				tl.ValidStart = f
			}
			if f > tl.Start {
				tl.Gaps = append(tl.Gaps, Gap{CPU: CPU(c), Start: tl.Start, End: f, Lost: -1, Kind: GapClipped})
			}
		}
	}
	sort.SliceStable(tl.Gaps, func(i, j int) bool { return tl.Gaps[i].End < tl.Gaps[j].End })
}
