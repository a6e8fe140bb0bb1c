package ftrace

import (
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// Event counts per kind of the fixtures under fixtures/real. The
// qemu-smt8-hackbench counts are those its README states; the others were
// counted with grep on the decompressed text and equal the traces'
// entries-in-buffer.
var fixtureCounts = map[string]map[string]int{
	"ftrace-oracle-busy/trace.txt.zst": {
		"sched_switch": 108690, "sched_waking": 74924, "sched_wakeup": 74924, "sched_wakeup_new": 25,
		"sched_migrate_task": 118, "sched_process_fork": 25, "task_newtask": 25, "sched_process_exec": 21,
		"sched_process_exit": 20, "sched_process_free": 16, "task_rename": 22, "marker": 2,
	},
	"ftrace-oracle-busy/report.txt.zst": {
		"sched_switch": 108690, "sched_waking": 74924, "sched_wakeup": 74924, "sched_wakeup_new": 25,
		"sched_migrate_task": 118, "sched_process_fork": 25, "task_newtask": 25, "sched_process_exec": 21,
		"sched_process_exit": 20, "sched_process_free": 16, "task_rename": 22, "marker": 2,
	},
	"ftrace-hackbench-cyclictest/trace.txt.gz": {
		"sched_switch": 22453, "sched_waking": 17227, "sched_wakeup": 17227, "sched_wakeup_new": 171,
		"sched_migrate_task": 1248, "sched_process_fork": 171, "task_newtask": 171, "sched_process_exec": 10,
		"sched_process_exit": 171, "sched_process_free": 169, "task_rename": 10, "cpu_idle": 4,
	},
	"ftrace-overflow/trace.txt.gz": {
		"sched_switch": 16598, "sched_waking": 11683, "sched_wakeup": 11684, "sched_wakeup_new": 2,
		"sched_migrate_task": 293, "sched_process_fork": 2, "task_newtask": 2, "sched_process_exec": 1,
		"sched_process_exit": 136, "sched_process_free": 115, "task_rename": 1, "buffer_start": 1,
	},
	"ftrace-pipe-lost/trace.txt.gz": {
		"sched_switch": 6109, "sched_waking": 3094, "sched_wakeup_new": 63, "sched_migrate_task": 37,
		"sched_process_exit": 102, "sched_process_free": 138, "lost": 2,
	},
	"qemu-smt8-hackbench/trace.txt.zst": {
		"sched_switch": 17136, "sched_waking": 11924, "sched_wakeup": 11924, "sched_migrate_task": 3486,
		"sched_wakeup_new": 165, "sched_process_fork": 165, "sched_process_exit": 165,
		"sched_process_free": 163, "task_newtask": 165, "task_rename": 4, "cpu_idle": 2034, "marker": 6,
	},
}

// fixtureMeta is what each fixture's Meta must say. The coverage follows
// from the header (equal counts: complete; fewer kept: lost), lost-event
// lines (lost) and the formats without counts (unknown).
var fixtureMeta = map[string]struct {
	format      string
	ncpu        int
	in, written int64
	cov         timeline.Coverage
}{
	"ftrace-oracle-busy/trace.txt.zst":         {FormatTrace, 2, 258812, 258812, timeline.CoverageComplete},
	"ftrace-oracle-busy/report.txt.zst":        {FormatTraceCmd, 2, -1, -1, timeline.CoverageUnknown},
	"ftrace-hackbench-cyclictest/trace.txt.gz": {FormatTrace, 2, 59032, 59032, timeline.CoverageComplete},
	"ftrace-overflow/trace.txt.gz":             {FormatTrace, 2, 40517, 145878, timeline.CoverageLost},
	"ftrace-pipe-lost/trace.txt.gz":            {FormatPipe, 0, -1, -1, timeline.CoverageLost},
	"qemu-smt8-hackbench/trace.txt.zst":        {FormatTrace, 8, 47337, 47337, timeline.CoverageComplete},
}

func TestFixtures(t *testing.T) {
	for rel, want := range fixtureCounts {
		t.Run(rel, func(t *testing.T) {
			for _, lenient := range []bool{false, true} {
				evs, r := readAll(t, rel, readFixture(t, rel), parse.Options{Lenient: lenient})
				got := countKinds(evs)
				for k, n := range want {
					if got[k] != n {
						t.Errorf("lenient=%v: %s events = %d, want %d", lenient, k, got[k], n)
					}
				}
				for k, n := range got {
					if _, ok := want[k]; !ok {
						t.Errorf("lenient=%v: %d unexpected %s events", lenient, n, k)
					}
				}
				m := r.Meta()
				wm := fixtureMeta[rel]
				if m.Format != wm.format || m.NCPU != wm.ncpu || m.EntriesInBuffer != wm.in || m.EntriesWritten != wm.written {
					t.Errorf("Meta = %q ncpu=%d entries=%d/%d, want %q ncpu=%d entries=%d/%d",
						m.Format, m.NCPU, m.EntriesInBuffer, m.EntriesWritten, wm.format, wm.ncpu, wm.in, wm.written)
				}
				if m.Coverage != wm.cov || m.CoverageNote == "" {
					t.Errorf("Meta.Coverage = %v (%q), want %v", m.Coverage, m.CoverageNote, wm.cov)
				}
				if len(m.Unknown) != 0 || m.Skipped != 0 {
					t.Errorf("Meta.Unknown = %v, Skipped = %d, want none", m.Unknown, m.Skipped)
				}
				if wm.in >= 0 {
					records := len(evs) - got["lost"] - got["buffer_start"]
					if int64(records) != wm.in {
						t.Errorf("records = %d, want entries-in-buffer %d", records, wm.in)
					}
				}
				checkOrder(t, evs)
			}
		})
	}
}

// checkOrder checks per-CPU time order, and that every lost or
// buffer-start record sits right before an event of its CPU at its time
// (or at the end).
func checkOrder(t *testing.T, evs []timeline.Event) {
	t.Helper()
	last := map[timeline.CPU]timeline.Time{}
	for i, e := range evs {
		if l, ok := last[e.CPU]; ok && e.Time < l {
			t.Fatalf("event %d: CPU %d time %d < previous %d", i, e.CPU, e.Time, l)
		}
		last[e.CPU] = e.Time
		if e.Kind != timeline.KindLost && e.Kind != timeline.KindBufferStart {
			continue
		}
		j := i + 1
		for j < len(evs) && (evs[j].Kind == timeline.KindLost || evs[j].Kind == timeline.KindBufferStart) && evs[j].CPU == e.CPU {
			j++
		}
		if j < len(evs) && (evs[j].CPU != e.CPU || evs[j].Time != e.Time) {
			t.Errorf("event %d: %v on CPU %d at %d is followed by CPU %d at %d", i, e.Kind, e.CPU, e.Time, evs[j].CPU, evs[j].Time)
		}
	}
}

// traceCmdState is the prev_state trace-cmd's sched plugin prints for a
// state the kernel printed as s: the plugin has no R+, I or Z, and prints
// W, X in their place (libtraceevent plugins/plugin_sched_switch.c,
// write_state; seen in the fixture).
func traceCmdState(s timeline.State) timeline.State {
	switch s {
	case timeline.StatePreempted:
		return timeline.StateRunnable
	case timeline.StateIdle:
		return timeline.StateWaking
	case timeline.StateZombie:
		return timeline.StateExitDead
	}
	return s
}

// TestTraceAndReport reads one capture in two formats: the kernel's trace
// file and trace-cmd report. The events must match field by field except
// the tgid column (trace-cmd report does not print it) and the state
// letters trace-cmd prints differently.
func TestTraceAndReport(t *testing.T) {
	strs := timeline.NewStrings()
	a, _ := readAll(t, "trace.txt", readFixture(t, "ftrace-oracle-busy/trace.txt.zst"), parse.Options{Strings: strs})
	b, _ := readAll(t, "report.txt", readFixture(t, "ftrace-oracle-busy/report.txt.zst"), parse.Options{Strings: strs})
	if len(a) != len(b) {
		t.Fatalf("trace has %d events, report %d", len(a), len(b))
	}
	tgids, states, bad := 0, 0, 0
	for i := range a {
		x, y := a[i], b[i]
		if x.TGID != -1 {
			tgids++
		}
		if y.TGID != -1 {
			t.Fatalf("report event %d: TGID = %d, want -1 (no tgid column)", i, y.TGID)
		}
		x.TGID = -1
		if x.Kind == timeline.KindSwitch && x.State != y.State {
			if traceCmdState(x.State) != y.State {
				t.Errorf("event %d: report prev_state %v for trace's %v", i, y.State, x.State)
			}
			states++
			x.State = y.State
		}
		if x != y {
			bad++
			if bad <= 10 {
				t.Errorf("event %d:\ntrace  %s\nreport %s", i, describe(x, strs), describe(y, strs))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d events differ", bad, len(a))
	}
	if tgids == 0 || states == 0 {
		t.Errorf("trace events with a tgid = %d, switches with a translated state = %d: want some of each", tgids, states)
	}
}

func TestFixtureLost(t *testing.T) {
	evs, _ := readAll(t, "pipe", readFixture(t, "ftrace-pipe-lost/trace.txt.gz"), parse.Options{})
	type lost struct {
		cpu         timeline.CPU
		start, time timeline.Time
		n           int64
	}
	var got []lost
	for _, e := range evs {
		if e.Kind == timeline.KindLost {
			got = append(got, lost{e.CPU, e.Start, e.Time, e.Arg})
		}
	}
	// CPU 0: last record before the gap at 655.099845, next at 656.806473;
	// CPU 1: 655.156228 and 656.953146 (lines 488-490 and 2618-2619).
	want := []lost{
		{0, 655099845000, 656806473000, 7132},
		{1, 655156228000, 656953146000, 8166},
	}
	if len(got) != len(want) {
		t.Fatalf("lost records = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("lost record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestFixtureBufferStart(t *testing.T) {
	evs, _ := readAll(t, "overflow", readFixture(t, "ftrace-overflow/trace.txt.gz"), parse.Options{})
	first := -1
	for i, e := range evs {
		if e.CPU == 1 {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatal("no CPU 1 events")
	}
	e := evs[first]
	if e.Kind != timeline.KindBufferStart || e.Time != 647913772000 || e.Start != timeline.NoTime {
		t.Errorf("first CPU 1 event = %v at %d (start %d), want buffer_start at 647913772000", e.Kind, e.Time, e.Start)
	}
	if n := evs[first+1]; n.CPU != 1 || n.Kind != timeline.KindWaking || n.Time != e.Time {
		t.Errorf("after the buffer start: %v on CPU %d at %d, want sched_waking on CPU 1 at %d", n.Kind, n.CPU, n.Time, e.Time)
	}
}

// TestSystraceText reads the systrace-style ftrace text of two Perfetto
// conformance cases (fixtures/perfetto-conformance): a 5-dash "(-----)"
// tgid column, 4-character flags, and events this package only counts.
func TestSystraceText(t *testing.T) {
	tests := []struct {
		rel      string
		switches int
		unknown  map[string]int64
	}{
		{"Parsing__sched_blocked_systrace_sched_blocked_reason/trace.systrace", 4, map[string]int64{"sched_blocked_reason": 2}},
		{"ProcessTracking__unknown_thread_name_tracking/trace.systrace", 1, map[string]int64{"sched_wake_idle_without_ipi": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.rel, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("../../fixtures/perfetto-conformance", tc.rel))
			if err != nil {
				t.Fatal(err)
			}
			if !Sniff(data) {
				t.Errorf("Sniff = false, want true")
			}
			evs, r := readAll(t, tc.rel, data, parse.Options{})
			if got := countKinds(evs)["sched_switch"]; got != tc.switches || len(evs) != tc.switches {
				t.Errorf("got %d events, %d switches; want %d switches only", len(evs), got, tc.switches)
			}
			if got := r.Meta().Unknown; !maps.Equal(got, tc.unknown) {
				t.Errorf("Meta.Unknown = %v, want %v", got, tc.unknown)
			}
			for _, e := range evs {
				if e.TGID != -1 {
					t.Errorf("TGID = %d, want -1 for an unknown tgid", e.TGID)
				}
			}
		})
	}
}
