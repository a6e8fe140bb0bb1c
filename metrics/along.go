package metrics

import (
	"math"

	"github.com/schedlens/schedlens/timeline"
)

// AccountAlong is Account over a trace's default window (DefaultWindow) by
// a walk that runs while the trace loads (ingest.LoadWalking): Start is
// the walk's start function, Result the accounting once the walk has run
// to its end.
//
// The walk starts before the window's end is known. Until the Timeline is
// finished the Accountant takes the window as open-ended, which changes
// nothing: until then the walk hands out only spans that end before the
// trace's last event (timeline.Along).
type AccountAlong struct {
	a *Accountant
}

// Start begins the accounting from the figures the walk starts from.
func (x *AccountAlong) Start(prov *timeline.Timeline) timeline.AlongSinks {
	a := NewAccountant(prov, Window{Start: prov.ValidStart, End: timeline.Time(math.MaxInt64)})
	x.a = a
	return timeline.AlongSinks{Span: a.Span, Events: a.Events, Final: func(tl *timeline.Timeline) {
		a.tl, a.win = tl, DefaultWindow(tl)
	}}
}

// Result is the accounting once the walk along the load, whose stats are
// ws, has run to its end.
func (x *AccountAlong) Result(ws timeline.WalkStats) *Accounting {
	return x.a.Result(ws)
}
