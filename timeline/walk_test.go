package timeline

import (
	"fmt"
	"strings"
	"testing"
)

// ev is a compact constructor for hand-worked traces.
type evb struct {
	s *Strings
}

func (b evb) sw(t Time, cpu CPU, prev TID, st string, next TID) Event {
	e := Event{}
	e.Reset()
	e.Time, e.CPU, e.Kind, e.Other, e.Task = t, cpu, KindSwitch, prev, next
	e.OComm = b.s.IDString(fmt.Sprintf("t%d", prev))
	e.Comm = b.s.IDString(fmt.Sprintf("t%d", next))
	var ok bool
	e.State, ok = ParseState([]byte(st))
	if !ok {
		panic(st)
	}
	return e
}

func (b evb) wake(k Kind, t Time, cpu CPU, waker, task TID, target CPU) Event {
	e := Event{}
	e.Reset()
	e.Time, e.CPU, e.Kind, e.Other, e.Task, e.Arg = t, cpu, k, waker, task, int64(target)
	e.Comm = b.s.IDString(fmt.Sprintf("t%d", task))
	return e
}

func spansOf(t *testing.T, tl *Timeline) []string {
	t.Helper()
	var out []string
	tl.Walk(func(s *Span) {
		who := "cpu"
		if s.Task != NoTask {
			who = fmt.Sprintf("%d", tl.Tasks[s.Task].PID)
			if tl.Tasks[s.Task].Idle {
				who = fmt.Sprintf("idle%d", tl.Tasks[s.Task].CPU)
			}
		}
		x := fmt.Sprintf("%s %v cpu%d [%d,%d]", who, s.State, s.CPU, s.Start, s.End)
		if s.State == SpanWoken && s.Enqueue != NoTime {
			x += fmt.Sprintf(" enq=%d", s.Enqueue)
		}
		if s.Open() {
			x += " open"
		}
		out = append(out, x)
	})
	return out
}

func contains(list []string, want string) bool {
	for _, s := range list {
		if s == want {
			return true
		}
	}
	return false
}

func TestWalkHandWorked(t *testing.T) {
	strs := NewStrings()
	b := evb{strs}
	tests := []struct {
		name   string
		events []Event
		want   []string // spans that must be there
		absent []string // spans that must not be there
		incs   int
	}{
		{
			name: "wakeup then preemption on one CPU",
			events: []Event{
				b.wake(KindWaking, 10, 0, 1, 2, 0),
				b.wake(KindWakeup, 12, 0, 1, 2, 0),
				b.sw(20, 0, 1, "R+", 2),
				b.sw(30, 0, 2, "S", 1),
				b.sw(40, 0, 1, "D", 0),
				b.wake(KindWaking, 50, 0, 0, 1, 0),
				b.wake(KindWakeup, 51, 0, 0, 1, 0),
				b.sw(55, 0, 0, "R", 1),
			},
			want: []string{
				"2 woken cpu0 [10,20] enq=12",
				"1 running cpu0 [10,20]", // revealed: ran since the CPU's stream began
				"2 running cpu0 [20,30]",
				"1 preempted cpu0 [20,30]",
				"1 running cpu0 [30,40]",
				"idle0 running cpu0 [40,55]",
				"1 blocked cpu0 [40,50]",
				"1 woken cpu0 [50,55] enq=51",
				"2 sleeping cpu0 [30,55] open",
				"1 running cpu0 [55,55] open",
			},
		},
		{
			name: "missing switch is not charged",
			events: []Event{
				b.sw(10, 0, 0, "R", 1),
				b.sw(20, 0, 1, "R", 2),
				// 2 -> 3 never reached the buffer
				b.sw(40, 0, 3, "S", 1),
				b.sw(50, 0, 1, "S", 0),
			},
			want: []string{
				"1 running cpu0 [10,20]",
				"2 unknown cpu0 [20,40]",
				"1 preempted cpu0 [20,40]",
				"1 running cpu0 [40,50]",
			},
			absent: []string{"2 running cpu0 [20,40]", "3 running cpu0 [10,40]"},
			incs:   1,
		},
		{
			name: "woken while going to sleep",
			events: []Event{
				b.sw(10, 0, 0, "R", 1),
				b.sw(10, 1, 0, "R", 3),
				b.wake(KindWaking, 20, 1, 3, 1, 0), // 1 still on CPU 0
				b.sw(21, 0, 1, "S", 0),
				b.wake(KindWakeup, 22, 1, 3, 1, 0),
				b.sw(25, 0, 0, "R", 1),
			},
			want: []string{"1 running cpu0 [10,21]", "1 preempted cpu0 [21,25]"},
		},
		{
			name: "lost events: nothing measured across the gap",
			events: func() []Event {
				l := Event{}
				l.Reset()
				l.Time, l.Start, l.CPU, l.Kind, l.Arg = 100, 20, 0, KindLost, 7
				return []Event{
					b.sw(10, 0, 0, "R", 1),
					b.wake(KindWaking, 15, 0, 1, 2, 0),
					b.wake(KindWakeup, 16, 0, 1, 2, 0),
					b.sw(20, 0, 1, "R", 2),
					l,
					b.sw(100, 0, 5, "S", 1),
					b.sw(110, 0, 1, "S", 0),
				}
			}(),
			want: []string{
				"2 running cpu0 [20,20] open",
				"2 unknown cpu-1 [20,110] open",
				"1 running cpu0 [100,110]",
				"1 unknown cpu-1 [20,100]",
			},
			absent: []string{"1 preempted cpu0 [20,100]", "2 running cpu0 [20,100]"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bl := NewBuilder(strs, 0)
			for _, e := range tc.events {
				bl.Add(e)
			}
			tl, err := bl.Finish()
			if err != nil {
				t.Fatal(err)
			}
			got := spansOf(t, tl)
			for _, w := range tc.want {
				if !contains(got, w) {
					t.Errorf("missing span %q; got:\n%s", w, strings.Join(got, "\n"))
				}
			}
			for _, a := range tc.absent {
				if contains(got, a) {
					t.Errorf("span %q must not be there", a)
				}
			}
			if len(tl.Inconsistencies()) != tc.incs {
				t.Errorf("inconsistencies = %d (%v), want %d", len(tl.Inconsistencies()), tl.Inconsistencies(), tc.incs)
			}
		})
	}
}

