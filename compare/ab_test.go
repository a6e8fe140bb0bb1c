package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/report"
	"github.com/schedlens/schedlens/topology"
)

// TestWelchHandWorked: Welch's test against cases worked by hand.
//
// 1,2,3 against 4,5,6: means 2 and 5, sd 1 and 1, se = sqrt(1/3 + 1/3) =
// 0.8165, t = 3.674, df = (2/3)^2 / (2 (1/3)^2 / 2) = 4; the 0.975
// quantile of t with 4 degrees of freedom is 2.776445 (any t table), so
// the interval is 3 +- 2.2670 = [0.7330, 5.2670], and the two-sided p
// lies between 0.02 (t = 3.747) and 0.05 (t = 2.776): 0.0213.
//
// 1,2,3,4 against 2,4,6: variances of the means 1.6667/4 = 0.41667 and
// 4/3 = 1.3333, se = sqrt(1.75) = 1.3229, df = 1.75^2 / (0.41667^2/3 +
// 1.3333^2/2) = 3.2347, d = 1.5, t = 1.134: far from significant.
func TestWelchHandWorked(t *testing.T) {
	w := welchTest([]float64{1, 2, 3}, []float64{4, 5, 6})
	if w.BaseMean != 2 || w.NewMean != 5 || w.BaseSD != 1 || w.NewSD != 1 {
		t.Errorf("means %v %v, sd %v %v", w.BaseMean, w.NewMean, w.BaseSD, w.NewSD)
	}
	if math.Abs(w.Lo-0.7330) > 1e-3 || math.Abs(w.Hi-5.2670) > 1e-3 || math.Abs(w.P-0.0213) > 5e-4 {
		t.Errorf("interval [%.4f, %.4f], p %.4f; want [0.7330, 5.2670], p 0.0213", w.Lo, w.Hi, w.P)
	}
	w = welchTest([]float64{1, 2, 3, 4}, []float64{2, 4, 6})
	// t quantile at df 3.2347 lies between 3.182 (df 3) and 2.776 (df 4).
	half := (w.Hi - w.Lo) / 2
	if math.Abs((w.Lo+w.Hi)/2-1.5) > 1e-9 || half < 2.776*1.3229 || half > 3.182*1.3229 || w.P < 0.3 {
		t.Errorf("interval [%.4f, %.4f], p %.4f", w.Lo, w.Hi, w.P)
	}
	// No spread: the difference is exact.
	if w := welchTest([]float64{7, 7}, []float64{7, 7}); w.P != 1 || w.Lo != 0 || w.Hi != 0 {
		t.Errorf("equal constants: %+v", w)
	}
	if w := welchTest([]float64{7, 7}, []float64{9, 9}); w.P != 0 || w.Lo != 2 || w.Hi != 2 {
		t.Errorf("different constants: %+v", w)
	}
}

// TestResampledOrderStatistic: the percentile of a resample drawn from
// the Beta order statistic has the distribution of the percentile of an
// actual resample (n draws with replacement, nearest rank), compared over
// the whole distribution (Kolmogorov-Smirnov distance of 20000 draws each).
func TestResampledOrderStatistic(t *testing.T) {
	s := make([]int64, 57)
	for i := range s {
		s[i] = int64(i*i + 3) // distinct, uneven gaps
	}
	for _, pm := range []int{500, 900, 990} {
		rng := rand.New(rand.NewPCG(7, uint64(pm)))
		const N = 20000
		fast, slow := make([]float64, N), make([]float64, N)
		buf := make([]int64, len(s))
		for i := range N {
			fast[i] = resampled(s, pm, rng)
			for j := range buf {
				buf[j] = s[rng.IntN(len(s))]
			}
			slices.Sort(buf)
			slow[i] = float64(buf[max((len(buf)*pm+999)/1000, 1)-1])
		}
		slices.Sort(fast)
		slices.Sort(slow)
		// KS distance at every sample value.
		d := 0.0
		for _, v := range s {
			fa, _ := slices.BinarySearch(fast, float64(v)+0.5)
			sa, _ := slices.BinarySearch(slow, float64(v)+0.5)
			d = max(d, math.Abs(float64(fa-sa))/N)
		}
		// Two samples of 20000 from one distribution: the 99.9% critical
		// distance is 1.95 sqrt(2/20000) = 0.0195.
		if d > 0.0195 {
			t.Errorf("p%d: KS distance %.4f between the Beta draw and real resamples", pm/10, d)
		}
	}
}

