package compare

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/schedlens/schedlens/report"
)

// An A/B compares real runs of a workload: one or more traces of the base
// (before a change) against one or more of the new (after it), each
// measured by Measure. Scopes are matched by name (comm and class), since
// pids differ between runs.

// Run is one measured trace of an A/B.
type Run struct {
	Trace report.Trace
	Side  *Side
}

// Method names the significance test of an A/B.
const (
	// MethodWelch: both sides have two or more runs; every metric is
	// tested by Welch's t-test on its per-run values.
	MethodWelch = "welch"
	// MethodBootstrap: a side has one run; only the wakeup latency p50,
	// p90, p99 and mean are tested, by a bootstrap over their samples
	// (a side with several runs pools them). Run-to-run noise is not
	// measured.
	MethodBootstrap = "bootstrap"
)

// Row is one metric in one scope of an A/B.
type Row struct {
	Scope, Metric string
	// BaseRuns and NewRuns are the per-run values of the runs that have
	// the figure: a latency figure or a completion time needs samples or
	// run of the scope in the window, a time or count is 0 in a run
	// without the scope.
	BaseRuns, NewRuns []float64
	// Base and New are the means over those runs, BaseSD and NewSD the
	// standard deviation over them (0 with one run).
	Base, New     float64
	BaseSD, NewSD float64
	// HasChange: both sides have the figure and Base is not 0; ChangePct
	// is then (New - Base) / Base x 100.
	HasChange bool
	ChangePct float64
	// Tested: the method gave an interval; CI95 is the 95% interval of the
	// change in percent of Base, P the two-sided p value (Welch only, NaN
	// otherwise), Significant whether the interval excludes 0.
	Tested      bool
	CI95        [2]float64
	P           float64
	Significant bool
}

// AB is the comparison of two sets of runs.
type AB struct {
	Base, New         []Run
	BaseName, NewName string
	Method            string
	// Scopes: overall, then the classes, then the comms, each by the
	// base side's mean run + runnable time (scopes only the new side has
	// come last, by theirs).
	Scopes []string
	Rows   []Row // by scope in Scopes order, then Metrics order
}

// Row returns the row of a scope and metric, or nil.
func (a *AB) Row(scope, metric string) *Row {
	for i := range a.Rows {
		if a.Rows[i].Scope == scope && a.Rows[i].Metric == metric {
			return &a.Rows[i]
		}
	}
	return nil
}

// NoiseMeasured says whether the report measured run-to-run noise (two or
// more runs on each side).
func (a *AB) NoiseMeasured() bool { return a.Method == MethodWelch }

// Samples returns the ascending wakeup latency samples of a scope over
// the runs of one side, pooled.
func Samples(runs []Run, scope string) []int64 {
	var out []int64
	for _, r := range runs {
		if f := r.Side.Scope(scope); f != nil {
			out = append(out, f.WakeupSamples...)
		}
	}
	slices.Sort(out)
	return out
}

// latencyMetric: the figure needs samples.
func latencyMetric(m string) bool {
	return strings.HasPrefix(m, "wakeup_latency_") && m != WakeupCount
}

// CompareRuns compares the runs of two sides. baseName and newName label
// them ("base", "new"). Neither side may be empty.
func CompareRuns(base, new []Run, baseName, newName string) *AB {
	a := &AB{Base: base, New: new, BaseName: baseName, NewName: newName, Method: MethodBootstrap}
	if len(base) >= 2 && len(new) >= 2 {
		a.Method = MethodWelch
	}
	a.Scopes = abScopes(base, new)
	for _, sc := range a.Scopes {
		var bs, ns []int64
		if a.Method == MethodBootstrap {
			bs, ns = Samples(base, sc), Samples(new, sc)
		}
		for _, m := range Metrics {
			r := Row{Scope: sc, Metric: m, BaseRuns: values(base, sc, m), NewRuns: values(new, sc, m), P: math.NaN()}
			r.Base, r.BaseSD = meanSD(r.BaseRuns)
			r.New, r.NewSD = meanSD(r.NewRuns)
			if len(r.BaseRuns) > 0 && len(r.NewRuns) > 0 && r.Base != 0 {
				r.HasChange, r.ChangePct = true, (r.New-r.Base)/r.Base*100
			}
			if r.HasChange {
				switch {
				case a.Method == MethodWelch && len(r.BaseRuns) >= 2 && len(r.NewRuns) >= 2:
					w := welchTest(r.BaseRuns, r.NewRuns)
					lo, hi := w.Lo, w.Hi
					r.P, r.Tested = w.P, true
					r.CI95 = [2]float64{lo / r.Base * 100, hi / r.Base * 100}
				case a.Method == MethodBootstrap:
					r.CI95[0], r.CI95[1], r.Tested = bootstrap(m, sc, bs, ns)
				}
				r.Significant = r.Tested && (r.CI95[0] > 0 || r.CI95[1] < 0)
			}
			a.Rows = append(a.Rows, r)
		}
	}
	return a
}

// values returns the per-run values of a metric in a scope.
func values(runs []Run, scope, metric string) []float64 {
	var out []float64
	for _, r := range runs {
		f := r.Side.Scope(scope)
		switch {
		case f == nil && (latencyMetric(metric) || metric == CompletionNs):
			continue
		case f == nil:
			out = append(out, 0)
			continue
		case latencyMetric(metric) && f.Wakeup.Count == 0, metric == CompletionNs && f.CompletionNs == 0:
			continue // no samples; no run in the window
		}
		v, _ := f.Value(metric)
		out = append(out, float64(v))
	}
	return out
}

// meanSD returns the mean and the standard deviation (n - 1) of v; the
// deviation is 0 for fewer than two values.
func meanSD(v []float64) (mean, sd float64) {
	switch len(v) {
	case 0:
		return 0, 0
	case 1:
		return v[0], 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	mean = s / float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}

// abScopes orders the scopes of both sides: overall, classes, comms, each
// by the base side's mean run + runnable time, then the new side's.
func abScopes(base, new []Run) []string {
	type acc struct {
		name      string
		base, new float64
		inBase    bool
	}
	out := []string{Overall}
	for _, kind := range []string{"class:", "comm:"} {
		idx := map[string]*acc{}
		var list []*acc
		add := func(runs []Run, isBase bool) {
			for _, r := range runs {
				scopes := r.Side.Comms
				if kind == "class:" {
					scopes = r.Side.Classes
				}
				for _, s := range scopes {
					x, ok := idx[s.Scope]
					if !ok {
						x = &acc{name: s.Scope}
						idx[s.Scope] = x
						list = append(list, x)
					}
					w := float64(s.RunNs+s.RunnableNs) / float64(len(runs))
					if isBase {
						x.base += w
						x.inBase = true
					} else {
						x.new += w
					}
				}
			}
		}
		add(base, true)
		add(new, false)
		slices.SortStableFunc(list, func(a, b *acc) int {
			if a.inBase != b.inBase {
				if a.inBase {
					return -1
				}
				return 1
			}
			if c := cmp.Compare(b.base, a.base); c != 0 {
				return c
			}
			if c := cmp.Compare(b.new, a.new); c != 0 {
				return c
			}
			return cmp.Compare(a.name, b.name)
		})
		for _, x := range list {
			out = append(out, x.name)
		}
	}
	return out
}
