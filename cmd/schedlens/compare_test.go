package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestCompareSplitSides(t *testing.T) {
	for _, c := range []struct {
		args      []string
		base, new []string
		err       string
	}{
		{args: []string{"a", "b"}, base: []string{"a"}, new: []string{"b"}},
		{args: []string{"a", "--format", "json", "b"}, base: []string{"a"}, new: []string{"b"}},
		{args: []string{"a", "b", "--vs", "c", "d"}, base: []string{"a", "b"}, new: []string{"c", "d"}},
		{args: []string{"a", "--top", "3", "b", "--vs", "c", "--format=json", "d"}, base: []string{"a", "b"}, new: []string{"c", "d"}},
		{args: []string{"a", "--vs", "b", "--", "--odd-name"}, base: []string{"a"}, new: []string{"b", "--odd-name"}},
		{args: []string{"a", "b", "c"}, err: "want two traces"},
		{args: []string{"a"}, err: "want two traces"},
		{args: []string{"a", "--vs"}, err: "both sides of --vs"},
		{args: []string{"a", "--vs", "b", "--vs", "c"}, err: "--vs given twice"},
		{args: []string{"a", "--bogus", "b"}, err: "unknown flag"},
	} {
		cmd := newCompareCmd()
		base, new, err := splitSides(cmd.Flags(), c.args)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(base, c.base) || !slices.Equal(new, c.new) {
			t.Errorf("%q: %q --vs %q (%v), want %q --vs %q", c.args, base, new, err, c.base, c.new)
		}
	}
	// The flags after the first trace are parsed.
	cmd := newCompareCmd()
	if _, _, err := splitSides(cmd.Flags(), []string{"a", "--top", "3", "b"}); err != nil || cmd.Flags().Lookup("top").Value.String() != "3" {
		t.Errorf("--top after a trace: %v, top %s", err, cmd.Flags().Lookup("top").Value)
	}
}

type compareDoc struct {
	Base struct {
		Runs []struct {
			Window struct {
				StartNs int64 `json:"start_ns"`
				EndNs   int64 `json:"end_ns"`
			} `json:"window"`
		} `json:"runs"`
	} `json:"base"`
	Method  string `json:"method"`
	Metrics []struct {
		Name        string   `json:"name"`
		Scope       string   `json:"scope"`
		Base        *float64 `json:"base"`
		New         *float64 `json:"new"`
		ChangePct   *float64 `json:"change_pct"`
		Significant bool     `json:"significant"`
		Tested      bool     `json:"tested"`
		PValue      *float64 `json:"p_value"`
	} `json:"metrics"`
}

