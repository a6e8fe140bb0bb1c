package whatif

import (
	"io"

	"github.com/schedlens/schedlens/compare"
	"github.com/schedlens/schedlens/report"
)

// JSON shapes of `schedlens whatif --format json`. Keys are stable
// (docs/whatif.md); times are nanoseconds, changes percent.

// JSON is the whole document.
type JSON struct {
	Baseline ModelJSON `json:"baseline"`
	WhatIf   ModelJSON `json:"whatif"`
	Changes  []string  `json:"changes"`
	// CPUs is the what-if's CPU list, "" when every CPU is kept.
	CPUs    string       `json:"cpus,omitempty"`
	Runs    int          `json:"runs"`
	Seeds   []uint64     `json:"seeds"`
	HZ      int          `json:"hz"`
	Method  string       `json:"method"`
	Filter  string       `json:"filter,omitempty"`
	Scopes  []string     `json:"scopes"`
	Metrics []MetricJSON `json:"metrics"`
	Notes   []string     `json:"notes"`
}

// ModelJSON is one side's model.
type ModelJSON struct {
	Policy string `json:"policy"`
}

// MetricJSON is one metric in one scope. Figures are null when the side
// (or the recording) has none; change_pct and ci95_pct null when there
// is no change in % or no interval.
type MetricJSON struct {
	Name             string      `json:"name"`
	Scope            string      `json:"scope"`
	Recorded         *float64    `json:"recorded"`
	Baseline         *float64    `json:"baseline"`
	WhatIf           *float64    `json:"whatif"`
	ChangePct        *float64    `json:"change_pct"`
	CI95Pct          *[2]float64 `json:"ci95_pct"`
	FidelityErrorPct *float64    `json:"fidelity_error_pct"`
	Verdict          Verdict     `json:"verdict"`
	Why              string      `json:"why"`
	BaselineRuns     []float64   `json:"baseline_runs"`
	WhatIfRuns       []float64   `json:"whatif_runs"`
}

// MethodText names how the what-if decides, for the JSON document.
const MethodText = "welch-across-seeds; verdict against the baseline's fidelity error"

func fp(v float64, decimals int) *float64 {
	x := compare.Round(v, decimals)
	return &x
}

func writeJSON(w io.Writer, r *Report) error {
	p := r.Prediction
	doc := JSON{
		Baseline: ModelJSON{Policy: p.Baseline}, WhatIf: ModelJSON{Policy: p.WhatIf}, Changes: p.Changes,
		Runs: len(p.Seeds), Seeds: p.Seeds, HZ: p.HZ, Method: MethodText, Filter: r.Filter, Scopes: p.AB.Scopes,
		Metrics: []MetricJSON{}, Notes: p.Notes}
	if p.CPUs != nil {
		doc.CPUs = p.CPUs.String()
	}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	for i := range p.Cells {
		c := &p.Cells[i]
		m := MetricJSON{Name: c.Metric, Scope: c.Scope, Verdict: c.Verdict, Why: c.Why, BaselineRuns: []float64{}, WhatIfRuns: []float64{}}
		if row := p.AB.Row(c.Scope, c.Metric); row != nil {
			m.BaselineRuns = append(m.BaselineRuns, row.BaseRuns...)
			m.WhatIfRuns = append(m.WhatIfRuns, row.NewRuns...)
		}
		if c.HasRecorded {
			m.Recorded = fp(c.Recorded, 3)
		}
		if c.HasBaseline {
			m.Baseline = fp(c.Baseline, 3)
		}
		if c.HasWhatIf {
			m.WhatIf = fp(c.WhatIf, 3)
		}
		if c.HasChange {
			m.ChangePct = fp(c.ChangePct, 2)
		}
		if c.Tested {
			m.CI95Pct = &[2]float64{compare.Round(c.CI95[0], 2), compare.Round(c.CI95[1], 2)}
		}
		if c.HasFidelity {
			m.FidelityErrorPct = fp(c.FidelityPct, 2)
		}
		doc.Metrics = append(doc.Metrics, m)
	}
	h := report.Header{Command: r.Command, Version: r.Version, Trace: report.NewTraceJSON(&r.Trace),
		Window: report.WindowRangeJSON{StartNs: int64(p.Recorded.Window.Start), EndNs: int64(p.Recorded.Window.End)}, Warnings: r.Warnings}
	return report.WriteDocument(w, h, doc)
}
