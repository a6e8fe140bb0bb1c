package compare

import (
	"io"
	"math"

	"github.com/schedlens/schedlens/report"
	"github.com/schedlens/schedlens/timeline"
)

// JSON shapes of the replay report. Keys are stable (docs/replay.md);
// times are nanoseconds.

// FiguresJSON is the "recorded" and "modeled" objects and a task's
// figures. cpu_time_ns is the older name of run_ns, kept for scripts.
type FiguresJSON struct {
	CPUTimeNs          int64 `json:"cpu_time_ns"`
	RunNs              int64 `json:"run_ns"`
	RunnableNs         int64 `json:"runnable_ns"`
	WakeupLatencyN     int64 `json:"wakeup_latency_count"`
	WakeupLatencyP50   int64 `json:"wakeup_latency_p50_ns"`
	WakeupLatencyP90   int64 `json:"wakeup_latency_p90_ns"`
	WakeupLatencyP99   int64 `json:"wakeup_latency_p99_ns"`
	WakeupLatencyMax   int64 `json:"wakeup_latency_max_ns"`
	WakeupLatencyMean  int64 `json:"wakeup_latency_mean_ns"`
	Preemptions        int64 `json:"preemptions"`
	Migrations         int64 `json:"migrations"`
	ContextSwitches    int64 `json:"context_switches"`
	IdleWithRunnableNs int64 `json:"idle_with_runnable_ns"`
	CompletionNs       int64 `json:"completion_ns"`
}

// NewFiguresJSON converts figures.
func NewFiguresJSON(f *Figures) FiguresJSON {
	w := &f.Wakeup
	return FiguresJSON{CPUTimeNs: f.RunNs, RunNs: f.RunNs, RunnableNs: f.RunnableNs, WakeupLatencyN: w.Count, WakeupLatencyP50: w.P50Ns,
		WakeupLatencyP90: w.P90Ns, WakeupLatencyP99: w.P99Ns, WakeupLatencyMax: w.MaxNs, WakeupLatencyMean: w.MeanNs,
		Preemptions: f.Preemptions, Migrations: f.Migrations, ContextSwitches: f.ContextSwitches,
		IdleWithRunnableNs: f.IdleWithRunnableNs, CompletionNs: f.CompletionNs}
}

// FidelityJSON is the "fidelity" object: modeled / recorded ratios of the
// overall figures (rounded to 0.001; -1 when only the modeled run has
// any), the CDF distance, and the verdict with its criteria.
type FidelityJSON struct {
	WakeupLatencyP50Ratio  float64         `json:"wakeup_latency_p50_ratio"`
	WakeupLatencyP90Ratio  float64         `json:"wakeup_latency_p90_ratio"`
	WakeupLatencyP99Ratio  float64         `json:"wakeup_latency_p99_ratio"`
	WakeupLatencyMaxRatio  float64         `json:"wakeup_latency_max_ratio"`
	WakeupLatencyMeanRatio float64         `json:"wakeup_latency_mean_ratio"`
	WakeupLatencyCDF       float64         `json:"wakeup_latency_cdf_distance"`
	RunnableRatio          float64         `json:"runnable_ratio"`
	CPUTimeRatio           float64         `json:"cpu_time_ratio"`
	MigrationsRatio        float64         `json:"migrations_ratio"`
	PreemptionsRatio       float64         `json:"preemptions_ratio"`
	ContextSwitchesRatio   float64         `json:"context_switches_ratio"`
	IdleWithRunnableRatio  float64         `json:"idle_with_runnable_ratio"`
	CompletionRatio        float64         `json:"completion_ratio"`
	Verdict                string          `json:"verdict"`
	Passed                 int             `json:"passed"`
	Criteria               []CriterionJSON `json:"criteria"`
	// Scope says what the verdict measured: "overall", or "restricted"
	// when a filter selected the tasks.
	Scope string `json:"scope"`
	// Seeds are the verdicts of every seed checked, the report's own
	// first, and SeedDependent says whether they differ (replay
	// --check-seeds); absent when one seed was judged.
	Seeds         []SeedFidelityJSON `json:"seeds,omitempty"`
	SeedDependent bool               `json:"seed_dependent,omitempty"`
}

// SeedFidelityJSON is the verdict of one seed's replay.
type SeedFidelityJSON struct {
	Seed     uint64          `json:"seed"`
	Verdict  string          `json:"verdict"`
	Passed   int             `json:"passed"`
	Criteria []CriterionJSON `json:"criteria"`
}

