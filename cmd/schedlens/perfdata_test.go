package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/report"
	"github.com/schedlens/schedlens/timeline"
)

// tasksJSONOf runs `tasks --format json` on a trace.
func tasksJSONOf(t *testing.T, path string) (map[string]any, []map[string]any, string) {
	t.Helper()
	out, stderr, code := execute(t, "tasks", "--format", "json", path)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", path, code, stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%s: output is not JSON: %v", path, err)
	}
	var tasks []map[string]any
	for _, raw := range doc["tasks"].([]any) {
		tasks = append(tasks, raw.(map[string]any))
	}
	return doc["trace"].(map[string]any), tasks, stderr
}

// usReader cuts every time to the microsecond, as perf script prints it
// (timestamp__scnprintf_usec in tools/perf/util/session.c divides by 1000).
type usReader struct{ ingest.Reader }

func (u usReader) Next(ev *timeline.Event) error {
	err := u.Reader.Next(ev)
	if err == nil {
		ev.Time = ev.Time / 1000 * 1000
		if ev.Start != timeline.NoTime {
			ev.Start = ev.Start / 1000 * 1000
		}
	}
	return err
}

// tasksJSONTrace is the tasks command's JSON for a trace read through rd,
// built as ingest.Load and the tasks command build it.
func tasksJSONTrace(t *testing.T, path string, us bool) string {
	t.Helper()
	s, err := ingest.Open(path, ingest.Options{Name: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var rd ingest.Reader = s.Reader
	if us {
		rd = usReader{s.Reader}
	}
	b := timeline.NewBuilder(rd.Strings(), 0)
	var ev timeline.Event
	for {
		err := rd.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b.Add(ev)
	}
	m := rd.Meta()
	m.Apply(b)
	tl, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	ld := &ingest.Loaded{Timeline: tl, Meta: m, Path: "PATH"}
	var f traceFlags
	win, err := f.window(tl)
	if err != nil {
		t.Fatal(err)
	}
	sum := traceSummary(ld)
	sum.Format, sum.Kernel = "FORMAT", "" // the text formats carry no kernel release
	out, err := json.MarshalIndent(struct {
		Trace  report.TraceJSON       `json:"trace"`
		Window report.WindowRangeJSON `json:"window"`
		Tasks  []metrics.TaskTimes    `json:"tasks"`
	}{report.NewTraceJSON(&sum), report.WindowRangeJSON{StartNs: int64(win.Start), EndNs: int64(win.End)}, metrics.Account(tl, win).Tasks}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestTasksPerfDataEqualsPerfScript is the acceptance of reading perf.data
// natively: the tasks JSON of the perf-hackbench-cyclictest perf.data,
// its times cut to the microsecond as perf script prints them, equals the
// one of the perf script text perf printed from it (-F
// comm,tid,pid,cpu,time,event,trace), byte for byte but for the path and
// format.
func TestTasksPerfDataEqualsPerfScript(t *testing.T) {
	dir := fx + "perf-hackbench-cyclictest/"
	bin := tasksJSONTrace(t, dir+"perf.data.zst", true)
	txt := tasksJSONTrace(t, dir+"perf-script-fields.txt.gz", false)
	if bin != txt {
		t.Errorf("tasks JSON differs:\n%s", firstDiff(bin, txt))
	}
}

func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d: perf.data %q, perf script %q", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(la), len(lb))
}

// TestTasksPerfDataNanoseconds pins what the nanoseconds of perf.data
// change in `tasks --format json` against the perf script text: the
// times (the trace bounds keep their microsecond), and, where a waking on
// one CPU precedes by tens of ns the wakee's own switch-out with
// prev_state S on another (try_to_wake_up racing __schedule; 591.935486336
// and 591.935486396 for pid 13365), the wakeup count: at the text's shared
// microsecond the Builder's causal tie-break lets that waking end the
// sleep, in ns order it comes while the task still runs. Tasks, comms,
// thread groups and the other counts are the same.
func TestTasksPerfDataNanoseconds(t *testing.T) {
	dir := fx + "perf-hackbench-cyclictest/"
	btr, bin, bErr := tasksJSONOf(t, dir+"perf.data.zst")
	ttr, txt, _ := tasksJSONOf(t, dir+"perf-script-fields.txt.gz")
	if btr["format"] != "perf.data" || btr["compression"] != "zstd" || ttr["format"] != "perf-script" {
		t.Errorf("formats %v/%v, %v", btr["format"], btr["compression"], ttr["format"])
	}
	for _, k := range []string{"cpus", "events", "lost_events", "gaps", "valid_start_rule", "valid_start_reason",
		"inconsistencies", "skipped_records", "unknown_events"} {
		if btr[k] != ttr[k] {
			t.Errorf("trace.%s: perf.data %v, perf script %v", k, btr[k], ttr[k])
		}
	}
	for _, k := range []string{"start_ns", "end_ns", "valid_start_ns"} {
		b, x := btr[k].(float64), ttr[k].(float64)
		if int64(b)/1000*1000 != int64(x) || b == x {
			t.Errorf("trace.%s: perf.data %.0f, perf script %.0f: want the same microsecond, ns only in perf.data", k, b, x)
		}
	}
	if len(bin) != len(txt) {
		t.Fatalf("%d tasks from perf.data, %d from perf script", len(bin), len(txt))
	}
	byPID := map[float64]map[string]any{}
	for _, tk := range txt {
		byPID[tk["pid"].(float64)] = tk
	}
	exact := []string{"pid", "tgid", "comm", "switches_in", "preemptions", "migrations", "inconsistencies", "censored"}
	wakeDiff, wakeTasks, moved := 0.0, 0, 0
	for _, b := range bin {
		x, ok := byPID[b["pid"].(float64)]
		if !ok {
			t.Errorf("pid %v only in perf.data", b["pid"])
			continue
		}
		for _, k := range exact {
			if b[k] != x[k] {
				t.Errorf("pid %v %s: perf.data %v, perf script %v", b["pid"], k, b[k], x[k])
			}
		}
		if d := x["wakeups"].(float64) - b["wakeups"].(float64); d != 0 {
			wakeDiff += d
			wakeTasks++
		}
		if b["run_ns"] != x["run_ns"] {
			moved++
		}
	}
	if wakeTasks != 9 || wakeDiff != 9 {
		t.Errorf("%d tasks count %v fewer wakeups in ns order, want 9 tasks one fewer each", wakeTasks, wakeDiff)
	}
	if moved < len(bin)/2 {
		t.Errorf("only %d of %d run times differ: the nanoseconds of perf.data are not used", moved, len(bin))
	}
	if !strings.Contains(bErr, "inconsistencies") || strings.Contains(bErr, "NCPU=2 inferred") {
		t.Errorf("perf.data warnings: %q; want the inconsistencies and no inferred CPU count (the header states it)", bErr)
	}
}

// TestTasksPerfScriptDefaultLayout: the default perf script text has no
// pid column, so its tasks have no thread group, which perf.data always
// gives; nothing else differs.
func TestTasksPerfScriptDefaultLayout(t *testing.T) {
	dir := fx + "perf-hackbench-cyclictest/"
	_, def, _ := tasksJSONOf(t, dir+"perf-script.txt.gz")
	_, fld, _ := tasksJSONOf(t, dir+"perf-script-fields.txt.gz")
	if len(def) != len(fld) {
		t.Fatalf("%d tasks vs %d", len(def), len(fld))
	}
	withTGID := 0
	for i := range def {
		if def[i]["tgid"] != nil {
			t.Errorf("pid %v: tgid %v from the default layout", def[i]["pid"], def[i]["tgid"])
		}
		if fld[i]["tgid"] != nil {
			withTGID++
		}
		delete(def[i], "tgid")
		delete(fld[i], "tgid")
		a, _ := json.Marshal(def[i])
		b, _ := json.Marshal(fld[i])
		if string(a) != string(b) {
			t.Errorf("task %d: %s vs %s", i, a, b)
		}
	}
	if withTGID < len(fld)*9/10 {
		t.Errorf("%d of %d tasks have a tgid from the pid column", withTGID, len(fld))
	}
}

// TestReportPerfDataTopology: report takes the topology and kernel release
// from the perf.data header and says so; --topology still wins.
func TestReportPerfDataTopology(t *testing.T) {
	path := fx + "perf-hackbench-cyclictest/perf.data.zst"
	out, stderr, code := execute(t, "report", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"kernel 6.18.44-fc-v1045", "topology from the trace"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	out, stderr, code = execute(t, "report", "--topology", fx+"perf-hackbench-cyclictest/topology.txt", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(out, "topology from the trace") {
		t.Error("--topology did not override the perf.data header's topology")
	}
}
