package compare

import (
	"io"
	"math"

	"github.com/schedlens/schedlens/report"
)

// JSON shapes of `schedlens compare --format json`. Keys are stable
// (docs/compare.md); times are nanoseconds, changes percent.

// ABJSON is the whole document.
type ABJSON struct {
	Base   ABSideJSON `json:"base"`
	New    ABSideJSON `json:"new"`
	Method string     `json:"method"` // "welch" or "bootstrap"
	// NoiseMeasured: both sides have two or more runs.
	NoiseMeasured bool    `json:"noise_measured"`
	Alpha         float64 `json:"alpha"`
	// Bootstrap: the resampling, under the bootstrap method only.
	Bootstrap *BootstrapJSON `json:"bootstrap,omitempty"`
	Filter    string         `json:"filter,omitempty"`
	Scopes    []string       `json:"scopes"`
	Metrics   []ABMetricJSON `json:"metrics"`
	Notes     []string       `json:"notes"`
}

// ABTracesJSON is the "trace" of the A/B document: the paths of each
// side's traces.
type ABTracesJSON struct {
	Base []string `json:"base"`
	New  []string `json:"new"`
}

// ABSideJSON is one side: its name and runs.
type ABSideJSON struct {
	Name string      `json:"name"`
	Runs []ABRunJSON `json:"runs"`
}

// ABRunJSON is one trace of a side: what it is, the window measured and
// its overall figures.
type ABRunJSON struct {
	Trace   report.TraceJSON       `json:"trace"`
	Window  report.WindowRangeJSON `json:"window"`
	Overall FiguresJSON            `json:"overall"`
}

// BootstrapJSON says how the bootstrap resampled.
type BootstrapJSON struct {
	Replicates int    `json:"replicates"`
	Seed       uint64 `json:"seed"`
}

// ABMetricJSON is one metric in one scope. Base and New are the means over
// the runs (null when no run of the side has the figure); ChangePct and
// CI95Pct are null when there is no change (base 0 or absent) or no test.
type ABMetricJSON struct {
	Name        string      `json:"name"`
	Scope       string      `json:"scope"`
	Base        *float64    `json:"base"`
	New         *float64    `json:"new"`
	ChangePct   *float64    `json:"change_pct"`
	CI95Pct     *[2]float64 `json:"ci95_pct"`
	Significant bool        `json:"significant"`
	Tested      bool        `json:"tested"`
	PValue      *float64    `json:"p_value"`
	BaseSD      float64     `json:"base_sd"`
	NewSD       float64     `json:"new_sd"`
	BaseRuns    []float64   `json:"base_runs"`
	NewRuns     []float64   `json:"new_runs"`
}

func ptr(v float64) *float64 { return &v }

func writeABJSON(w io.Writer, r *ABReport) error {
	a := r.AB
	doc := ABJSON{Method: a.Method, NoiseMeasured: a.NoiseMeasured(), Alpha: Alpha, Filter: r.Filter,
		Scopes: a.Scopes, Metrics: []ABMetricJSON{}, Notes: a.notes()}
	if a.Method == MethodBootstrap {
		doc.Bootstrap = &BootstrapJSON{Replicates: Replicates, Seed: BootstrapSeed}
	}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	side := func(name string, runs []Run) ABSideJSON {
		s := ABSideJSON{Name: name, Runs: []ABRunJSON{}}
		for _, run := range runs {
			s.Runs = append(s.Runs, ABRunJSON{Trace: report.NewTraceJSON(&run.Trace),
				Window:  report.WindowRangeJSON{StartNs: int64(run.Side.Window.Start), EndNs: int64(run.Side.Window.End)},
				Overall: NewFiguresJSON(&run.Side.Overall)})
		}
		return s
	}
	doc.Base, doc.New = side(a.BaseName, a.Base), side(a.NewName, a.New)
	for i := range a.Rows {
		x := &a.Rows[i]
		m := ABMetricJSON{Name: x.Metric, Scope: x.Scope, Significant: x.Significant, Tested: x.Tested,
			BaseSD: zround(x.BaseSD, 3), NewSD: zround(x.NewSD, 3), BaseRuns: nonNil(x.BaseRuns), NewRuns: nonNil(x.NewRuns)}
		if len(x.BaseRuns) > 0 {
			m.Base = ptr(zround(x.Base, 3))
		}
		if len(x.NewRuns) > 0 {
			m.New = ptr(zround(x.New, 3))
		}
		if x.HasChange {
			m.ChangePct = ptr(zround(x.ChangePct, 2))
		}
		if x.Tested {
			m.CI95Pct = &[2]float64{zround(x.CI95[0], 2), zround(x.CI95[1], 2)}
			if !math.IsNaN(x.P) {
				m.PValue = ptr(zround(x.P, 4))
			}
		}
		doc.Metrics = append(doc.Metrics, m)
	}
	// Each run's trace and window are in base.runs and new.runs; the
	// header names the traces of each side and how their windows were
	// chosen.
	tr := ABTracesJSON{Base: []string{}, New: []string{}}
	for _, run := range a.Base {
		tr.Base = append(tr.Base, run.Trace.Path)
	}
	for _, run := range a.New {
		tr.New = append(tr.New, run.Trace.Path)
	}
	h := report.Header{Command: r.Command, Version: r.Version, Trace: tr, Window: r.Window, Warnings: r.Warnings}
	return report.WriteDocument(w, h, doc)
}

// zround rounds like round, without a negative zero.
func zround(v float64, decimals int) float64 {
	if r := round(v, decimals); r != 0 {
		return r
	}
	return 0
}

func nonNil(v []float64) []float64 {
	if v == nil {
		return []float64{}
	}
	return v
}
