package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/internal/golden"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/topology"
)

// goldenCases are the real fixtures whose reports are kept as goldens:
// testdata/<case>.report.<format>.golden.
var goldenCases = []struct {
	name, trace, topology string
}{
	{"hackbench-cyclictest", "../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz", ""},
	{"qemu-smt8", "../fixtures/real/qemu-smt8-hackbench/trace.txt.zst", ""},
	{"pipe-lost", "../fixtures/real/ftrace-pipe-lost/trace.txt.gz", ""},
	{"hackbench-juno", "../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz", "juno-r2"},
}

// buildInput does what `schedlens report` does, with a fixed command line
// and version so that goldens do not change with the build.
func buildInput(t testing.TB, trace, topoFlag string) *Input {
	t.Helper()
	ld, err := ingest.Load(trace, ingest.Options{Name: trace})
	if err != nil {
		t.Fatal(err)
	}
	tl := ld.Timeline
	topo, err := topology.Resolve(ld.Meta.Topology, trace, topoFlag, tl.NCPU)
	if err != nil {
		t.Fatal(err)
	}
	win := metrics.DefaultWindow(tl)
	a, err := metrics.Analyze(tl, metrics.Options{Window: win, Topology: topo})
	if err != nil {
		t.Fatal(err)
	}
	path := strings.TrimPrefix(trace, "../")
	// Goldens show paths as from the repository root, as the command would.
	topo.Source = strings.Replace(topo.Source, "file:../", "file:", 1)
	if topo.Kernel != nil {
		topo.Kernel.Source = strings.Replace(topo.Kernel.Source, "file:../", "file:", 1)
	}
	in := &Input{Trace: NewTrace(tl, path), Analysis: a, Command: "schedlens report " + path, Version: "test"}
	if topoFlag != "" {
		in.Command = "schedlens report --topology=" + topoFlag + " " + path
	}
	in.Trace.Format, in.Trace.Compression, in.Trace.Clock, in.Trace.Kernel = ld.Meta.Format, ld.Compression, ld.Meta.Clock, ld.Meta.Kernel
	in.Tasks = metrics.Account(tl, win).Tasks
	return in
}

func TestGoldens(t *testing.T) {
	for _, tc := range goldenCases {
		in := buildInput(t, tc.trace, tc.topology)
		for _, format := range []string{"text", "markdown", "json"} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				if err := Write(&buf, in, Full, format); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", tc.name+".report."+format+".golden")
				golden.Check(t, path, buf.Bytes())
			})
		}
	}
	// A golden glob that matches nothing is a test setup error.
	matches, _ := filepath.Glob("testdata/*.report.*.golden")
	if len(matches) < 2*3 {
		t.Errorf("found %d report goldens under testdata, want at least 6", len(matches))
	}
}

// TestTextFitsMail: every line of every text output is at most 80 columns
// wide and has no trailing blanks; the text ends with the command line
// and the version; a definition follows every table.
func TestTextFitsMail(t *testing.T) {
	for _, tc := range goldenCases {
		in := buildInput(t, tc.trace, tc.topology)
		for _, sec := range []Section{Full, LatencySection, IdleSection, MisplacedSection} {
			var buf bytes.Buffer
			if err := Write(&buf, in, sec, "text"); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
			for i, l := range lines {
				if n := len([]rune(l)); n > Width {
					t.Errorf("%s section %d line %d: %d columns: %q", tc.name, sec, i+1, n, l)
				}
				if strings.TrimRight(l, " \t") != l {
					t.Errorf("%s section %d line %d: trailing blanks: %q", tc.name, sec, i+1, l)
				}
			}
			if n := len(lines); n < 2 || lines[n-1] != "schedlens test" || !strings.HasPrefix(lines[n-2], "command: schedlens report") &&
				!strings.HasPrefix(lines[n-2], "    ") {
				t.Errorf("%s section %d: does not end with the command and version: %q", tc.name, sec, lines[max(0, len(lines)-2):])
			}
		}
	}
}

