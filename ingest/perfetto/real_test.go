package perfetto

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"sort"
	"testing"

	"github.com/schedlens/schedlens/ingest/ftrace"
	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

const (
	twinDir  = "../../fixtures/real/perfetto-from-ftrace-hackbench-cyclictest/"
	twinText = "../../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz"
)

// readText reads a text trace with the ftrace reader.
func readText(tb testing.TB, path string, strs *timeline.Strings) ([]timeline.Event, *parse.Meta) {
	tb.Helper()
	r, err := ftrace.NewReader(bytes.NewReader(readFixture(tb, path)), parse.Options{Name: path, Strings: strs})
	if err != nil {
		tb.Fatal(err)
	}
	var evs []timeline.Event
	var ev timeline.Event
	for {
		err := r.Next(&ev)
		if errors.Is(err, io.EOF) {
			return evs, r.Meta()
		}
		if err != nil {
			tb.Fatalf("reading %s: %v", path, err)
		}
		evs = append(evs, ev)
	}
}

// byCPU splits events into per-CPU sequences, keeping their order.
func byCPU(evs []timeline.Event) map[timeline.CPU][]timeline.Event {
	m := map[timeline.CPU][]timeline.Event{}
	for _, e := range evs {
		m[e.CPU] = append(m[e.CPU], e)
	}
	return m
}

func wakeFamily(k timeline.Kind) bool {
	return k == timeline.KindWaking || k == timeline.KindWakeup || k == timeline.KindWakeupNew
}

// laterNames returns, per task, every comm the events give it (switch
// sides, payload comms, renames): the comms the kernel's saved_cmdlines
// could print for it.
func laterNames(evs []timeline.Event) map[timeline.TID]map[timeline.CommID]bool {
	m := map[timeline.TID]map[timeline.CommID]bool{}
	add := func(t timeline.TID, c timeline.CommID) {
		if m[t] == nil {
			m[t] = map[timeline.CommID]bool{}
		}
		m[t][c] = true
	}
	for _, e := range evs {
		add(e.Task, e.Comm)
		if e.Kind == timeline.KindSwitch || e.Kind == timeline.KindFork {
			add(e.Other, e.OComm)
		}
	}
	return m
}

// wakerCommExplained reports whether a waking-family OComm difference is
// one of the documented ones. Perfetto does not record the waker's comm
// (FtraceEvent has only its pid); the reader infers it. The text prints
// the comm the kernel's saved_cmdlines holds when the trace is read: "<idle>"
// for pid 0, and the newest comm of a task that renamed or exec'd later.
func wakerCommExplained(got, want timeline.Event, strs *timeline.Strings, names map[timeline.TID]map[timeline.CommID]bool) string {
	switch {
	case want.Other == 0 && strs.Get(want.OComm) == "<idle>":
		return "idle"
	case got.OComm == timeline.NoComm:
		return "unnamed"
	case names[want.Other][want.OComm] && names[want.Other][got.OComm]:
		return "renamed"
	}
	return ""
}

// TestTextTwinPlain: the plain Perfetto encoding of the
// ftrace-hackbench-cyclictest capture yields the text reader's events, CPU
// by CPU, field by field; the only differences are the inferred waker comms.
func TestTextTwinPlain(t *testing.T) {
	strs := timeline.NewStrings()
	want, wantMeta := readText(t, twinText, strs)
	got, r := mustDecode(t, readFixture(t, twinDir+"trace.pftrace.zst"), parse.Options{Name: "trace.pftrace", Strings: strs})
	if len(got) != len(want) {
		t.Fatalf("events = %d, want %d", len(got), len(want))
	}
	if m := r.Meta(); m.NCPU != wantMeta.NCPU || m.Kernel != "6.18.44-fc-v1045" || m.Format != "perfetto" {
		t.Errorf("Meta NCPU %d Kernel %q Format %q, want %d, 6.18.44-fc-v1045, perfetto", m.NCPU, m.Kernel, m.Format, wantMeta.NCPU)
	}
	names := laterNames(want)
	gc, wc := byCPU(got), byCPU(want)
	reasons := map[string]int{}
	for cpu, ws := range wc {
		gs := gc[cpu]
		if len(gs) != len(ws) {
			t.Fatalf("CPU %d: %d events, want %d", cpu, len(gs), len(ws))
		}
		for i := range ws {
			g, w := gs[i], ws[i]
			if wakeFamily(w.Kind) && g.OComm != w.OComm {
				why := wakerCommExplained(g, w, strs, names)
				if why == "" {
					t.Errorf("CPU %d event %d (%v at %d): waker comm %q, want %q", cpu, i, w.Kind, w.Time, strs.Get(g.OComm), strs.Get(w.OComm))
				}
				reasons[why]++
				g.OComm = w.OComm
			}
			if g != w {
				t.Errorf("CPU %d event %d:\n got %+v\nwant %+v", cpu, i, g, w)
			}
		}
	}
	t.Logf("waker comm differences by reason: %v", reasons)
	if n := reasons["idle"] + reasons["unnamed"] + reasons["renamed"]; n > 25 {
		t.Errorf("%d waker comm differences, want at most 25 (21 when written)", n)
	}
}

