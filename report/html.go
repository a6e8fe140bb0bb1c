package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/schedlens/schedlens/metrics"
)

// writeHTML renders a self-contained page: two SVG plots (the wakeup
// latency histogram and a per-CPU timeline strip) above the text report,
// which keeps every figure and definition.
func writeHTML(w io.Writer, in *Input, section Section) error {
	var text bytes.Buffer
	d := &doc{w: &text}
	(&writer{d: d, in: in, a: in.Analysis}).render(section)
	if d.err != nil {
		return d.err
	}
	title := "schedlens report: " + in.Trace.Path
	page := HTMLPage{Title: title, Text: text.String()}
	a := in.Analysis
	if section == Full || section == LatencySection {
		page.Figures = append(page.Figures, HTMLFigure{SVG: histSVG(a.Latency.Wakeup.Overall.Hist),
			Caption: "Wakeup latency of all tasks, log2 buckets of microseconds (bar height: samples)."})
	}
	if section == Full || section == IdleSection || section == MisplacedSection {
		page.Figures = append(page.Figures, HTMLFigure{SVG: stripSVG(a),
			Caption: fmt.Sprintf("Per-CPU timeline, %s .. %s s: busy (dark), idle (light), idle while a task that could use the CPU waited (red), unknown (white).",
				a.Window.Start.Seconds(), a.Window.End.Seconds())})
	}
	return page.Write(w)
}

// HTMLPage is a self-contained page: a title, SVG figures with captions,
// then a text report kept whole (every figure and definition) in a <pre>.
// Every HTML output of schedlens is one.
type HTMLPage struct {
	Title   string
	Figures []HTMLFigure
	Text    string
}

// HTMLFigure is an inline SVG and its caption (plain text).
type HTMLFigure struct {
	SVG     string
	Caption string
}

// Write renders the page.
func (p *HTMLPage) Write(w io.Writer) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n", html.EscapeString(p.Title))
	b.WriteString("<style>body{font-family:sans-serif;margin:1.5em;max-width:60em}" +
		"pre{font-size:13px;line-height:1.3}figure{margin:1em 0}figcaption{font-size:13px;color:#444}" +
		"svg text{font-family:sans-serif;font-size:11px}</style>\n</head>\n<body>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n", html.EscapeString(p.Title))
	for _, f := range p.Figures {
		b.WriteString("<figure>\n")
		b.WriteString(f.SVG)
		fmt.Fprintf(&b, "<figcaption>%s</figcaption>\n</figure>\n", html.EscapeString(f.Caption))
	}
	b.WriteString("<pre>\n")
	b.WriteString(html.EscapeString(p.Text))
	b.WriteString("</pre>\n</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// histSVG draws a log2 histogram as bars with bucket labels.
func histSVG(h metrics.Histogram) string {
	first, last := -1, -1
	var peak int64
	for i, n := range h {
		if n > 0 {
			if first < 0 {
				first = i
			}
			last = i
			peak = max(peak, n)
		}
	}
	const W, H, left, bottom = 720, 220, 50, 40
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"wakeup latency histogram\">\n", W, H)
	if first < 0 {
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\">no samples</text>\n</svg>\n", left, H/2)
		return b.String()
	}
	n := last - first + 1
	bw := float64(W-left-10) / float64(n)
	plotH := float64(H - bottom - 10)
	fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000\"/>\n", left, H-bottom, W-10, H-bottom)
	fmt.Fprintf(&b, "<text x=\"4\" y=\"14\">%d</text>\n<text x=\"4\" y=\"%d\">0</text>\n", peak, H-bottom)
	for i := first; i <= last; i++ {
		x := float64(left) + float64(i-first)*bw
		bh := plotH * float64(h[i]) / float64(peak)
		lo, hi := metrics.HistRange(i)
		fmt.Fprintf(&b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#3b6ea5\"><title>%d-%d us: %d</title></rect>\n",
			x+1, float64(H-bottom)-bh, bw-2, bh, lo, hi, h[i])
		if (i-first)%2 == 0 || n <= 12 {
			fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x+bw/2, H-bottom+14, shortUs(lo))
		}
	}
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">usecs (bucket start)</text>\n", (W+left)/2, H-6)
	b.WriteString("</svg>\n")
	return b.String()
}

func shortUs(v int64) string {
	switch {
	case v >= 1_000_000:
		return fmt.Sprintf("%ds", v/1_000_000)
	case v >= 1000:
		return fmt.Sprintf("%dms", v/1000)
	}
	return fmt.Sprintf("%d", v)
}

// stripSVG draws one row per CPU: each bin coloured by what dominated it.
func stripSVG(a *metrics.Analysis) string {
	strips := a.CPUStrips()
	const W, row, left = 720, 14, 50
	H := len(strips)*(row+4) + 24
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"per-CPU timeline\">\n", W, H)
	span := int64(a.Window.End - a.Window.Start)
	if span <= 0 || len(strips) == 0 {
		b.WriteString("</svg>\n")
		return b.String()
	}
	bw := float64(W-left-10) / metrics.StripBins
	binNs := float64(span) / metrics.StripBins
	colourOf := func(bin metrics.StripBin) string {
		switch {
		case float64(bin.BusyNs+bin.IdleNs) < binNs/2:
			return "" // mostly unknown: left white
		case float64(bin.IdleWithRunnableNs) >= binNs/4:
			return "#d9342b"
		case bin.BusyNs >= bin.IdleNs:
			return "#1f4e79"
		}
		return "#c8d8ea"
	}
	for cpu, bins := range strips {
		y := 4 + cpu*(row+4)
		fmt.Fprintf(&b, "<text x=\"4\" y=\"%d\">CPU %d</text>\n", y+row-3, cpu)
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
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\">%s s</text>\n", left, H-4, a.Window.Start.Seconds())
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s s</text>\n", W-10, H-4, a.Window.End.Seconds())
	b.WriteString("</svg>\n")
	return b.String()
}