// TestJSONContract: the keys scripts rely on exist, with integer values.
func TestJSONContract(t *testing.T) {
	in := buildInput(t, goldenCases[1].trace, "")
	decode := func(sec Section) map[string]any {
		var buf bytes.Buffer
		if err := Write(&buf, in, sec, "json"); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(&buf)
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	isInt := func(v any) bool {
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil
	}
	need := func(where string, m map[string]any, keys ...string) {
		t.Helper()
		for _, k := range keys {
			v, ok := m[k]
			if !ok {
				t.Errorf("%s: no key %q", where, k)
				continue
			}
			if k != "comm" && k != "relation" && k != "definition" && !isInt(v) {
				t.Errorf("%s.%s = %v, want an integer", where, k, v)
			}
		}
	}
	first := func(where string, m map[string]any, key string) map[string]any {
		t.Helper()
		list, ok := m[key].([]any)
		if !ok || len(list) == 0 {
			t.Fatalf("%s.%s: want a non-empty list, got %v", where, key, m[key])
		}
		return list[0].(map[string]any)
	}
	check := func(where string, lat, idle, mis map[string]any) {
		need(where+"latency", lat, "definition", "censored")
		need(where+"latency.overall", lat["overall"].(map[string]any), "count", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns")
		need(where+"latency.by_task[0]", first("latency", lat, "by_task"), "pid", "comm", "count", "sum_ns", "p50_ns", "p99_ns", "max_ns")
		need(where+"idle", idle, "total_idle_ns", "idle_with_runnable_ns")
		need(where+"idle.by_relation", idle["by_relation"].(map[string]any), "smt", "llc", "cross_llc", "cross_numa")
		need(where+"idle.windows[0]", first("idle", idle, "windows"), "cpu", "start_ns", "dur_ns", "waiting_pid", "waiting_cpu", "relation")
		need(where+"misplaced.tasks[0]", first("misplaced", mis, "tasks"), "pid", "comm", "waiting_while_idle_ns", "misfit_ns", "smt_contended_ns")
	}
	check("", decode(LatencySection), decode(IdleSection), decode(MisplacedSection))
	rep := decode(Full)
	for _, k := range []string{"trace", "topology", "latency", "idle", "misplaced"} {
		if _, ok := rep[k].(map[string]any); !ok {
			t.Errorf("report: no %q object", k)
		}
	}
	check("report.", rep["latency"].(map[string]any), rep["idle"].(map[string]any), rep["misplaced"].(map[string]any))
}

// TestSamples: CSV has a header and one row per sample; JSON lines one
// object per sample with every column as a key.
func TestSamples(t *testing.T) {
	in := buildInput(t, goldenCases[2].trace, "")
	samples := in.Analysis.Latency.Samples
	var csvBuf, jsonBuf bytes.Buffer
	if err := WriteSamples(&csvBuf, in.Analysis.Latency, "csv"); err != nil {
		t.Fatal(err)
	}
	if err := WriteSamples(&jsonBuf, in.Analysis.Latency, "jsonl"); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimRight(csvBuf.String(), "\n"), "\n")
	if got, want := len(rows), len(samples)+1; got != want {
		t.Errorf("CSV has %d lines, want %d (header + samples)", got, want)
	}
	if rows[0] != strings.Join(SampleColumns, ",") {
		t.Errorf("CSV header = %q", rows[0])
	}
	lines := strings.Split(strings.TrimRight(jsonBuf.String(), "\n"), "\n")
	if len(lines) != len(samples) {
		t.Fatalf("%d JSON lines, want %d", len(lines), len(samples))
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range SampleColumns {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON line has no %q", k)
		}
	}
	if err := WriteSamples(&jsonBuf, in.Analysis.Latency, "xml"); err == nil {
		t.Error("format xml: no error")
	}
}

// TestHTML: the page holds its three SVG plots (two latency CDFs, the
// timeline) and the text report.
func TestHTML(t *testing.T) {
	in := buildInput(t, goldenCases[1].trace, "")
	var buf bytes.Buffer
	if err := Write(&buf, in, Full, "html"); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	for _, want := range []string{"<!DOCTYPE html>", `aria-label="wakeup latency CDF, all tasks and by class"`, `aria-label="per-CPU timeline"`, "Wakeup latency (usecs)", "</html>"} {
		if !strings.Contains(s, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if strings.Count(s, "<svg") != 3 || strings.Count(s, "</svg>") != 3 {
		t.Errorf("want 3 SVG plots")
	}
}