// sortRuns sorts each run of events with one timestamp by kind, task and
// the rest, so that two encodings that order ties differently compare
// equal. compact_sched keeps no order between its columns and the plain
// events at one timestamp (the text has microseconds, so ties are common).
func sortRuns(evs []timeline.Event) {
	for i := 0; i < len(evs); {
		j := i + 1
		for j < len(evs) && evs[j].Time == evs[i].Time {
			j++
		}
		run := evs[i:j]
		sort.SliceStable(run, func(a, b int) bool {
			x, y := run[a], run[b]
			if x.Kind != y.Kind {
				return x.Kind < y.Kind
			}
			if x.Task != y.Task {
				return x.Task < y.Task
			}
			return x.Arg < y.Arg
		})
		i = j
	}
}

// TestTextTwinCompact: the compact_sched encoding of the same capture
// yields the same switches and wakings, except what the encoding cannot
// carry: a switch's prev side is the CPU's previous next (unknown for the
// CPU's first switch, wrong where the capture lost a switch), switches have
// no irq context, and wakings have no waker.
func TestTextTwinCompact(t *testing.T) {
	strs := timeline.NewStrings()
	want, _ := readText(t, twinText, strs)
	got, r := mustDecode(t, readFixture(t, twinDir+"trace-compact.pftrace.zst"), parse.Options{Name: "trace-compact.pftrace", Strings: strs})
	if len(got) != len(want) {
		t.Fatalf("events = %d, want %d", len(got), len(want))
	}
	names := laterNames(want)
	gc, wc := byCPU(got), byCPU(want)
	var firstSwitch, missedSwitch, prevComm, wakerComm int
	for cpu, ws := range wc {
		gs := gc[cpu]
		if len(gs) != len(ws) {
			t.Fatalf("CPU %d: %d events, want %d", cpu, len(gs), len(ws))
		}
		sortRuns(gs)
		wsSorted := append([]timeline.Event(nil), ws...)
		sortRuns(wsSorted)
		for i := range wsSorted {
			g, w := gs[i], wsSorted[i]
			switch w.Kind {
			case timeline.KindSwitch:
				if g.Ctx != timeline.CtxUnknown {
					t.Errorf("CPU %d switch at %d: Ctx %v, want unknown (compact_sched has no flags for switches)", cpu, w.Time, g.Ctx)
				}
				g.Ctx = w.Ctx
				if g.Other != w.Other || g.OPrio != w.OPrio {
					switch {
					case g.Other == timeline.NoTID:
						firstSwitch++
					default:
						missedSwitch++
					}
					g.Other, g.OComm, g.OPrio = w.Other, w.OComm, w.OPrio
				}
				if g.OComm != w.OComm {
					prevComm++
					t.Errorf("CPU %d switch at %d: prev comm %q, want %q", cpu, w.Time, strs.Get(g.OComm), strs.Get(w.OComm))
					g.OComm = w.OComm
				}
			case timeline.KindWaking:
				if g.Other != timeline.NoTID || g.OComm != timeline.NoComm {
					t.Errorf("CPU %d waking at %d: waker %d %q, want none (compact_sched does not record it)", cpu, w.Time, g.Other, strs.Get(g.OComm))
				}
				g.Other, g.OComm = w.Other, w.OComm
			case timeline.KindWakeup, timeline.KindWakeupNew:
				if g.OComm != w.OComm {
					if wakerCommExplained(g, w, strs, names) == "" && g.OComm != timeline.NoComm {
						t.Errorf("CPU %d %v at %d: waker comm %q, want %q", cpu, w.Kind, w.Time, strs.Get(g.OComm), strs.Get(w.OComm))
					}
					wakerComm++
					g.OComm = w.OComm
				}
			}
			if g != w {
				t.Errorf("CPU %d event %d:\n got %+v\nwant %+v", cpu, i, g, w)
			}
		}
	}
	// README of the fixture: the first switch of each of the 2 CPUs loses
	// its prev side, and 13 switches follow a switch the capture lost. For
	// 2 of them a sched_wakeup in between names, by its pid, the task that
	// ran (issue 14 item 2): their prev is right.
	if firstSwitch != 2 {
		t.Errorf("switches with unknown prev = %d, want 2", firstSwitch)
	}
	if missedSwitch != 11 || r.curFromPid != 2 {
		t.Errorf("switches whose inferred prev differs = %d, want 11; prevs taken from an event's pid %d, want 2", missedSwitch, r.curFromPid)
	}
	t.Logf("first switches %d, lost-switch prevs %d, prev comm diffs %d, wakeup waker comm diffs %d", firstSwitch, missedSwitch, prevComm, wakerComm)
}

