package replay

import (
	"strings"
	"testing"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// cookieTimeline: tasks 10 and 11 each run once on CPUs 0 and 1; the
// markers are written by task 10 at 0.1 ms.
func cookieTimeline(t *testing.T, markers ...string) *timeline.Timeline {
	t.Helper()
	strs := timeline.NewStrings()
	b := timeline.NewBuilder(strs, 2)
	comm := func(s string) timeline.CommID { return strs.IDString(s) }
	for cpu := timeline.CPU(0); cpu < 2; cpu++ {
		b.Add(timeline.Event{Time: 0, CPU: cpu, Kind: timeline.KindBufferStart, Task: timeline.NoTID, Other: timeline.NoTID, Prio: -1, OPrio: -1, TGID: -1, Start: timeline.NoTime})
	}
	for i, m := range markers {
		b.Add(timeline.Event{Time: timeline.Time(100_000 + i), CPU: 0, Kind: timeline.KindMarker, Task: 10, Other: 10, Comm: comm("tagged"), Arg: int64(strs.IDString(m)), Prio: -1, OPrio: -1, TGID: -1, Start: timeline.NoTime})
	}
	for k, tid := range []timeline.TID{10, 11} {
		cpu := timeline.CPU(k)
		b.Add(timeline.Event{Time: 1_000_000, CPU: cpu, Kind: timeline.KindSwitch, Other: tid, OComm: comm("t"), State: timeline.StateInterrupt, Task: 0, Comm: comm("swapper"), Prio: 120, OPrio: 120, TGID: -1, Start: timeline.NoTime})
	}
	tl, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func TestExtractCookieMarkers(t *testing.T) {
	cookieOf := func(w *Workload, tid timeline.TID) uint64 {
		for _, tk := range w.Tasks {
			if tk.TID == tid {
				return tk.Cookie
			}
		}
		t.Fatalf("no task %d", tid)
		return 0
	}
	assumption := func(w *Workload, name string) *Assumption {
		for i := range w.Assumptions {
			if w.Assumptions[i].Name == name {
				return &w.Assumptions[i]
			}
		}
		return nil
	}

	// No markers: no cookies, and the workload says so.
	w, err := Extract(cookieTimeline(t, "workload_start"), topology.Symmetric(2))
	if err != nil {
		t.Fatal(err)
	}
	if cookieOf(w, 10) != 0 || cookieOf(w, 11) != 0 || assumption(w, AssumeNoCookies) == nil || assumption(w, AssumeCookieMarkers) != nil {
		t.Errorf("no markers: cookies %d %d, assumptions %+v", cookieOf(w, 10), cookieOf(w, 11), w.Assumptions)
	}

	// Task 10 tagged (the later marker wins), 11 untagged, 99 not in the trace.
	w, err = Extract(cookieTimeline(t, "core_sched_cookie tid=10 cookie=0x1", "core_sched_cookie tid=10 cookie=0xdeadbeef00",
		"core_sched_cookie tid=11 cookie=0x0", "core_sched_cookie tid=99 cookie=0x5"), topology.Symmetric(2))
	if err != nil {
		t.Fatal(err)
	}
	if got := cookieOf(w, 10); got != 0xdeadbeef00 {
		t.Errorf("task 10 cookie %#x, want 0xdeadbeef00", got)
	}
	if got := cookieOf(w, 11); got != 0 {
		t.Errorf("task 11 cookie %#x, want 0", got)
	}
	a := assumption(w, AssumeCookieMarkers)
	if a == nil || assumption(w, AssumeNoCookies) != nil || a.Tasks != 1 || !strings.Contains(a.Detail, "4 core_sched_cookie trace markers") || !strings.Contains(a.Detail, "1 markers name a task that did not run") {
		t.Errorf("assumptions %+v, want %s for 1 task from 4 markers, one unknown", w.Assumptions, AssumeCookieMarkers)
	}

	for _, bad := range []struct{ marker, why string }{
		{"core_sched_cookie tid=10", "tid= or cookie= missing"},
		{"core_sched_cookie tid=ten cookie=0x1", `tid "ten"`},
		{"core_sched_cookie tid=10 cookie=0xzz", `cookie "0xzz"`},
		{"core_sched_cookie tid=10 cookie", `field "cookie"`},
	} {
		_, err := Extract(cookieTimeline(t, bad.marker), topology.Symmetric(2))
		if err == nil || !strings.Contains(err.Error(), "marker at 0.000100 s on CPU 0") || !strings.Contains(err.Error(), bad.why) {
			t.Errorf("%q: %v, want an error at 0.000100 s on CPU 0 saying %s", bad.marker, err, bad.why)
		}
	}
}
