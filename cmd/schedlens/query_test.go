//go:build duckdb

package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestQueryTopTasks: issue 15's acceptance. query over an exported dataset
// reproduces tasks' top 10 by runnable time on three real captures (2, 6
// and 8 CPUs); its output formats parse; a folder that is no dataset is a
// clear error.
func TestQueryTopTasks(t *testing.T) {
	for _, fixture := range []string{"qemu-smt8-hackbench/trace.txt.zst", "qemu-juno-asym/trace.txt.zst", "ftrace-hackbench-cyclictest/trace.txt.gz"} {
		t.Run(fixture, func(t *testing.T) {
			trace := fx + fixture
			dir := t.TempDir()
			if _, stderr, code := execute(t, "export", "-o", dir, trace); code != 0 {
				t.Fatalf("export: exit %d: %s", code, stderr)
			}
			out, stderr, code := execute(t, "tasks", "--format", "json", trace)
			if code != 0 {
				t.Fatalf("tasks: exit %d: %s", code, stderr)
			}
			var doc struct {
				Tasks []struct {
					PID        int64 `json:"pid"`
					RunnableNs int64 `json:"runnable_ns"`
				} `json:"tasks"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			slices.SortStableFunc(doc.Tasks, func(a, b struct {
				PID        int64 `json:"pid"`
				RunnableNs int64 `json:"runnable_ns"`
			}) int {
				return cmp.Or(cmp.Compare(b.RunnableNs, a.RunnableNs), cmp.Compare(a.PID, b.PID))
			})
			var want [][2]int64
			for _, tk := range doc.Tasks[:min(10, len(doc.Tasks))] {
				want = append(want, [2]int64{tk.PID, tk.RunnableNs})
			}
			out, stderr, code = execute(t, "query", "--format", "json", dir,
				"SELECT pid, runnable_ns FROM tasks ORDER BY runnable_ns DESC, pid LIMIT 10")
			if code != 0 {
				t.Fatalf("query: exit %d: %s", code, stderr)
			}
			var res struct {
				Columns []string   `json:"columns"`
				Rows    [][2]int64 `json:"rows"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if !slices.Equal(res.Rows, want) {
				t.Errorf("query top 10 %v, tasks top 10 %v", res.Rows, want)
			}
			for _, f := range []string{"text", "markdown", "csv", "html"} {
				out, stderr, code := execute(t, "query", "--format", f, dir, "SELECT count(*) AS n FROM traces")
				if code != 0 || !strings.Contains(out, "1") {
					t.Errorf("--format %s: exit %d, %q %s", f, code, out, stderr)
				}
			}
		})
	}
	_, stderr, code := execute(t, "query", t.TempDir(), "SELECT 1")
	if code == 0 || !strings.Contains(stderr, "no table of a schedlens dataset") {
		t.Errorf("an empty folder: exit %d, %q", code, stderr)
	}
	_, stderr, code = execute(t, "query", "--format", "xml", t.TempDir(), "SELECT 1")
	if code != 2 {
		t.Errorf("--format xml: exit %d, %q", code, stderr)
	}
}

// The HTML page of query joins TestEveryFormatHasHTML and the browser test
// in a duckdb build, over a dataset exported once for the test binary.
func init() {
	dir, err := os.MkdirTemp("", "schedlens-query-html-")
	if err != nil {
		return
	}
	var out, errb bytes.Buffer
	if run([]string{"export", "-o", dir, fx + "qemu-juno-asym/trace.txt.zst"}, &out, &errb) != 0 {
		return
	}
	htmlCases = append(htmlCases, struct {
		name string
		args []string
	}{"query", []string{"query", dir, "SELECT comm, sum(run_ns) AS run_ns FROM tasks GROUP BY comm ORDER BY run_ns DESC"}})
}