// TestTextTwinCounts checks the per-kind counts the fixture's README gives
// for both encodings.
func TestTextTwinCounts(t *testing.T) {
	want := map[timeline.Kind]int{
		timeline.KindSwitch: 22453, timeline.KindWaking: 17227, timeline.KindWakeup: 17227,
		timeline.KindWakeupNew: 171, timeline.KindMigrate: 1248, timeline.KindFork: 171,
		timeline.KindExec: 10, timeline.KindExit: 171, timeline.KindFree: 169,
		timeline.KindNewTask: 171, timeline.KindRename: 10, timeline.KindIdle: 4,
	}
	for _, name := range []string{"trace.pftrace.zst", "trace-compact.pftrace.zst"} {
		t.Run(name, func(t *testing.T) {
			evs, r := mustDecode(t, readFixture(t, twinDir+name), parse.Options{Name: name})
			got := kindCounts(evs)
			for k, n := range want {
				if got[k] != n {
					t.Errorf("%v: %d events, want %d", k, got[k], n)
				}
			}
			if len(evs) != 59032 {
				t.Errorf("events = %d, want 59032", len(evs))
			}
			m := r.Meta()
			if len(r.Processes()) != 170 || len(m.Tasks) != 171 {
				t.Errorf("process tree: %d processes, %d tasks, want 170, 171", len(r.Processes()), len(m.Tasks))
			}
			if ti := m.Tasks[12922]; ti.TGID != 12916 || ti.Comm != "cyclictest" {
				t.Errorf("task 12922 = %+v, want tgid 12916 cyclictest", ti)
			}
		})
	}
}

