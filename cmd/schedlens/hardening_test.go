package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pairTrace writes an ftrace text of two tasks a (CPU 0) and b (CPU cpuB)
// that sleep and wake in turn, 50 rounds, with jump seconds added after
// round 25: while both run (running) or while both sleep.
func pairTrace(t *testing.T, cpuB int, jump float64, running bool) string {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("# tracer: nop\n#\n")
	ts := 100.0
	line := func(comm string, pid, cpu int, body string) {
		fmt.Fprintf(&sb, "%16s-%-7d [%03d] d..2. %.6f: %s\n", comm, pid, cpu, ts, body)
	}
	for i := range 50 {
		for k, cpu := range []int{0, cpuB} {
			comm, pid := string(rune('a'+k)), 101+k
			idle := fmt.Sprintf("swapper/%d", cpu)
			sleep := func() {
				line(comm, pid, cpu, fmt.Sprintf("sched_switch: prev_comm=%s prev_pid=%d prev_prio=120 prev_state=S ==> next_comm=%s next_pid=0 next_prio=120", comm, pid, idle))
			}
			wake := func() {
				line("<idle>", 0, cpu, fmt.Sprintf("sched_waking: comm=%s pid=%d prio=120 target_cpu=%03d", comm, pid, cpu))
				line("<idle>", 0, cpu, fmt.Sprintf("sched_switch: prev_comm=%s prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=%s next_pid=%d next_prio=120", idle, comm, pid))
			}
			if running {
				sleep()
				ts += 0.001
				wake()
			} else {
				wake()
				ts += 0.002
				sleep()
			}
			ts += 0.002
		}
		if i == 25 {
			ts += jump
		}
	}
	p := filepath.Join(t.TempDir(), "pair.txt")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// executeWithin runs a command line and fails the test if it takes longer
// than d (the command goes on in the background then).
func executeWithin(t *testing.T, d time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	type result struct {
		out, err string
		code     int
	}
	done := make(chan result, 1)
	go func() {
		o, e, c := execute(t, args...)
		done <- result{o, e, c}
	}()
	select {
	case r := <-done:
		return r.out, r.err, r.code
	case <-time.After(d):
		t.Fatalf("%s: still running after %v", strings.Join(args, " "), d)
		return "", "", -1
	}
}

// TestReplayTimestampJump: issue 16 item 3. 300 events with a jump of
// 1e6 s while both tasks run would tick 5e8 times (about 92 s before);
// the replay refuses at once and names the jump. The same jump while
// every CPU is idle costs no tick work and replays.
func TestReplayTimestampJump(t *testing.T) {
	_, stderr, code := executeWithin(t, 20*time.Second, "replay", pairTrace(t, 1, 1e6, true))
	if code != 1 || !strings.Contains(stderr, "implausible") ||
		!strings.Contains(stderr, "from the sched_switch event on CPU 1 at 100.154000 s to the next at 1000100.156000 s") {
		t.Errorf("replay over a 1e6 s jump while tasks run: exit %d: %s", code, stderr)
	}
	if _, stderr, code := executeWithin(t, 20*time.Second, "replay", pairTrace(t, 1, 1e6, false)); code != 0 {
		t.Errorf("replay over a 1e6 s idle stretch: exit %d: %s", code, stderr)
	}
}

// TestCPULimitOneAndPositioned: issue 16 item 7. One CPU limit
// (topology.MaxCPUs, CPUs 0-8191) in every reader, the timeline and the
// Perfetto writer. Before, the ftrace reader took CPUs up to 65535, the
// timeline refused above 16384 with an error naming no line that
// --lenient could not skip, and convert refused above 8191.
func TestCPULimitOneAndPositioned(t *testing.T) {
	// CPU 8191 is the highest: read, and converted.
	top := pairTrace(t, 8191, 0, true)
	out := filepath.Join(t.TempDir(), "top.pftrace")
	if _, stderr, code := execute(t, "convert", top, "-o", out); code != 0 {
		t.Fatalf("convert of CPU 8191: exit %d: %s", code, stderr)
	}
	if _, stderr, code := execute(t, "tasks", out); code != 0 {
		t.Fatalf("tasks of the converted CPU 8191 trace: exit %d: %s", code, stderr)
	}
	for _, cpu := range []int{8192, 9000, 20000, 65535} {
		p := pairTrace(t, 1, 0, true)
		b, _ := os.ReadFile(p)
		// Line 3: the first event line names the CPU over the limit.
		lines := strings.SplitN(string(b), "\n", 3)
		bad := strings.Replace(lines[2], "[000]", fmt.Sprintf("[%03d]", cpu), 1)
		os.WriteFile(p, []byte(lines[0]+"\n"+lines[1]+"\n"+bad), 0o644)
		_, stderr, code := execute(t, "tasks", p)
		if code != 1 || !strings.Contains(stderr, p+":3:") || !strings.Contains(stderr, "8192") {
			t.Errorf("CPU %d: exit %d, want an error at %s:3 naming the limit: %s", cpu, code, p, stderr)
		}
		if _, stderr, code := execute(t, "tasks", "--lenient", p); code != 0 {
			t.Errorf("CPU %d with --lenient: exit %d: %s", cpu, code, stderr)
		}
		out := filepath.Join(t.TempDir(), "x.pftrace")
		if _, stderr, code := execute(t, "convert", "--lenient", p, "-o", out); code != 0 {
			t.Errorf("CPU %d: convert --lenient: exit %d: %s", cpu, code, stderr)
		}
	}
}

// TestReportCountsUnknownEvents: issue 16 item 9. report, replay and
// tasks agree on the events the reader counted but does not interpret.
// Before, report and replay read a timeline count no reader fills and
// always said 0.
func TestReportCountsUnknownEvents(t *testing.T) {
	p := pairTrace(t, 1, 0, true)
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	for i := range 3 {
		fmt.Fprintf(f, "          <idle>-0       [000] d.h1. %.6f: irq_handler_entry: irq=%d name=eth0\n", 101.0+float64(i), i)
	}
	f.Close()
	for _, args := range [][]string{{"report", "--format", "json", p}, {"tasks", "--format", "json", p}, {"replay", "--format", "json", p}} {
		out, stderr, code := execute(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if !strings.Contains(out, `"unknown_events": 3`) && !strings.Contains(out, `"unknown_events":3`) {
			i := strings.Index(out, "unknown_events")
			t.Errorf("%s: want unknown_events 3, got %s", args[0], out[max(i-1, 0):min(i+22, len(out))])
		}
	}
}

// TestConvertReproducible: issue 16 item 9. Converting the same trace
// twice gives the same bytes (before, the process tree followed map
// order).
func TestConvertReproducible(t *testing.T) {
	for _, f := range []string{"ftrace-hackbench-cyclictest/trace.txt.gz", "perf-hackbench-cyclictest/perf-script.txt.gz"} {
		convertTwice(t, fx+f)
	}
}

func convertTwice(t *testing.T, in string) {
	d := t.TempDir()
	var first []byte
	for i := range 3 {
		out := filepath.Join(d, fmt.Sprintf("%d.pftrace", i))
		if _, stderr, code := execute(t, "convert", in, "-o", out); code != 0 {
			t.Fatalf("convert: exit %d: %s", code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("convert %s: run %d differs from run 0 (%d and %d bytes)", in, i, len(b), len(first))
		}
	}
}

// TestReplayHZFlag: issue 16 item 9. --hz 0 takes the tick rate from the
// recording; a negative or implausible rate is a usage error (exit 2)
// that says what is wanted. Before, --hz -5 silently became the
// recording's rate and --hz 1000000 failed in the engine (exit 1).
func TestReplayHZFlag(t *testing.T) {
	p := pairTrace(t, 1, 0, true)
	if _, stderr, code := execute(t, "replay", "--hz", "0", p); code != 0 {
		t.Errorf("--hz 0: exit %d: %s", code, stderr)
	}
	if _, stderr, code := execute(t, "replay", "--hz", "1000", p); code != 0 {
		t.Errorf("--hz 1000: exit %d: %s", code, stderr)
	}
	for _, v := range []string{"-5", "-1", "10001", "1000000"} {
		_, stderr, code := execute(t, "replay", "--hz", v, p)
		if code != 2 || !strings.Contains(stderr, "--hz "+v+": want 0") {
			t.Errorf("--hz %s: exit %d, want a usage error: %s", v, code, stderr)
		}
	}
}

// TestMaxEventsFlag: issue 16 item 4 at the command line: --max-events
// stops the load with an error that names the limit, not a suggestion to
// use --lenient; -1 lifts it.
func TestMaxEventsFlag(t *testing.T) {
	in := fx + "ftrace-hackbench-cyclictest/trace.txt.gz"
	_, stderr, code := execute(t, "tasks", "--max-events", "1000", in)
	if code != 1 || !strings.Contains(stderr, "more than 1000 events") || strings.Contains(stderr, "--lenient") {
		t.Errorf("--max-events 1000: exit %d: %s", code, stderr)
	}
	if _, stderr, code := execute(t, "tasks", "--max-events", "-1", in); code != 0 {
		t.Errorf("--max-events -1: exit %d: %s", code, stderr)
	}
}

// TestJobsFlag: --jobs outside 0..256 is a usage error that says what is
// wanted; within it, the command runs (TestOutputIdentity compares the
// outputs of --jobs 1 and --jobs 3).
func TestJobsFlag(t *testing.T) {
	in := fx + "ftrace-hackbench-cyclictest/trace.txt.gz"
	for _, v := range []string{"-1", "257"} {
		_, stderr, code := execute(t, "tasks", "--jobs", v, in)
		if code != 2 || !strings.Contains(stderr, "--jobs "+v+": want 0") {
			t.Errorf("--jobs %s: exit %d, want a usage error: %s", v, code, stderr)
		}
	}
	if _, stderr, code := execute(t, "tasks", "--jobs", "2", in); code != 0 {
		t.Errorf("--jobs 2: exit %d: %s", code, stderr)
	}
}
