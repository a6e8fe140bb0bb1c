package whatif

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/compare"
	"github.com/schedlens/schedlens/internal/golden"
)

// The seed patches on real kernels (docs/seeds.md): each seed's own test,
// recorded by tools/kernel-lab on a 6.12 kernel without the patch and on
// one with it (fixtures/seeds/NNN/SIDE/run-N). The check holds the what-if
// of the patch, predicted from every "before" recording, against what the
// patched kernel then did.

var (
	seedsDoc  = flag.String("seeds-doc", "", "write the seed rows (markdown) of docs/seeds.md to this file")
	seedsOnly = flag.String("seed-rows", "", "check only the rows of these seeds (comma-separated, e.g. 004) against their lines of the golden file; -update rewrites only those lines")
)

// seedLabSeeds is how many model seeds a side each what-if runs.
const seedLabSeeds = 4

// seedHeadline reads the e-mail's own metric from a run's workload.out.
type seedHeadline struct {
	name, unit string
	re         *regexp.Regexp // the first submatch is the figure
	scale      float64        // figure x scale = value in unit
}

var (
	hackbenchTime = seedHeadline{"hackbench time", "s", regexp.MustCompile(`(?m)^Time: ([0-9.]+)`), 1}
	asymTotal     = seedHeadline{"completion of the 6 tasks", "s", regexp.MustCompile(`(?m)^total: ([0-9.]+) s`), 1}
	pingpongP50   = seedHeadline{"ping-pong round trip p50", "us", regexp.MustCompile(`(?m)^rtt_us: .* p50 ([0-9.]+)`), 1}
	pingpongRate  = seedHeadline{"ping-pong round trips", "/s", regexp.MustCompile(`(?m)^round_trips: [0-9]+ \(([0-9.]+) per s\)`), 1}
	// tools/kernel-lab/src/coresched.c: the tagged tasks' loops/s, and the
	// whole run's elapsed time (a stall as the tagged process exits shows
	// only there).
	coreschedLoops   = seedHeadline{"tagged loops/s", "loops/s", regexp.MustCompile(`(?m)^total loops=[0-9]+ loops_per_s=([0-9.]+)`), 1}
	coreschedElapsed = seedHeadline{"elapsed", "s", regexp.MustCompile(`(?m)^elapsed: ([0-9.]+) s`), 1}
)

// cyclictestAvg is the average latency cyclictest printed for one nice level.
func cyclictestAvg(nice int) seedHeadline {
	return seedHeadline{fmt.Sprintf("cyclictest avg at nice %d", nice), "us",
		regexp.MustCompile(fmt.Sprintf(`(?ms)^nice %d:\n.*?Avg: *([0-9]+)`, nice)), 1}
}

// seedRow is one seed row: the patch, the sides, the e-mail's metric and
// the trace metric the what-if predicts for it.
type seedRow struct {
	seed, before, after string
	change              string // the what-if change: the patch
	headline            seedHeadline
	scope, metric       string // the what-if cell that stands for the headline
}

var seedRows = []seedRow{
	{"000", "before", "after", "+lb-eligible-first", hackbenchTime, compare.Overall, compare.CompletionNs},
	{"001", "before", "after", "+lb-util-shr-bound", asymTotal, compare.Overall, compare.CompletionNs},
	{"002", "before-nortp", "after-nortp", "+resched-ineligible", cyclictestAvg(-19), "class:nice -19", compare.WakeupMeanNs},
	{"002", "before-nortp", "after-nortp", "+resched-ineligible", cyclictestAvg(0), "comm:cyclictest", compare.WakeupMeanNs},
	{"002", "before-nortp", "after-nortp", "+resched-ineligible", cyclictestAvg(19), "class:nice 19", compare.WakeupMeanNs},
	{"002", "before-rtp", "after-rtp", "+resched-ineligible", cyclictestAvg(-19), "class:nice -19", compare.WakeupMeanNs},
	{"003", "before", "after", "+newidle-bailout", pingpongP50, "comm:pingpong", compare.WakeupMeanNs},
	// The pair's switches count its round trips over the fixed run.
	{"003", "before", "after", "+newidle-bailout", pingpongRate, "comm:pingpong", compare.ContextSwitches},
	// 004: before is 6.12 without the forced-idle sync (NO_CORE_SYNC), after
	// adds the fix; mainline is plain 6.12, which the model reaches from
	// the before runs by turning CORE_SYNC back on. The replay keeps the
	// recorded work, so loops/s stands as the wait per wakeup (a loop is a
	// fixed amount of work and two wakeups).
	{"004", "before", "after", "+coresched-idle-ipi", coreschedLoops, compare.Overall, compare.WakeupMeanNs},
	{"004", "before", "after", "+coresched-idle-ipi", coreschedElapsed, compare.Overall, compare.CompletionNs},
	{"004", "before", "mainline", "CORE_SYNC", coreschedLoops, compare.Overall, compare.WakeupMeanNs},
}

