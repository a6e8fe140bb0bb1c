package perfetto

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// TestMachineSysctls: the sysctls a writer is given come back in
// Meta.Sysctls, in order; a value that is not name=value is a warning,
// a wrong wire type a positioned error.
func TestMachineSysctls(t *testing.T) {
	strs := timeline.NewStrings()
	var buf bytes.Buffer
	want := []string{"kernel.sched_autogroup_enabled=0", "kernel.other=7"}
	w, err := NewWriter(&buf, WriterOptions{Strings: strs, NCPU: 1, Sysctls: want})
	if err != nil {
		t.Fatal(err)
	}
	a, b := strs.IDString("a"), strs.IDString("b")
	if err := w.Add(&timeline.Event{Time: 100, CPU: 0, Kind: timeline.KindSwitch, Task: 2, Comm: b, Other: 1, OComm: a, State: timeline.StateInterrupt}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, r, err := decodeAll(buf.Bytes(), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Meta().Sysctls; !slices.Equal(got, want) {
		t.Errorf("Sysctls %q, want %q", got, want)
	}

	ev := packet(bundle(0, switchEv(700, "a", 1, 0, "b", 3)))
	_, r, err = decodeAll(cat(packet(bf(fPacketMachine, sf(fMachineSysctl, "garbage"))), ev), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m := r.Meta(); len(m.Sysctls) != 0 || !slices.ContainsFunc(m.Warnings, func(s string) bool { return strings.Contains(s, `sysctl "garbage" is not name=value`) }) {
		t.Errorf("sysctl without =: Sysctls %q, warnings %q", m.Sysctls, m.Warnings)
	}
	_, _, err = decodeAll(cat(packet(bf(fPacketMachine, vf(fMachineSysctl, 1))), ev), parse.Options{})
	if err == nil || !strings.Contains(err.Error(), "sysctl") {
		t.Errorf("sysctl as a varint: err %v, want a positioned error naming sysctl", err)
	}
}

// TestSignalRoundTrip: signal_generate (FtraceEvent 325) as the writer
// writes and the reader reads it: target, its comm, sender, signal, result
// and group flag.
func TestSignalRoundTrip(t *testing.T) {
	strs := timeline.NewStrings()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Strings: strs, NCPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	in := timeline.Event{Time: 500, CPU: 0, Kind: timeline.KindSignal, Task: 42, Comm: strs.IDString("hog"), Other: 41, OComm: strs.IDString("timeout"),
		Arg: 15, Arg2: 1<<8 | 0, Ctx: timeline.CtxTask, Prio: -1, OPrio: -1, TGID: -1, Start: timeline.NoTime}
	if err := w.Add(&in); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	evs, r, err := decodeAll(buf.Bytes(), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []timeline.Event
	for _, ev := range evs {
		if ev.Kind == timeline.KindSignal {
			got = append(got, ev)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d signal events, want 1 (unknown: %v)", len(got), r.Meta().Unknown)
	}
	g := got[0]
	if g.Time != 500 || g.Task != 42 || g.Other != 41 || g.Arg != 15 || g.Arg2 != 1<<8 || r.Strings().Get(g.Comm) != "hog" {
		t.Errorf("read back %+v (comm %q)", g, r.Strings().Get(g.Comm))
	}
}
