package whatif

import (
	"fmt"
	"strings"

	"github.com/schedlens/schedlens/compare"
	"github.com/schedlens/schedlens/report"
)

// htmlPage is the HTML what-if report: the wakeup latency CDFs of the
// baseline and the what-if (their seeds pooled), overall, per class and
// for the top comms, over the text report.
func htmlPage(r *Report, text string) *report.HTMLPage {
	p := r.Prediction
	page := &report.HTMLPage{Title: "schedlens whatif: " + strings.Join(p.Changes, " "), Text: text}
	comms := 0
	for _, sc := range p.AB.Scopes {
		if strings.HasPrefix(sc, "comm:") {
			if comms == r.top() {
				continue
			}
			comms++
		}
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
		svg := report.CDFSVG("wakeup latency CDF, "+name, []report.CDFSeries{{Name: "baseline", Samples: b}, {Name: "what-if", Samples: n}})
		page.Figures = append(page.Figures, report.HTMLFigure{SVG: svg, Caption: fmt.Sprintf(
			"Wakeup latency of %s: share of wakeups at or below each latency (log scale), baseline (solid) and what-if (dashed), each side's %d seeds pooled.",
			name, len(p.Seeds))})
	}
	return page
}