// emailFigures are the e-mails' own figures for each row's metric (seed,
// then the headline's name), as the e-mails give them.
var emailFigures = map[string]string{
	"000 hackbench time":             "1.8% faster at 1 group, 0.1-3.1% at 4-96 (hackbench-process-pipes, Amean)",
	"001 completion of the 6 tasks":  "19.3 -> 18 s (-6.7%)",
	"002 cyclictest avg at nice -19": "NO_RUN_TO_PARITY 89 -> 66 us; RUN_TO_PARITY 191 -> 133 us",
	"002 cyclictest avg at nice 0":   "NO_RUN_TO_PARITY 289 -> 257 us",
	"002 cyclictest avg at nice 19":  "NO_RUN_TO_PARITY 18293 -> 23035 us",
	"003 ping-pong round trip p50":   "wakeup latency ~120 -> ~6 us",
	"003 ping-pong round trips":      "not reported",
	"004 tagged loops/s":             "a 'major' regression removed; core scheduling then costs 5-10%",
	"004 elapsed":                    "not reported",
}

// seedRowWanted says whether -seed-rows selects seed (all when unset).
func seedRowWanted(seed string) bool {
	return *seedsOnly == "" || slices.Contains(strings.Split(*seedsOnly, ","), seed)
}

// seedResult is a checked row.
type seedResult struct {
	row               seedRow
	headBase, headNew []float64 // the e-mail's metric per run
	agreement         Agreement // the trace metric: real runs against the what-ifs
	baseline          string    // the baseline model of the before runs
}

func readHeadline(t *testing.T, trace string, h seedHeadline) float64 {
	t.Helper()
	out := filepath.Join(filepath.Dir(trace), "workload.out")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m := h.re.FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no %s (%s)", out, h.name, h.re)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatalf("%s: %s: %v", out, h.name, err)
	}
	return v * h.scale
}

// loadSeedRun loads a recording with the baseline model of the kernel it
// ran: its version's model with the knobs meta.txt records (the patch
// reverted or added, the sched features set).
func loadSeedRun(t *testing.T, path string) *abTrace {
	t.Helper()
	x := loadAB(t, path) // the baseline with meta.txt's knobs
	// The workloads pin their tasks (003's pair and hogs, 001's step 1):
	// the masks they set are in affinity.txt next to the seed's runs.
	rules, err := affinity.ReadRules(filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(path))), "affinity.txt"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(rules) > 0 {
		if x.am, err = affinity.Build(x.tl, affinity.BuildOptions{Rules: rules}); err != nil {
			t.Fatal(err)
		}
	}
	return x
}

