package report

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
)

// CDFSeries is one distribution of a CDF plot: its name for the legend
// and its samples in nanoseconds, ascending.
type CDFSeries struct {
	Name    string
	Samples []int64
}

// cdfColours are the series colours in order (base, new, ...), and their
// dash patterns, so that the curves differ in print too. The colours after
// the first two are from the Okabe-Ito palette, told apart with colour
// blindness.
var cdfColours = []struct{ stroke, dash string }{
	{"#3b6ea5", ""}, {"#d9342b", "6 3"}, {"#009e73", "2 2"}, {"#7a4ea5", "8 2 2 2"},
	{"#e69f00", ""}, {"#000000", "4 2"}, {"#56b4e9", "1 3"}, {"#8c564b", "10 3"},
}

// CDFPlot is a plot of empirical cumulative distributions over a
// logarithmic time axis (decades from the smallest sample, at least
// 100 ns, to the largest): at each x the share of samples at or below it.
type CDFPlot struct {
	// Label names the plot for screen readers (aria-label).
	Label  string
	Series []CDFSeries
	// Tail stretches the y axis towards 100%: y is -log10(1 - share), so
	// p90, p99 and p99.9 are equally spaced and the tail is as visible as
	// the median. The scale goes up to the percentile the largest series
	// can resolve (p99 under 1000 samples, p99.9 under 10000, at most
	// p99.99), shares above it drawn on that line; a line half a step
	// higher, "max", is share 1, where each curve ends at its largest
	// sample.
	Tail bool
	// Width in pixels; 0 means 720.
	Width int
}

// CDFSVG draws the plain (linear share) CDF plot of the series, 720 pixels
// wide.
func CDFSVG(label string, series []CDFSeries) string {
	return CDFPlot{Label: label, Series: series}.SVG()
}

// SVG renders the plot. Each series is one <path class="cdf"> with
// data-series set to its name and data-count to its sample count; a series
// without samples is left out of the plot and said so in the legend. The
// <svg> carries the plot area as data-plot="left top width height".
func (p CDFPlot) SVG() string {
	W := p.Width
	if W <= 0 {
		W = 720
	}
	const H, left, right, top, bottom = 260, 58, 30, 10, 40
	lo, hi := int64(math.MaxInt64), int64(0)
	nmax := 0
	for _, s := range p.Series {
		if len(s.Samples) > 0 {
			lo, hi = min(lo, s.Samples[0]), max(hi, s.Samples[len(s.Samples)-1])
			nmax = max(nmax, len(s.Samples))
		}
	}
	pw, ph := float64(W-left-right), float64(H-top-bottom)
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\" data-plot=\"%d %d %.0f %.0f\">\n",
		W, H, html.EscapeString(p.Label), left, top, pw, ph)
	if hi == 0 {
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\">no samples</text>\n</svg>\n", left, H/2)
		return b.String()
	}
	d0 := math.Floor(math.Log10(float64(max(lo, 100))))
	d1 := math.Ceil(math.Log10(float64(max(hi, 100))))
	if d1 <= d0 {
		d1 = d0 + 1
	}
	xOf := func(ns float64) float64 {
		return float64(left) + pw*(math.Log10(math.Max(ns, math.Pow(10, d0)))-d0)/(d1-d0)
	}
	// The y scale: linear share, or the tail scale up to 1 - 10^-k.
	k := 0.0
	if p.Tail {
		k = math.Min(4, math.Max(2, math.Floor(math.Log10(float64(nmax)))))
	}
	yOf := func(share float64) float64 {
		if p.Tail {
			v := k + 0.5
			if share < 1 {
				v = math.Min(k, -math.Log10(1-share))
			}
			return float64(top) + ph*(1-v/(k+0.5))
		}
		return float64(top) + ph*(1-share)
	}
	// Grid: decades on x (with light lines at 2x and 5x), shares on y.
	for d := d0; d <= d1; d++ {
		x := xOf(math.Pow(10, d))
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ccc\"/>\n", x, top, x, H-bottom)
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, H-bottom+14, decadeLabel(int(d)))
		if d < d1 {
			for _, m := range []float64{2, 5} {
				x := xOf(m * math.Pow(10, d))
				fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>\n", x, top, x, H-bottom)
			}
		}
	}
	type tick struct {
		share float64
		label string
	}
	ticks := []tick{{0, "0"}, {0.25, "0.25"}, {0.5, "0.5"}, {0.75, "0.75"}, {1, "1"}}
	yTitle := "share of wakeups at or below x"
	if p.Tail {
		ticks = []tick{{0, "0"}, {0.5, "p50"}, {0.9, "p90"}, {0.99, "p99"}}
		for i, name := range []string{"p99.9", "p99.99"} {
			if float64(i+3) <= k {
				ticks = append(ticks, tick{1 - math.Pow(10, -float64(i+3)), name})
			}
		}
		ticks = append(ticks, tick{1, "max"})
		yTitle = "percentile (tail stretched)"
	}
	for _, t := range ticks {
		y := yOf(t.share)
		fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ccc\"/>\n", left, y, W-right, y)
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", left-4, y+4, t.label)
	}
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">wakeup latency (log scale)</text>\n", left+int(pw)/2, H-6)
	fmt.Fprintf(&b, "<text transform=\"translate(12 %d) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", top+int(ph)/2, yTitle)
	// Legend in the top left of the plot, where a CDF is low and the
	// curves are not.
	fmt.Fprintf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fff\" fill-opacity=\"0.85\" stroke=\"#ccc\"/>\n",
		left+4, top+2, min(260, int(pw)-8), 14*len(p.Series)+6)
	// One point per pixel column: the share of samples at or below the
	// time at that column, so the path stays small for any sample count.
	for i, s := range p.Series {
		c := cdfColours[i%len(cdfColours)]
		ly := top + 16 + 14*i
		n := len(s.Samples)
		fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"%s\"/>\n",
			left+10, ly-4, left+34, ly-4, c.stroke, c.dash)
		legend := fmt.Sprintf("%s (%d samples)", s.Name, n)
		if n == 0 {
			legend = s.Name + " (no samples)"
		}
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\">%s</text>\n", left+40, ly, html.EscapeString(legend))
		if n == 0 {
			continue
		}
		var path strings.Builder
		for px := 0; px <= int(pw); px++ {
			ns := math.Pow(10, d0+(d1-d0)*float64(px)/pw)
			k := sort.Search(n, func(j int) bool { return float64(s.Samples[j]) > ns })
			cmd := 'L'
			if px == 0 {
				cmd = 'M'
			}
			fmt.Fprintf(&path, "%c%.1f %.1f", cmd, float64(left+px), yOf(float64(k)/float64(n)))
		}
		fmt.Fprintf(&b, "<path class=\"cdf\" data-series=\"%s\" data-count=\"%d\" d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"%s\"/>\n",
			html.EscapeString(s.Name), n, path.String(), c.stroke, c.dash)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// decadeLabel names 10^d ns: "100ns", "1us", "10ms", "1s".
func decadeLabel(d int) string {
	units := []struct {
		exp  int
		name string
	}{{9, "s"}, {6, "ms"}, {3, "us"}, {0, "ns"}}
	for _, u := range units {
		if d >= u.exp {
			return fmt.Sprintf("%d%s", int(math.Pow10(d-u.exp)), u.name)
		}
	}
	return "0"
}
