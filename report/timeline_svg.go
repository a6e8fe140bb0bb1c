package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
)

// Colours of the per-CPU timeline.
const (
	stripBusy = "#1f4e79"
	stripIdle = "#c8d8ea"
	stripIWR  = "#d9342b"
)

// TimelineSVG draws one row per CPU over the analysis window: each of the
// metrics.StripBins bins coloured by what filled most of it (busy, idle,
// or left white when under half of it is known), then every counted
// idle-with-runnable window marked in red at its place, at least 1.5
// pixels wide so that a window of microseconds on a window of seconds
// still shows. Windows closer than 2 pixels on a CPU share one mark
// (class "iwr", data-cpu, data-n: how many, a tooltip with the first
// one's task and the total). A legend sits above the rows and a time
// axis, in seconds from the window start, below. The <svg> carries the
// plot area as data-plot="left top width height".
func TimelineSVG(a *metrics.Analysis, width int) string {
	strips := a.CPUStrips()
	W := width
	if W <= 0 {
		W = 960
	}
	const row, gap, left, right, top = 16, 4, 56, 12, 24
	plotH := len(strips)*(row+gap) - gap
	H := top + plotH + 36
	pw := float64(W - left - right)
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"per-CPU timeline\" data-plot=\"%d %d %.0f %d\">\n",
		W, H, left, top, pw, plotH)
	span := int64(a.Window.End - a.Window.Start)
	if span <= 0 || len(strips) == 0 {
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\">empty window</text>\n</svg>\n", left, top+12)
		return b.String()
	}
	// Legend.
	lx := left
	for _, l := range []struct{ fill, name string }{{stripBusy, "busy"}, {stripIdle, "idle"}, {stripIWR, "idle while a task that could use the CPU waited"}, {"#fff", "unknown (not observed)"}} {
		fmt.Fprintf(&b, "<rect x=\"%d\" y=\"4\" width=\"12\" height=\"12\" fill=\"%s\" stroke=\"#999\" stroke-width=\"0.5\"></rect>\n", lx, l.fill)
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"14\">%s</text>\n", lx+16, l.name)
		lx += 16 + 6*len(l.name) + 18
	}
	bw := pw / metrics.StripBins
	binNs := float64(span) / metrics.StripBins
	colourOf := func(bin metrics.StripBin) string {
		switch {
		case float64(bin.BusyNs+bin.IdleNs) < binNs/2:
			return "" // mostly unknown: left white
		case bin.BusyNs >= bin.IdleNs:
			return stripBusy
		}
		return stripIdle
	}
	xOf := func(t timeline.Time) float64 {
		return float64(left) + pw*float64(t-a.Window.Start)/float64(span)
	}
	for cpu, bins := range strips {
		y := top + cpu*(row+gap)
		fmt.Fprintf(&b, "<text x=\"4\" y=\"%d\">CPU %d</text>\n", y+row-3, cpu)
		fmt.Fprintf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%d\" fill=\"none\" stroke=\"#bbb\" stroke-width=\"0.5\"></rect>\n", left, y, pw, row)
		// One rectangle per run of bins of one colour.
		for k := 0; k < len(bins); {
			colour := colourOf(bins[k])
			j := k + 1
			for j < len(bins) && colourOf(bins[j]) == colour {
				j++
			}
			if colour != "" {
				fmt.Fprintf(&b, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>\n",
					float64(left)+float64(k)*bw, y, float64(j-k)*bw+0.05, row, colour)
			}
			k = j
		}
	}
	// Idle-with-runnable windows, per CPU in start order.
	type mark struct {
		x0, x1 float64
		n      int
		ns     int64
		first  *metrics.IdleWindow
	}
	marks := make([][]mark, len(strips))
	for i := range a.Idle.Windows {
		w := &a.Idle.Windows[i]
		c := int(w.CPU)
		if c < 0 || c >= len(strips) {
			continue
		}
		x0 := xOf(w.Start)
		x1 := math.Max(xOf(w.Start+timeline.Time(w.DurNs)), x0+1.5)
		if ms := marks[c]; len(ms) > 0 && x0 <= ms[len(ms)-1].x1+2 {
			m := &ms[len(ms)-1]
			m.x1, m.n, m.ns = math.Max(m.x1, x1), m.n+1, m.ns+w.DurNs
			continue
		}
		marks[c] = append(marks[c], mark{x0: x0, x1: x1, n: 1, ns: w.DurNs, first: w})
	}
	for c, ms := range marks {
		y := top + c*(row+gap)
		for _, m := range ms {
			w := m.first
			tip := fmt.Sprintf("CPU %d idle %s us from %s s while pid %d (%s) waited on CPU %d", c, usf(w.DurNs), w.Start.Seconds(), w.PID, w.Comm, w.WaitCPU)
			if m.n > 1 {
				tip = fmt.Sprintf("CPU %d: %d idle-with-runnable windows, %s us in all, the first from %s s while pid %d (%s) waited on CPU %d",
					c, m.n, usf(m.ns), w.Start.Seconds(), w.PID, w.Comm, w.WaitCPU)
			}
			fmt.Fprintf(&b, "<rect class=\"iwr\" data-cpu=\"%d\" data-n=\"%d\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>%s</title></rect>\n",
				c, m.n, m.x0, y, m.x1-m.x0, row, stripIWR, html.EscapeString(tip))
		}
	}
	// Time axis: about eight ticks at a round step, in seconds from the
	// window start.
	axisY := top + plotH + 4
	fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%d\" x2=\"%.0f\" y2=\"%d\" stroke=\"#000\"/>\n", left, axisY, float64(left)+pw, axisY)
	step := niceStep(float64(span) / 8)
	for i := 0; float64(i)*step <= float64(span); i++ {
		t := float64(i) * step
		x := float64(left) + pw*t/float64(span)
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\"/>\n", x, axisY, x, axisY+4)
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, axisY+16, secondsLabel(t))
	}
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">seconds from the window start (%s s on the trace clock)</text>\n",
		left+int(pw)/2, axisY+30, a.Window.Start.Seconds())
	b.WriteString("</svg>\n")
	return b.String()
}

// niceStep is the round step (1, 2 or 5 times a power of ten, in ns) at or
// above ns.
func niceStep(ns float64) float64 {
	if ns <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(ns)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= ns {
			return m * p
		}
	}
	return 10 * p
}

// secondsLabel prints ns as seconds with no more decimals than it needs
// (at most 9).
func secondsLabel(ns float64) string {
	return strconv.FormatFloat(math.Round(ns)/1e9, 'f', -1, 64)
}