func seedLabCheck(t *testing.T) []seedResult {
	root := "../fixtures/seeds"
	type loaded struct {
		runs  []*abTrace
		sides []*compare.Side
		paths []string
	}
	cache := map[string]*loaded{}
	side := func(seed, name string) *loaded {
		key := seed + "/" + name
		if l, ok := cache[key]; ok {
			return l
		}
		l := &loaded{}
		for _, p := range runDirs(t, filepath.Join(root, seed, name), "run-") {
			x := loadSeedRun(t, p)
			l.runs = append(l.runs, x)
			l.sides = append(l.sides, x.measure(t))
			l.paths = append(l.paths, p)
		}
		if len(l.runs) == 0 {
			t.Fatalf("%s: no runs", filepath.Join(root, key))
		}
		cache[key] = l
		return l
	}
	preds := map[string][]*Prediction{}
	var out []seedResult
	for _, row := range seedRows {
		if !seedRowWanted(row.seed) {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, row.seed)); os.IsNotExist(err) {
			t.Logf("seed %s: no recordings in %s", row.seed, root)
			continue
		}
		b, n := side(row.seed, row.before), side(row.seed, row.after)
		res := seedResult{row: row, baseline: b.runs[0].desc}
		for _, p := range b.paths {
			res.headBase = append(res.headBase, readHeadline(t, p, row.headline))
		}
		for _, p := range n.paths {
			res.headNew = append(res.headNew, readHeadline(t, p, row.headline))
		}
		key := row.seed + "/" + row.before + "/" + row.change
		if preds[key] == nil {
			ch, err := ParseChange(row.change)
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range b.runs {
				p, err := Predict(x.tl, x.desc, []Change{ch}, PredictOptions{Seeds: Seeds(seedLabSeeds), Options: Options{Topology: x.topo, Affinity: x.am}})
				if err != nil {
					t.Fatalf("seed %s %s run %d: %v", row.seed, row.before, i+1, err)
				}
				preds[key] = append(preds[key], p)
			}
		}
		var real RealChange
		for _, s := range b.sides {
			real.Base = append(real.Base, scopeFigure(s, row.scope, row.metric))
		}
		for _, s := range n.sides {
			real.New = append(real.New, scopeFigure(s, row.scope, row.metric))
		}
		var pred Predicted
		for _, p := range preds[key] {
			if c := p.Cell(row.scope, row.metric); c != nil {
				pred.Cells = append(pred.Cells, *c)
			}
		}
		res.agreement = Agree(row.seed, row.change, row.scope+" "+row.metric, real, pred)
		out = append(out, res)
	}
	return out
}

// scopeFigure is a metric of one scope of a measured side (NaN: the side
// has no such scope).
func scopeFigure(s *compare.Side, scope, metric string) float64 {
	f := s.Scope(scope)
	if f == nil {
		return math.NaN()
	}
	v, _ := f.Value(metric)
	return float64(v)
}

// headlineChange is the e-mail metric's real change: median of the
// after runs against median of the before runs, in %, and whether the two
// sides' ranges do not overlap.
func headlineChange(r seedResult) (float64, bool, bool) {
	rc := RealChange{Base: r.headBase, New: r.headNew}
	pct, ok := rc.MedianPct()
	return pct, ok, rc.Clear()
}

func seedGoldenLine(r seedResult) string {
	hp, hok, hclear := headlineChange(r)
	a := r.agreement
	rp, rok := a.Real.MedianPct()
	pp, pok := a.Pred.MedianPct()
	agree := "-"
	switch {
	case a.Clear && a.Direction:
		agree = "agrees"
	case a.Clear:
		agree = "disagrees"
	case a.Quiet:
		agree = "quiet"
	default:
		agree = "predicts-a-change-the-kernel-did-not-show"
	}
	return fmt.Sprintf("%s %s %q headline%s clear=%v | %s real%s clear=%v pred%s %s %s", r.row.seed, r.row.before, r.row.headline.name,
		sign(hp, hok), hclear, a.Metric, sign(rp, rok), a.Clear, sign(pp, pok), strings.ReplaceAll(string(a.Pred.Verdict()), " ", "-"), agree)
}

