package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportEmbedded(t *testing.T) {
	out, stderr, code := execute(t, "report")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(out, "schedlens report: built-in trace\n") {
		t.Errorf("report does not open with the built-in trace: %q", firstLine(out))
	}
	if !strings.Contains(out, "No TRACE was given") || !strings.Contains(stderr, "no TRACE given") {
		t.Errorf("report does not say it analysed the embedded trace")
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if last := lines[len(lines)-1]; last != "schedlens "+Version {
		t.Errorf("last line = %q, want the version", last)
	}
	if got := lines[len(lines)-2]; got != "command: schedlens report" {
		t.Errorf("command line = %q", got)
	}
	for i, l := range lines {
		if len([]rune(l)) > 80 {
			t.Errorf("line %d is %d columns: %q", i+1, len([]rune(l)), l)
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func decodeJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return m
}

func TestSectionCommandsJSON(t *testing.T) {
	trace := fx + "ftrace-hackbench-cyclictest/trace.txt.gz"
	t.Run("latency", func(t *testing.T) {
		out, stderr, code := execute(t, "latency", "--format", "json", "--comm", "cyclictest", trace)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		m := decodeJSON(t, out)
		ov := m["overall"].(map[string]any)
		for _, k := range []string{"count", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"} {
			if _, ok := ov[k]; !ok {
				t.Errorf("overall.%s missing", k)
			}
		}
		tasks := m["by_task"].([]any)
		for _, x := range tasks {
			if c := x.(map[string]any)["comm"]; c != "cyclictest" {
				t.Errorf("--comm cyclictest: by_task has %v", c)
			}
		}
		if len(tasks) == 0 || m["definition"] == "" {
			t.Errorf("by_task %d rows, definition %q", len(tasks), m["definition"])
		}
	})
	t.Run("idle", func(t *testing.T) {
		out, stderr, code := execute(t, "idle", "--format", "json", "--min-window", "1ms", fx+"qemu-smt8-hackbench/trace.txt.zst")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		m := decodeJSON(t, out)
		if m["min_window_ns"].(float64) != 1e6 {
			t.Errorf("min_window_ns = %v", m["min_window_ns"])
		}
		if m["idle_with_runnable_ns"].(float64) > m["total_idle_ns"].(float64) {
			t.Errorf("idle with runnable above idle")
		}
		rel := m["by_relation"].(map[string]any)
		if rel["smt"].(float64) == 0 {
			t.Errorf("no SMT-sibling windows on the SMT machine: %v", rel)
		}
	})
	t.Run("misplaced-juno", func(t *testing.T) {
		out, stderr, code := execute(t, "misplaced", "--format", "json", "--topology", "juno-r2", trace)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		m := decodeJSON(t, out)
		if m["misfit_applies"] != true || m["misfit_ns"].(float64) == 0 {
			t.Errorf("misfit_applies %v misfit_ns %v on juno-r2", m["misfit_applies"], m["misfit_ns"])
		}
		for _, x := range m["tasks"].([]any) {
			tk := x.(map[string]any)
			for _, k := range []string{"pid", "comm", "waiting_while_idle_ns", "misfit_ns", "smt_contended_ns"} {
				if _, ok := tk[k]; !ok {
					t.Fatalf("task %v: %s missing", tk["pid"], k)
				}
			}
		}
	})
	t.Run("report", func(t *testing.T) {
		out, stderr, code := execute(t, "report", "--format", "json", trace)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		m := decodeJSON(t, out)
		for _, k := range []string{"trace", "topology", "latency", "idle", "misplaced"} {
			if _, ok := m[k].(map[string]any); !ok {
				t.Errorf("%s missing", k)
			}
		}
	})
}

func TestSectionCommandsText(t *testing.T) {
	trace := fx + "qemu-smt8-hackbench/trace.txt.zst"
	for _, c := range [][]string{
		{"latency", "--top", "5"}, {"idle", "--top", "5"}, {"misplaced"}, {"report", "--format", "markdown"}, {"report", "--format", "html"},
	} {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			out, stderr, code := execute(t, append(c, trace)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if len(c) > 2 && c[2] == "html" {
				if !strings.HasPrefix(out, "<!DOCTYPE html>") || strings.Count(out, "<svg") != 3 {
					t.Errorf("not an HTML page with three plots (two latency CDFs, the timeline)")
				}
				return
			}
			if len(c) > 2 && c[2] == "markdown" {
				if !strings.HasPrefix(out, "# schedlens report: ") || !strings.Contains(out, "| pid |") {
					t.Errorf("not markdown: %q", firstLine(out))
				}
				return
			}
			if !strings.HasPrefix(out, "schedlens "+c[0]+": ") {
				t.Errorf("first line %q", firstLine(out))
			}
			for i, l := range strings.Split(out, "\n") {
				if len([]rune(l)) > 80 {
					t.Errorf("line %d is %d columns: %q", i+1, len([]rune(l)), l)
				}
			}
		})
	}
}

func TestSamplesFlag(t *testing.T) {
	dir := t.TempDir()
	trace := fx + "ftrace-pipe-lost/trace.txt.gz"
	csvPath := filepath.Join(dir, "waits.csv")
	_, stderr, code := execute(t, "latency", "--samples", csvPath, trace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if !strings.HasPrefix(lines[0], "kind,pid,comm,") || len(lines) < 100 {
		t.Errorf("CSV: %d lines, header %q", len(lines), lines[0])
	}
	if !strings.Contains(stderr, "samples written to") {
		t.Errorf("stderr does not say where the samples went: %q", stderr)
	}
	jsonPath := filepath.Join(dir, "waits.jsonl")
	if _, stderr, code := execute(t, "report", "--samples", jsonPath, trace); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, _ = os.ReadFile(jsonPath)
	first, _, _ := strings.Cut(string(data), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(first), &m); err != nil || m["kind"] == nil {
		t.Errorf("JSON lines: first line %q: %v", first, err)
	}
}

func TestAnalysisUsageErrors(t *testing.T) {
	trace := fx + "ftrace-pipe-lost/trace.txt.gz"
	dir := t.TempDir()
	bad := filepath.Join(dir, "aff.txt")
	os.WriteFile(bad, []byte("# pid cpus\n1234 0-1\n1235 zero\n"), 0o644)
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"report", "--format", "xml", trace}, 2, "--format"},
		{[]string{"latency", "--samples", filepath.Join(dir, "x.txt"), trace}, 2, "--samples"},
		{[]string{"idle", "--min-window", "-1ms", trace}, 2, "--min-window"},
		{[]string{"idle", "--affinity", bad, trace}, 1, "aff.txt:3:"},
		{[]string{"misplaced", "--topology", "no-such-preset", trace}, 1, "--topology"},
		{[]string{"report", trace, trace}, 2, ""},
		{[]string{"report", filepath.Join(dir, "missing.txt")}, 1, "missing.txt"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args[:2], " "), func(t *testing.T) {
			_, stderr, code := execute(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (%s)", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.msg) {
				t.Errorf("stderr %q does not mention %q", stderr, tc.msg)
			}
		})
	}
}

