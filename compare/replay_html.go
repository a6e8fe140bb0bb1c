package compare

import (
	"fmt"
	"strings"

	"github.com/schedlens/schedlens/report"
)

// replayHTML is the HTML replay report: the wakeup latency CDFs of the
// recording and of the modeled run overlaid (overall, per class, for the
// top comms), on the tail-stretched scale, then the text report.
func replayHTML(r *Replay, text string) *report.HTMLPage {
	c := r.Comparison
	page := &report.HTMLPage{Title: fmt.Sprintf("schedlens replay: %s under %s", r.Trace.Path, r.Policy), Text: text,
		Summary: []string{fmt.Sprintf("The recording against its replay under the modeled scheduler %s (seed %d), measured by the same code over %s .. %s s.",
			r.Policy, r.Seed, r.Window.Start.Seconds(), r.Window.End.Seconds())},
		Warnings: r.Warnings}
	comms := 0
	for i := range c.Scopes {
		sc := &c.Scopes[i]
		if strings.HasPrefix(sc.Scope, "comm:") {
			if comms == min(r.top(), 6) {
				continue
			}
			comms++
		}
		b, n := sc.Base.WakeupSamples, sc.New.WakeupSamples
		if len(b) == 0 && len(n) == 0 {
			continue
		}
		name := "all tasks"
		switch {
		case strings.HasPrefix(sc.Scope, "class:"):
			name = "class " + strings.TrimPrefix(sc.Scope, "class:")
		case strings.HasPrefix(sc.Scope, "comm:"):
			name = "comm " + strings.TrimPrefix(sc.Scope, "comm:")
		}
		svg := report.CDFPlot{Label: "wakeup latency CDF, " + name, Series: []report.CDFSeries{{Name: c.Base, Samples: b}, {Name: c.New, Samples: n}},
			Tail: true, Width: 580}.SVG()
		page.Figures = append(page.Figures, report.HTMLFigure{SVG: svg, Caption: fmt.Sprintf(
			"Wakeup latency of %s: share of wakeups at or below each latency (x: log scale; y: stretched towards 100%%), %s (solid) and %s (dashed); CDF distance %.2f.",
			name, c.Base, c.New, sc.CDFDistance)})
	}
	return page
}