// TestSeedPatchesOnRealKernels pins each seed's row: the real direction of
// the e-mail's metric and of the trace metric that stands for it, whether
// it is beyond the run-to-run spread, the what-if's predicted direction
// and verdict, and whether they agree. -update rewrites the golden file;
// -seeds-doc FILE writes the rows of docs/seeds.md.
func TestSeedPatchesOnRealKernels(t *testing.T) {
	if testing.Short() {
		t.Skip("replays what-ifs of the seed recordings")
	}
	results := seedLabCheck(t)
	if len(results) == 0 {
		t.Fatal("no seed recordings in ../fixtures/seeds")
	}
	var lines []string
	for _, r := range results {
		lines = append(lines, seedGoldenLine(r))
	}
	if *seedsDoc != "" {
		writeSeedsDoc(t, *seedsDoc, results)
	}
	const goldenFile = "testdata/seedlab.golden"
	if *seedsOnly != "" {
		lines = mergeSeedLines(t, goldenFile, lines)
	}
	golden.Check(t, goldenFile, []byte(strings.Join(lines, "\n")+"\n"))
}

// mergeSeedLines puts the lines of the seeds -seed-rows selects in place
// of theirs in the golden file, keeping the other seeds' lines, in the
// order of seedRows' seeds.
func mergeSeedLines(t *testing.T, file string, lines []string) []string {
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	bySeed := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if seed, _, ok := strings.Cut(l, " "); ok && !seedRowWanted(seed) {
			bySeed[seed] = append(bySeed[seed], l)
		}
	}
	for _, l := range lines {
		seed, _, _ := strings.Cut(l, " ")
		bySeed[seed] = append(bySeed[seed], l)
	}
	var out []string
	for _, row := range seedRows {
		out = append(out, bySeed[row.seed]...)
		delete(bySeed, row.seed)
	}
	return out
}

func figText(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	s := slices.Clone(v)
	slices.Sort(s)
	med := median(s)
	return fmt.Sprintf("%s (%s..%s)", num3(med), num3(s[0]), num3(s[len(s)-1]))
}

func num3(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func writeSeedsDoc(t *testing.T, path string, results []seedResult) {
	w, done := docFile(t, path)
	defer done()
	fmt.Fprintln(w, "| seed | sides | e-mail metric | e-mail's figures | before: median (range) | after | change | beyond spread | p (Welch) | trace metric | real change (Welch p, as compare) | predicted change [95%] | verdict | agreement |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		hp, hok, hclear := headlineChange(r)
		a := r.agreement
		rp, rok := a.Real.MedianPct()
		pp, pok := a.Pred.MedianPct()
		iv := intervalText(a.Pred)
		agree := "quiet (no change either side)"
		switch {
		case a.Clear && a.Direction:
			agree = "**agrees**"
		case a.Clear:
			agree = "**disagrees**"
		case !a.Quiet:
			agree = "predicts a change the kernel did not show"
		}
		pv := "-"
		if p := compare.WelchP(r.headBase, r.headNew); !math.IsNaN(p) {
			pv = fmt.Sprintf("%.2g", p)
		}
		tp := "-"
		if p := compare.WelchP(a.Real.Base, a.Real.New); !math.IsNaN(p) {
			tp = fmt.Sprintf(", p %.2g", p)
		}
		fmt.Fprintf(w, "| %s | %s / %s | %s (%s) | %s | %s | %s | %s | %v | %s | %s | %s%s%s | %s %s | %s | %s |\n",
			r.row.seed, r.row.before, r.row.after, r.row.headline.name, r.row.headline.unit, emailFigures[r.row.seed+" "+r.row.headline.name],
			figText(r.headBase), figText(r.headNew), pctText(hp, hok), hclear, pv,
			strings.TrimPrefix(r.row.scope, "comm:")+" "+a.Metric[len(r.row.scope)+1:], pctText(rp, rok), clearMark(a.Clear), tp,
			pctText(pp, pok), iv, a.Pred.Verdict(), agree)
	}
}

// docFile creates a doc table file; done flushes and closes it.
func docFile(t *testing.T, path string) (*bufio.Writer, func()) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	return w, func() {
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func clearMark(clear bool) string {
	if clear {
		return " (beyond spread)"
	}
	return ""
}
