package perfetto

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// writeTrace writes events (and the meta's tasks) with the Writer.
func writeTrace(tb testing.TB, evs []timeline.Event, m *parse.Meta, strs *timeline.Strings, compact bool) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{CompactSched: compact, Strings: strs, Topology: m.Topology, Kernel: m.Kernel, NCPU: m.NCPU})
	if err != nil {
		tb.Fatal(err)
	}
	for tid, ti := range m.Tasks {
		if err := w.Task(tid, ti.TGID, ti.Comm); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range evs {
		if err := w.Add(&evs[i]); err != nil {
			tb.Fatalf("Add(%+v): %v", evs[i], err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// rtSource is where the original events come from.
type rtSource struct {
	name    string
	path    string
	text    bool // read with ingest/ftrace
	compact bool // the source itself is compact_sched
}

var rtSources = []rtSource{
	{"twin-plain", twinDir + "trace.pftrace.zst", false, false},
	{"twin-compact", twinDir + "trace-compact.pftrace.zst", false, true},
	{"tracebox-hackbench-compact", "../../fixtures/real/perfetto-tracebox-hackbench-compact/trace.pftrace.zst", false, true},
	{"tracebox-hackbench-plain", "../../fixtures/real/perfetto-tracebox-hackbench-plain/trace.pftrace.zst", false, false},
	{"tracebox-oracle-busy", "../../fixtures/real/perfetto-tracebox-oracle-busy/trace.pftrace.zst", false, true},
	{"text-hackbench-cyclictest", twinText, true, false},
	{"text-oracle-busy", "../../fixtures/real/ftrace-oracle-busy/trace.txt.zst", true, false},
	{"text-overflow", "../../fixtures/real/ftrace-overflow/trace.txt.gz", true, false},
	{"text-pipe-lost", "../../fixtures/real/ftrace-pipe-lost/trace.txt.gz", true, false},
}

// TestRoundTrip writes the events of every real fixture with the Writer,
// plain and compact, and reads them back. They must be identical but for
// what the encoding cannot hold, each difference checked against its
// reason:
//
//   - the waker comm of sched_waking/wakeup/wakeup_new, which Perfetto does
//     not record, when the waker is not the CPU's running task (the reader
//     then names it from the whole trace, which depends on bundle order);
//   - from text: the count of a lost-events record (a bundle flag has none;
//     it goes to FtraceStats), the Start of a buffer start without one (the
//     first bundle's previous_bundle_end_timestamp must be a time), the
//     per-event TGID (only sched_process_exit carries one);
//   - compact: the prev side of a switch (unknown on a CPU's first switch,
//     the previous next where a switch was lost), switch irq context,
//     the waker of sched_waking, and the order of events at one timestamp.
func TestRoundTrip(t *testing.T) {
	for _, src := range rtSources {
		for _, compact := range []bool{false, true} {
			name := src.name + "/plain"
			if compact {
				name = src.name + "/compact"
			}
			t.Run(name, func(t *testing.T) {
				strs := timeline.NewStrings()
				var orig []timeline.Event
				var meta *parse.Meta
				if src.text {
					orig, meta = readText(t, src.path, strs)
					if meta.Kernel == "" {
						meta.Kernel = "6.18.44-fc-v1045" // fixtures/README.md; the text does not say
					}
					if meta.NCPU == 0 { // trace_pipe has no "#P:N" header
						for _, e := range orig {
							meta.NCPU = max(meta.NCPU, int(e.CPU)+1)
						}
					}
					meta.Topology = topology.Symmetric(meta.NCPU)
					meta.Topology.Source = "trace"
				} else {
					var r *Reader
					orig, r = mustDecode(t, readFixture(t, src.path), parse.Options{Strings: strs})
					meta = r.Meta()
				}
				data := writeTrace(t, orig, meta, strs, compact)
				got, r := mustDecode(t, data, parse.Options{Name: name, Strings: strs})
				checkMeta(t, r.Meta(), meta)
				diffs := compareRoundTrip(t, orig, got, src.text, compact)
				t.Logf("%d events, %d bytes; allowed differences: %v", len(orig), len(data), diffs)
			})
		}
	}
}

func checkMeta(t *testing.T, got, want *parse.Meta) {
	t.Helper()
	if got.Kernel != want.Kernel || got.NCPU != want.NCPU {
		t.Errorf("Kernel %q NCPU %d, want %q %d", got.Kernel, got.NCPU, want.Kernel, want.NCPU)
	}
	if (got.Topology == nil) != (want.Topology == nil) {
		t.Fatalf("Topology %v, want %v", got.Topology, want.Topology)
	}
	if want.Topology != nil {
		if len(got.Topology.CPUs) != len(want.Topology.CPUs) {
			t.Errorf("Topology has %d CPUs, want %d", len(got.Topology.CPUs), len(want.Topology.CPUs))
		}
		for i, c := range want.Topology.CPUs {
			if i < len(got.Topology.CPUs) && (got.Topology.CPUs[i].ID != c.ID || got.Topology.CPUs[i].Capacity != c.Capacity) {
				t.Errorf("CPU %d = %+v, want %+v", i, got.Topology.CPUs[i], c)
			}
		}
	}
	for tid, ti := range want.Tasks {
		if g := got.Tasks[tid]; g != ti {
			t.Errorf("task %d = %+v, want %+v", tid, g, ti)
		}
	}
	if len(got.Tasks) != len(want.Tasks) {
		t.Errorf("%d tasks, want %d", len(got.Tasks), len(want.Tasks))
	}
}

func compareRoundTrip(t *testing.T, orig, got []timeline.Event, text, compact bool) map[string]int {
	t.Helper()
	diffs := map[string]int{}
	oc, gc := byCPU(orig), byCPU(got)
	if len(got) != len(orig) {
		t.Fatalf("%d events, want %d", len(got), len(orig))
	}
	for cpu, os := range oc {
		gs := gc[cpu]
		if len(gs) != len(os) {
			t.Fatalf("CPU %d: %d events, want %d", cpu, len(gs), len(os))
		}
		// The running task before each event, by the original switches.
		running := make([]timeline.TID, len(os))
		cur := timeline.NoTID
		for i, e := range os {
			running[i] = cur
			if e.Kind == timeline.KindSwitch {
				cur = e.Task
			}
		}
		if compact {
			// Compare within runs of one timestamp regardless of order;
			// keep each event's running task with it.
			type pair struct {
				e   timeline.Event
				run timeline.TID
			}
			ps := make([]pair, len(os))
			for i := range os {
				ps[i] = pair{os[i], running[i]}
			}
			sortRunsBy(len(ps), func(i int) timeline.Event { return ps[i].e }, func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
			os = make([]timeline.Event, len(ps))
			for i := range ps {
				os[i], running[i] = ps[i].e, ps[i].run
			}
			gs = append([]timeline.Event(nil), gs...)
			sortRuns(gs)
		}
		for i := range os {
			o, g := os[i], gs[i]
			allow := func(reason string, ok bool) bool {
				if ok {
					diffs[reason]++
				}
				return ok
			}
			if compact && o.Kind == timeline.KindWaking {
				if allow("waker of sched_waking", g.Other == timeline.NoTID && g.OComm == timeline.NoComm && (o.Other != g.Other || o.OComm != g.OComm)) {
					g.Other, g.OComm = o.Other, o.OComm
				}
			}
			if wakeFamily(o.Kind) && g.OComm != o.OComm && o.Other != running[i] {
				diffs["waker comm of a waker not running"]++
				g.OComm = o.OComm
			}
			if text {
				if wakeFamily(o.Kind) && g.OComm != o.OComm && o.Other == running[i] {
					// The text prints saved_cmdlines' comm; the reader the
					// comm the running task was switched in with.
					diffs["waker comm: text header"]++
					g.OComm = o.OComm
				}
				if o.Kind == timeline.KindLost && allow("lost count", g.Arg == -1 && o.Arg != -1) {
					g.Arg = o.Arg
				}
				if o.Kind == timeline.KindBufferStart && allow("buffer start Start", o.Start == timeline.NoTime && g.Start == o.Time) {
					g.Start = o.Start
				}
				if o.Kind != timeline.KindExit && allow("TGID", g.TGID == -1 && o.TGID != -1) {
					g.TGID = o.TGID
				}
			}
			if compact {
				switch o.Kind {
				case timeline.KindSwitch:
					if allow("switch irq context", g.Ctx == timeline.CtxUnknown && o.Ctx != timeline.CtxUnknown) {
						g.Ctx = o.Ctx
					}
					if g.Other != o.Other || g.OComm != o.OComm || g.OPrio != o.OPrio {
						if allow("prev of a CPU's first switch", g.Other == timeline.NoTID) ||
							allow("prev after a lost switch", o.Other != running[i] && g.Other == running[i]) ||
							allow("prev from an event's pid after a lost switch, its comm or prio not yet seen",
								o.Other != running[i] && g.Other == o.Other && (g.OComm == timeline.NoComm || g.OPrio == -1)) ||
							allow("inferred prev comm (rename or exec in lost data, text comms)", g.Other == o.Other && g.OPrio == o.OPrio) {
							g.Other, g.OComm, g.OPrio = o.Other, o.OComm, o.OPrio
						}
					}
				}
			}
			if g != o {
				t.Errorf("CPU %d event %d:\n got %+v\nwant %+v", cpu, i, g, o)
				if t.Failed() && strings.Count(t.Name(), "/") > 0 && diffs["errors"] > 10 {
					t.FailNow()
				}
				diffs["errors"]++
			}
		}
	}
	return diffs
}

// sortRunsBy is sortRuns over an indexed collection.
func sortRunsBy(n int, at func(int) timeline.Event, swap func(i, j int)) {
	less := func(x, y timeline.Event) bool {
		if x.Kind != y.Kind {
			return x.Kind < y.Kind
		}
		if x.Task != y.Task {
			return x.Task < y.Task
		}
		return x.Arg < y.Arg
	}
	for i := 0; i < n; {
		j := i + 1
		for j < n && at(j).Time == at(i).Time {
			j++
		}
		// insertion sort: runs are short and it is stable
		for a := i + 1; a < j; a++ {
			for b := a; b > i && less(at(b), at(b-1)); b-- {
				swap(b, b-1)
			}
		}
		i = j
	}
}

// TestWriter covers the Writer's options and errors on hand-made events.
func TestWriter(t *testing.T) {
	strs := timeline.NewStrings()
	comm := func(s string) timeline.CommID { return strs.IDString(s) }
	ev := func(k timeline.Kind, cpu timeline.CPU, tm timeline.Time) timeline.Event {
		var e timeline.Event
		e.Reset()
		e.Kind, e.CPU, e.Time = k, cpu, tm
		return e
	}
	sw := func(cpu timeline.CPU, tm timeline.Time, prev, next timeline.TID, st timeline.State) timeline.Event {
		e := ev(timeline.KindSwitch, cpu, tm)
		e.Other, e.Task, e.State, e.OComm, e.Comm, e.Prio, e.OPrio = prev, next, st, comm("p"), comm("n"), 120, 120
		return e
	}
	t.Run("meta, tasks, lost, buffer start", func(t *testing.T) {
		var buf bytes.Buffer
		topo := &topology.Topology{Source: "trace", CPUs: []topology.CPU{{ID: 0, Capacity: 512}, {ID: 1, Capacity: 1024}}}
		w, err := NewWriter(&buf, WriterOptions{Strings: strs, Topology: topo, Kernel: "6.1.0", NCPU: 2})
		if err != nil {
			t.Fatal(err)
		}
		bs := ev(timeline.KindBufferStart, 1, 50)
		bs.Start = 40
		lost := ev(timeline.KindLost, 0, 300)
		lost.Start, lost.Arg = 200, 77
		endLost := ev(timeline.KindLost, 1, 400)
		endLost.Start, endLost.Arg = 400, 5
		in := []timeline.Event{sw(0, 100, 1, 2, timeline.StateInterrupt), bs, sw(1, 50, 3, 4, timeline.StateIdle),
			sw(0, 200, 2, 1, timeline.StatePreempted), lost, sw(0, 300, 1, 2, timeline.StateUninterr), sw(1, 400, 4, 3, 0), endLost}
		for i := range in {
			if err := w.Add(&in[i]); err != nil {
				t.Fatal(err)
			}
		}
		w.Task(2, 2, "n")
		w.Task(5, 2, "worker")
		w.Task(5, 2, "worker") // unchanged: written once
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		evs, r := mustDecode(t, buf.Bytes(), parse.Options{Strings: strs})
		compareBriefs(t, briefs(evs), []brief{
			{timeline.KindSwitch, 0, 100, nt, 2, 1, 0},
			{timeline.KindSwitch, 0, 200, nt, 1, 2, 0},
			// CPU 1's buffer is flushed by its lost record.
			{timeline.KindBufferStart, 1, 50, 40, -1, -1, 0},
			{timeline.KindSwitch, 1, 50, nt, 4, 3, 0},
			{timeline.KindSwitch, 1, 400, nt, 3, 4, 0},
			{timeline.KindLost, 0, 300, 200, -1, -1, -1},
			{timeline.KindSwitch, 0, 300, nt, 2, 1, 0},
			{timeline.KindLost, 1, 400, 400, -1, -1, -1},
		})
		m := r.Meta()
		if m.Kernel != "6.1.0" || m.NCPU != 2 || m.Topology == nil || m.Topology.CPUs[0].Capacity != 512 || m.Topology.CPUs[1].Cluster != 1 {
			t.Errorf("Meta Kernel %q NCPU %d Topology %+v", m.Kernel, m.NCPU, m.Topology)
		}
		if m.Tasks[5] != (parse.TaskInfo{TGID: 2, Comm: "worker"}) || r.Processes()[2].Cmdline[0] != "n" {
			t.Errorf("tasks %+v processes %+v", m.Tasks, r.Processes())
		}
		if len(m.Warnings) != 2 {
			t.Errorf("warnings %q, want two about the lost counts in the stats", m.Warnings)
		}
	})
	t.Run("record start", func(t *testing.T) {
		// A replayed run marks each CPU's record start with a buffer
		// start; with RecordStart it reads back as a whole trace, not as
		// one whose CPU 1 lost its earlier bundles.
		for _, rs := range []bool{false, true} {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, WriterOptions{Strings: strs, NCPU: 2, RecordStart: rs})
			if err != nil {
				t.Fatal(err)
			}
			in := []timeline.Event{ev(timeline.KindBufferStart, 0, 10), ev(timeline.KindBufferStart, 1, 10), sw(0, 10, 1, 2, timeline.StateInterrupt), sw(1, 20, 3, 4, timeline.StateIdle)}
			for i := range in {
				if err := w.Add(&in[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			_, r := mustDecode(t, buf.Bytes(), parse.Options{Strings: strs})
			want := timeline.CoverageLost
			if rs {
				want = timeline.CoverageComplete
			}
			if got := r.Meta().Coverage; got != want {
				t.Errorf("RecordStart %v: coverage %v (%s), want %v", rs, got, r.Meta().CoverageNote, want)
			}
		}
	})
	t.Run("compact intern threshold", func(t *testing.T) {
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, WriterOptions{Strings: strs, CompactSched: true})
		var in []timeline.Event
		for i := 0; i < 200; i++ {
			e := sw(0, timeline.Time(1000+i), timeline.TID(i), timeline.TID(i+1), 0)
			e.Comm = comm("task-" + string(rune('A'+i%100)))
			in = append(in, e)
			if err := w.Add(&e); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		evs, _ := mustDecode(t, buf.Bytes(), parse.Options{Strings: strs})
		if len(evs) != 200 {
			t.Fatalf("%d events, want 200", len(evs))
		}
		for i := range evs {
			if evs[i].Comm != in[i].Comm || evs[i].Task != in[i].Task {
				t.Errorf("event %d: comm %q task %d, want %q %d", i, strs.Get(evs[i].Comm), evs[i].Task, strs.Get(in[i].Comm), in[i].Task)
			}
		}
	})
	t.Run("errors", func(t *testing.T) {
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, WriterOptions{Strings: strs, Kernel: "4.9.0"})
		a, b := sw(0, 100, 1, 2, 0), sw(0, 50, 2, 1, 0)
		if err := w.Add(&a); err != nil {
			t.Fatal(err)
		}
		if err := w.Add(&b); !errors.Is(err, parse.ErrBackwards) {
			t.Errorf("backwards Add: %v, want ErrBackwards", err)
		}
		c := sw(-1, 200, 1, 2, 0)
		if err := w.Add(&c); err == nil {
			t.Errorf("Add on CPU -1: no error")
		}
		d := sw(0, 200, 1, 2, timeline.StateParked|timeline.StateIdle|timeline.StateNoLoad)
		if err := w.Add(&d); err != nil {
			t.Errorf("4.9 layout P|I|N: %v", err)
		}
		u := ev(timeline.KindUnknown, 0, 300)
		if err := w.Add(&u); err == nil {
			t.Errorf("Add of KindUnknown: no error")
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Add(&a); err == nil {
			t.Errorf("Add after Close: no error")
		}
		var buf2 bytes.Buffer
		w2, _ := NewWriter(&buf2, WriterOptions{Strings: strs})
		k := sw(0, 10, 1, 2, timeline.StateWakeKill)
		if err := w2.Add(&k); err == nil {
			t.Errorf("K in the 4.14+ layout: no error")
		}
	})
}
