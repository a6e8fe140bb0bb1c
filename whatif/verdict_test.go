package whatif

import (
	"testing"

	"github.com/schedlens/schedlens/compare"
)

// TestJudge works the verdict rule on hand-made cells: lower is better,
// the interval must exclude 0 and clear the fidelity error F.
func TestJudge(t *testing.T) {
	cell := func(lo, hi, fid float64) Cell {
		return Cell{HasBaseline: true, HasWhatIf: true, Baseline: 100, WhatIf: 100 + (lo+hi)/2, HasChange: true,
			ChangePct: (lo + hi) / 2, Tested: true, CI95: [2]float64{lo, hi}, FidelityPct: fid, HasFidelity: true}
	}
	tests := []struct {
		name string
		c    Cell
		want Verdict
	}{
		{"rise beyond the error", cell(12, 20, 10), Worse},
		{"fall beyond the error", cell(-20, -12, 10), Better},
		{"rise reaching into the error", cell(8, 20, 10), Inconclusive},
		{"fall reaching into the error", cell(-20, -9.99, 10), Inconclusive},
		{"near end exactly at the error", cell(10, 20, 10), Inconclusive},
		{"contains 0, inside the error", cell(-3, 4, 5), NoChange},
		{"contains 0, wider than the error", cell(-3, 6, 5), Inconclusive},
		{"contains 0, error 0", cell(-0.1, 0.1, 0), Inconclusive},
		{"exact 0 change, error 0", cell(0, 0, 0), NoChange},
		{"faithful baseline, clear rise", cell(0.5, 1, 0.2), Worse},
		{"both sides 0", Cell{HasBaseline: true, HasWhatIf: true}, NoChange},
		{"baseline 0, what-if not", Cell{HasBaseline: true, HasWhatIf: true, WhatIf: 3}, Inconclusive},
		{"no figure on a side", Cell{HasBaseline: true, Baseline: 5}, Inconclusive},
		{"untested", Cell{HasBaseline: true, HasWhatIf: true, Baseline: 5, WhatIf: 9, HasChange: true, ChangePct: 80, HasFidelity: true}, Inconclusive},
		{"no fidelity", func() Cell { c := cell(30, 40, 0); c.HasFidelity = false; return c }(), Inconclusive},
	}
	for _, tc := range tests {
		c := tc.c
		Judge(&c)
		if c.Verdict != tc.want || c.Why == "" {
			t.Errorf("%s: %q (%s), want %q", tc.name, c.Verdict, c.Why, tc.want)
		}
	}
}

// TestJudgeAll checks the fidelity error and the metrics judged, from an
// A/B of two hand-made seeds a side against a recording.
func TestJudgeAll(t *testing.T) {
	side := func(pre, csw int64) *compare.Side {
		return &compare.Side{Overall: compare.Figures{Preemptions: pre, ContextSwitches: csw}}
	}
	run := func(pre, csw int64) compare.Run { return compare.Run{Side: side(pre, csw)} }
	ab := compare.CompareRuns([]compare.Run{run(100, 1000), run(110, 1000)}, []compare.Run{run(150, 1001), run(160, 999)}, "baseline", "what-if")
	cells := judgeAll(ab, side(84, 1000))
	for _, c := range cells {
		if c.Metric == compare.WakeupCount {
			t.Errorf("wakeup count judged")
		}
	}
	p := &Prediction{Cells: cells}
	pre := p.Cell(compare.Overall, compare.Preemptions)
	// baseline 105 against 84 recorded: error 25%; the change +47.6%,
	// Welch over (100, 110) and (150, 160): d = 50 +- 4.30 x 7.07 = [19.6, 80.4]
	// in units, [18.7%, 76.6%] of 105: clears 25%? no: its near end
	// 18.7% is inside the error.
	if pre == nil || pre.FidelityPct < 24.99 || pre.FidelityPct > 25.01 || pre.Verdict != Inconclusive {
		t.Fatalf("preemptions: %+v", pre)
	}
	if pre.CI95[0] < 18 || pre.CI95[0] > 19.5 {
		t.Errorf("preemptions interval %v, want about [18.7, 76.6]", pre.CI95)
	}
	csw := p.Cell(compare.Overall, compare.ContextSwitches)
	// 1000 on both sides on average, as recorded (error 0); the what-if
	// seeds differ (999, 1001), so the interval contains 0 and is wider
	// than the error: inconclusive by the rule.
	if csw == nil || csw.FidelityPct != 0 || !csw.HasFidelity || csw.Verdict != Inconclusive {
		t.Errorf("context switches: %+v", csw)
	}
	lat := p.Cell(compare.Overall, compare.WakeupP50Ns)
	if lat == nil || lat.HasRecorded || lat.Verdict != Inconclusive {
		t.Errorf("p50 without samples: %+v", lat)
	}
}