// synthRun is a hand-built run on one CPU: a hog (pid 20) runs; every
// millisecond an interrupt wakes worker (pid 10), which preempts the hog
// after its wakeup latency (latUs + an exponential jitter of mean 10 µs,
// from the seed), runs 100 µs and sleeps; 300 cycles. Per cycle: one
// wakeup-latency sample, one preemption, two switches.
func synthRun(t testing.TB, seed uint64, latUs float64) Run {
	rng := rand.New(rand.NewPCG(seed, 99))
	lines := []string{"0 0 switch 0 R 20"}
	for i := 1; i <= 300; i++ {
		t0 := i * 1000
		lat := int(math.Min(latUs+rng.ExpFloat64()*10, 800))
		lines = append(lines, fmt.Sprintf("%d 0 waking 10 0 0 hardirq", t0), fmt.Sprintf("%d 0 wakeup 10 0", t0),
			fmt.Sprintf("%d 0 switch 20 R 10", t0+lat), fmt.Sprintf("%d 0 switch 10 S 20", t0+lat+100))
	}
	tl := build(t, 1, map[int]string{10: "worker", 20: "hog"}, nil, lines...)
	side, err := Measure(tl, Options{Topology: topology.Symmetric(1)})
	if err != nil {
		t.Fatal(err)
	}
	tr := report.NewTrace(tl, fmt.Sprintf("synthetic-%d-%gus", seed, latUs))
	tr.Format = "ftrace"
	return Run{Trace: tr, Side: side}
}

func synthRuns(t testing.TB, latUs float64, seeds ...uint64) []Run {
	var out []Run
	for _, s := range seeds {
		out = append(out, synthRun(t, s, latUs))
	}
	return out
}

// TestABKnownShift: three runs with 10 µs more latency than three others
// are a significant rise of the latency figures, with the true change
// inside the interval; the workload's counts (300 preemptions, 300
// wakeups in every run) do not change and are not significant; the same
// side split in two changes nothing significantly.
func TestABKnownShift(t *testing.T) {
	base, new := synthRuns(t, 20, 1, 2, 3), synthRuns(t, 30, 4, 5, 6)
	a := CompareRuns(base, new, "base", "new")
	if a.Method != MethodWelch || !a.NoiseMeasured() {
		t.Fatalf("method %s", a.Method)
	}
	// True latency: 20 (or 30) + Exp(10): median + 10 ln 2, mean + 10.
	for _, c := range []struct {
		metric string
		truth  float64
	}{{WakeupP50Ns, 10 / (20 + 10*math.Ln2) * 100}, {WakeupMeanNs, 10.0 / 30 * 100}, {RunnableNs, 10.0 / 130 * 100}} {
		r := a.Row(Overall, c.metric)
		if !r.Significant || !r.Tested || r.ChangePct <= 0 {
			t.Errorf("%s: %+v, want a significant rise", c.metric, r)
		}
		// Runnable is worker latency plus the hog's 100 µs wait per cycle.
		if r.CI95[0] > c.truth || r.CI95[1] < c.truth {
			t.Errorf("%s: interval %v misses the true change %.1f%%", c.metric, r.CI95, c.truth)
		}
	}
	for _, m := range []string{Preemptions, WakeupCount, ContextSwitches} {
		if r := a.Row(Overall, m); r.Significant || r.ChangePct != 0 || r.BaseSD != 0 {
			t.Errorf("%s: %+v, want no change", m, r)
		}
	}
	if r := a.Row(CommScope("worker"), WakeupP50Ns); r == nil || !r.Significant {
		t.Errorf("comm:worker p50: %+v", r)
	}

	split := CompareRuns(synthRuns(t, 20, 1, 2), synthRuns(t, 20, 3, 7), "base", "new")
	for _, m := range []string{WakeupP50Ns, WakeupP90Ns, WakeupP99Ns, WakeupMeanNs, RunnableNs, Preemptions, CompletionNs} {
		if r := split.Row(Overall, m); !r.Tested || r.Significant {
			t.Errorf("same side split: %s %+v, want tested and not significant", m, r)
		}
	}
}

