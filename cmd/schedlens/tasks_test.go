package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fx = "../../fixtures/real/"

// execute runs one command line in-process.
func execute(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestTasksJSONContract(t *testing.T) {
	out, stderr, code := execute(t, "tasks", "--format", "json", "--start-marker", "oracle_start", "--end-marker", "oracle_end",
		fx+"ftrace-oracle-busy/trace.txt.zst")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	tr := doc["trace"].(map[string]any)
	for _, k := range []string{"format", "cpus", "events", "lost_events", "start_ns", "end_ns", "valid_start_ns"} {
		if _, ok := tr[k]; !ok {
			t.Errorf("trace.%s missing", k)
		}
	}
	if tr["format"] != "ftrace" || tr["cpus"].(float64) != 2 {
		t.Errorf("trace = %v", tr)
	}
	win := doc["window"].(map[string]any)
	if win["start_ns"].(float64) != 576223558000 || win["end_ns"].(float64) != 578277889000 {
		t.Errorf("window = %v, want the oracle markers", win)
	}
	tasks := doc["tasks"].([]any)
	if len(tasks) < 5 {
		t.Fatalf("%d tasks", len(tasks))
	}
	keys := []string{"pid", "tgid", "comm", "run_ns", "runnable_ns", "wakeup_latency_ns", "preempt_wait_ns", "rq_wait_ns",
		"sleep_ns", "blocked_ns", "switches_in", "preemptions", "wakeups", "migrations"}
	for _, raw := range tasks {
		tk := raw.(map[string]any)
		for _, k := range keys {
			if _, ok := tk[k]; !ok {
				t.Fatalf("task %v: %s missing", tk["pid"], k)
			}
		}
		if tk["runnable_ns"].(float64) != tk["wakeup_latency_ns"].(float64)+tk["preempt_wait_ns"].(float64) {
			t.Errorf("pid %v: runnable_ns != wakeup_latency_ns + preempt_wait_ns", tk["pid"])
		}
	}
	if !strings.Contains(stderr, "inconsistencies") {
		t.Errorf("stderr does not report the capture's inconsistencies: %q", stderr)
	}
}

func TestTasksFilterAndText(t *testing.T) {
	out, _, code := execute(t, "tasks", "--pid", "13122,13124", fx+"ftrace-oracle-busy/report.txt.zst")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"13122", "13124", "sched-pipe", "Times in ms. run:", "command: schedlens tasks --pid 13122,13124 \\\n", "schedlens " + Version} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 80 {
			t.Errorf("line wider than 80 columns: %q", line)
		}
		if strings.HasSuffix(line, " ") {
			t.Errorf("trailing blank: %q", line)
		}
	}
	if strings.Contains(out, "13119 ") {
		t.Errorf("--pid did not filter:\n%s", out)
	}
}

