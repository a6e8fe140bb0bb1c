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
// dash patterns, so that the curves differ in print too.
var cdfColours = []struct{ stroke, dash string }{{"#3b6ea5", ""}, {"#d9342b", "6 3"}, {"#2a8a4a", "2 2"}, {"#7a4ea5", "8 2 2 2"}}

// CDFSVG draws the empirical cumulative distributions of the series over a
// logarithmic time axis (decades from the smallest sample, at least
// 100 ns, to the largest): at each x the share of samples at or below it.
// Each series is one <path class="cdf"> with data-series set to its name;
// a series without samples is left out of the plot and said so in the
// legend.
func CDFSVG(label string, series []CDFSeries) string {
	const W, H, left, right, top, bottom = 720, 260, 50, 30, 10, 40
	lo, hi := int64(math.MaxInt64), int64(0)
	for _, s := range series {
		if len(s.Samples) > 0 {
			lo, hi = min(lo, s.Samples[0]), max(hi, s.Samples[len(s.Samples)-1])
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\">\n", W, H, html.EscapeString(label))
	if hi == 0 {
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\">no samples</text>\n</svg>\n", left, H/2)
		return b.String()
	}
	d0 := math.Floor(math.Log10(float64(max(lo, 100))))
	d1 := math.Ceil(math.Log10(float64(max(hi, 100))))
	if d1 <= d0 {
		d1 = d0 + 1
	}
	pw, ph := float64(W-left-right), float64(H-top-bottom)
	xOf := func(ns float64) float64 {
		return float64(left) + pw*(math.Log10(math.Max(ns, math.Pow(10, d0)))-d0)/(d1-d0)
	}
	yOf := func(share float64) float64 { return float64(top) + ph*(1-share) }
	// Grid: decades on x, quarters on y.
	for d := d0; d <= d1; d++ {
		x := xOf(math.Pow(10, d))
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, top, x, H-bottom)
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, H-bottom+14, decadeLabel(int(d)))
	}
	for _, q := range []float64{0, 0.25, 0.5, 0.75, 1} {
		y := yOf(q)
		fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", left, y, W-right, y)
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", left-4, y+4, q)
	}
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">wakeup latency (log scale); y: share of wakeups at or below</text>\n", (W+left)/2, H-6)
	// One point per pixel column: the share of samples at or below the
	// time at that column, so the path stays small for any sample count.
	for i, s := range series {
		c := cdfColours[i%len(cdfColours)]
		ly := top + 14 + 14*i
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
		var p strings.Builder
		for px := 0; px <= int(pw); px++ {
			ns := math.Pow(10, d0+(d1-d0)*float64(px)/pw)
			k := sort.Search(n, func(j int) bool { return float64(s.Samples[j]) > ns })
			cmd := 'L'
			if px == 0 {
				cmd = 'M'
			}
			fmt.Fprintf(&p, "%c%.1f %.1f", cmd, float64(left+px), yOf(float64(k)/float64(n)))
		}
		fmt.Fprintf(&b, "<path class=\"cdf\" data-series=\"%s\" d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"%s\"/>\n",
			html.EscapeString(s.Name), p.String(), c.stroke, c.dash)
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