// TestABBootstrap: one run a side: a 10 µs shift in 300 samples is found
// by the bootstrap, two runs of the same latency are not told apart, only
// latency figures are tested, and the report says noise is not measured.
func TestABBootstrap(t *testing.T) {
	a := CompareRuns(synthRuns(t, 20, 1), synthRuns(t, 30, 2), "base", "new")
	if a.Method != MethodBootstrap || a.NoiseMeasured() {
		t.Fatalf("method %s", a.Method)
	}
	for _, m := range []string{WakeupP50Ns, WakeupMeanNs} {
		if r := a.Row(Overall, m); !r.Significant || r.CI95[0] <= 0 {
			t.Errorf("%s: %+v, want significant", m, r)
		}
	}
	// 300 samples: p99 has 3 above it, fewer than MinTail: untested.
	for _, m := range []string{WakeupP99Ns, WakeupMaxNs, RunnableNs, Preemptions} {
		if r := a.Row(Overall, m); r.Tested || r.Significant {
			t.Errorf("%s: tested under the bootstrap: %+v", m, r)
		}
	}
	same := CompareRuns(synthRuns(t, 20, 1), synthRuns(t, 20, 2), "base", "new")
	for _, m := range []string{WakeupP50Ns, WakeupP90Ns, WakeupMeanNs} {
		if r := same.Row(Overall, m); !r.Tested || r.Significant {
			t.Errorf("same latency: %s %+v", m, r)
		}
	}
	var buf strings.Builder
	if err := WriteAB(&buf, &ABReport{AB: a, Window: "w", Command: "c", Version: "test"}, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "run-to-run noise is NOT measured") {
		t.Errorf("the single-run report does not say noise is not measured:\n%s", buf.String())
	}
}

// realRun loads and measures a fixture over its valid window (or win).
func realRun(t testing.TB, path string, win metrics.Window) Run {
	ld, err := ingest.Load(path, ingest.Options{Name: path})
	if err != nil {
		t.Fatal(err)
	}
	tl := ld.Timeline
	topo, err := topology.Resolve(ld.Meta.Topology, path, "", tl.NCPU)
	if err != nil {
		t.Fatal(err)
	}
	side, err := Measure(tl, Options{Window: win, Topology: topo})
	if err != nil {
		t.Fatal(err)
	}
	tr := report.NewTrace(tl, strings.TrimPrefix(path, "../"))
	tr.Format, tr.Compression, tr.Clock, tr.Kernel = ld.Meta.Format, ld.Compression, ld.Meta.Clock, ld.Meta.Kernel
	return Run{Trace: tr, Side: side}
}

var realRuns sync.Map // path -> Run, measured over the valid window

func cachedRun(t testing.TB, path string) Run {
	if r, ok := realRuns.Load(path); ok {
		return r.(Run)
	}
	r := realRun(t, path, metrics.Window{})
	realRuns.Store(path, r)
	return r
}

