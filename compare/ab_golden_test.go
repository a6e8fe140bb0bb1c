package compare

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/internal/golden"
)

// abGoldenCases are rendered as text, markdown and JSON and kept as
// testdata/<name>.compare.<format>.golden.
var abGoldenCases = []struct {
	name string
	make func(t *testing.T) *ABReport
}{
	{"synthetic-welch", func(t *testing.T) *ABReport {
		a := CompareRuns(synthRuns(t, 20, 1, 2, 3), synthRuns(t, 30, 4, 5, 6), "base", "new")
		return &ABReport{AB: a, Window: "the valid window of each trace", Command: "schedlens compare synthetic-1 synthetic-2 synthetic-3 " +
			"--vs synthetic-4 synthetic-5 synthetic-6", Version: "test"}
	}},
	{"synthetic-bootstrap", func(t *testing.T) *ABReport {
		a := CompareRuns(synthRuns(t, 20, 1), synthRuns(t, 30, 2), "base", "new")
		return &ABReport{AB: a, Window: "the valid window of each trace", Command: "schedlens compare synthetic-1 synthetic-2", Version: "test"}
	}},
	{"hackbench-quiet-vs-cyclictest", hackbenchAB},
}

// hackbenchAB is the same hackbench run alone (base) and beside
// cyclictest (new): one run a side, real captures.
func hackbenchAB(t *testing.T) *ABReport {
	b := cachedRun(t, "../fixtures/real/ftrace-hackbench-quiet/trace.txt.zst")
	n := cachedRun(t, "../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz")
	return &ABReport{AB: CompareRuns([]Run{b}, []Run{n}, "base", "new"), Window: "the valid window of each trace",
		Command: "schedlens compare fixtures/real/ftrace-hackbench-quiet/trace.txt.zst fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz",
		Version: "test"}
}

func TestABGoldens(t *testing.T) {
	for _, tc := range abGoldenCases {
		r := tc.make(t)
		for _, format := range []string{"text", "markdown", "json"} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				if err := WriteAB(&buf, r, format); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", tc.name+".compare."+format+".golden")
				golden.Check(t, path, buf.Bytes())
			})
		}
		// Text: 80 columns, no trailing blanks, ends with the command and
		// the version.
		var buf bytes.Buffer
		if err := WriteAB(&buf, r, "text"); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
		for i, l := range lines {
			if n := len([]rune(l)); n > 80 {
				t.Errorf("%s line %d: %d columns: %q", tc.name, i+1, n, l)
			}
			if strings.TrimRight(l, " ") != l {
				t.Errorf("%s line %d: trailing blanks", tc.name, i+1)
			}
		}
		if n := len(lines); lines[n-1] != "schedlens test" || !strings.Contains(buf.String(), "\ncommand: schedlens compare ") {
			t.Errorf("%s: no command and version at the end", tc.name)
		}
	}
}

// TestABJSONSchema: the keys acceptance 5 of issue 12 names, on the real
// case: base, new, and metrics of name, scope, base, new, change_pct,
// ci95_pct [lo, hi], significant, with the overall metric names and the
// three scope kinds.
func TestABJSONSchema(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteAB(&buf, hackbenchAB(t), "json"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Base    map[string]any   `json:"base"`
		New     map[string]any   `json:"new"`
		Method  string           `json:"method"`
		Noise   *bool            `json:"noise_measured"`
		Metrics []map[string]any `json:"metrics"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Base == nil || doc.New == nil || doc.Method != MethodBootstrap || doc.Noise == nil || *doc.Noise {
		t.Fatalf("base %v, new %v, method %q, noise_measured %v", doc.Base != nil, doc.New != nil, doc.Method, doc.Noise)
	}
	if runs, _ := doc.Base["runs"].([]any); len(runs) != 1 {
		t.Errorf("base.runs: %v", doc.Base["runs"])
	}
	overall := map[string]map[string]any{}
	kinds := map[string]bool{}
	for _, m := range doc.Metrics {
		for _, k := range []string{"name", "scope", "base", "new", "change_pct", "ci95_pct", "significant"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("metric without %q: %v", k, m)
			}
		}
		if _, ok := m["significant"].(bool); !ok {
			t.Errorf("significant is not a bool: %v", m)
		}
		if ci, ok := m["ci95_pct"].([]any); ok && (len(ci) != 2 || ci[0].(float64) > ci[1].(float64)) {
			t.Errorf("ci95_pct %v", ci)
		}
		sc := m["scope"].(string)
		kinds[sc[:strings.IndexByte(sc+":", ':')]] = true
		if sc == "overall" {
			overall[m["name"].(string)] = m
		}
	}
	for _, k := range []string{"overall", "comm", "class"} {
		if !kinds[k] {
			t.Errorf("no %s scope", k)
		}
	}
	for _, name := range []string{"wakeup_latency_p50_ns", "wakeup_latency_p99_ns", "wakeup_latency_mean_ns", "runnable_ns", "run_ns",
		"context_switches", "preemptions", "migrations", "idle_with_runnable_ns", "completion_ns"} {
		m, ok := overall[name]
		if !ok {
			t.Errorf("no overall %s", name)
			continue
		}
		if _, ok := m["base"].(float64); !ok {
			t.Errorf("overall %s base %v", name, m["base"])
		}
	}
	// The p50 of cyclictest's neighbour: 30 us alone, 201 us beside it
	// (the text golden); tested, significant, interval around the change.
	p50 := overall["wakeup_latency_p50_ns"]
	ci, _ := p50["ci95_pct"].([]any)
	if p50["significant"] != true || len(ci) != 2 || ci[0].(float64) > p50["change_pct"].(float64) || ci[1].(float64) < p50["change_pct"].(float64) {
		t.Errorf("overall p50: %v", p50)
	}
}
