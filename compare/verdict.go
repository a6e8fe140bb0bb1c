package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/schedlens/schedlens/topology"
)

// Verdicts.
const (
	Faithful       = "faithful"
	PartlyFaithful = "partly faithful"
	NotFaithful    = "not faithful"
)

// Fidelity thresholds: how far the modeled figure may be from the
// recorded one, in percent of it (docs/replay.md states them).
const (
	CPUTimeTolerancePct = 5    // CPU time: work is conserved, so only tasks cut by the end move it
	TolerancePct        = 25   // runnable time, latency p50, migrations, preemptions, switches
	MaxCDFDistance      = 0.10 // wakeup latency passes on this distance when its p50 misses
)

// Criterion names.
const (
	criterionCPU      = "cpu_time"
	criterionRunnable = "runnable_time"
	criterionLatency  = "wakeup_latency"
)

// within reports whether n is within pct percent of b (exact, in
// integers: 105 is within 5% of 100).
func within(n, b int64, pct int64) bool {
	d := n - b
	if d < 0 {
		d = -d
	}
	return d*100 <= pct*b
}

// Criterion is one line of the verdict.
type Criterion struct {
	Name      string // cpu_time, runnable_time, wakeup_latency, migrations, preemptions, context_switches
	Label     string // for people
	Threshold string // "within 5%"
	// Ratio is modeled / recorded of the criterion's metric (+Inf when
	// only the modeled run has any); CDFDistance is set for the wakeup
	// latency criterion only.
	Ratio       float64
	CDFDistance float64
	Pass        bool
	// Detail says what the figures were when there was nothing to
	// compare ("no wakeups in either run").
	Detail string
}

// Measured formats the criterion's figure(s).
func (c *Criterion) Measured() string {
	r := "-"
	if !math.IsInf(c.Ratio, 0) {
		r = fmt.Sprintf("%.3f", c.Ratio)
	}
	if c.Name == criterionLatency {
		return fmt.Sprintf("p50 %s, CDF %.3f", r, c.CDFDistance)
	}
	return r
}

// Verdict is the fidelity of a model on one trace.
type Verdict struct {
	Verdict  string
	Criteria []Criterion
	Passed   int
}

// Judge gives the fidelity verdict of the overall scope of a comparison
// whose base is the recording and whose new run is the model: each
// criterion passes when the modeled figure is within its threshold of the
// recorded one; the model is faithful when all pass, partly faithful when
// CPU time and at least half pass, else not faithful.
func Judge(c *Comparison) Verdict {
	d := c.Scope(Overall)
	crit := func(name, label, metric string, pct int64) Criterion {
		cell := d.Cell(metric)
		r, _ := cell.Ratio()
		cr := Criterion{Name: name, Label: label, Threshold: fmt.Sprintf("within %d%%", pct), Ratio: r,
			Pass: within(cell.New, cell.Base, pct)}
		if cell.Base == 0 && cell.New == 0 {
			cr.Detail = "none in either run"
		}
		return cr
	}
	v := Verdict{Criteria: []Criterion{
		crit(criterionCPU, "CPU time", RunNs, CPUTimeTolerancePct),
		crit(criterionRunnable, "runnable time", RunnableNs, TolerancePct),
	}}
	lat := crit(criterionLatency, "wakeup latency", WakeupP50Ns, TolerancePct)
	lat.Threshold = fmt.Sprintf("p50 within %d%% or CDF <= %.2f", TolerancePct, MaxCDFDistance)
	lat.CDFDistance = d.CDFDistance
	// The distance is a difference of two shares: allow for its rounding.
	lat.Pass = lat.Pass || d.CDFDistance <= MaxCDFDistance+1e-9
	lat.Detail = ""
	if d.Cell(WakeupCount).Base == 0 && d.Cell(WakeupCount).New == 0 {
		lat.Detail = "no wakeups in either run"
	}
	v.Criteria = append(v.Criteria, lat,
		crit(Migrations, "migrations", Migrations, TolerancePct),
		crit(Preemptions, "preemptions", Preemptions, TolerancePct),
		crit(ContextSwitches, "context switches", ContextSwitches, TolerancePct))
	for _, cr := range v.Criteria {
		if cr.Pass {
			v.Passed++
		}
	}
	switch {
	case v.Passed == len(v.Criteria):
		v.Verdict = Faithful
	case v.Criteria[0].Pass && 2*v.Passed >= len(v.Criteria):
		v.Verdict = PartlyFaithful
	default:
		v.Verdict = NotFaithful
	}
	return v
}

// Meaning says what the verdict means for a what-if on the same trace.
func (v *Verdict) Meaning() string {
	n := len(v.Criteria)
	switch {
	case v.Verdict == Faithful:
		return fmt.Sprintf("All %d criteria pass: a what-if on this trace (a patch knob, a feature "+
			"switch) can be trusted for changes larger than the differences above.", n)
	case v.Verdict == PartlyFaithful:
		return fmt.Sprintf("CPU time and %d of %d criteria pass: trust a what-if on this trace only in "+
			"the figures that pass, and only for changes larger than their difference here.", v.Passed, n)
	case n > 0 && !v.Criteria[0].Pass:
		return fmt.Sprintf("CPU time fails (the modeled tasks did not get the work they had) and %d of %d "+
			"criteria pass: a what-if on this trace says little about what the real kernel would do.", v.Passed, n)
	}
	return fmt.Sprintf("Only %d of %d criteria pass: a what-if on this trace says little about what "+
		"the real kernel would do.", v.Passed, n)
}

// SeedVerdict is the fidelity verdict of one replay seed.
type SeedVerdict struct {
	Seed    uint64
	Verdict Verdict
}

// SeedSummary says whether the verdicts of several seeds agree, and if
// not, which seeds gave which verdict ("not faithful for seed 1, partly
// faithful for seeds 2-4"); same is true when every seed gives one
// verdict.
func SeedSummary(seeds []SeedVerdict) (same bool, detail string) {
	if len(seeds) == 0 {
		return true, ""
	}
	var order []string
	by := map[string][]uint64{}
	for _, s := range seeds {
		if _, ok := by[s.Verdict.Verdict]; !ok {
			order = append(order, s.Verdict.Verdict)
		}
		by[s.Verdict.Verdict] = append(by[s.Verdict.Verdict], s.Seed)
	}
	var parts []string
	for _, v := range order {
		ss := by[v]
		word := "seed"
		if len(ss) > 1 {
			word = "seeds"
		}
		parts = append(parts, fmt.Sprintf("%s for %s %s", v, word, seedList(ss)))
	}
	return len(order) == 1, strings.Join(parts, ", ")
}

// seedList writes seeds in order, runs of consecutive ones as a range
// ("1, 3-5"), with the CPU-list formatter.
func seedList(ss []uint64) string {
	n := make([]int, len(ss))
	for i, x := range ss {
		n[i] = int(x)
	}
	slices.Sort(n)
	return strings.ReplaceAll(topology.FormatCPUList(n), ",", ", ")
}