func compareJSON(t *testing.T, args ...string) compareDoc {
	t.Helper()
	out, stderr, code := execute(t, append([]string{"compare", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc compareDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	return doc
}

// TestCompareSelfMarkers: a trace against itself between its markers, as
// one run a side and as two: every change 0, nothing significant, the
// window the markers'; and the overall wakeup latency is the figure
// `latency` gives over the same window.
func TestCompareSelfMarkers(t *testing.T) {
	tr := fx + "ftrace-oracle-busy/trace.txt.zst"
	marks := []string{"--start-marker", "oracle_start", "--end-marker", "oracle_end"}
	for _, args := range [][]string{{tr, tr}, {tr, tr, "--vs", tr, tr}} {
		doc := compareJSON(t, append(slices.Clone(marks), args...)...)
		want, runs := "bootstrap", 1
		if len(args) > 2 {
			want, runs = "welch", 2
		}
		if doc.Method != want || len(doc.Base.Runs) != runs {
			t.Errorf("method %s with %d base runs", doc.Method, len(doc.Base.Runs))
		}
		if w := doc.Base.Runs[0].Window; w.StartNs != 576223558000 || w.EndNs != 578277889000 {
			t.Errorf("window %+v, want the oracle markers", w)
		}
		tested := 0
		for _, m := range doc.Metrics {
			if m.Significant || m.ChangePct != nil && *m.ChangePct != 0 {
				t.Errorf("%s %s: change %v, significant %v", m.Scope, m.Name, *m.ChangePct, m.Significant)
			}
			if m.Tested {
				tested++
			}
		}
		if tested == 0 {
			t.Errorf("%v: nothing tested", args)
		}
	}
	// The same definitions as `latency`.
	doc := compareJSON(t, append(slices.Clone(marks), tr, tr)...)
	out, stderr, code := execute(t, append([]string{"latency", "--format", "json"}, append(slices.Clone(marks), tr)...)...)
	if code != 0 {
		t.Fatalf("latency: exit %d: %s", code, stderr)
	}
	var lat struct {
		Overall struct {
			Count int64 `json:"count"`
			P50Ns int64 `json:"p50_ns"`
			P99Ns int64 `json:"p99_ns"`
		} `json:"overall"`
	}
	if err := json.Unmarshal([]byte(out), &lat); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, m := range doc.Metrics {
		if m.Scope == "overall" && m.Base != nil {
			got[m.Name] = *m.Base
		}
	}
	if lat.Overall.Count == 0 || got["wakeup_latency_count"] != float64(lat.Overall.Count) || got["wakeup_latency_p50_ns"] != float64(lat.Overall.P50Ns) ||
		got["wakeup_latency_p99_ns"] != float64(lat.Overall.P99Ns) {
		t.Errorf("compare overall count %v p50 %v p99 %v; latency %+v", got["wakeup_latency_count"], got["wakeup_latency_p50_ns"],
			got["wakeup_latency_p99_ns"], lat.Overall)
	}
}

// TestCompareTwoEncodings: the ftrace capture and its Perfetto conversion
// from the twin's valid start (--start applies to both) compare as
// identical: no wakeup latency figure or count moves, nothing is
// significant.
func TestCompareTwoEncodings(t *testing.T) {
	twin := fx + "perfetto-from-ftrace-hackbench-cyclictest/trace.pftrace.zst"
	text := fx + "ftrace-hackbench-cyclictest/trace.txt.gz"
	out, stderr, code := execute(t, "tasks", "--format", "json", twin)
	if code != 0 {
		t.Fatalf("tasks: exit %d: %s", code, stderr)
	}
	var tasks struct {
		Trace struct {
			ValidStartNs int64 `json:"valid_start_ns"`
		} `json:"trace"`
	}
	if err := json.Unmarshal([]byte(out), &tasks); err != nil {
		t.Fatal(err)
	}
	start := fmt.Sprintf("%d.%09d", tasks.Trace.ValidStartNs/1e9, tasks.Trace.ValidStartNs%1e9)
	doc := compareJSON(t, "--start", start, text, twin)
	for _, m := range doc.Metrics {
		if m.Significant {
			t.Errorf("%s %s significant", m.Scope, m.Name)
		}
		if m.Name == "runnable_ns" {
			continue // a wait in progress at the start: see compare's TestSameTraceTwoEncodings
		}
		if (m.Base == nil) != (m.New == nil) || m.Base != nil && *m.Base != *m.New {
			t.Errorf("%s %s: %v vs %v", m.Scope, m.Name, m.Base, m.New)
		}
	}
}

func TestCompareUsageErrors(t *testing.T) {
	tr := fx + "ftrace-oracle-busy/trace.txt.zst"
	for _, args := range [][]string{
		{"compare", tr},
		{"compare", tr, tr, tr},
		{"compare", "--pid", "5", tr, tr},
		{"compare", "--format", "csv", tr, tr},
		{"compare", tr, "--vs"},
		{"compare", "--top", "0", tr, tr},
	} {
		if _, stderr, code := execute(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
	if _, stderr, code := execute(t, "compare", "--start-marker", "no-such-marker", tr, tr); code != 1 || !strings.Contains(stderr, "no-such-marker") {
		t.Errorf("missing marker: exit %d: %s", code, stderr)
	}
}
