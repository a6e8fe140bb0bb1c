package replay

import (
	"fmt"
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

// TestWakeAfterBlock: a wakes b at 100 us of its work while b still runs
// its 200 us first segment on the other CPU. By default b goes on without
// sleeping (one switch-in, no waking event); with WakeAfterBlock b blocks
// at 200 us and is woken at once on its idle CPU (a second switch-in and a
// sched_waking). Either way b's 100 us second segment ends at 300 us.
func TestWakeAfterBlock(t *testing.T) {
	const src = `
topology symmetric 2
task a on 0
  run 100us
  wake b
  run 500us
task b on 1
  run 200us
  wait a
  run 100us
`
	tests := []struct {
		name         string
		afterBlock   bool
		wantSwitchIn int
		wantWaking   int
		wantBlocked  int // switch-outs of b in a sleep state before its exit
	}{
		{"merge", false, 1, 0, 0},
		{"after-block", true, 2, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := mustSpec(t, src)
			sp.Workload.WakeAfterBlock = tc.afterBlock
			res, err := Simulate(sp.Workload, sp.Topology, newFIFO(0), Options{HZ: 1000})
			if err != nil {
				t.Fatal(err)
			}
			tl := res.Timeline
			if n := len(tl.Inconsistencies()); n != 0 {
				t.Fatalf("got %d inconsistencies, want 0", n)
			}
			var in, waking, blocked int
			for i := 0; i < tl.Len(); i++ {
				switch tl.Kinds[i] {
				case timeline.KindSwitch:
					if tl.TaskName(tl.TaskOf[i]) == "b" {
						in++
					}
					if tl.TaskName(tl.Other[i]) == "b" && !tl.States[i].Runnable() && !tl.States[i].Dead() {
						blocked++
					}
				case timeline.KindWaking:
					if tl.TaskName(tl.TaskOf[i]) == "b" {
						waking++
					}
				}
			}
			if in != tc.wantSwitchIn || waking != tc.wantWaking || blocked != tc.wantBlocked {
				t.Errorf("b: got %d switch-ins, %d wakings, %d blocks; want %d, %d, %d", in, waking, blocked, tc.wantSwitchIn, tc.wantWaking, tc.wantBlocked)
			}
			if got := res.Counters["wake-before-block"]; got != 1 {
				t.Errorf("wake-before-block: got %d, want 1", got)
			}
			b := res.Tasks[1]
			if got, want := b.Exit, sp.Workload.Start+300_000; got != want {
				t.Errorf("b exits at %d, want %d", got, want)
			}
			if !b.Finished || b.Work != 300_000 {
				t.Errorf("b: got finished %v, work %d; want true, 300000", b.Finished, b.Work)
			}
		})
	}
}

// TestExtractSyncPair: a ping-pong pair on one CPU, each waking the other
// and blocking at once, is extracted with every task wake marked Sync; the
// same pair on two CPUs (the wakee does not take the waker's CPU) is not.
func TestExtractSyncPair(t *testing.T) {
	tests := []struct {
		name     string
		cpus     string
		wantSync bool
	}{
		{"same-cpu", "cpus 0 on 0", true},
		{"two-cpus", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			optsB := "cpus 1 on 1"
			optsA := "cpus 0 on 0"
			if tc.cpus != "" {
				optsA, optsB = tc.cpus, tc.cpus
			}
			// One thread group: a wakeup between processes is taken as
			// sync anyway (Extract's IPC rule); this test is about pairs.
			optsA += " tgid 7"
			optsB += " tgid 7"
			src := `
topology symmetric 2
task a ` + optsA + `
  repeat 5 {
    run 300us
    wake b
    wait b
  }
task b ` + optsB + `
  repeat 5 {
    wait a
    run 200us
    wake a
  }
`
			sp := mustSpec(t, src)
			r, err := Simulate(sp.Workload, sp.Topology, newFIFO(0), Options{HZ: 1000})
			if err != nil {
				t.Fatal(err)
			}
			w, err := Extract(r.Timeline, sp.Topology)
			if err != nil {
				t.Fatal(err)
			}
			var nTask, nSync int
			for _, tk := range w.Tasks {
				for _, sg := range tk.Segments {
					if sg.Wake.Kind == WakeTask {
						nTask++
						if sg.Wake.Sync {
							nSync++
						}
					}
				}
			}
			want := 0
			if tc.wantSync {
				want = nTask - 1 // b's last wake of a is followed by its exit, not a block
			}
			if nTask == 0 || nSync != want {
				t.Errorf("got %d sync of %d task wakes, want %d", nSync, nTask, want)
			}
			if !w.WakeAfterBlock {
				t.Errorf("extracted workload: WakeAfterBlock false, want true")
			}
		})
	}
}