func TestAffinityFlag(t *testing.T) {
	// An explicit mask for a task that has a window makes the window's
	// affinity "file"; a mask of only the CPU it waits on removes it.
	out, stderr, code := execute(t, "idle", "--format", "json", fx+"ftrace-hackbench-cyclictest/trace.txt.gz")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := decodeJSON(t, out)
	ws := m["windows"].([]any)
	if len(ws) == 0 {
		t.Skip("no window to state an affinity for")
	}
	w := ws[0].(map[string]any)
	pid := int(w["waiting_pid"].(float64))
	aff := filepath.Join(t.TempDir(), "aff.txt")
	os.WriteFile(aff, []byte(itoa(pid)+" 0-1\n"), 0o644)
	out, stderr, code = execute(t, "idle", "--format", "json", "--affinity", aff, fx+"ftrace-hackbench-cyclictest/trace.txt.gz")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m = decodeJSON(t, out)
	found := false
	for _, x := range m["windows"].([]any) {
		w := x.(map[string]any)
		if int(w["waiting_pid"].(float64)) == pid {
			found = true
			if w["affinity"] != "file" {
				t.Errorf("window of pid %d: affinity %v, want file", pid, w["affinity"])
			}
		}
	}
	if !found {
		t.Errorf("pid %d has no window with --affinity 0-1", pid)
	}
	// Pinned to the CPU it waits on, the task cannot have a window.
	os.WriteFile(aff, []byte(itoa(pid)+" "+itoa(int(w["waiting_cpu"].(float64)))+"\n"), 0o644)
	out, _, _ = execute(t, "idle", "--format", "json", "--affinity", aff, fx+"ftrace-hackbench-cyclictest/trace.txt.gz")
	for _, x := range decodeJSON(t, out)["windows"].([]any) {
		if int(x.(map[string]any)["waiting_pid"].(float64)) == pid {
			t.Errorf("pid %d pinned to its CPU still has a window", pid)
		}
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
