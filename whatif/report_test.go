package whatif

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/schedlens/schedlens/internal/golden"
	"github.com/schedlens/schedlens/report"
)

const goldenTrace = "../fixtures/ab/hackbench-2cpu/base-1/trace.txt.zst"

func predictGolden(t *testing.T, change string, seeds []uint64, parallel int) *Prediction {
	t.Helper()
	x := loadAB(t, goldenTrace)
	c, err := ParseChange(change)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Predict(x.tl, x.desc, []Change{c}, PredictOptions{Seeds: seeds, Parallel: parallel, Options: Options{Topology: x.topo, Affinity: x.am}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func render(t *testing.T, p *Prediction, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	rep := &Report{Prediction: p, Trace: report.Trace{Path: goldenTrace, Format: "ftrace", CPUs: 2}, Window: "the valid window of the trace",
		Command: "schedlens whatif --change NO_RUN_TO_PARITY --seeds 1,2,3 " + goldenTrace, Version: "test"}
	if err := Write(&b, rep, format); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReportGolden pins the text, markdown and JSON reports of a what-if
// on a real capture (3 seeds); -update rewrites them.
func TestReportGolden(t *testing.T) {
	p := predictGolden(t, "NO_RUN_TO_PARITY", []uint64{1, 2, 3}, 0)
	for _, f := range []struct{ format, file string }{{"text", "report.txt"}, {"markdown", "report.md"}, {"json", "report.json"}} {
		got := render(t, p, f.format)
		path := "testdata/" + f.file
		golden.Check(t, path, got)
		if f.format == "text" {
			for i, l := range strings.Split(string(got), "\n") {
				if n := utf8.RuneCountInString(l); n > 80 && !strings.HasPrefix(l, "command:") {
					t.Errorf("text line %d is %d columns: %q", i+1, n, l)
				}
			}
		}
	}
	// The JSON schema of the acceptance 4.
	var doc map[string]any
	if err := json.Unmarshal(render(t, p, "json"), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["baseline"].(map[string]any)["policy"] != "6.12,base_slice_ns=1400000" || doc["runs"].(float64) != 3 || len(doc["changes"].([]any)) != 1 {
		t.Errorf("json head: baseline %v runs %v changes %v", doc["baseline"], doc["runs"], doc["changes"])
	}
	names := map[string]bool{}
	for _, m := range doc["metrics"].([]any) {
		mm := m.(map[string]any)
		for _, k := range []string{"name", "scope", "baseline", "whatif", "change_pct", "ci95_pct", "verdict"} {
			if _, ok := mm[k]; !ok {
				t.Fatalf("metric without %q: %v", k, mm)
			}
		}
		switch Verdict(mm["verdict"].(string)) {
		case Better, Worse, NoChange, Inconclusive:
		default:
			t.Errorf("verdict %q", mm["verdict"])
		}
		if mm["scope"] == "overall" {
			names[mm["name"].(string)] = true
		}
	}
	for _, n := range []string{"wakeup_latency_p50_ns", "wakeup_latency_p99_ns", "wakeup_latency_mean_ns", "runnable_ns", "context_switches",
		"preemptions", "migrations", "idle_with_runnable_ns", "completion_ns"} {
		if !names[n] {
			t.Errorf("no overall %s", n)
		}
	}
	var html bytes.Buffer
	html.Write(render(t, p, "html"))
	if !strings.Contains(html.String(), "<svg") || !strings.Contains(html.String(), "Fidelity of the baseline") {
		t.Errorf("html report without its plots or text")
	}
}

// TestPredictDeterministic: the same seed list gives the same report,
// whatever the number of replays run at once.
func TestPredictDeterministic(t *testing.T) {
	a := render(t, predictGolden(t, "base_slice_ns=3000000", []uint64{4, 9}, 1), "json")
	b := render(t, predictGolden(t, "base_slice_ns=3000000", []uint64{4, 9}, 2), "json")
	if !bytes.Equal(a, b) {
		t.Errorf("two what-ifs with seeds 4, 9 differ")
	}
}

// TestCPUsWhatIf restricts a 2-CPU capture to CPU 0: every replay runs on
// one CPU, the per-CPU kthreads of CPU 1 are moved (select_fallback_rq),
// and the what-if sees less CPU for the same work: no migrations, longer
// waits.
func TestCPUsWhatIf(t *testing.T) {
	p := predictGolden(t, "cpus=0", []uint64{1, 2}, 0)
	for _, r := range p.AB.New {
		if r.Trace.CPUs != 1 {
			t.Fatalf("what-if run on %d CPUs, want 1", r.Trace.CPUs)
		}
	}
	if p.WhatIf != p.Baseline || p.CPUs.String() != "0" {
		t.Errorf("what-if %q on CPUs %v", p.WhatIf, p.CPUs)
	}
	moved := false
	for _, n := range p.Notes {
		moved = moved || (strings.Contains(n, "allowed only on removed CPUs were moved") && strings.Contains(n, "ksoftirqd/1"))
	}
	if !moved {
		t.Errorf("no note of the moved kthreads of CPU 1: %q", p.Notes)
	}
	if c := p.Cell("overall", "migrations"); c == nil || c.WhatIf != 0 {
		t.Errorf("migrations on one CPU: %+v", c)
	}
	if c := p.Cell("overall", "runnable_ns"); c == nil || c.ChangePct <= 0 {
		t.Errorf("runnable time on one CPU: %+v", c)
	}
	if _, err := ParseChange("cpus=5"); err != nil {
		t.Fatal(err)
	}
	x := loadAB(t, goldenTrace)
	c, _ := ParseChange("cpus=2")
	if _, err := Predict(x.tl, x.desc, []Change{c}, PredictOptions{Seeds: []uint64{1, 2}, Options: Options{Topology: x.topo}}); err == nil ||
		!strings.Contains(err.Error(), "the recording has CPUs 0-1") {
		t.Errorf("cpus=2 on 2 CPUs: %v", err)
	}
}
