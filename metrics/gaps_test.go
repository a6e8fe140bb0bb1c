package metrics_test

import (
	"testing"

	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
)

// TestOverflowClippedStart: in overwrite mode CPU 1's surviving events start
// later ("##### CPU 1 buffer started ####" at 647.913772); the valid window
// starts there, and CPU 0 is not reported idle before it.
func TestOverflowClippedStart(t *testing.T) {
	tl := loadText(t, real+"ftrace-overflow/trace.txt.gz")
	if got, want := tl.ValidStart, timeline.Time(647913772000); got != want {
		t.Errorf("ValidStart = %s, want %s", got.Seconds(), want.Seconds())
	}
	if tl.Start >= tl.ValidStart {
		t.Errorf("Start = %s, want before the clipped start", tl.Start.Seconds())
	}
	clipped := 0
	for _, g := range tl.Gaps {
		if g.Kind == timeline.GapClipped {
			clipped++
			if g.CPU != 1 || g.End != tl.ValidStart {
				t.Errorf("clipped gap = %+v, want CPU 1 ending at %s", g, tl.ValidStart.Seconds())
			}
		}
	}
	if clipped != 1 {
		t.Errorf("%d clipped gaps, want 1", clipped)
	}
	acc := metrics.Account(tl, metrics.DefaultWindow(tl))
	span := int64(tl.End - tl.ValidStart)
	for _, c := range acc.CPUs {
		if c.BusyNs+c.IdleNs+c.UnobservedNs != span {
			t.Errorf("CPU %d: busy %d + idle %d + unobserved %d != window %d", c.CPU, c.BusyNs, c.IdleNs, c.UnobservedNs, span)
		}
	}
	// Over the whole trace, CPU 1's time before its buffer started is
	// unobserved, never idle.
	all := metrics.Account(tl, metrics.Window{Start: tl.Start, End: tl.End})
	if u := all.CPUs[1].UnobservedNs; u < int64(tl.ValidStart-tl.Start) {
		t.Errorf("CPU 1 unobserved = %d ns, want at least the %d ns before its buffer started", u, tl.ValidStart-tl.Start)
	}
}

// TestPipeLostGaps: a slow trace_pipe reader lost 7132 events on CPU 0 and
// 8166 on CPU 1; both gaps are reported and nothing is measured across them.
func TestPipeLostGaps(t *testing.T) {
	tl := loadText(t, real+"ftrace-pipe-lost/trace.txt.gz")
	want := map[timeline.CPU]int64{0: 7132, 1: 8166}
	n := 0
	for _, g := range tl.Gaps {
		if g.Kind != timeline.GapLost {
			continue
		}
		n++
		if want[g.CPU] != g.Lost {
			t.Errorf("gap on CPU %d lost %d, want %d", g.CPU, g.Lost, want[g.CPU])
		}
		if g.End <= g.Start {
			t.Errorf("gap on CPU %d: [%s, %s] is empty", g.CPU, g.Start.Seconds(), g.End.Seconds())
		}
	}
	if n != 2 || tl.LostEvents != 7132+8166 {
		t.Errorf("%d lost gaps with %d events, want 2 with %d", n, tl.LostEvents, 7132+8166)
	}
	// No interval of any task spans a gap on its CPU: running spans end at
	// the gap start; waiting and sleeping spans that cross any gap are
	// unknown.
	for _, g := range tl.Gaps {
		if g.Kind != timeline.GapLost {
			continue
		}
		tl.Walk(func(s *timeline.Span) {
			if s.Task == timeline.NoTask || s.State == timeline.SpanUnknown || tl.Tasks[s.Task].Idle {
				return
			}
			if s.Start < g.Start && s.End > g.End && (s.State != timeline.SpanRunning || s.CPU == g.CPU) {
				t.Errorf("pid %d %v span [%s, %s] crosses the CPU %d gap [%s, %s]", tl.Tasks[s.Task].PID, s.State,
					s.Start.Seconds(), s.End.Seconds(), g.CPU, g.Start.Seconds(), g.End.Seconds())
			}
		})
	}
	acc := metrics.Account(tl, metrics.DefaultWindow(tl))
	if acc.CPUs[0].LostEvents != 7132 || acc.CPUs[1].LostEvents != 8166 {
		t.Errorf("per-CPU lost = %d, %d", acc.CPUs[0].LostEvents, acc.CPUs[1].LostEvents)
	}
	for _, c := range acc.CPUs {
		if c.UnobservedNs == 0 {
			t.Errorf("CPU %d: no unobserved time despite its gap", c.CPU)
		}
	}
}
