package whatif

import (
	"math"
	"slices"
)

// Checking predictions against real A/B captures (docs/whatif.md): one
// cell is one metric of one knob on one workload. The real side is the
// figures of the recorded runs before and after the change; the predicted
// side is a what-if of the change on each recorded base run.

// RealChange is what the kernel did to one figure over repeated runs.
type RealChange struct {
	// Base and New are the per-run figures of each side.
	Base, New []float64
}

// MedianPct is the change of the medians, median(New) / median(Base) - 1,
// in %; ok is false when the base median is 0.
func (r RealChange) MedianPct() (float64, bool) {
	b, n := median(r.Base), median(r.New)
	if b == 0 || math.IsNaN(b) || math.IsNaN(n) {
		return 0, false
	}
	return (n/b - 1) * 100, true
}

// SpreadPct is the range of the change over every pair of runs, in %:
// min(New) / max(Base) - 1 to max(New) / min(Base) - 1.
func (r RealChange) SpreadPct() (lo, hi float64, ok bool) {
	if len(r.Base) == 0 || len(r.New) == 0 || slices.Min(r.Base) <= 0 {
		return 0, 0, false
	}
	return (slices.Min(r.New)/slices.Max(r.Base) - 1) * 100, (slices.Max(r.New)/slices.Min(r.Base) - 1) * 100, true
}

// Clear reports whether the two sides' ranges do not overlap: the kernel
// showed a change beyond its run-to-run spread.
func (r RealChange) Clear() bool {
	if len(r.Base) == 0 || len(r.New) == 0 {
		return false
	}
	return slices.Max(r.Base) < slices.Min(r.New) || slices.Min(r.Base) > slices.Max(r.New)
}

// Predicted is what the what-if predicted of one figure, one cell per
// recorded base run.
type Predicted struct {
	Cells []Cell
}

// MedianPct is the median over the base runs of the predicted change
// (cells without a change left out); ok false when none has one.
func (p Predicted) MedianPct() (float64, bool) {
	var v []float64
	for _, c := range p.Cells {
		if c.HasChange {
			v = append(v, c.ChangePct)
		}
	}
	if len(v) == 0 {
		return 0, false
	}
	return median(v), true
}

// IntervalPct is the median over the base runs of each end of the 95%
// interval (tested cells only).
func (p Predicted) IntervalPct() (lo, hi float64, ok bool) {
	var l, h []float64
	for _, c := range p.Cells {
		if c.Tested {
			l, h = append(l, c.CI95[0]), append(h, c.CI95[1])
		}
	}
	if len(l) == 0 {
		return 0, 0, false
	}
	return median(l), median(h), true
}

// Verdict is the verdict most base runs gave; a tie between verdicts is
// inconclusive.
func (p Predicted) Verdict() Verdict {
	count := map[Verdict]int{}
	best, n, tie := Inconclusive, 0, false
	for _, c := range p.Cells {
		count[c.Verdict]++
	}
	for _, v := range []Verdict{Better, Worse, NoChange, Inconclusive} {
		switch {
		case count[v] > n:
			best, n, tie = v, count[v], false
		case count[v] == n && n > 0:
			tie = true
		}
	}
	if tie {
		return Inconclusive
	}
	return best
}

// Agreement is one cell of the check.
type Agreement struct {
	Workload, Knob, Metric string
	Real                   RealChange
	Pred                   Predicted
	// Clear: the real change is beyond the run-to-run spread.
	Clear bool
	// Direction: on a clear cell, the predicted change has the sign of
	// the real median change, and its interval (the median of each end
	// over the base runs) excludes 0: a predicted -0.01% inside an
	// interval around 0 predicts no direction.
	Direction bool
	// Size: on a clear cell, |predicted| / |real| is within 0.5..2.
	Size bool
	// Quiet: on an unclear cell, the verdict is no detectable change or
	// inconclusive.
	Quiet bool
}

// Agree scores one cell.
func Agree(workload, knob, metric string, real RealChange, pred Predicted) Agreement {
	a := Agreement{Workload: workload, Knob: knob, Metric: metric, Real: real, Pred: pred, Clear: real.Clear()}
	r, rok := real.MedianPct()
	p, pok := pred.MedianPct()
	if a.Clear {
		lo, hi, iok := pred.IntervalPct()
		if rok && pok && iok && (lo > 0 || hi < 0) {
			a.Direction = r != 0 && math.Signbit(r) == math.Signbit(p) && p != 0
			ratio := math.Abs(p) / math.Abs(r)
			a.Size = a.Direction && ratio >= 0.5 && ratio <= 2
		}
		return a
	}
	v := pred.Verdict()
	a.Quiet = v == NoChange || v == Inconclusive
	return a
}

// Score sums a check: clear cells, how many agree in direction and in
// size, unclear cells and how many the what-if left quiet.
type Score struct {
	Clear, Direction, Size int
	Unclear, Quiet         int
}

// ScoreOf sums cells.
func ScoreOf(cells []Agreement) Score {
	var s Score
	for _, a := range cells {
		if a.Clear {
			s.Clear++
			if a.Direction {
				s.Direction++
			}
			if a.Size {
				s.Size++
			}
			continue
		}
		s.Unclear++
		if a.Quiet {
			s.Quiet++
		}
	}
	return s
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