// CriterionJSON is one criterion of the verdict.
type CriterionJSON struct {
	Name      string   `json:"name"`
	Threshold string   `json:"threshold"`
	Ratio     *float64 `json:"ratio"` // null when only the modeled run has any
	// CDFDistance: the wakeup latency criterion only.
	CDFDistance *float64 `json:"cdf_distance,omitempty"`
	Pass        bool     `json:"pass"`
}

// TaskJSON is a row of "tasks": one task in both runs.
type TaskJSON struct {
	PID      timeline.TID `json:"pid"`
	Comm     string       `json:"comm"`
	Recorded FiguresJSON  `json:"recorded"`
	Modeled  FiguresJSON  `json:"modeled"`
}

// KnobJSON is a row of "knobs".
type KnobJSON struct {
	Name       string `json:"name"`
	On         bool   `json:"on"`
	Toggled    bool   `json:"toggled"`
	Count      int64  `json:"count"`
	What       string `json:"what"`
	NotCounted bool   `json:"not_counted,omitempty"`
	NeverFired bool   `json:"never_fired"`
	// Warning is the text report's warning line, "" when none.
	Warning string `json:"warning,omitempty"`
}

// CellJSON is one metric of a scope.
type CellJSON struct {
	Metric string `json:"metric"`
	Base   int64  `json:"base"`
	New    int64  `json:"new"`
	// Ratio new / base and ChangePct (new - base) / base x 100, rounded
	// to 0.001 and 0.1; null when base is 0 and new is not.
	Ratio     *float64 `json:"ratio"`
	ChangePct *float64 `json:"change_pct"`
}

// ScopeJSON is one scope of "comparison".
type ScopeJSON struct {
	Scope       string     `json:"scope"`
	InBase      bool       `json:"in_base"`
	InNew       bool       `json:"in_new"`
	CDFDistance float64    `json:"wakeup_latency_cdf_distance"`
	Cells       []CellJSON `json:"cells"`
}

// ComparisonJSON is the cell table: the same layout for every comparison
// of two runs.
type ComparisonJSON struct {
	Base       string      `json:"base"`
	New        string      `json:"new"`
	Restricted bool        `json:"restricted"`
	Scopes     []ScopeJSON `json:"scopes"`
}

// NewComparisonJSON converts a comparison.
func NewComparisonJSON(c *Comparison) ComparisonJSON {
	out := ComparisonJSON{Base: c.Base, New: c.New, Restricted: c.Restricted, Scopes: []ScopeJSON{}}
	for _, s := range c.Scopes {
		sj := ScopeJSON{Scope: s.Scope, InBase: s.InBase, InNew: s.InNew, CDFDistance: round(s.CDFDistance, 3), Cells: []CellJSON{}}
		for _, cell := range s.Cells {
			cj := CellJSON{Metric: cell.Metric, Base: cell.Base, New: cell.New}
			if r, ok := cell.Ratio(); ok {
				v, p := round(r, 3), round((r-1)*100, 1)
				cj.Ratio, cj.ChangePct = &v, &p
			}
			sj.Cells = append(sj.Cells, cj)
		}
		out.Scopes = append(out.Scopes, sj)
	}
	return out
}

// ReplayJSON is `schedlens replay --format json`.
type ReplayJSON struct {
	Policy        string         `json:"policy"`
	Seed          uint64         `json:"seed"`
	HZ            int            `json:"hz"`
	Topology      string         `json:"topology"`
	Filter        string         `json:"filter,omitempty"`
	Recorded      FiguresJSON    `json:"recorded"`
	Modeled       FiguresJSON    `json:"modeled"`
	Fidelity      FidelityJSON   `json:"fidelity"`
	Knobs         []KnobJSON     `json:"knobs"`
	Comparison    ComparisonJSON `json:"comparison"`
	Tasks         []TaskJSON     `json:"tasks"`
	Notes         []string       `json:"notes"`
	ModeledEvents int            `json:"modeled_events"`
}

// round rounds v to the given decimals.
func round(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}

// legacyRatio is a rounded ratio with -1 for "recorded 0, modeled not"
// (JSON has no infinity), as the fidelity object always had it.
func legacyRatio(c Cell) float64 {
	r, ok := c.Ratio()
	if !ok {
		return -1
	}
	return round(r, 3)
}

