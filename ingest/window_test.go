package ingest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

// lateCPUTrace is a hand-worked 2-CPU ftrace `trace` file whose CPU 1 has
// its first event 10 ms after CPU 0's. header is the entries line ("" for
// none). On CPU 0, b (pid 200) runs from 100.000, wakes a (pid 100) at
// 100.001, and a runs from 100.002 to 100.004; CPU 1 shows nothing until
// 100.010, where its idle task switches to c (pid 300).
func lateCPUTrace(header string, extra ...string) string {
	var b strings.Builder
	if header != "" {
		b.WriteString("# tracer: nop\n#\n" + header + "\n#\n")
	}
	for _, l := range []string{
		"               a-100     [000] d..2.   100.000000: sched_switch: prev_comm=a prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=b next_pid=200 next_prio=120",
		"               b-200     [000] d..2.   100.001000: sched_waking: comm=a pid=100 prio=120 target_cpu=000",
		"               b-200     [000] d..2.   100.002000: sched_switch: prev_comm=b prev_pid=200 prev_prio=120 prev_state=R ==> next_comm=a next_pid=100 next_prio=120",
		"               a-100     [000] d..2.   100.004000: sched_switch: prev_comm=a prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=b next_pid=200 next_prio=120",
		"          <idle>-0       [001] d..2.   100.010000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=c next_pid=300 next_prio=120",
		"               c-300     [001] d..2.   100.012000: sched_switch: prev_comm=c prev_pid=300 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
	} {
		b.WriteString(l + "\n")
	}
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// spanSet lists tl's spans as "who state cpuN [start,end]" in ms after
// 100 s, for hand-worked comparisons.
func spanSet(tl *timeline.Timeline) map[string]bool {
	out := map[string]bool{}
	ms := func(t timeline.Time) string { return fmt.Sprintf("%g", float64(t-100e9)/1e6) }
	tl.Walk(func(s *timeline.Span) {
		who := "cpu"
		if s.Task != timeline.NoTask {
			who = fmt.Sprint(tl.Tasks[s.Task].PID)
		}
		out[fmt.Sprintf("%s %v cpu%d [%s,%s]", who, s.State, s.CPU, ms(s.Start), ms(s.End))] = true
	})
	return out
}

// TestValidStartFromCoverage: the valid window starts at the trace's first
// event when the trace proves nothing was overwritten or lost, and at the
// latest CPU's first event otherwise.
func TestValidStartFromCoverage(t *testing.T) {
	const start, late = timeline.Time(100_000_000_000), timeline.Time(100_010_000_000)
	tests := []struct {
		name      string
		trace     string
		rule      timeline.StartRule
		cov       timeline.Coverage
		reason    string // in ValidStartReason
		haveSpans []string
		noSpans   []string
	}{
		{
			// 6 entries written, 6 kept: CPU 1 was recorded from the start
			// and quiet. a sleeps from its switch-out at the trace's first
			// event (nothing unseen could have woken it), and CPU 1's idle
			// task, revealed by its first switch, ran from the first event.
			name:   "entries equal",
			trace:  lateCPUTrace("# entries-in-buffer/entries-written: 6/6   #P:2"),
			rule:   timeline.StartFirstEvent,
			cov:    timeline.CoverageComplete,
			reason: "6 entries written and 6 kept",
			haveSpans: []string{
				"100 sleeping cpu0 [0,1]", "100 woken cpu0 [1,2]", "100 running cpu0 [2,4]", "200 running cpu0 [0,2]",
				"200 preempted cpu0 [2,4]", "0 running cpu1 [0,10]", "300 running cpu1 [10,12]",
			},
			noSpans: []string{"100 unknown cpu-1 [0,1]", "0 running cpu1 [10,10]"},
		},
		{
			// 6 of 9 entries kept: CPU 1's oldest events were overwritten.
			// Before 100.010 nothing is known on CPU 1: a's state is unknown
			// from the trace's start (a lost event could have changed it),
			// and CPU 1's idle task counts only from its first event.
			name:      "entries overwritten",
			trace:     lateCPUTrace("# entries-in-buffer/entries-written: 6/9   #P:2"),
			rule:      timeline.StartLatestCPU,
			cov:       timeline.CoverageLost,
			reason:    "9 entries written and 6 kept: 3 were overwritten",
			haveSpans: []string{"100 unknown cpu-1 [0,1]", "0 running cpu1 [10,10]", "300 running cpu1 [10,12]"},
			noSpans:   []string{"100 sleeping cpu0 [0,1]", "0 running cpu1 [0,10]"},
		},
		{
			name:      "trace_pipe: no entry counts",
			trace:     lateCPUTrace(""),
			rule:      timeline.StartLatestCPU,
			cov:       timeline.CoverageUnknown,
			reason:    "trace_pipe text carries no entry counts",
			haveSpans: []string{"100 unknown cpu-1 [0,1]"},
			noSpans:   []string{"100 sleeping cpu0 [0,1]", "0 running cpu1 [0,10]"},
		},
		{
			// Equal counts, but events were lost (a lost-event line): the
			// clipped rule stays.
			name:      "entries equal, lost events",
			trace:     lateCPUTrace("# entries-in-buffer/entries-written: 6/6   #P:2", "CPU:1 [LOST 3 EVENTS]", "          <idle>-0       [001] d..2.   100.014000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=c next_pid=300 next_prio=120"),
			rule:      timeline.StartLatestCPU,
			cov:       timeline.CoverageLost,
			reason:    "[LOST 3 EVENTS]",
			haveSpans: []string{"100 unknown cpu-1 [0,1]"},
			noSpans:   []string{"100 sleeping cpu0 [0,1]", "0 running cpu1 [0,10]"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ld, err := LoadReader(strings.NewReader(tc.trace), "trace", Options{})
			if err != nil {
				t.Fatal(err)
			}
			tl, m := ld.Timeline, ld.Meta
			if m.Coverage != tc.cov || !strings.Contains(m.CoverageNote, tc.reason) {
				t.Errorf("Meta coverage %v %q, want %v with %q", m.Coverage, m.CoverageNote, tc.cov, tc.reason)
			}
			want, clipped := start, 0
			if tc.rule == timeline.StartLatestCPU {
				want, clipped = late, 1
			}
			if tl.ValidStart != want || tl.ValidStartRule != tc.rule || !strings.Contains(tl.ValidStartReason, tc.reason) {
				t.Errorf("valid start %s by %v (%q), want %s by %v", tl.ValidStart.Seconds(), tl.ValidStartRule, tl.ValidStartReason, want.Seconds(), tc.rule)
			}
			n := 0
			for _, g := range tl.Gaps {
				if g.Kind == timeline.GapClipped {
					n++
					if g.CPU != 1 || g.Start != start || g.End != late {
						t.Errorf("clipped gap %+v, want CPU 1 from %s to %s", g, start.Seconds(), late.Seconds())
					}
				}
			}
			if n != clipped {
				t.Errorf("%d clipped gaps, want %d", n, clipped)
			}
			spans := spanSet(tl)
			for _, s := range tc.haveSpans {
				if !spans[s] {
					t.Errorf("missing span %q", s)
				}
			}
			for _, s := range tc.noSpans {
				if spans[s] {
					t.Errorf("unexpected span %q", s)
				}
			}
			if t.Failed() {
				t.Logf("spans: %v", spans)
			}
		})
	}
}
