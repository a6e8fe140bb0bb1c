package compare

import (
	"fmt"
	"strings"

	"github.com/schedlens/schedlens/report"
)

// abHTML is the HTML A/B report: the wakeup latency CDFs of both sides
// overlaid (overall, per class, for the top comms), then the text report.
func abHTML(r *ABReport, text string) *report.HTMLPage {
	a := r.AB
	page := &report.HTMLPage{Title: fmt.Sprintf("schedlens compare: %s vs %s", a.BaseName, a.NewName), Text: text}
	comms := 0
	for _, sc := range a.Scopes {
		if strings.HasPrefix(sc, "comm:") {
			if comms == r.top() {
				continue
			}
			comms++
		}
		b, n := Samples(a.Base, sc), Samples(a.New, sc)
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
			Series: []report.CDFSeries{{Name: a.BaseName, Samples: b}, {Name: a.NewName, Samples: n}}}.SVG()
		cap := fmt.Sprintf("Wakeup latency of %s: share of wakeups at or below each latency (log time axis; the share axis stretched towards 100%% so that p50, p90, p99 and p99.9 are evenly spaced), %s (solid) and %s (dashed)", name, a.BaseName, a.NewName)
		if len(a.Base) > 1 || len(a.New) > 1 {
			cap += ", each side's runs pooled"
		}
		page.Figures = append(page.Figures, report.HTMLFigure{SVG: svg, Caption: cap + "."})
	}
	return page
}
