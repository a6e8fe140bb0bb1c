package tracedat_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/schedlens/schedlens/ingest/ftrace"
	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/ingest/tracedat"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
)

// asText turns a trace.dat event into what `trace-cmd report` prints of
// it: times rounded to the nearest microsecond (libtraceevent's default
// "%6.1000d" time print rounds),
// and no execution context (the default report has no flags column).
func asText(ev timeline.Event) timeline.Event {
	ev.Time = usec(ev.Time)
	if ev.Start != timeline.NoTime {
		ev.Start = usec(ev.Start)
	}
	ev.Ctx = timeline.CtxUnknown
	if ev.Kind == timeline.KindSwitch {
		ev.State = pluginState(ev.State)
	}
	return ev
}

// pluginState is the prev_state trace-cmd's sched_switch plugin prints for
// the kernel's (libtraceevent plugin_sched_switch.c: bit i of the value
// prints as "SDTtZXxW"[i], none as R): the kernel's X (0x10) shows as Z, Z
// (0x20) as X, P (0x40) as x, I (0x80) as W, R+ as R. The trace.dat reader
// gives the kernel's letters, from sched_switch's own print fmt.
func pluginState(s timeline.State) timeline.State {
	m := []struct{ kernel, plugin timeline.State }{
		{timeline.StateInterrupt, timeline.StateInterrupt}, {timeline.StateUninterr, timeline.StateUninterr},
		{timeline.StateStopped, timeline.StateStopped}, {timeline.StateTraced, timeline.StateTraced},
		{timeline.StateExitDead, timeline.StateZombie}, {timeline.StateZombie, timeline.StateExitDead},
		{timeline.StateParked, timeline.StateDead}, {timeline.StateIdle, timeline.StateWaking},
	}
	var out timeline.State
	for _, x := range m {
		if s&x.kernel != 0 {
			out |= x.plugin
		}
	}
	return out
}

func usec(t timeline.Time) timeline.Time { return (t + 500) / 1000 * 1000 }

// textLike wraps the trace.dat reader as its report text would read.
type textLike struct {
	*tracedat.Reader
	meta *parse.Meta
}

func (t *textLike) Next(ev *timeline.Event) error {
	err := t.Reader.Next(ev)
	if err == nil {
		*ev = asText(*ev)
	}
	return err
}

func (t *textLike) Meta() *parse.Meta {
	m := *t.Reader.Meta()
	m.Coverage, m.CoverageNote = t.meta.Coverage, t.meta.CoverageNote
	return &m
}

func readers(t *testing.T) (*tracedat.Reader, *ftrace.Reader) {
	strs := timeline.NewStrings()
	bin, err := tracedat.NewReader(bytes.NewReader(fixture(t, "trace.dat.zst")), parse.Options{Name: "trace.dat", Strings: strs})
	if err != nil {
		t.Fatal(err)
	}
	txt, err := ftrace.NewReader(bytes.NewReader(fixture(t, "report.txt.zst")), parse.Options{Name: "report.txt", Strings: strs})
	if err != nil {
		t.Fatal(err)
	}
	return bin, txt
}

// TestTwinEvents: every event of the trace.dat equals the one the ftrace
// reader makes of the same capture's `trace-cmd report` text, in the same
// order, once cut to what the text prints.
func TestTwinEvents(t *testing.T) {
	bin, txt := readers(t)
	be, te := drain(t, bin), drain(t, txt)
	if len(be) != len(te) {
		t.Fatalf("trace.dat has %d events, its report text %d", len(be), len(te))
	}
	exactNs, ctx := 0, map[timeline.Context]int{}
	for i := range be {
		if got := asText(be[i]); got != te[i] {
			t.Fatalf("event %d:\n trace.dat %+v\n report    %+v", i, got, te[i])
		}
		if be[i].Time%1000 != 0 {
			exactNs++
		}
		ctx[be[i].Ctx]++
	}
	// The binary is more exact: nanosecond stamps (the text prints µs)
	// and each event's context from common_flags (the text has no flags
	// column).
	if exactNs < len(be)/2 {
		t.Errorf("only %d of %d trace.dat stamps have sub-µs digits", exactNs, len(be))
	}
	if ctx[timeline.CtxUnknown] != 0 || ctx[timeline.CtxTask] == 0 {
		t.Errorf("contexts %v: want every event's context known", ctx)
	}
	m := bin.Meta()
	if m.NCPU != 2 || m.Kernel != "6.18.44-fc-v1045" || m.Clock != "local" || m.Format != tracedat.Format {
		t.Errorf("meta NCPU %d Kernel %q Clock %q Format %q; want 2, 6.18.44-fc-v1045 (UNAME option), local, trace.dat", m.NCPU, m.Kernel, m.Clock, m.Format)
	}
}

