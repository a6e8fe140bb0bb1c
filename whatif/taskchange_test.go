package whatif

import (
	"strings"
	"testing"

	"github.com/schedlens/schedlens/replay"
)

// TestApplyTaskChanges: nice goes to the fair tasks of the comm (an RT task
// of that name keeps its priority), affinity replaces the allowed CPUs and
// their changes for the task's whole life; a comm or CPU the recording
// lacks is an error.
func TestApplyTaskChanges(t *testing.T) {
	mk := func() *replay.Workload {
		return &replay.Workload{Tasks: []replay.Task{
			{Comm: "cyc", Prio: 120},
			{Comm: "cyc", Prio: 49}, // SCHED_FIFO 50
			{Comm: "hog", Prio: 125, Affinity: []replay.AffinityChange{{At: 5}}},
			{Comm: "other", Prio: 120},
		}}
	}
	parse := func(s string) TaskChange {
		t.Helper()
		c, err := ParseChange(s)
		if err != nil || c.Kind != ChangeTask {
			t.Fatalf("ParseChange(%q) = %+v, %v", s, c, err)
		}
		return c.Task
	}
	w := mk()
	if err := applyTaskChanges(w, 2, []TaskChange{parse("nice:cyc=-10"), parse("affinity:hog=1")}); err != nil {
		t.Fatal(err)
	}
	if w.Tasks[0].Prio != 110 || w.Tasks[1].Prio != 49 || w.Tasks[3].Prio != 120 {
		t.Errorf("prios %d %d %d, want 110 49 120", w.Tasks[0].Prio, w.Tasks[1].Prio, w.Tasks[3].Prio)
	}
	if h := w.Tasks[2]; h.CPUs.String() != "1" || h.Affinity != nil || h.Prio != 125 {
		t.Errorf("hog: CPUs %s, affinity %v, prio %d", h.CPUs, h.Affinity, h.Prio)
	}
	if w.Tasks[0].CPUs != nil {
		t.Errorf("nice changed cyc's CPUs to %s", w.Tasks[0].CPUs)
	}
	if len(w.Assumptions) != 2 || !strings.Contains(w.Assumptions[0].Detail, "nice:cyc=-10: 1 tasks at nice -10") ||
		!strings.Contains(w.Assumptions[0].Detail, "1 real-time or deadline tasks of that name left as they were") ||
		!strings.Contains(w.Assumptions[1].Detail, "affinity:hog=1: 1 tasks allowed on CPUs 1") {
		t.Errorf("assumptions %+v", w.Assumptions)
	}
	for _, tc := range []struct{ change, err string }{
		{"nice:nobody=3", `the recording has no task named "nobody"`},
		{"affinity:hog=2", "the recording has CPUs 0-1"},
	} {
		if err := applyTaskChanges(mk(), 2, []TaskChange{parse(tc.change)}); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.change, err, tc.err)
		}
	}
	// A task change alone is a what-if; in a baseline it is an error.
	desc, cpus, err := Apply("6.18", []Change{{Kind: ChangeTask, Text: "nice:cyc=-10", Task: parse("nice:cyc=-10")}})
	if err != nil || desc != "6.18" || cpus != nil {
		t.Errorf("Apply of a task change: %q, %v, %v", desc, cpus, err)
	}
	if _, err := Baseline("6.18", []Change{{Kind: ChangeTask, Text: "nice:cyc=-10"}}); err == nil {
		t.Error("a task change in the baseline: no error")
	}
}

// TestAutogroupMatters: sched_autogroup_enabled=0 on a workload without
// autogroups is refused when it is the only change, not when other changes
// come with it or the workload has autogroups.
func TestAutogroupMatters(t *testing.T) {
	none := &replay.Workload{Groups: []replay.Group{{ID: 1, Name: "/a.slice", Weight: 1024}}}
	some := &replay.Workload{Groups: []replay.Group{{ID: 1, Name: "/autogroup-3", Weight: 1024, Autogroup: true}}}
	dropped := &replay.Workload{Assumptions: []replay.Assumption{{Name: replay.AssumeNoAutogroup, Tasks: 4}}}
	for _, tc := range []struct {
		whatIf string
		w      *replay.Workload
		refuse bool
	}{
		{"6.18,sched_autogroup_enabled=0", none, true},
		{"6.18,sched_autogroup_enabled=0", some, false},
		{"6.18,base_slice_ns=3000000,sched_autogroup_enabled=0", none, false},
		{"6.18,NO_RUN_TO_PARITY", none, false},
	} {
		err := autogroupMatters("6.18", tc.whatIf, tc.w)
		if (err != nil) != tc.refuse {
			t.Errorf("%s on %d groups: %v, want refused %v", tc.whatIf, len(tc.w.Groups), err, tc.refuse)
		}
	}
	// A baseline without autogroups that moved tasks out of them: turning
	// them on is a change.
	for _, tc := range []struct {
		w      *replay.Workload
		refuse bool
	}{{dropped, false}, {none, true}} {
		err := autogroupMatters("6.18,sched_autogroup_enabled=0", "6.18", tc.w)
		if (err != nil) != tc.refuse {
			t.Errorf("autogroups on, from a baseline with %d assumptions: %v, want refused %v", len(tc.w.Assumptions), err, tc.refuse)
		}
	}
}
