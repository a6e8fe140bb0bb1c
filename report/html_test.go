package report

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/metrics"
)

// TestLatencyCDFs: the series of the HTML plots hold the same samples as
// the latency tables. metrics groups its samples by class and comm with
// its own code; a series' distribution (metrics.NewDist of its samples)
// must equal that group's, and the comms are those with the most wakeup
// latency in all.
func TestLatencyCDFs(t *testing.T) {
	in := buildInput(t, "../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz", "")
	l := in.Analysis.Latency.Wakeup
	byClass, byComm := LatencyCDFs(in.Analysis, 4)
	same := func(name string, got []int64, want metrics.Dist) {
		t.Helper()
		d := metrics.NewDist(got)
		if d.Count != want.Count || d.SumNs != want.SumNs || d.P50Ns != want.P50Ns || d.P99Ns != want.P99Ns || d.MaxNs != want.MaxNs {
			t.Errorf("%s: series count %d sum %d p50 %d p99 %d max %d, table count %d sum %d p50 %d p99 %d max %d", name,
				d.Count, d.SumNs, d.P50Ns, d.P99Ns, d.MaxNs, want.Count, want.SumNs, want.P50Ns, want.P99Ns, want.MaxNs)
		}
	}
	if len(byClass) != 1+len(l.ByClass) || len(l.ByClass) < 2 {
		t.Fatalf("%d class series for %d classes", len(byClass), len(l.ByClass))
	}
	same("all", byClass[0].Samples, l.Overall)
	for i, g := range l.ByClass {
		if byClass[i+1].Name != g.Key {
			t.Errorf("series %d is %q, want %q", i+1, byClass[i+1].Name, g.Key)
		}
		same(g.Key, byClass[i+1].Samples, g.Dist)
	}
	if len(byComm) != 4 {
		t.Fatalf("%d comm series, want 4", len(byComm))
	}
	var prev int64 = math.MaxInt64
	for _, s := range byComm {
		var g *metrics.GroupDist
		for i := range l.ByComm {
			if l.ByComm[i].Comm == s.Name {
				g = &l.ByComm[i]
			}
		}
		if g == nil {
			t.Fatalf("comm %q not in the table", s.Name)
		}
		same(s.Name, s.Samples, g.Dist)
		if g.Dist.SumNs > prev {
			t.Errorf("comm %q (sum %d) after one of sum %d", s.Name, g.Dist.SumNs, prev)
		}
		prev = g.Dist.SumNs
		for _, o := range l.ByComm {
			if o.Dist.SumNs > g.Dist.SumNs && !hasSeries(byComm, o.Comm) {
				t.Errorf("comm %q (sum %d) left out for %q (sum %d)", o.Comm, o.Dist.SumNs, s.Name, g.Dist.SumNs)
			}
		}
	}
	if byComm[0].Name != "hackbench" || byComm[1].Name != "cyclictest" {
		t.Errorf("top comms %q, %q; want hackbench, cyclictest", byComm[0].Name, byComm[1].Name)
	}
}

func hasSeries(ss []CDFSeries, name string) bool {
	for _, s := range ss {
		if s.Name == name {
			return true
		}
	}
	return false
}

// TestCDFTail: on the tail scale y is -log10(1 - share): p90, p99 and
// p99.9 are equally spaced, and share 1 (max) is half a step above the
// top percentile. 1000 samples spread evenly on the log axis from 1 us to
// 1 ms (sample j is 10^(3+3j/1000) ns): the curve is at the p50 line at
// sample 500 (31.6 us), at p90 at sample 900 (501 us), at p99 at sample
// 990 (933 us); 1000 samples resolve p99.9, not p99.99; the curve ends on
// the max line.
func TestCDFTail(t *testing.T) {
	var s []int64
	for j := 1; j <= 1000; j++ {
		s = append(s, int64(math.Round(math.Pow(10, 3+3*float64(j)/1000))))
	}
	svg := CDFPlot{Label: "tail", Series: []CDFSeries{{"u", s}}, Tail: true}.SVG()
	var left, top, width, height float64
	fmt.Sscanf(regexp.MustCompile(`data-plot="([^"]*)"`).FindStringSubmatch(svg)[1], "%g %g %g %g", &left, &top, &width, &height)
	tickY := map[string]float64{}
	for _, m := range regexp.MustCompile(`<text x="[0-9.]+" y="([0-9.]+)" text-anchor="end">([^<]+)</text>`).FindAllStringSubmatch(svg, -1) {
		y, _ := strconv.ParseFloat(m[1], 64)
		tickY[m[2]] = y - 4
	}
	for _, name := range []string{"0", "p50", "p90", "p99", "p99.9", "max"} {
		if _, ok := tickY[name]; !ok {
			t.Fatalf("no tick %q in %v", name, tickY)
		}
	}
	if _, ok := tickY["p99.99"]; ok {
		t.Errorf("a p99.99 tick for 1000 samples")
	}
	// -log10(1 - share) of each line, over 3.5 units of height.
	for name, v := range map[string]float64{"0": 0, "p50": math.Log10(2), "p90": 1, "p99": 2, "p99.9": 3, "max": 3.5} {
		if want := top + height*(1-v/3.5); math.Abs(tickY[name]-want) > 0.2 {
			t.Errorf("the %s line at y %.1f, want %.1f", name, tickY[name], want)
		}
	}
	d := regexp.MustCompile(` d="([^"]*)"`).FindStringSubmatch(svg)[1]
	pts := regexp.MustCompile(`[ML]([0-9.]+) ([0-9.]+)`).FindAllStringSubmatch(d, -1)
	// x of a latency: decades 1 us .. 1 ms over the width.
	yAt := func(us float64) float64 {
		col := int(math.Ceil(width * math.Log10(us) / 3))
		y, _ := strconv.ParseFloat(pts[col][2], 64)
		return y
	}
	for _, c := range []struct {
		us   float64
		tick string
	}{{31.63, "p50"}, {501.2, "p90"}, {933.3, "p99"}} {
		// A column holds up to 1.6 samples: near p99 up to 5 pixels of y.
		if got := yAt(c.us); math.Abs(got-tickY[c.tick]) > 6 {
			t.Errorf("curve at %.1f us: y %.1f, want the %s line %.1f", c.us, got, c.tick, tickY[c.tick])
		}
	}
	if y, _ := strconv.ParseFloat(pts[len(pts)-1][2], 64); math.Abs(y-tickY["max"]) > 0.1 {
		t.Errorf("curve ends at y %.1f, the max line is %.1f", y, tickY["max"])
	}
}