// TestWakeAnyWaker: r's first sleep was ended by s1 (at 300 us of s1's
// work), its second by s2 (at 50 us). With the recorded wakers r waits for
// s1 until 300 us and then finds s2's wake held; with WakeAny the
// first task wake issued to r, s2's at 50 us, ends its first sleep and
// s1's ends the second. WakeLateAny does the same when r's first sleep
// lasted 20 us in the recording (at 50 us it has slept 40), and keeps the
// recorded wakers when it lasted 100 us.
func TestWakeAny(t *testing.T) {
	const src = `
topology symmetric 3
task r on 0
  run 10us
  wait s1
  run 10us
  wait s2
  run 10us
task s1 on 1
  run 300us
  wake r
task s2 on 2
  run 50us
  wake r
`
	tests := []struct {
		name      string
		rule      WakeRule
		slept     int64           // r's first sleep in the recording
		wantWakes []timeline.Time // r's sched_waking times
		wantExit  timeline.Time
	}{
		{"recorded", WakeRecorded, 0, []timeline.Time{300_000, 310_000}, 320_000},
		{"any", WakeAny, 0, []timeline.Time{50_000, 300_000}, 310_000},
		{"late-any/overslept", WakeLateAny, 20_000, []timeline.Time{50_000, 300_000}, 310_000},
		{"late-any/in-time", WakeLateAny, 100_000, []timeline.Time{300_000, 310_000}, 320_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := mustSpec(t, src)
			sp.Workload.WakeAfterBlock = true
			sp.Workload.WakeRule = tc.rule
			for i := range sp.Workload.Tasks {
				if sp.Workload.Tasks[i].Comm == "r" {
					sp.Workload.Tasks[i].Segments[1].Wake.Slept = tc.slept
				}
			}
			res, err := Simulate(sp.Workload, sp.Topology, newFIFO(0), Options{HZ: 1000})
			if err != nil {
				t.Fatal(err)
			}
			wakes := eventTimes(res.Timeline, timeline.KindWaking, "r", sp.Workload.Start)
			if fmt.Sprint(wakes) != fmt.Sprint(tc.wantWakes) {
				t.Errorf("r woken at %v, want %v", wakes, tc.wantWakes)
			}
			for i, tk := range sp.Workload.Tasks {
				if tk.Comm == "r" {
					if got := res.Tasks[i].Exit - sp.Workload.Start; got != tc.wantExit {
						t.Errorf("r exits at %d, want %d", got, tc.wantExit)
					}
					if res.Tasks[i].Work != tk.Demand() {
						t.Errorf("r did %d of its %d", res.Tasks[i].Work, tk.Demand())
					}
				}
			}
		})
	}
}

// TestIdleExit: a task sleeps 90 us on an otherwise idle CPU; the timer
// wakes it at 100 us, and with IdleExit 11 us it runs from 111 us.
func TestIdleExit(t *testing.T) {
	const src = `
topology symmetric 1
task a on 0
  run 10us
  sleep 90us
  run 10us
`
	for _, exit := range []int64{0, 11_000} {
		sp := mustSpec(t, src)
		res, err := Simulate(sp.Workload, sp.Topology, newFIFO(0), Options{HZ: 1000, IdleExit: exit})
		if err != nil {
			t.Fatal(err)
		}
		in := eventTimes(res.Timeline, timeline.KindSwitch, "a", sp.Workload.Start)
		want := []timeline.Time{0, timeline.Time(100_000 + exit)}
		if exit > 0 {
			want[0] = timeline.Time(exit) // the start is a wake onto an idle CPU too
			want[1] = timeline.Time(exit + 10_000 + 90_000 + exit)
		}
		if fmt.Sprint(in) != fmt.Sprint(want) {
			t.Errorf("IdleExit %d: a switched in at %v, want %v", exit, in, want)
		}
	}
}

// eventTimes returns the times, from start, of tl's events of kind k whose
// subject (a switch's next task, a wakeup's wakee) is the task called name.
func eventTimes(tl *timeline.Timeline, k timeline.Kind, name string, start timeline.Time) []timeline.Time {
	var out []timeline.Time
	for i := 0; i < tl.Len(); i++ {
		if tl.Kinds[i] == k && tl.TaskName(tl.TaskOf[i]) == name {
			out = append(out, tl.Times[i]-start)
		}
	}
	return out
}

// TestWakeOrdered: a reaches its wake of b at 50 us, while b blocks only at
// 100 us. Without the rule the wake is held and a runs on to 150 us; with
// WakeOrdered a leaves its CPU at 50 us, is woken by b's block at 100 us,
// issues the wake then and finishes at 200 us. b runs 100-110 us either way.
func TestWakeOrdered(t *testing.T) {
	const src = `
topology symmetric 2
task a on 0
  run 50us
  wake b
  run 100us
task b on 1
  run 100us
  wait a
  run 10us
`
	for _, ordered := range []bool{false, true} {
		sp := mustSpec(t, src)
		sp.Workload.WakeAfterBlock = true
		if ordered {
			sp.Workload.WakeRule = WakeOrdered
		}
		res, err := Simulate(sp.Workload, sp.Topology, newFIFO(0), Options{HZ: 1000})
		if err != nil {
			t.Fatal(err)
		}
		tl := res.Timeline
		if n := len(tl.Inconsistencies()); n != 0 {
			t.Fatalf("ordered=%v: %d inconsistencies", ordered, n)
		}
		wantA, wantIn := timeline.Time(150_000), "[0]"
		if ordered {
			wantA, wantIn = 200_000, "[0 100000]"
		}
		for i, tk := range sp.Workload.Tasks {
			exit := res.Tasks[i].Exit - sp.Workload.Start
			switch tk.Comm {
			case "a":
				if exit != wantA {
					t.Errorf("ordered=%v: a exits at %d, want %d", ordered, exit, wantA)
				}
				if got := fmt.Sprint(eventTimes(tl, timeline.KindSwitch, "a", sp.Workload.Start)); got != wantIn {
					t.Errorf("ordered=%v: a switched in at %s, want %s", ordered, got, wantIn)
				}
			case "b":
				if exit != 110_000 {
					t.Errorf("ordered=%v: b exits at %d, want 110000", ordered, exit)
				}
			}
			if res.Tasks[i].Work != tk.Demand() {
				t.Errorf("ordered=%v: %s did %d of its %d", ordered, tk.Comm, res.Tasks[i].Work, tk.Demand())
			}
		}
		if ordered && res.Counters["wake-ordered-stall"] != 1 {
			t.Errorf("stalls = %d, want 1", res.Counters["wake-ordered-stall"])
		}
	}
}