func TestAgree(t *testing.T) {
	pred := func(v Verdict, pcts ...float64) Predicted {
		var p Predicted
		for _, x := range pcts {
			p.Cells = append(p.Cells, Cell{HasChange: true, ChangePct: x, Verdict: v, Tested: true, CI95: [2]float64{x - 1, x + 1}})
		}
		return p
	}
	clear := RealChange{Base: []float64{100, 105, 98}, New: []float64{140, 150, 130}}
	if !clear.Clear() {
		t.Fatal("disjoint ranges not clear")
	}
	if m, _ := clear.MedianPct(); m < 39.999 || m > 40.001 { // 140 / 100 - 1
		t.Errorf("median change %v, want 40", m)
	}
	if lo, hi, _ := clear.SpreadPct(); lo < 23.8 || lo > 23.81 || hi < 53.06 || hi > 53.07 { // 130/105, 150/98
		t.Errorf("spread %v .. %v, want +23.8 .. +53.1", lo, hi)
	}
	a := Agree("w", "k", "m", clear, pred(Worse, 30, 25, 10))
	if !a.Clear || !a.Direction || !a.Size {
		t.Errorf("predicted +25%% of a real +40%%: %+v", a)
	}
	a = Agree("w", "k", "m", clear, pred(Worse, 10, 15, 12))
	if !a.Direction || a.Size {
		t.Errorf("predicted +12%% of a real +40%% (0.3x): %+v", a)
	}
	a = Agree("w", "k", "m", clear, pred(Better, -5, -6, -7))
	if a.Direction {
		t.Errorf("opposite direction agrees: %+v", a)
	}
	// The right sign inside an interval around 0 is no direction.
	a = Agree("w", "k", "m", clear, pred(NoChange, 0.01, 0.02, 0.01))
	if a.Direction {
		t.Errorf("+0.01%% in [-0.99, +1.01] agrees in direction: %+v", a)
	}
	unclear := RealChange{Base: []float64{100, 120}, New: []float64{110, 130}}
	if Agree("w", "k", "m", unclear, pred(Worse, 20, 20)).Quiet {
		t.Errorf("a confident verdict on an unclear cell counted quiet")
	}
	if !Agree("w", "k", "m", unclear, pred(Inconclusive, 20, 20)).Quiet {
		t.Errorf("inconclusive on an unclear cell not quiet")
	}
	// A tie between verdicts is inconclusive.
	p := Predicted{Cells: []Cell{{Verdict: Worse}, {Verdict: NoChange}}}
	if p.Verdict() != Inconclusive {
		t.Errorf("tie: %q", p.Verdict())
	}
	s := ScoreOf([]Agreement{{Clear: true, Direction: true, Size: true}, {Clear: true}, {Quiet: true}, {}})
	if s != (Score{Clear: 2, Direction: 1, Size: 1, Unclear: 2, Quiet: 1}) {
		t.Errorf("score %+v", s)
	}
}