// TestABSelf: a real trace against itself, as one run a side and as two:
// every change 0.00%, nothing significant, and the latency figures were
// tested (a comparison that tests nothing would pass too).
func TestABSelf(t *testing.T) {
	for _, p := range []string{
		"../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz",
		"../fixtures/real/perf-hackbench-cyclictest/perf-script.txt.gz",
		"../fixtures/real/qemu-juno-asym/trace.txt.zst",
	} {
		r := cachedRun(t, p)
		for _, sides := range [][2][]Run{{{r}, {r}}, {{r, r}, {r, r}}} {
			a := CompareRuns(sides[0], sides[1], "base", "new")
			tested := 0
			for _, row := range a.Rows {
				if row.Significant || row.HasChange && row.ChangePct != 0 || row.Base != row.New {
					t.Errorf("%s, %s: %s %s: %+v", p, a.Method, row.Scope, row.Metric, row)
				}
				if row.Tested {
					tested++
				}
			}
			if ov := a.Row(Overall, WakeupP50Ns); !ov.Tested {
				t.Errorf("%s, %s: overall p50 not tested", p, a.Method)
			}
			t.Logf("%s, %s: %d scopes, %d rows tested", p, a.Method, len(a.Scopes), tested)
			var buf strings.Builder
			if err := WriteAB(&buf, &ABReport{AB: a, Window: "w", Command: "c", Version: "test"}, "text"); err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(buf.String(), "\n") {
				if strings.Contains(l, "%*") || strings.Contains(l, "(  ") && strings.Contains(l, "%)") && !strings.Contains(l, " 0.00%)") &&
					!strings.Contains(l, "-)") {
					t.Errorf("%s: line shows a change: %q", p, l)
				}
			}
			if !strings.Contains(buf.String(), "no overall figure changed significantly") {
				t.Errorf("%s: summary does not say nothing changed", p)
			}
		}
	}
}

// TestABTwoEncodings: the hackbench-cyclictest capture as ftrace text and
// its Perfetto conversion, over the twin's window (as in
// TestSameTraceTwoEncodings), compare as identical: no latency figure or
// count moves, nothing is significant, and runnable time moves only by a
// wait that was in progress at the window start.
func TestABTwoEncodings(t *testing.T) {
	twin := realRun(t, "../fixtures/real/perfetto-from-ftrace-hackbench-cyclictest/trace.pftrace.zst", metrics.Window{})
	text := realRun(t, "../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz", twin.Side.Window)
	a := CompareRuns([]Run{text}, []Run{twin}, "ftrace", "perfetto")
	if len(a.Scopes) < 10 {
		t.Fatalf("%d scopes", len(a.Scopes))
	}
	for _, row := range a.Rows {
		if row.Significant {
			t.Errorf("%s %s significant", row.Scope, row.Metric)
		}
		if row.Base == row.New {
			continue
		}
		if row.Metric == RunnableNs && row.Base > row.New && row.Base-row.New <= float64(twin.Side.Window.Start-text.Trace.Start) {
			continue
		}
		t.Errorf("%s %s: %v vs %v", row.Scope, row.Metric, row.Base, row.New)
	}
}

// TestBootstrapMeanLimit: above ExactMeanLimit samples the mean's
// interval comes from the normal limit; it must match the interval of
// real resampling (value by value, done here) on skewed samples within a
// percentage point.
func TestBootstrapMeanLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	mk := func(n int, scale float64) []int64 {
		s := make([]int64, n)
		for i := range s {
			s[i] = int64(1000 + scale*rng.ExpFloat64()*rng.ExpFloat64()) // heavier tail than exponential
		}
		slices.Sort(s)
		return s
	}
	base, new := mk(3000, 20000), mk(2500, 23000)
	lo, hi, ok := bootstrap(WakeupMeanNs, "overall", base, new)
	if !ok {
		t.Fatal("not tested")
	}
	diffs := make([]float64, Replicates)
	for i := range diffs {
		b, n := 0.0, 0.0
		for range len(base) {
			b += float64(base[rng.IntN(len(base))])
		}
		for range len(new) {
			n += float64(new[rng.IntN(len(new))])
		}
		diffs[i] = (n/float64(len(new))/(b/float64(len(base))) - 1) * 100
	}
	slices.Sort(diffs)
	elo, ehi := diffs[Replicates*25/1000], diffs[Replicates*975/1000]
	if math.Abs(lo-elo) > 1 || math.Abs(hi-ehi) > 1 {
		t.Errorf("normal limit [%.2f, %.2f], resampling [%.2f, %.2f]", lo, hi, elo, ehi)
	}
	t.Logf("normal limit [%.2f, %.2f], resampling [%.2f, %.2f]", lo, hi, elo, ehi)
}
