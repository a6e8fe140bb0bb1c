package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/schedlens/schedlens/export"
)

// TestExportMatchesTasksJSON is the dataset's acceptance: on every real
// fixture trace (18), the tasks table read back from Parquet is the `tasks --format
// json` table, and the per-task sums of the wakeups and runs rows equal its
// runnable_ns, wakeups and run_ns exactly.
func TestExportMatchesTasksJSON(t *testing.T) {
	traces, _, err := export.Find(fx)
	if err != nil || len(traces) < 18 {
		t.Fatalf("fixtures: %v %v", traces, err)
	}
	dir := t.TempDir()
	for _, tr := range traces {
		t.Run(filepath.Base(filepath.Dir(tr))+"/"+filepath.Base(tr), func(t *testing.T) {
			out, stderr, code := execute(t, "tasks", "--format", "json", tr)
			if code != 0 {
				t.Fatalf("tasks: exit %d: %s", code, stderr)
			}
			var doc struct {
				Window struct {
					StartNs int64 `json:"start_ns"`
					EndNs   int64 `json:"end_ns"`
				} `json:"window"`
				Tasks []struct {
					PID        int32  `json:"pid"`
					Comm       string `json:"comm"`
					RunNs      int64  `json:"run_ns"`
					RunnableNs int64  `json:"runnable_ns"`
					Wakeups    int64  `json:"wakeups"`
				} `json:"tasks"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if _, stderr, code := execute(t, "export", "-o", dir, tr); code != 0 {
				t.Fatalf("export: exit %d: %s", code, stderr)
			}
			sha, err := export.HashFile(tr)
			if err != nil {
				t.Fatal(err)
			}
			id := export.ID(sha)
			tasks := readParquet[export.TaskRow](t, export.PartPath(dir, export.TableTasks, id))
			wakeups := readParquet[export.WakeupRow](t, export.PartPath(dir, export.TableWakeups, id))
			runs := readParquet[export.RunRow](t, export.PartPath(dir, export.TableRuns, id))
			if len(tasks) != len(doc.Tasks) || len(tasks) == 0 {
				t.Fatalf("%d task rows, tasks JSON has %d", len(tasks), len(doc.Tasks))
			}
			type sums struct{ runnable, wakeups, run int64 }
			by := map[int32]*sums{}
			for _, r := range tasks {
				by[r.Task] = &sums{}
			}
			for _, w := range wakeups {
				s := by[w.Task]
				if s == nil {
					t.Fatalf("wakeup row of task %d (pid %d) not in tasks", w.Task, w.PID)
				}
				s.runnable += w.DurNs
				if w.Kind != "preempt" && w.StartNs >= doc.Window.StartNs && w.StartNs <= doc.Window.EndNs {
					s.wakeups++
				}
			}
			for _, r := range runs {
				if s := by[r.Task]; s != nil {
					s.run += r.RunNs
				} else if r.RunNs > 0 {
					t.Fatalf("run row of task %d (pid %d, %d ns) not in tasks", r.Task, r.PID, r.RunNs)
				}
			}
			var nw int64
			for i, j := range doc.Tasks {
				r := tasks[i]
				s := by[r.Task]
				nw += j.Wakeups
				if r.PID != j.PID || r.Comm != j.Comm || r.RunNs != j.RunNs || r.RunnableNs != j.RunnableNs || r.Wakeups != j.Wakeups {
					t.Errorf("tasks row %d = pid %d %s run %d runnable %d wakeups %d; JSON pid %d %s run %d runnable %d wakeups %d",
						i, r.PID, r.Comm, r.RunNs, r.RunnableNs, r.Wakeups, j.PID, j.Comm, j.RunNs, j.RunnableNs, j.Wakeups)
				}
				if s.runnable != j.RunnableNs || s.wakeups != j.Wakeups || s.run != j.RunNs {
					t.Errorf("pid %d %s: wakeups rows sum to %d ns over %d wakeups, runs to %d ns; JSON runnable_ns %d, wakeups %d, run_ns %d",
						j.PID, j.Comm, s.runnable, s.wakeups, s.run, j.RunnableNs, j.Wakeups, j.RunNs)
				}
			}
			if nw == 0 {
				t.Errorf("no wakeups in the trace: the comparison proves nothing")
			}
			trs := readParquet[export.TraceRow](t, export.PartPath(dir, export.TableTraces, id))
			if len(trs) != 1 || trs[0].SHA256 != sha || trs[0].Error != "" || trs[0].WindowStartNs != doc.Window.StartNs || trs[0].WindowEndNs != doc.Window.EndNs {
				t.Errorf("traces rows = %+v", trs)
			}
		})
	}
}

func readParquet[T any](t *testing.T, path string) []T {
	t.Helper()
	rows, err := parquet.ReadFile[T](path)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
