package whatif

import (
	"math"

	"github.com/schedlens/schedlens/compare"
)

// Verdict is what a what-if concludes about one metric in one scope.
type Verdict string

// Verdicts.
const (
	Better       Verdict = "better"
	Worse        Verdict = "worse"
	NoChange     Verdict = "no detectable change"
	Inconclusive Verdict = "inconclusive"
)

// Judged lists the metrics a what-if judges, in table order: every
// metric of compare but the count of wakeup samples, which is a count of
// events, not a cost, and has no better direction. For every one of them
// lower is better: less CPU time for the same work, less waiting, fewer
// preemptions, migrations and switches (each a cost paid by the kernel or
// the cache), less idle time beside waiting tasks, an earlier completion.
var Judged = []string{compare.RunNs, compare.RunnableNs, compare.WakeupP50Ns, compare.WakeupP90Ns, compare.WakeupP99Ns,
	compare.WakeupMaxNs, compare.WakeupMeanNs, compare.Preemptions, compare.Migrations, compare.ContextSwitches,
	compare.IdleWithRunnableNs, compare.CompletionNs}

func judged(metric string) bool {
	for _, m := range Judged {
		if m == metric {
			return true
		}
	}
	return false
}

// Cell is one metric in one scope of a what-if.
type Cell struct {
	Scope, Metric string
	// Recorded is the recording's figure (HasRecorded: the recording has
	// it: samples for a latency figure, a run for a completion time).
	Recorded    float64
	HasRecorded bool
	// Baseline and WhatIf are the means over the seeds of each side
	// (Has...: a seed of the side has the figure).
	Baseline, WhatIf       float64
	HasBaseline, HasWhatIf bool
	// ChangePct is (WhatIf - Baseline) / Baseline x 100 when HasChange
	// (both sides have the figure and Baseline is not 0).
	ChangePct float64
	HasChange bool
	// CI95 is the 95% interval of the change in % of Baseline across the
	// seeds (Welch's t on the per-seed figures), when Tested.
	CI95   [2]float64
	Tested bool
	// FidelityPct is the baseline model's own error on this figure,
	// |Baseline / Recorded - 1| x 100, when HasFidelity (both figures
	// exist; a recorded 0 gives 0 with a baseline 0 and none otherwise).
	FidelityPct float64
	HasFidelity bool
	Verdict     Verdict
	// Why says in a few words what decided the verdict.
	Why string
}

// Judge decides the verdict of a cell from its change, its interval
// across seeds and the baseline's fidelity error F on the figure (lower is
// better for every judged metric):
//
//   - both sides 0: no detectable change;
//   - no interval (no figure on a side, a baseline of 0, fewer than two
//     seeds with the figure), or no fidelity error (the recording lacks
//     the figure): inconclusive;
//   - the interval excludes 0 and lies wholly beyond F on one side (its
//     near end further from 0 than F): better (a fall) or worse (a rise);
//   - the interval excludes 0 but reaches within F of 0: inconclusive, a
//     change the model shows that is no larger than its own error on
//     this figure;
//   - the interval contains 0 and is no wider than F on either side
//     (both ends within ±F): no detectable change;
//   - the interval contains 0 and reaches beyond ±F: inconclusive, the
//     seeds disagree by more than the model's error.
func Judge(c *Cell) {
	c.Verdict, c.Why = judge(c)
}

func judge(c *Cell) (Verdict, string) {
	switch {
	case c.HasBaseline && c.HasWhatIf && c.Baseline == 0 && c.WhatIf == 0:
		return NoChange, "0 on both sides"
	case !c.HasChange:
		return Inconclusive, "no change in % (a side without the figure, or a baseline of 0)"
	case !c.Tested:
		return Inconclusive, "no interval across seeds"
	case !c.HasFidelity:
		return Inconclusive, "the recording has no such figure to bound the model's error"
	}
	lo, hi, f := c.CI95[0], c.CI95[1], c.FidelityPct
	switch {
	case lo > 0 && lo > f:
		return Worse, "interval above 0 and beyond the fidelity error"
	case hi < 0 && -hi > f:
		return Better, "interval below 0 and beyond the fidelity error"
	case lo > 0 || hi < 0:
		return Inconclusive, "a change no larger than the fidelity error"
	case lo >= -f && hi <= f:
		return NoChange, "interval contains 0, inside the fidelity error"
	}
	return Inconclusive, "interval contains 0 and is wider than the fidelity error"
}

// judgeAll turns the rows of a what-if's A/B into judged cells.
func judgeAll(a *compare.AB, rec *compare.Side) []Cell {
	var out []Cell
	for i := range a.Rows {
		r := &a.Rows[i]
		if !judged(r.Metric) {
			continue
		}
		c := Cell{Scope: r.Scope, Metric: r.Metric, Baseline: r.Base, WhatIf: r.New, HasBaseline: len(r.BaseRuns) > 0,
			HasWhatIf: len(r.NewRuns) > 0, ChangePct: r.ChangePct, HasChange: r.HasChange, CI95: r.CI95, Tested: r.Tested}
		c.Recorded, c.HasRecorded = recordedValue(rec, r.Scope, r.Metric)
		if c.HasRecorded && c.HasBaseline {
			switch {
			case c.Recorded != 0:
				c.FidelityPct, c.HasFidelity = math.Abs(c.Baseline/c.Recorded-1)*100, true
			case c.Baseline == 0:
				c.HasFidelity = true
			}
		}
		Judge(&c)
		out = append(out, c)
	}
	return out
}

// recordedValue is the recording's figure of a metric in a scope, with the
// rules compare applies to a run: a scope the recording lacks counts 0
// for a time or count and has no latency or completion figure.
func recordedValue(rec *compare.Side, scope, metric string) (float64, bool) {
	f := rec.Scope(scope)
	latency := metric != compare.WakeupCount && len(metric) > 15 && metric[:15] == "wakeup_latency_"
	switch {
	case f == nil && (latency || metric == compare.CompletionNs):
		return 0, false
	case f == nil:
		return 0, true
	case latency && f.Wakeup.Count == 0, metric == compare.CompletionNs && f.CompletionNs == 0:
		return 0, false
	}
	v, _ := f.Value(metric)
	return float64(v), true
}
