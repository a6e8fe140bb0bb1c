package compare

import (
	"strconv"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

// build makes a timeline from lines "T CPU EVENT ARGS" (T in µs):
//
//	switch PREV STATE NEXT
//	waking PID WAKER TARGET [hardirq]
//	wakeup PID TARGET
//	migrate PID FROM TO
//
// names maps pids to comms (pid 0 is <idle>), prios pids to kernel prios
// (default 120).
func build(t testing.TB, ncpu int, names map[int]string, prios map[int]int, lines ...string) *timeline.Timeline {
	t.Helper()
	strs := timeline.NewStrings()
	comm := func(pid int) timeline.CommID {
		if pid == 0 {
			return strs.IDString("<idle>")
		}
		return strs.IDString(names[pid])
	}
	prio := func(pid int) int16 {
		if p, ok := prios[pid]; ok {
			return int16(p)
		}
		return 120
	}
	b := timeline.NewBuilder(strs, ncpu)
	for i, l := range lines {
		f := strings.Fields(l)
		n := make([]int, len(f))
		for j, s := range f {
			if j != 2 && s != "hardirq" && (j != 4 || f[2] != "switch") {
				v, err := strconv.Atoi(s)
				if err != nil {
					t.Fatalf("line %d %q: field %d: %v", i+1, l, j+1, err)
				}
				n[j] = v
			}
		}
		var e timeline.Event
		e.Reset()
		e.Time, e.CPU, e.Ctx = timeline.Time(n[0]*1000), timeline.CPU(n[1]), timeline.CtxTask
		switch f[2] {
		case "switch":
			st, ok := timeline.ParseState([]byte(f[4]))
			if !ok {
				t.Fatalf("line %d: state %q", i+1, f[4])
			}
			e.Kind, e.State = timeline.KindSwitch, st
			e.Other, e.Task = timeline.TID(n[3]), timeline.TID(n[5])
			e.OComm, e.Comm, e.OPrio, e.Prio = comm(n[3]), comm(n[5]), prio(n[3]), prio(n[5])
		case "waking":
			e.Kind, e.Task, e.Other, e.Arg = timeline.KindWaking, timeline.TID(n[3]), timeline.TID(n[4]), int64(n[5])
			e.Comm, e.OComm, e.Prio = comm(n[3]), comm(n[4]), prio(n[3])
			if len(f) > 6 && f[6] == "hardirq" {
				e.Ctx = timeline.CtxHardirq
			}
		case "wakeup":
			e.Kind, e.Task, e.Arg = timeline.KindWakeup, timeline.TID(n[3]), int64(n[4])
			e.Comm, e.Prio = comm(n[3]), prio(n[3])
		case "migrate":
			e.Kind, e.Task, e.Arg2, e.Arg = timeline.KindMigrate, timeline.TID(n[3]), int64(n[4]), int64(n[5])
			e.Comm, e.Prio = comm(n[3]), prio(n[3])
		default:
			t.Fatalf("line %d: unknown event %q", i+1, f[2])
		}
		b.Add(e)
	}
	tl, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// Two app threads (pids 1, 2) and an RT thread irqd (pid 3, prio 49 = rt
// 50) on 2 CPUs for 960 µs: the recorded side of the hand-made cases.
// Worked by hand (µs):
//
//	app 1: runs 0-110, preempted by irqd 110-150 (wait 40), runs 150-600,
//	       sleeps, woken at 900 from an idle CPU, runs 920-960: run 600,
//	       runnable 40 + 20 = 60, one preemption, 3 switch-ins
//	app 2: runs 0-80 on CPU 1, woken at 300 by app 1, runs 340-500 (wait
//	       40), woken at 700 on CPU 0 from CPU 1 (a migration), runs 705-800
//	       (wait 5): run 80 + 160 + 95 = 335, runnable 45, 3 switch-ins
//	irqd:  woken at 100 by app 1, runs 110-150 (wait 10): run 40, 1 switch-in
//
// Wakeup latency samples 10, 40, 5, 20: p50 (nearest rank 2 of 4) 10, p90
// and p99 and max 40, mean 18.75. CPU 1 idles from 80 to 340 while irqd
// (100-110) and the preempted app 1 (110-150) wait on busy CPU 0: 10 + 40
// of idle-with-runnable, irqd's and app 1's. Switches: 8 on CPU 0, 4 on
// CPU 1. Last runs end at 960 (app 1), 800 (app 2), 150 (irqd).
var (
	handNames = map[int]string{1: "app", 2: "app", 3: "irqd"}
	handPrios = map[int]int{3: 49}
	handRec   = []string{
		"0 0 switch 0 R 1",
		"0 1 switch 0 R 2",
		"80 1 switch 2 S 0",
		"100 0 waking 3 1 0",
		"100 0 wakeup 3 0",
		"110 0 switch 1 R 3",
		"150 0 switch 3 S 1",
		"300 0 waking 2 1 1",
		"300 0 wakeup 2 1",
		"340 1 switch 0 R 2",
		"500 1 switch 2 S 0",
		"600 0 switch 1 S 0",
		"700 0 waking 2 0 0 hardirq",
		"700 0 migrate 2 1 0",
		"700 0 wakeup 2 0",
		"705 0 switch 0 R 2",
		"800 0 switch 2 S 0",
		"900 0 waking 1 0 0 hardirq",
		"900 0 wakeup 1 0",
		"920 0 switch 0 R 1",
		"960 0 switch 1 S 0",
	}
	// handMod is a "modeled" run of the same tasks: irqd's wakeup and the
	// first wakeup of app 2 wait longer, app 1 is not preempted (irqd
	// goes to the idle CPU 1, a migration), app 2's second wakeup stays
	// on CPU 1.
	handMod = []string{
		"0 0 switch 0 R 1",
		"0 1 switch 0 R 2",
		"80 1 switch 2 S 0",
		"100 0 waking 3 1 0",
		"100 0 migrate 3 0 1",
		"100 0 wakeup 3 1",
		"130 1 switch 0 R 3",
		"170 1 switch 3 S 0",
		"300 0 waking 2 1 1",
		"300 0 wakeup 2 1",
		"360 1 switch 0 R 2",
		"520 1 switch 2 S 0",
		"600 0 switch 1 S 0",
		"700 1 waking 2 0 1 hardirq",
		"700 1 wakeup 2 1",
		"708 1 switch 0 R 2",
		"803 1 switch 2 S 0",
		"900 0 waking 1 0 0 hardirq",
		"900 0 wakeup 1 0",
		"920 0 switch 0 R 1",
		"960 0 switch 1 S 0",
	}
)
