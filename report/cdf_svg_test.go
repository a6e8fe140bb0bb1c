package report

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestCDFSVG: samples of 1 µs, 10 µs and 100 µs (one each) and one of
// 1 ms: the axis runs over decades 1 µs .. 1 ms; the curve is the share
// at or below each x (non-decreasing, so its y never rises on the page),
// 1/4 from the left edge (1 µs itself), 1 at the right edge; halfway along
// (about 31.6 µs) it is 2/4.
func TestCDFSVG(t *testing.T) {
	svg := CDFSVG("test", []CDFSeries{{"base", []int64{1000, 10_000, 100_000, 1_000_000}}, {"new", nil}})
	for _, l := range []string{">1us<", ">10us<", ">100us<", ">1ms<", "new (no samples)", "base (4 samples)"} {
		if !strings.Contains(svg, l) {
			t.Errorf("no %q", l)
		}
	}
	if n := strings.Count(svg, `<path class="cdf"`); n != 1 {
		t.Fatalf("%d curves, want 1 (the empty series is left out)", n)
	}
	d := regexp.MustCompile(`d="([^"]*)"`).FindStringSubmatch(svg)[1]
	var ys []float64
	for _, pt := range regexp.MustCompile(`[ML]([0-9.]+) ([0-9.]+)`).FindAllStringSubmatch(d, -1) {
		y, _ := strconv.ParseFloat(pt[2], 64)
		ys = append(ys, y)
	}
	// Plot area from data-plot: y top (share 1) .. top+height (share 0),
	// one point per column.
	var left, top, width, height float64
	if _, err := fmt.Sscanf(regexp.MustCompile(`data-plot="([^"]*)"`).FindStringSubmatch(svg)[1], "%g %g %g %g", &left, &top, &width, &height); err != nil {
		t.Fatal(err)
	}
	share := func(y float64) float64 { return (top + height - y) / height }
	cols := int(width) + 1
	if len(ys) != cols {
		t.Fatalf("%d points, want one per column (%d)", len(ys), cols)
	}
	for i := 1; i < len(ys); i++ {
		if ys[i] > ys[i-1] {
			t.Fatalf("curve falls at column %d", i)
		}
	}
	for _, c := range []struct {
		col  int
		want float64
	}{{0, 0.25}, {cols / 2, 0.5}, {cols - 1, 1}} {
		if got := share(ys[c.col]); got < c.want-0.01 || got > c.want+0.01 {
			t.Errorf("column %d: share %.3f, want %.2f", c.col, got, c.want)
		}
	}
	if s := CDFSVG("empty", nil); !strings.Contains(s, "no samples") {
		t.Errorf("empty plot: %s", s)
	}
}