// TestTwinTasks pins the acceptance: the tasks table (metrics.Account over
// the default window, as `schedlens tasks --format json` prints it) of the
// trace.dat read as text equals the report text's, byte for byte; and read
// as it is, the trace.dat proves its window from the first event (the
// CPUSTAT options: nothing overwritten or dropped, every read event in the
// file), where the text can only start at the latest CPU start.
func TestTwinTasks(t *testing.T) {
	bin, txt := readers(t)
	ttl, tm := build(t, txt)
	btl, _ := build(t, &textLike{Reader: bin, meta: tm})
	js := func(tl *timeline.Timeline) []byte {
		b, err := json.MarshalIndent(metrics.Account(tl, metrics.DefaultWindow(tl)).Tasks, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if a, b := js(btl), js(ttl); !bytes.Equal(a, b) {
		t.Fatalf("tasks differ: trace.dat as text %d bytes, report text %d bytes", len(a), len(b))
	}

	bin2, _ := readers(t)
	ntl, nm := build(t, bin2)
	if nm.Coverage != timeline.CoverageComplete || ntl.ValidStartRule != timeline.StartFirstEvent {
		t.Errorf("coverage %v rule %v (%s); want complete, first-event", nm.Coverage, ntl.ValidStartRule, nm.CoverageNote)
	}
	if ttl.ValidStartRule != timeline.StartLatestCPU {
		t.Errorf("text rule %v, want latest-cpu-start", ttl.ValidStartRule)
	}
	// The text's valid window starts at CPU 1's first event, 6.092 ms in.
	if ntl.Start != 575448244158 || ntl.ValidStart != ntl.Start || ttl.ValidStart != 575454336000 {
		t.Errorf("binary start %d valid %d, text valid %d; want 575448244158 twice and 575454336000", ntl.Start, ntl.ValidStart, ttl.ValidStart)
	}
	// With nanosecond stamps but the text's window rule, event counts per
	// task agree and times differ by at most the µs rounding of the stamps
	// involved.
	bin3, _ := readers(t)
	xtl, _ := build(t, &nsText{Reader: bin3, meta: tm})
	bt := metrics.Account(xtl, metrics.DefaultWindow(xtl)).Tasks
	tt := map[timeline.TaskID]metrics.TaskTimes{}
	for _, x := range metrics.Account(ttl, metrics.DefaultWindow(ttl)).Tasks {
		tt[x.ID] = x
	}
	if len(bt) != len(tt) {
		t.Fatalf("%d tasks from trace.dat, %d from text", len(bt), len(tt))
	}
	differ := 0
	for _, a := range bt {
		b := tt[a.ID]
		if a.RunNs != b.RunNs {
			differ++
		}
		if a.SwitchesIn != b.SwitchesIn || a.Wakeups != b.Wakeups || a.Preemptions != b.Preemptions || a.Migrations != b.Migrations {
			t.Errorf("task %d: counts differ: %+v vs %+v", a.PID, a, b)
			continue
		}
		tol := int64(2*(a.SwitchesIn+a.Wakeups+a.Preemptions)+4) * 1000
		if d := a.RunNs - b.RunNs; d > tol || d < -tol {
			t.Errorf("task %d: run %d vs %d, more than %d ns apart", a.PID, a.RunNs, b.RunNs, tol)
		}
	}
	if differ == 0 {
		t.Error("no task's run time differs in the nanoseconds: the binary's stamps were not used")
	}
}

// nsText is the trace.dat with its own stamps and the text's window rule.
type nsText struct {
	*tracedat.Reader
	meta *parse.Meta
}

func (t *nsText) Meta() *parse.Meta {
	m := *t.Reader.Meta()
	m.Coverage, m.CoverageNote = t.meta.Coverage, t.meta.CoverageNote
	return &m
}