func TestMergeCausalTies(t *testing.T) {
	strs := NewStrings()
	b := evb{strs}
	bl := NewBuilder(strs, 2)
	// CPU 1's events arrive first in the file, all at the same timestamp.
	bl.Add(b.sw(10, 1, 0, "R", 7))
	bl.Add(b.sw(10, 0, 7, "R+", 0))
	bl.Add(b.wake(KindWakeup, 10, 1, 0, 8, 1))
	bl.Add(b.wake(KindWaking, 10, 0, 0, 8, 1))
	// A CPU whose events arrive late (as Perfetto's per-CPU bundles do):
	// the input is not in global order, so the streams are merged.
	bl.Add(b.sw(5, 2, 0, "R", 9))
	tl, err := bl.Finish()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i := 0; i < tl.Len(); i++ {
		kinds = append(kinds, fmt.Sprintf("%v@%d", tl.Kinds[i], tl.CPUs[i]))
	}
	// Per-CPU order is kept; across CPUs the switch-out of 7 goes before its
	// switch-in, and the waking before the other CPU's switch.
	want := "sched_switch@2 sched_switch@0 sched_waking@0 sched_switch@1 sched_wakeup@1"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("order = %s, want %s", got, want)
	}
}

func TestGlobalOrderKeepsTies(t *testing.T) {
	strs := NewStrings()
	b := evb{strs}
	bl := NewBuilder(strs, 2)
	// Text traces are printed in full-precision time order: a waking that
	// the file puts before a switch-out with the same microsecond happened
	// first, and must stay first.
	bl.Add(b.wake(KindWaking, 10, 1, 3, 7, 0))
	bl.Add(b.sw(10, 0, 7, "S", 0))
	tl, err := bl.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if tl.Kinds[0] != KindWaking || tl.Kinds[1] != KindSwitch {
		t.Errorf("order = %v %v, want sched_waking sched_switch", tl.Kinds[0], tl.Kinds[1])
	}
}

// TestInconsistenciesFromTheWalk: the first Walk keeps the inconsistencies
// it found, so a command that walks the timeline walks it once; a timeline
// asked before any walk runs the state machine itself, with the same list.
func TestInconsistenciesFromTheWalk(t *testing.T) {
	build := func() *Timeline {
		strs := NewStrings()
		b := evb{strs}
		bl := NewBuilder(strs, 1)
		bl.Add(b.sw(10, 0, 0, "R", 100))
		bl.Add(b.sw(20, 0, 200, "S", 0)) // prev 200, but 100 was running
		tl, err := bl.Finish()
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	asked := build().Inconsistencies()
	if len(asked) != 1 || asked[0].Kind != IncPrevMismatch || asked[0].Time != 20 {
		t.Fatalf("dry run found %+v, want one prev-mismatch at 20", asked)
	}
	tl := build()
	spans := 0
	tl.Walk(func(*Span) { spans++ })
	// Undo the contradiction: a second walk would find none, the kept
	// list still has the one the Walk found.
	tl.Other[1] = tl.TaskOf[0]
	if got := tl.Inconsistencies(); spans == 0 || len(got) != 1 || got[0] != asked[0] {
		t.Fatalf("after a walk of %d spans: %+v, want %+v", spans, got, asked)
	}
}