// NewFidelityJSON builds the fidelity object of a replay comparison.
func NewFidelityJSON(c *Comparison) FidelityJSON {
	ov := c.Scope(Overall)
	v := Judge(c)
	f := FidelityJSON{
		WakeupLatencyP50Ratio:  legacyRatio(ov.Cell(WakeupP50Ns)),
		WakeupLatencyP90Ratio:  legacyRatio(ov.Cell(WakeupP90Ns)),
		WakeupLatencyP99Ratio:  legacyRatio(ov.Cell(WakeupP99Ns)),
		WakeupLatencyMaxRatio:  legacyRatio(ov.Cell(WakeupMaxNs)),
		WakeupLatencyMeanRatio: legacyRatio(ov.Cell(WakeupMeanNs)),
		WakeupLatencyCDF:       round(ov.CDFDistance, 3),
		RunnableRatio:          legacyRatio(ov.Cell(RunnableNs)),
		CPUTimeRatio:           legacyRatio(ov.Cell(RunNs)),
		MigrationsRatio:        legacyRatio(ov.Cell(Migrations)),
		PreemptionsRatio:       legacyRatio(ov.Cell(Preemptions)),
		ContextSwitchesRatio:   legacyRatio(ov.Cell(ContextSwitches)),
		IdleWithRunnableRatio:  legacyRatio(ov.Cell(IdleWithRunnableNs)),
		CompletionRatio:        legacyRatio(ov.Cell(CompletionNs)),
		Verdict:                v.Verdict,
		Passed:                 v.Passed,
		Criteria:               []CriterionJSON{},
		Scope:                  Overall,
	}
	if c.Restricted {
		f.Scope = "restricted"
	}
	f.Criteria = criteriaJSON(v.Criteria)
	return f
}

// criteriaJSON is the criteria of a verdict as JSON.
func criteriaJSON(crs []Criterion) []CriterionJSON {
	out := []CriterionJSON{}
	for _, cr := range crs {
		cj := CriterionJSON{Name: cr.Name, Threshold: cr.Threshold, Pass: cr.Pass}
		if !math.IsInf(cr.Ratio, 0) {
			r := round(cr.Ratio, 3)
			cj.Ratio = &r
		}
		if cr.Name == criterionLatency {
			d := round(cr.CDFDistance, 3)
			cj.CDFDistance = &d
		}
		out = append(out, cj)
	}
	return out
}

// seedsJSON is the seeds' verdicts of a replay, nil for one seed.
func seedsJSON(seeds []SeedVerdict) ([]SeedFidelityJSON, bool) {
	if len(seeds) < 2 {
		return nil, false
	}
	var out []SeedFidelityJSON
	for _, s := range seeds {
		out = append(out, SeedFidelityJSON{Seed: s.Seed, Verdict: s.Verdict.Verdict, Passed: s.Verdict.Passed,
			Criteria: criteriaJSON(s.Verdict.Criteria)})
	}
	same, _ := SeedSummary(seeds)
	return out, !same
}

func writeReplayJSON(w io.Writer, r *Replay) error {
	c := r.Comparison
	ov := c.Scope(Overall)
	doc := ReplayJSON{
		Policy: r.Policy, Seed: r.Seed, HZ: r.HZ, Topology: r.Topology, Filter: r.Filter,
		Fidelity: NewFidelityJSON(c), Knobs: []KnobJSON{}, Comparison: NewComparisonJSON(c), Tasks: []TaskJSON{},
		Notes: r.Notes, ModeledEvents: r.ModeledEvents,
	}
	doc.Fidelity.Seeds, doc.Fidelity.SeedDependent = seedsJSON(r.Seeds)
	doc.Recorded, doc.Modeled = NewFiguresJSON(&ov.Base), NewFiguresJSON(&ov.New)
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	for _, k := range r.Knobs {
		doc.Knobs = append(doc.Knobs, KnobJSON{Name: k.Name, On: k.On, Toggled: k.Toggled, Count: k.Count, What: k.What,
			NotCounted: k.NotCounted, NeverFired: k.NeverFired(), Warning: k.Warning()})
	}
	for i, t := range c.Tasks {
		if i == r.top() {
			break
		}
		doc.Tasks = append(doc.Tasks, TaskJSON{PID: t.PID, Comm: t.Comm, Recorded: NewFiguresJSON(&t.Base), Modeled: NewFiguresJSON(&t.New)})
	}
	h := report.Header{Command: r.Command, Version: r.Version, Trace: report.NewTraceJSON(&r.Trace),
		Window: report.WindowRangeJSON{StartNs: int64(r.Window.Start), EndNs: int64(r.Window.End)}, Warnings: r.Warnings}
	return report.WriteDocument(w, h, doc)
}
