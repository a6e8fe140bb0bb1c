package whatif

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/internal/abfixture"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/compare"
	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/internal/golden"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/policies"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// corpusDoc, when set, writes the agreement table of docs/whatif.md there.
var corpusDoc = flag.String("corpus-doc", "", "write the corpus agreement table (markdown) to this file")

// corpusSeeds is how many seeds a side the corpus check runs: the
// command's default, so that the pinned directions and verdicts are what
// a user of whatif gets (about 18 s for the 58 what-ifs on 2 cores).
// -corpus-seeds N runs another count and checks no golden file (for the
// doc's figures at other counts).
const corpusSeeds = DefaultRuns

var corpusSeedsFlag = flag.Int("corpus-seeds", corpusSeeds, "seeds a side of the corpus check")

// corpusMetrics are the headline figures of the check (overall scope).
var corpusMetrics = []string{compare.RunNs, compare.RunnableNs, compare.WakeupP50Ns, compare.WakeupP99Ns, compare.WakeupMeanNs,
	compare.Preemptions, compare.Migrations, compare.ContextSwitches, compare.IdleWithRunnableNs, compare.CompletionNs}

// knobChange is the what-if change of a knob folder of fixtures/ab: its
// meta.txt's "whatif:" line, else the folder's name (a sched feature).
func knobChange(t *testing.T, dir string) string {
	if b, err := os.ReadFile(filepath.Join(dir, "meta.txt")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "whatif:"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return filepath.Base(dir)
}

type abTrace struct {
	tl   *timeline.Timeline
	topo *topology.Topology
	am   *affinity.Map
	desc string // the baseline model of its release
}

func loadAB(t *testing.T, path string) *abTrace {
	t.Helper()
	ld, err := ingest.Load(path, ingest.Options{Name: path})
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Resolve(ld.Meta.Topology, path, "", ld.Timeline.NCPU)
	if err != nil {
		t.Fatal(err)
	}
	rel, file, err := ingest.ReleaseNextTo(path)
	if err != nil || rel == "" {
		t.Fatalf("kernel release next to %s: %q, %v", path, rel, err)
	}
	desc, _, err := Policy{Release: policies.Release{Release: rel, Source: file}}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	// The baseline is the kernel recorded, as the command takes it: its
	// version's model with what meta.txt and the trace say it ran (the
	// knobs a capture set, the seed patches a build lacked, the base slice
	// the kernel reported, the sysctls the recorder read).
	changes, _, _, err := RecordedKnobs(path, ld.Meta.Sysctls)
	if err != nil {
		t.Fatal(err)
	}
	if desc, err = Baseline(desc, changes); err != nil {
		t.Fatal(err)
	}
	am, err := affinity.Build(ld.Timeline, affinity.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &abTrace{tl: ld.Timeline, topo: topo, am: am, desc: desc}
}

func (x *abTrace) measure(t *testing.T) *compare.Side {
	s, err := compare.Measure(x.tl, compare.Options{Window: metrics.DefaultWindow(x.tl), Topology: x.topo, Affinity: x.am})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runDirs(t *testing.T, dir, prefix string) []string {
	out, err := abfixture.Runs(dir, strings.TrimSuffix(prefix, "-"))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func figure(s *compare.Side, metric string) float64 {
	v, _ := s.Overall.Value(metric)
	return float64(v)
}

// corpusCheck runs the whole check: every knob of every workload of
// fixtures/ab, a what-if of the knob on each base run.
func corpusCheck(t *testing.T, seeds []uint64) []Agreement {
	root := "../fixtures/ab"
	wls, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []Agreement
	for _, wl := range wls {
		if !wl.IsDir() {
			continue
		}
		dir := filepath.Join(root, wl.Name())
		var wlBases []*abTrace
		for _, p := range runDirs(t, dir, "base-") {
			wlBases = append(wlBases, loadAB(t, p))
		}
		var wlSides []*compare.Side // the workload's base runs measured, once
		knobs, _ := os.ReadDir(dir)
		for _, k := range knobs {
			if !k.IsDir() || strings.HasPrefix(k.Name(), "base-") {
				continue
			}
			kdir := filepath.Join(dir, k.Name())
			// A knob folder with base runs of its own (recorded
			// alternating with its new runs) uses them; else the
			// workload's.
			bases, own := wlBases, runDirs(t, kdir, "base-")
			var baseSides []*compare.Side
			if len(own) > 0 {
				bases = nil
				for _, p := range own {
					bases = append(bases, loadAB(t, p))
				}
			} else {
				baseSides = wlSides
			}
			var newSides []*compare.Side
			for _, p := range runDirs(t, kdir, "new-") {
				newSides = append(newSides, loadAB(t, p).measure(t))
			}
			ch, err := ParseChange(knobChange(t, kdir))
			if err != nil {
				t.Fatal(err)
			}
			preds := make([]*Prediction, len(bases))
			for i, b := range bases {
				p, err := Predict(b.tl, b.desc, []Change{ch}, PredictOptions{Seeds: seeds, Options: Options{Topology: b.topo, Affinity: b.am}})
				if err != nil {
					t.Fatalf("%s %s base %d: %v", wl.Name(), k.Name(), i+1, err)
				}
				preds[i] = p
				if len(baseSides) < len(bases) {
					baseSides = append(baseSides, p.Recorded)
				}
			}
			if len(own) == 0 {
				wlSides = baseSides
			}
			for _, m := range corpusMetrics {
				var real RealChange
				for _, s := range baseSides {
					real.Base = append(real.Base, figure(s, m))
				}
				for _, s := range newSides {
					real.New = append(real.New, figure(s, m))
				}
				var pred Predicted
				for _, p := range preds {
					pred.Cells = append(pred.Cells, *p.Cell(compare.Overall, m))
				}
				out = append(out, Agree(wl.Name(), k.Name(), m, real, pred))
			}
		}
	}
	return out
}

func sign(v float64, ok bool) string {
	switch {
	case !ok:
		return "?"
	case v > 0:
		return "+"
	case v < 0:
		return "-"
	}
	return "0"
}

// goldenLine is what the test pins of a cell: the real and predicted
// directions, whether the real change is clear, and the verdict.
func goldenLine(a Agreement) string {
	r, rok := a.Real.MedianPct()
	p, pok := a.Pred.MedianPct()
	clear := "unclear"
	if a.Clear {
		clear = "clear"
	}
	return fmt.Sprintf("%s %s %s %s real%s pred%s %s", a.Workload, a.Knob, a.Metric, clear, sign(r, rok), sign(p, pok),
		strings.ReplaceAll(string(a.Pred.Verdict()), " ", "-"))
}

// TestCorpusAgreement pins the check of the what-if against the real A/B
// corpus: per cell the direction of the real and predicted changes,
// whether the real one is beyond the run-to-run spread, and the verdict
// (docs/whatif.md has the figures). -update rewrites the golden file;
// -corpus-doc FILE writes the table of the doc.
func TestCorpusAgreement(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 34 what-ifs of the A/B corpus")
	}
	cells := corpusCheck(t, Seeds(*corpusSeedsFlag))
	var lines []string
	for _, a := range cells {
		lines = append(lines, goldenLine(a))
	}
	s := ScoreOf(cells)
	summary := fmt.Sprintf("score clear %d direction %d size %d unclear %d quiet %d", s.Clear, s.Direction, s.Size, s.Unclear, s.Quiet)
	lines = append(lines, summary)
	t.Log(summary)
	if *corpusDoc != "" {
		writeCorpusDoc(t, *corpusDoc, cells)
	}
	if *corpusSeedsFlag != corpusSeeds {
		return
	}
	path := "testdata/corpus_agreement.golden"
	got := strings.Join(lines, "\n") + "\n"
	if *golden.Update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		wl := strings.Split(strings.TrimSpace(string(want)), "\n")
		for i, l := range lines {
			if i >= len(wl) || wl[i] != l {
				w := "(none)"
				if i < len(wl) {
					w = wl[i]
				}
				t.Errorf("%s:%d: got %q, want %q", path, i+1, l, w)
			}
		}
		if len(wl) > len(lines) {
			t.Errorf("%s: %d lines, want %d", path, len(lines), len(wl))
		}
	}
}

func pctText(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	if math.Abs(v) >= 100 {
		return fmt.Sprintf("%+.0f%%", v)
	}
	return fmt.Sprintf("%+.1f%%", v)
}

// intervalText is the predicted change's 95% interval in %, or "-".
func intervalText(p Predicted) string {
	lo, hi, ok := p.IntervalPct()
	if !ok {
		return "-"
	}
	return "[" + pctText(lo, true) + ", " + pctText(hi, true) + "]"
}

func writeCorpusDoc(t *testing.T, path string, cells []Agreement) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "| workload | knob | metric | real median | real spread | clear | predicted median | predicted 95% | verdict | agreement |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, a := range cells {
		r, rok := a.Real.MedianPct()
		lo, hi, sok := a.Real.SpreadPct()
		p, pok := a.Pred.MedianPct()
		spread, iv := "-", intervalText(a.Pred)
		if sok {
			spread = pctText(lo, true) + " .. " + pctText(hi, true)
		}
		clear, agree := "no", ""
		switch {
		case a.Clear && a.Size:
			clear, agree = "yes", "direction, size"
		case a.Clear && a.Direction:
			clear, agree = "yes", "direction"
		case a.Clear:
			clear, agree = "yes", "**miss**"
		case a.Quiet:
			agree = "quiet"
		default:
			agree = "**false alarm**"
		}
		var verdicts []string
		for _, c := range a.Pred.Cells {
			verdicts = append(verdicts, shortVerdict(c.Verdict))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s |\n", a.Workload, a.Knob, a.Metric,
			pctText(r, rok), spread, clear, pctText(p, pok), iv, shortVerdict(a.Pred.Verdict()), strings.Join(verdicts, ", "), agree)
	}
	s := ScoreOf(cells)
	fmt.Fprintf(w, "\nclear cells: %d; direction agrees: %d (%s); size within 2x: %d (%s); unclear cells: %d; predicted no change or inconclusive: %d (%s)\n",
		s.Clear, s.Direction, share(s.Direction, s.Clear), s.Size, share(s.Size, s.Clear), s.Unclear, s.Quiet, share(s.Quiet, s.Unclear))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

func share(a, b int) string {
	if b == 0 {
		return "-"
	}
	return strconv.Itoa(a*100/b) + "%"
}