func TestCPUsJSON(t *testing.T) {
	out, _, code := execute(t, "cpus", "--format", "json", fx+"ftrace-pipe-lost/trace.txt.gz")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Trace struct {
			LostEvents int64 `json:"lost_events"`
		} `json:"trace"`
		CPUs []struct {
			CPU        int   `json:"cpu"`
			Busy       int64 `json:"busy_ns"`
			Idle       int64 `json:"idle_ns"`
			Unobserved int64 `json:"unobserved_ns"`
			Lost       int64 `json:"lost_events"`
		} `json:"cpus"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Trace.LostEvents != 7132+8166 || len(doc.CPUs) != 2 || doc.CPUs[0].Lost != 7132 || doc.CPUs[1].Lost != 8166 {
		t.Errorf("lost events = %+v", doc)
	}
}

func TestUsageAndInputErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("# tracer: nop\n          bash-1     [000] d..2.   1.000000: sched_switch: prev_comm=bash prev_pid=1 prev_prio=120 prev_state=Q ==> next_comm=x next_pid=2 next_prio=120\n"), 0o644)
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, nil, 0o644)
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"tasks"}, 2, "accepts 1 arg"},
		{[]string{"tasks", "--format", "xml", fx + "ftrace-pipe-lost/trace.txt.gz"}, 2, "--format"},
		{[]string{"tasks", "--start", "abc", fx + "ftrace-pipe-lost/trace.txt.gz"}, 2, "--start"},
		{[]string{"tasks", "--nosuchflag", "x"}, 2, "unknown flag"},
		{[]string{"tasks", filepath.Join(dir, "missing")}, 1, "no such file"},
		{[]string{"tasks", bad}, 1, "bad.txt:2: sched_switch"},
		{[]string{"tasks", empty}, 1, "empty"},
		{[]string{"tasks", "--start-marker", "nope", fx + "ftrace-oracle-busy/report.txt.zst"}, 1, "no trace marker"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, stderr, code := execute(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if !strings.Contains(last, tc.msg) || !strings.HasPrefix(last, "error: ") {
				t.Errorf("stderr = %q, want an error: line containing %q", stderr, tc.msg)
			}
		})
	}
}

func TestLenientKeepsGoodRecords(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.txt")
	os.WriteFile(p, []byte(`# tracer: nop
#
          <idle>-0     [000] d..2.   1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
               a-10    [000] d..2.   1.000500: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=BOGUS ==> next_comm=b next_pid=11 next_prio=120
               a-10    [000] d..2.   1.001000: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=b next_pid=11 next_prio=120
               b-11    [000] d..2.   1.003000: sched_switch: prev_comm=b prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
`), 0o644)
	out, stderr, code := execute(t, "tasks", "--lenient", "--format", "json", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "1 malformed records skipped") || !strings.Contains(stderr, "t.txt:4") {
		t.Errorf("stderr = %q", stderr)
	}
	if !strings.Contains(out, `"skipped_records": 1`) || !strings.Contains(out, `"run_ns": 2000000`) {
		t.Errorf("output = %s", out)
	}
}

// TestTasksTraceDat: `tasks --format json` opens a zstd-compressed
// trace.dat by its content and agrees with its `trace-cmd report` twin on
// the events and the tasks; the binary's stamps are in ns (the text's are
// rounded to µs) and its CPUSTAT options prove the window from the first
// event (ingest/tracedat's TestTwinTasks pins the tables byte-equal once
// the binary is read as the text prints it).
func TestTasksTraceDat(t *testing.T) {
	load := func(name string) map[string]any {
		out, stderr, code := execute(t, "tasks", "--format", "json", fx+"ftrace-oracle-busy/"+name)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	bin, txt := load("trace.dat.zst"), load("report.txt.zst")
	bt, tt := bin["trace"].(map[string]any), txt["trace"].(map[string]any)
	if bt["format"] != "trace.dat" || bt["compression"] != "zstd" || bt["clock"] != "local" {
		t.Errorf("trace.dat: format %v compression %v clock %v", bt["format"], bt["compression"], bt["clock"])
	}
	if bt["events"] != tt["events"] || bt["events"].(float64) != 258812 {
		t.Errorf("events %v vs %v, want 258812 both", bt["events"], tt["events"])
	}
	if bt["start_ns"].(float64) != 575448244158 || tt["start_ns"].(float64) != 575448244000 {
		t.Errorf("start %v / %v, want 575448244158 (ns) and 575448244000 (µs)", bt["start_ns"], tt["start_ns"])
	}
	if bt["valid_start_rule"] != "first-event" || tt["valid_start_rule"] != "latest-cpu-start" {
		t.Errorf("rules %v / %v, want first-event from the binary's CPUSTAT, latest-cpu-start from the text", bt["valid_start_rule"], tt["valid_start_rule"])
	}
	names := func(doc map[string]any) map[string]bool {
		m := map[string]bool{}
		for _, x := range doc["tasks"].([]any) {
			tk := x.(map[string]any)
			m[fmt.Sprint(tk["pid"], " ", tk["comm"])] = true
		}
		return m
	}
	bn, tn := names(bin), names(txt)
	if len(bn) != 52 || len(bn) != len(tn) {
		t.Errorf("%d tasks from trace.dat, %d from text, want 52", len(bn), len(tn))
	}
	for k := range bn {
		if !tn[k] {
			t.Errorf("task %s only in trace.dat", k)
		}
	}
}

// TestManyLostGapsOneWarning: a perf record with a small buffer loses
// events in many gaps (9 here, 509 events on CPU 0 and 1139 on CPU 1, as
// `perf report -D`'s PERF_RECORD_LOST records sum them); beyond 5 gaps the
// warning is one line with the sums per CPU, not a line per gap.
func TestManyLostGapsOneWarning(t *testing.T) {
	_, stderr, code := execute(t, "cpus", "../../ingest/perfdata/testdata/lost.data.zst")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "warning: events lost in 9 gaps (CPU 0: 3 gaps, 509 events, "
	if strings.Count(stderr, "events lost") != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "CPU 1: 6 gaps, 1139 events") {
		t.Errorf("stderr:\n%s\nwant one line starting %q", stderr, want)
	}
}
