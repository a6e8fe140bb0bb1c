package whatif

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/schedlens/schedlens/compare"
	"github.com/schedlens/schedlens/report"
)

// htmlPage is the HTML what-if report: the verdicts first (the summary
// and the overall table), then the wakeup latency CDFs of the baseline and
// the what-if (their seeds pooled) on the tail-stretched scale, overall,
// per class and for the comms woken most, over the text report.
func htmlPage(r *Report, text string) *report.HTMLPage {
	p := r.Prediction
	page := &report.HTMLPage{Title: "schedlens whatif: " + strings.Join(p.Changes, " "), Text: text}
	page.Summary = append([]string{fmt.Sprintf("baseline %s (the recorded kernel's model), what-if %s, %d seeds a side", p.Baseline, p.WhatIf+cpuText(p), len(p.Seeds))}, summary(p)...)
	page.Tables = append(page.Tables, report.HTMLTable{Title: "Overall", Table: scopeTable(p, compare.Overall, "metric", false),
		Notes: []string{"baseline, what-if: the mean over the seeds; 95%: half-width of the 95% interval of the change across seeds, in % of the baseline; " +
			"the verdict weighs it against the baseline's own error on the figure (the text report's Fidelity table)"}})
	// The comms with the most wakeups: the ones whose latency the change
	// can move (a pinned hog woken 4 times says nothing).
	type commN struct {
		scope string
		n     int
	}
	var comms []commN
	var scopes []string
	for _, sc := range p.AB.Scopes {
		if strings.HasPrefix(sc, "comm:") {
			comms = append(comms, commN{sc, len(compare.Samples(p.AB.Base, sc))})
			continue
		}
		scopes = append(scopes, sc)
	}
	slices.SortStableFunc(comms, func(a, b commN) int { return cmp.Compare(b.n, a.n) })
	for i := 0; i < len(comms) && i < r.top(); i++ {
		scopes = append(scopes, comms[i].scope)
	}
	for _, sc := range scopes {
		b, n := compare.Samples(p.AB.Base, sc), compare.Samples(p.AB.New, sc)
		if len(b) == 0 && len(n) == 0 {
			continue
		}
		name := "all tasks"
		switch {
		case strings.HasPrefix(sc, "class:"):
			name = "class " + strings.TrimPrefix(sc, "class:")
		case strings.HasPrefix(sc, "comm:"):
			name = "comm " + strings.TrimPrefix(sc, "comm:")
		}
		svg := report.CDFPlot{Label: "wakeup latency CDF, " + name, Tail: true,
			Series: []report.CDFSeries{{Name: "baseline", Samples: b}, {Name: "what-if", Samples: n}}}.SVG()
		page.Figures = append(page.Figures, report.HTMLFigure{SVG: svg, Caption: fmt.Sprintf(
			"Wakeup latency of %s: share of wakeups at or below each latency (log time axis; the share axis stretched towards 100%% so that p50, p90, p99 and p99.9 are evenly spaced), baseline (solid) and what-if (dashed), each side's %d seeds pooled.",
			name, len(p.Seeds))})
	}
	return page
}