// TestTracebox decodes the real tracebox recordings and checks what can be
// checked against trace_processor's figures (tp-summary.csv, tp-stats.csv,
// tp-threads.csv): sched slice count, first slice start and last slice end,
// compact_sched skipped events, mismatched switches, and each thread's
// running time and slice count.
func TestTracebox(t *testing.T) {
	for _, name := range []string{"perfetto-tracebox-hackbench-compact", "perfetto-tracebox-hackbench-plain", "perfetto-tracebox-oracle-busy"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("../../fixtures/real", name)
			evs, r := mustDecode(t, readFixture(t, filepath.Join(dir, "trace.pftrace.zst")), parse.Options{Name: name})
			m := r.Meta()
			if m.Kernel != "6.18.44-fc-v1045" || m.NCPU != 2 || m.Topology == nil || len(m.Topology.CPUs) != 2 || m.Clock != "boot" {
				t.Errorf("Meta Kernel %q NCPU %d Topology %v Clock %q, want 6.18.44-fc-v1045, 2, 2 CPUs, boot", m.Kernel, m.NCPU, m.Topology, m.Clock)
			}
			stats := map[string]int64{}
			_, rows := readCSV(t, filepath.Join(dir, "tp-stats.csv"))
			for _, row := range rows {
				if row[1] == "[NULL]" {
					stats[row[0]] = atoi(t, row[3])
				}
			}
			slices, st := computeSlices(evs, sliceOptions{dropBefore: timeline.NoTime, rawBefore: timeline.NoTime})
			if int64(st.seedOnly) != stats["compact_sched_switch_skipped"] {
				t.Errorf("switches with unknown prev = %d, want compact_sched_switch_skipped %d", st.seedOnly, stats["compact_sched_switch_skipped"])
			}
			// In compact_sched trace_processor takes each switch's prev to be
			// the CPU's last next and so never sees a missing switch; the
			// reader also reads the pid of the CPU's plain events (the task
			// current there) and, where it contradicts the last next, takes
			// the switch's prev from it (curFromPid): each is a mismatch.
			if int64(st.mismatched) != stats["mismatched_sched_switch_tids"]+r.curFromPid {
				t.Errorf("mismatched switches = %d, want %d + %d found from event pids", st.mismatched, stats["mismatched_sched_switch_tids"], r.curFromPid)
			}
			// Compact wakings before their CPU's first switch: trace_processor
			// cannot name their waker and drops them.
			seen := map[timeline.CPU]bool{}
			early := 0
			for _, e := range evs {
				switch {
				case e.Kind == timeline.KindSwitch:
					seen[e.CPU] = true
				case e.Kind == timeline.KindWaking && e.Other == timeline.NoTID && !seen[e.CPU]:
					early++
				}
			}
			if int64(early) != stats["compact_sched_waking_skipped"] {
				t.Errorf("compact wakings before their CPU's first switch = %d, want %d", early, stats["compact_sched_waking_skipped"])
			}

			_, sum := readCSV(t, filepath.Join(dir, "tp-summary.csv"))
			first, lastEnd := timeline.Time(1<<62), timeline.Time(0)
			for _, s := range slices {
				first = min(first, s.ts)
				end := s.ts
				if s.dur >= 0 {
					end += timeline.Time(s.dur)
				}
				lastEnd = max(lastEnd, end)
			}
			if got, want := int64(len(slices)), atoi(t, sum[0][0]); got != want {
				t.Errorf("sched slices = %d, want %d", got, want)
			}
			if want := atoi(t, sum[0][2]); int64(first) != want {
				t.Errorf("first slice at %d, want %d", first, want)
			}
			if want := atoi(t, sum[0][3]); int64(lastEnd) != want {
				t.Errorf("last slice end %d, want %d", lastEnd, want)
			}

			type acc struct{ run, n int64 }
			per := map[timeline.TID]*acc{}
			for _, s := range slices {
				a := per[s.tid]
				if a == nil {
					a = &acc{}
					per[s.tid] = a
				}
				a.n++
				if s.dur >= 0 {
					a.run += s.dur
				}
			}
			_, threads := readCSV(t, filepath.Join(dir, "tp-threads.csv"))
			checked, skipped := 0, 0
			for _, row := range threads {
				tid := timeline.TID(atoi(t, row[0]))
				a := per[tid]
				if a == nil {
					a = &acc{}
				}
				if r.curFromPid > 0 && st.missed[tid] {
					// trace_processor charges a missing switch's gap to the
					// task switched in last; schedlens leaves it uncounted.
					skipped++
					continue
				}
				if a.run != atoi(t, row[2]) || a.n != atoi(t, row[3]) {
					t.Errorf("tid %d (%s): run %d ns in %d slices, want %s in %s", tid, row[1], a.run, a.n, row[2], row[3])
				}
				checked++
			}
			t.Logf("%d events, %d slices, %d threads checked against trace_processor; %d beside a switch missing from the compact trace left out", len(evs), len(slices), checked, skipped)
		})
	}
}
