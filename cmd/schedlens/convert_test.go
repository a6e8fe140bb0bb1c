package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/ingest/perfetto"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

type tasksDoc struct {
	Trace struct {
		Events          int    `json:"events"`
		Inconsistencies int    `json:"inconsistencies"`
		StartNs         int64  `json:"start_ns"`
		ValidStartNs    int64  `json:"valid_start_ns"`
		ValidStartRule  string `json:"valid_start_rule"`
	} `json:"trace"`
	Tasks []map[string]any `json:"tasks"`
}

func tasksJSON(t *testing.T, path string) tasksDoc {
	t.Helper()
	out, stderr, code := execute(t, "tasks", "--format", "json", path)
	if code != 0 {
		t.Fatalf("tasks %s: exit %d: %s", path, code, stderr)
	}
	var d tasksDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// firstPrevs returns the pids that the first switch on each CPU, and the
// first after each lost-event gap, switches out: compact_sched does not store
// a switch's prev, so it cannot name them.
func firstPrevs(t *testing.T, path string) map[string]bool {
	t.Helper()
	ld, err := ingest.Load(path, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tl := ld.Timeline
	seen := map[int16]bool{}
	out := map[string]bool{}
	for i, k := range tl.Kinds {
		if k == timeline.KindLost {
			seen[tl.CPUs[i]] = false
		}
		if k != timeline.KindSwitch || seen[tl.CPUs[i]] {
			continue
		}
		seen[tl.CPUs[i]] = true
		if o := tl.Other[i]; o != timeline.NoTask {
			out[fmt.Sprint(tl.Tasks[o].PID)] = true
		}
	}
	return out
}

// namedUntil returns the pids that an event of the trace at path names
// (as its task or its other task) at or before until.
func namedUntil(t *testing.T, path string, until timeline.Time) map[string]bool {
	t.Helper()
	ld, err := ingest.Load(path, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tl := ld.Timeline
	out := map[string]bool{}
	for i, ts := range tl.Times {
		if ts > until {
			break
		}
		for _, id := range []timeline.TaskID{tl.TaskOf[i], tl.Other[i]} {
			if id != timeline.NoTask {
				out[fmt.Sprint(tl.Tasks[id].PID)] = true
			}
		}
	}
	return out
}

// compareTasks checks b's per-task figures equal a's. When inferred is set
// (compact_sched, which infers a switch's prev from the previous switch on
// that CPU), tasks that an inconsistency touched in a may differ, since the
// inference cannot see a switch missing from the capture, and so may the
// tasks that the first switch of a CPU switched out (in allowed). Tasks in
// cut may differ in any case: b's valid window starts later than a's and
// cuts what the trace says of them before it. Every other difference is an
// error.
func compareTasks(t *testing.T, a, b tasksDoc, inferred bool, allowed, cut map[string]bool) (same, differ int) {
	t.Helper()
	key := func(m map[string]any) string { return jsonString(m["pid"]) + "/" + jsonString(m["comm"]) }
	bm := map[string]map[string]any{}
	byPid := map[string]int{}
	for _, tk := range b.Tasks {
		bm[key(tk)] = tk
		byPid[jsonString(tk["pid"])]++
	}
	for _, x := range a.Tasks {
		touched := x["inconsistencies"].(float64) > 0 || allowed[jsonString(x["pid"])]
		y, ok := bm[key(x)]
		if !ok {
			// A task seen only as a switch's prev is never named by
			// compact_sched, nor is a name that only a switch's prev_comm
			// carried (the task then keeps its earlier name).
			if inferred && (touched || x["switches_in"].(float64) == 0 || byPid[jsonString(x["pid"])] > 0) {
				differ++
				continue
			}
			t.Errorf("task %s missing after conversion", key(x))
			continue
		}
		if jsonString(x) == jsonString(y) {
			same++
			continue
		}
		if inferred && touched || cut[jsonString(x["pid"])] {
			differ++
			continue
		}
		t.Errorf("task %s differs:\n before: %s\n after:  %s", key(x), jsonString(x), jsonString(y))
	}
	return same, differ
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestConvertRoundTrip: every real text fixture converted to Perfetto and
// read back gives identical `tasks` JSON; through compact_sched, identical
// except for tasks that a switch missing from the capture touches.
func TestConvertRoundTrip(t *testing.T) {
	fixtures := []string{
		"ftrace-oracle-busy/trace.txt.zst",
		"ftrace-oracle-busy/report.txt.zst",
		"ftrace-hackbench-cyclictest/trace.txt.gz",
		"ftrace-overflow/trace.txt.gz",
		"ftrace-pipe-lost/trace.txt.gz",
		"perf-hackbench-cyclictest/perf-script.txt.gz",
		"qemu-smt8-hackbench/trace.txt.zst",
	}
	dir := t.TempDir()
	for _, f := range fixtures {
		t.Run(f, func(t *testing.T) {
			in := fx + f
			orig := tasksJSON(t, in)
			for _, compact := range []bool{false, true} {
				out := filepath.Join(dir, filepath.Base(filepath.Dir(f))+".pftrace")
				args := []string{"convert", in, "-o", out}
				if compact {
					args = append(args, "--compact-sched")
				}
				if _, stderr, code := execute(t, args...); code != 0 {
					t.Fatalf("convert: exit %d: %s", code, stderr)
				}
				back := tasksJSON(t, out)
				if back.Trace.Events != orig.Trace.Events {
					t.Errorf("compact=%v: %d events back, want %d", compact, back.Trace.Events, orig.Trace.Events)
				}
				// Perfetto carries what the source proves about its start
				// (ftrace stats at the start of the trace only when it
				// proved every CPU was recorded from there).
				if back.Trace.ValidStartNs != orig.Trace.ValidStartNs || back.Trace.ValidStartRule != orig.Trace.ValidStartRule {
					t.Errorf("compact=%v: valid start %d by %q back, want %d by %q", compact,
						back.Trace.ValidStartNs, back.Trace.ValidStartRule, orig.Trace.ValidStartNs, orig.Trace.ValidStartRule)
				}
				same, differ := compareTasks(t, orig, back, compact, firstPrevs(t, in), nil)
				t.Logf("compact=%v: %d tasks identical, %d differ where compact_sched cannot see a missing switch (inconsistencies %d -> %d)",
					compact, same, differ, orig.Trace.Inconsistencies, back.Trace.Inconsistencies)
				if !compact && back.Trace.Inconsistencies != orig.Trace.Inconsistencies {
					t.Errorf("inconsistencies %d after a plain round trip, want %d", back.Trace.Inconsistencies, orig.Trace.Inconsistencies)
				}
			}
		})
	}
}

// TestPerfettoTwinOfText: the Perfetto encodings of ftrace-hackbench-cyclictest
// (made with Perfetto's own schema by protoc) give the text's per-task
// figures: the plain one exactly, the compact one except where the inference
// of prev fields meets the capture's missing switch events. The twins carry
// no ftrace stats, so unlike the text (whose header proves no event was
// overwritten) they do not prove their CPUs were recorded from the start:
// their valid window starts at CPU 1's first event, 3.859 ms after the
// text's, and the tasks the trace names before that may differ.
func TestPerfettoTwinOfText(t *testing.T) {
	text := tasksJSON(t, fx+"ftrace-hackbench-cyclictest/trace.txt.gz")
	if text.Trace.ValidStartRule != "first-event" || text.Trace.ValidStartNs != text.Trace.StartNs {
		t.Errorf("text: valid start %d by %q, want the first event %d", text.Trace.ValidStartNs, text.Trace.ValidStartRule, text.Trace.StartNs)
	}
	for _, c := range []struct {
		file    string
		compact bool
	}{{"trace.pftrace.zst", false}, {"trace-compact.pftrace.zst", true}} {
		t.Run(c.file, func(t *testing.T) {
			pb := tasksJSON(t, fx+"perfetto-from-ftrace-hackbench-cyclictest/"+c.file)
			for _, tk := range append(text.Tasks, pb.Tasks...) {
				delete(tk, "tgid") // the protoc encoding carries no process tree
			}
			if pb.Trace.ValidStartRule != "latest-cpu-start" || pb.Trace.ValidStartNs-pb.Trace.StartNs != 3859000 {
				t.Errorf("twin: valid start %d by %q, want %d by the latest-CPU rule", pb.Trace.ValidStartNs, pb.Trace.ValidStartRule, pb.Trace.StartNs+3859000)
			}
			cut := namedUntil(t, fx+"perfetto-from-ftrace-hackbench-cyclictest/"+c.file, timeline.Time(pb.Trace.ValidStartNs))
			same, differ := compareTasks(t, text, pb, c.compact, firstPrevs(t, fx+"ftrace-hackbench-cyclictest/trace.txt.gz"), cut)
			t.Logf("%d tasks identical, %d differ through inference or the later valid start (inconsistencies %d -> %d)", same, differ, text.Trace.Inconsistencies, pb.Trace.Inconsistencies)
		})
	}
}

// TestConvertTaskAttrs: the affinity and task-group changes of a schedlens
// recording survive convert (plain and compact): the converted trace loads
// into the same Timeline.Affinity and Timeline.Groups as the input.
func TestConvertTaskAttrs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pftrace")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	strs := timeline.NewStrings()
	w, err := perfetto.NewWriter(f, perfetto.WriterOptions{Strings: strs, Kernel: "6.12.0", NCPU: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		ev := timeline.Event{Time: timeline.Time(1000 + 10*i), Start: timeline.NoTime, CPU: timeline.CPU(i % 4), Kind: timeline.KindSwitch,
			Task: timeline.TID(10 + i%3), Other: 0, Comm: strs.IDString("w"), OComm: strs.IDString("swapper"), Prio: 120, OPrio: 120, TGID: -1}
		if err := w.Add(&ev); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			if err := w.AddAffinity(timeline.AffinityChange{At: ev.Time, TID: ev.Task, CPUs: topology.NewCPUSet(i % 4)}); err != nil {
				t.Fatal(err)
			}
			if err := w.AddGroup(timeline.GroupChange{At: ev.Time, TID: ev.Task, Path: fmt.Sprintf("/g%d", i), Weight: 100 + i, Autogroup: 3}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	orig, err := ingest.Load(in, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(orig.Timeline.Affinity) != 4 || len(orig.Timeline.Groups) != 4 {
		t.Fatalf("input has %d affinity and %d group changes, want 4 and 4", len(orig.Timeline.Affinity), len(orig.Timeline.Groups))
	}
	for _, compact := range []bool{false, true} {
		out := filepath.Join(dir, fmt.Sprintf("out-%v.pftrace", compact))
		args := []string{"convert", in, "-o", out}
		if compact {
			args = append(args, "--compact-sched")
		}
		if _, stderr, code := execute(t, args...); code != 0 {
			t.Fatalf("convert: exit %d: %s", code, stderr)
		}
		back, err := ingest.Load(out, ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Timeline.Affinity, orig.Timeline.Affinity) || !reflect.DeepEqual(back.Timeline.Groups, orig.Timeline.Groups) {
			t.Errorf("compact=%v: read back %v %+v, want %v %+v", compact, back.Timeline.Affinity, back.Timeline.Groups, orig.Timeline.Affinity, orig.Timeline.Groups)
		}
	}
}
