package perfetto

import (
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// TestCompactTieOrder: issue 14 item 2. At one timestamp the compact
// columns do not say whether a waking came before or after a switch. A
// waking of the task that a same-instant switch puts to sleep comes after
// that switch (the task sleeps, then is woken); a waking of any other task
// (here the one switched in) keeps its place before it. The ordering by
// inference is counted in a warning.
func TestCompactTieOrder(t *testing.T) {
	cs := func(fields ...[]byte) []byte { return bf(fBundleCompactSched, fields...) }
	trace := packet(bundle(0, cs(
		sf(fCompactInternTable, "a"), sf(fCompactInternTable, "b"),
		packed(fCompactSwitchTimestamp, 100, 100), // 100, 200
		packed(fCompactSwitchPrevState, 0, 1),     // R, then S: 7 goes to sleep at 200
		packed(fCompactSwitchNextPid, 7, 8),
		packed(fCompactSwitchNextPrio, 120, 120),
		packed(fCompactSwitchNextComm, 0, 1),
		packed(fCompactWakingTimestamp, 200, 0), // 200, 200
		packed(fCompactWakingPid, 8, 7),         // 8 (switched in at 200), 7 (put to sleep at 200)
		packed(fCompactWakingTargetCPU, 0, 0),
		packed(fCompactWakingPrio, 120, 120),
		packed(fCompactWakingComm, 1, 0),
	)))
	evs, r := mustDecode(t, trace, parse.Options{})
	type row struct {
		Kind        timeline.Kind
		Time        timeline.Time
		Task, Other timeline.TID
	}
	var got []row
	for _, e := range evs {
		got = append(got, row{e.Kind, e.Time, e.Task, e.Other})
	}
	want := []row{
		{timeline.KindSwitch, 100, 7, -1},
		{timeline.KindWaking, 200, 8, -1}, // 8 is woken, then switched in
		{timeline.KindSwitch, 200, 8, 7},  // 7 sleeps
		{timeline.KindWaking, 200, 7, -1}, // and only then is woken
	}
	if len(got) != len(want) {
		t.Fatalf("%d events %+v, want %+v", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if w := strings.Join(r.Meta().Warnings, "\n"); !strings.Contains(w, "compact_sched: wakings that share their timestamp with the switch that put the woken task to sleep on the same CPU: 1;") {
		t.Errorf("no warning about the inferred order: %q", w)
	}
}

// TestCompactPrevFromEventPid: a compact switch has no prev_pid; it is the
// CPU's running task, which a plain event's pid (the task current on the
// CPU) tells better than the last switch when a switch is missing from the
// trace.
func TestCompactPrevFromEventPid(t *testing.T) {
	cs := func(fields ...[]byte) []byte { return bf(fBundleCompactSched, fields...) }
	wakeup := func(ts, cur uint64, pid uint64) []byte {
		return fevent(ts, cur, fEvSchedWakeup, sf(fWakeComm, "w"), vf(fWakePid, pid), vf(fWakePrio, 120), vf(fWakeTargetCPU, 1))
	}
	trace := packet(bundle(0,
		wakeup(50, 5, 20),  // 5 runs before the first switch: not used
		wakeup(150, 9, 21), // 9 runs: the switch 7 -> 9 is missing
		cs(sf(fCompactInternTable, "a"),
			packed(fCompactSwitchTimestamp, 100, 100), // 100, 200
			packed(fCompactSwitchPrevState, 0, 1),
			packed(fCompactSwitchNextPid, 7, 8),
			packed(fCompactSwitchNextPrio, 120, 120),
			packed(fCompactSwitchNextComm, 0, 0))))
	evs, _ := mustDecode(t, trace, parse.Options{})
	var prevs []timeline.TID
	for _, e := range evs {
		if e.Kind == timeline.KindSwitch {
			prevs = append(prevs, e.Other)
		}
	}
	// Before the CPU's first switch the prev stays unknown, as for
	// trace_processor (its compact_sched_switch_skipped count).
	if len(prevs) != 2 || prevs[0] != timeline.NoTID || prevs[1] != 9 {
		t.Errorf("prevs of the compact switches %v, want [-1 9] (unknown, then the pid of the event before it)", prevs)
	}
}