// TestTimelineMarksEveryWindow: every counted idle-with-runnable window
// is marked on its CPU's row: the marks' data-n add up to the windows of
// each CPU, and each window starts inside a mark of its row.
func TestTimelineMarksEveryWindow(t *testing.T) {
	in := buildInput(t, "../fixtures/real/qemu-smt8-hackbench/trace.txt.zst", "")
	a := in.Analysis
	if len(a.Idle.Windows) < 100 {
		t.Fatalf("%d windows: the fixture should have many", len(a.Idle.Windows))
	}
	svg := TimelineSVG(a, 0)
	var left, top, width, height float64
	fmt.Sscanf(regexp.MustCompile(`data-plot="([^"]*)"`).FindStringSubmatch(svg)[1], "%g %g %g %g", &left, &top, &width, &height)
	type span struct{ x0, x1 float64 }
	marks := map[int][]span{}
	n := map[int]int{}
	re := regexp.MustCompile(`<rect class="iwr" data-cpu="(\d+)" data-n="(\d+)" x="([0-9.]+)" y="\d+" width="([0-9.]+)"`)
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		cpu, _ := strconv.Atoi(m[1])
		k, _ := strconv.Atoi(m[2])
		x, _ := strconv.ParseFloat(m[3], 64)
		w, _ := strconv.ParseFloat(m[4], 64)
		if w < 1.49 {
			t.Errorf("CPU %d: a mark %.2f px wide", cpu, w)
		}
		marks[cpu] = append(marks[cpu], span{x, x + w})
		n[cpu] += k
	}
	want := map[int]int{}
	span0 := float64(a.Window.End - a.Window.Start)
	for _, w := range a.Idle.Windows {
		want[int(w.CPU)]++
		x := left + width*float64(w.Start-a.Window.Start)/span0
		found := false
		for _, s := range marks[int(w.CPU)] {
			if x >= s.x0-0.01 && x <= s.x1+0.01 {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("window on CPU %d at %s s: no mark at x %.2f", w.CPU, w.Start.Seconds(), x)
		}
	}
	for cpu, k := range want {
		if n[cpu] != k {
			t.Errorf("CPU %d: marks count %d windows, the analysis %d", cpu, n[cpu], k)
		}
	}
}

// TestHTMLPage: the report page has both CDF plots, the timeline, the
// sortable task table with a row per task that ran or waited, the
// warnings, and the text report escaped inside <pre>.
func TestHTMLPage(t *testing.T) {
	in := buildInput(t, "../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz", "")
	var buf bytes.Buffer
	if err := Write(&buf, in, Full, "html"); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, s := range []string{`aria-label="wakeup latency CDF, all tasks and by class"`, `aria-label="wakeup latency CDF, top comms"`,
		`aria-label="per-CPU timeline"`, `<table class="sortable">`, "<script>", "Tasks (", "unobserved: CPU 1", "0&lt;-1"} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	rows := 0
	for _, tt := range in.Tasks {
		if tt.RunNs > 0 || tt.RunnableNs > 0 {
			rows++
		}
	}
	if got := strings.Count(page, "<tr>") - 1; got != rows {
		t.Errorf("task table: %d rows, want %d", got, rows)
	}
	// A section page has what its section is about.
	for _, c := range []struct {
		sec        Section
		cdf, strip bool
	}{{LatencySection, true, false}, {IdleSection, false, true}, {MisplacedSection, false, true}} {
		buf.Reset()
		if err := Write(&buf, in, c.sec, "html"); err != nil {
			t.Fatal(err)
		}
		p := buf.String()
		if strings.Contains(p, "wakeup latency CDF") != c.cdf || strings.Contains(p, "per-CPU timeline") != c.strip {
			t.Errorf("section %d: CDF %v, timeline %v; want %v, %v", c.sec, !c.cdf, !c.strip, c.cdf, c.strip)
		}
	}
}
