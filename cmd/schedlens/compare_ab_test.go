package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/internal/abfixture"
)

// abPair is one folder of fixtures/ab read.
type abPair struct {
	base, new []string // trace paths of the runs, in run order
	markers   []string // --start-marker/--end-marker flags
	expect    []abExpect
	noExpect  bool // expect.txt says why nothing is expected ("# none: WHY")
}

type abExpect struct {
	line               int
	dir, metric, scope string
}

// runsIn returns the trace paths of dir's side-1/, side-2/, ... folders.
func runsIn(t *testing.T, dir, side string) []string {
	t.Helper()
	out, err := abfixture.Runs(dir, side)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readABPair reads a pair folder; it fails the test on a malformed one.
func readABPair(t *testing.T, dir string) abPair {
	t.Helper()
	var p abPair
	runs := func(side string) []string { return runsIn(t, dir, side) }
	p.base, p.new = runs("base"), runs("new")
	if len(p.base) == 0 {
		// A pair inside a workload folder shares that folder's base runs
		// with the other knobs recorded on the same workload.
		p.base = runsIn(t, filepath.Dir(filepath.Clean(dir)), "base")
	}
	if len(p.base) == 0 || len(p.new) == 0 {
		t.Fatalf("%s: want base-1/ and new-1/ at least; found %d and %d runs", dir, len(p.base), len(p.new))
	}
	if meta, err := os.ReadFile(filepath.Join(dir, "meta.txt")); err == nil {
		for _, l := range strings.Split(string(meta), "\n") {
			k, v, ok := strings.Cut(l, ":")
			if ok && (k == "start-marker" || k == "end-marker") {
				p.markers = append(p.markers, "--"+k, strings.TrimSpace(v))
			}
		}
	}
	f, err := os.Open(filepath.Join(dir, "expect.txt"))
	if err != nil {
		t.Fatalf("%s: %v (what must compare find?)", dir, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.HasPrefix(strings.TrimSpace(sc.Text()), "# none:") {
			p.noExpect = true
		}
		l, _, _ := strings.Cut(sc.Text(), "#")
		fs := strings.Fields(l)
		if len(fs) == 0 {
			continue
		}
		if len(fs) < 3 || !slices.Contains([]string{"+", "-", "="}, fs[0]) {
			t.Fatalf("%s/expect.txt:%d: want DIRECTION(+,-,=) METRIC SCOPE, found %q", dir, n, sc.Text())
		}
		p.expect = append(p.expect, abExpect{line: n, dir: fs[0], metric: fs[1], scope: strings.Join(fs[2:], " ")})
	}
	if len(p.expect) == 0 && !p.noExpect {
		t.Fatalf("%s/expect.txt: no expectation (a knob whose effect its mechanism does not fix says so: a line \"# none: WHY\")", dir)
	}
	return p
}

// abHeadline are the overall metrics that must not move significantly
// when one side's runs are split in two.
var abHeadline = []string{"wakeup_latency_p50_ns", "wakeup_latency_p99_ns", "wakeup_latency_mean_ns", "runnable_ns", "preemptions", "context_switches"}

// splitAlpha is the split test's threshold on each headline metric's p:
// 5% over the family of headline metrics (Bonferroni), so that two halves
// of one side's runs are called different 5% of the time or less when
// nothing differs, not about 26% as six tests at 5% each would.
var splitAlpha = 0.05 / float64(len(abHeadline))

// abFailures runs compare on a pair and returns what does not hold: every
// expectation must; with 4 or more runs a side, runs 1-2 against runs 3-4
// of each side must move no headline metric significantly (splitAlpha).
func abFailures(t *testing.T, dir string) []string {
	var fails []string
	p := readABPair(t, dir)
	args := append(slices.Clone(p.markers), p.base...)
	args = append(append(args, "--vs"), p.new...)
	doc := compareJSON(t, args...)
	find := func(doc compareDoc, metric, scope string) (change float64, sig, ok bool) {
		for _, m := range doc.Metrics {
			if m.Name == metric && m.Scope == scope {
				if m.ChangePct != nil {
					change = *m.ChangePct
				}
				return change, m.Significant, true
			}
		}
		return 0, false, false
	}
	for _, e := range p.expect {
		change, sig, ok := find(doc, e.metric, e.scope)
		switch {
		case !ok:
			fails = append(fails, fmt.Sprintf("%s/expect.txt:%d: no %s in scope %q", dir, e.line, e.metric, e.scope))
		case e.dir == "=" && sig, e.dir == "+" && !(sig && change > 0), e.dir == "-" && !(sig && change < 0):
			fails = append(fails, fmt.Sprintf("%s/expect.txt:%d: %s %s: change %+.2f%%, significant %v; want %s", dir, e.line, e.scope,
				e.metric, change, sig, e.dir))
		}
	}
	for _, side := range []struct {
		name string
		runs []string
	}{{"base", p.base}, {"new", p.new}} {
		if len(side.runs) < 4 {
			t.Logf("%s: %d %s runs: the split test needs 4", dir, len(side.runs), side.name)
			continue
		}
		args := append(slices.Clone(p.markers), side.runs[0], side.runs[1], "--vs", side.runs[2], side.runs[3])
		split := compareJSON(t, args...)
		for _, m := range abHeadline {
			for _, f := range split.Metrics {
				if f.Name != m || f.Scope != "overall" || f.PValue == nil || *f.PValue >= splitAlpha {
					continue
				}
				fails = append(fails, fmt.Sprintf("%s: %s runs 1-2 vs 3-4: overall %s %+.2f%%, p %.4f < %.4f", dir, side.name, m, *f.ChangePct, *f.PValue, splitAlpha))
			}
		}
	}
	return fails
}

// TestABFixtures: every pair under fixtures/ab (README there).
func TestABFixtures(t *testing.T) {
	// A pair is a folder with an expect.txt: fixtures/ab/PAIR/, or
	// fixtures/ab/WORKLOAD/KNOB/ sharing WORKLOAD's base runs.
	var pairs []string
	for _, glob := range []string{"../../fixtures/ab/*/expect.txt", "../../fixtures/ab/*/*/expect.txt"} {
		found, _ := filepath.Glob(glob)
		for _, f := range found {
			pairs = append(pairs, filepath.Dir(f))
		}
	}
	if len(pairs) == 0 {
		t.Skip("no A/B pairs in fixtures/ab yet (fixtures/ab/README.md says how to add one)")
	}
	for _, d := range pairs {
		name, _ := filepath.Rel("../../fixtures/ab", d)
		t.Run(name, func(t *testing.T) {
			for _, f := range abFailures(t, d) {
				t.Error(f)
			}
		})
	}
}

// TestABFixtureHarness: checkABPair itself, on a pair made of one real
// capture four times a side: the runs are identical, so nothing moves
// and "=" holds, and a "+" expectation on it must fail.
func TestABFixtureHarness(t *testing.T) {
	dir := t.TempDir()
	src, err := filepath.Abs(fx + "ftrace-pipe-lost/trace.txt.gz") // small: 16 loads per check
	if err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"base", "new"} {
		for i := 1; i <= 4; i++ {
			rd := filepath.Join(dir, side+"-"+strconv.Itoa(i))
			if err := os.MkdirAll(rd, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(src, filepath.Join(rd, "trace.txt.gz")); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("meta.txt", "knob: none\nstart-marker: oracle_start\nend-marker: oracle_end\n")
	write("expect.txt", "# the same capture on both sides\n= preemptions overall\n= wakeup_latency_p50_ns overall\n")
	p := readABPair(t, dir)
	if len(p.base) != 4 || len(p.new) != 4 || !slices.Equal(p.markers, []string{"--start-marker", "oracle_start", "--end-marker", "oracle_end"}) ||
		len(p.expect) != 2 || p.expect[1] != (abExpect{line: 3, dir: "=", metric: "wakeup_latency_p50_ns", scope: "overall"}) {
		t.Fatalf("read %+v", p)
	}
	write("meta.txt", "knob: none\n") // this capture has no markers
	if f := abFailures(t, dir); len(f) > 0 {
		t.Errorf("identical runs: %q", f)
	}
	// An expectation of a rise must fail on them, naming its line.
	write("expect.txt", "= preemptions overall\n+ preemptions overall\n")
	if f := abFailures(t, dir); len(f) != 1 || !strings.Contains(f[0], "expect.txt:2: overall preemptions") {
		t.Errorf("wrong expectation: %q, want one failure at line 2", f)
	}
}

// TestCompareRecordingOrder: hackbench4-2cpu's runs were recorded base
// first, then new (meta.txt's dates), and compare says so in the JSON
// warnings and on stderr; hackbench-2cpu's were recorded interleaved, and
// it says nothing.
func TestCompareRecordingOrder(t *testing.T) {
	const ab = "../../fixtures/ab/"
	for _, tc := range []struct {
		dir, knob string
		warned    bool
	}{
		{"hackbench4-2cpu", "NO_RUN_TO_PARITY", true},
		{"hackbench-2cpu", "NO_RUN_TO_PARITY", false},
	} {
		base, _ := filepath.Glob(ab + tc.dir + "/base-*/trace.txt.zst")
		new, _ := filepath.Glob(ab + tc.dir + "/" + tc.knob + "/new-*/trace.txt.zst")
		args := append(append(append([]string{"compare", "--format", "json"}, base...), "--vs"), new...)
		out, errOut, code := execute(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.dir, code, errOut)
		}
		var doc struct {
			Warnings []string `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		const w = "the base runs were all recorded before the new runs"
		inJSON := slices.ContainsFunc(doc.Warnings, func(s string) bool { return strings.HasPrefix(s, w) })
		if inJSON != tc.warned || strings.Contains(errOut, "warning: "+w) != tc.warned {
			t.Errorf("%s: warned %v in JSON, stderr %q; want %v", tc.dir, inJSON, errOut, tc.warned)
		}
	}
}
