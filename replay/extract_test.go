package replay

import (
	"testing"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// TestExtractRoundTrip replays a workload, extracts a workload from the
// replayed timeline, replays that, and expects the same schedule: the
// extraction must recover every burst and every wakeup's cause.
func TestExtractRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		src  string
	}{
		{"ping-pong", `
topology symmetric 2
task a on 0
  repeat 20 {
    run 300us
    wake b
    wait b
  }
task b on 1
  repeat 20 {
    wait a
    run 200us
    wake a
  }
`},
		{"timers-and-fork", `
topology symmetric 2
task p
  periodic 1ms
  run 100us
  fork c
  periodic 1ms
  run 100us
  periodic 1ms
  run 100us
  periodic 1ms
  run 50us
task c start fork
  run 700us
  sleep 300us
  run 200us
`},
		{"little-and-big", `
cpu 0 cap=1024
cpu 1 cap=512
task a cpus 1 on 1
  repeat 5 {
    run 100us
    wake b
    sleep 200us
  }
task b cpus 0 on 0
  repeat 5 {
    wait a
    run 50us
  }
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := mustSpec(t, tc.src)
			opts := Options{HZ: 1000}
			r1, err := Simulate(sp.Workload, sp.Topology, newFIFO(0), opts)
			if err != nil {
				t.Fatal(err)
			}
			w2, err := Extract(r1.Timeline, sp.Topology)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			r2, err := Simulate(w2, sp.Topology, newFIFO(0), opts)
			if err != nil {
				t.Fatalf("replaying the extracted workload: %v", err)
			}
			byTID := map[timeline.TID]int{}
			for i, tk := range w2.Tasks {
				byTID[tk.TID] = i
			}
			for i, tk := range sp.Workload.Tasks {
				j, ok := byTID[tk.TID]
				if !ok {
					t.Errorf("task %s missing from the extracted workload", tk.Comm)
					continue
				}
				if got, want := w2.Tasks[j].Demand(), tk.Demand(); got != want {
					t.Errorf("task %s: extracted demand = %d, want %d", tk.Comm, got, want)
				}
				if got, want := r2.Tasks[j].CPUTime, r1.Tasks[i].CPUTime; got != want {
					t.Errorf("task %s: replayed CPU time = %d, want %d", tk.Comm, got, want)
				}
				if got, want := r2.Tasks[j].Exit, r1.Tasks[i].Exit; got != want {
					t.Errorf("task %s: replayed exit = %s, want %s", tk.Comm, got.Seconds(), want.Seconds())
				}
			}
		})
	}
}

// TestExtractCauses checks the attribution of wakeups in a hand-built
// timeline: a task wake in task context, a hardirq wake, a wake from an
// idle CPU, and a task first seen running.
// tlBuild writes small hand-made timelines of 2 CPUs for the extraction
// tests: switches, wakings and signals, each CPU's events in time order.
type tlBuild struct {
	strs *timeline.Strings
	b    *timeline.Builder
}

func newTLBuild() *tlBuild {
	strs := timeline.NewStrings()
	tb := &tlBuild{strs: strs, b: timeline.NewBuilder(strs, 2)}
	for cpu := timeline.CPU(0); cpu < 2; cpu++ {
		tb.b.Add(timeline.Event{Time: 0, CPU: cpu, Kind: timeline.KindBufferStart, Task: timeline.NoTID, Other: timeline.NoTID, Prio: -1, OPrio: -1, TGID: -1, Start: timeline.NoTime})
	}
	return tb
}

func (tb *tlBuild) comm(s string) timeline.CommID { return tb.strs.IDString(s) }

func (tb *tlBuild) sw(ts timeline.Time, cpu timeline.CPU, prev timeline.TID, pc string, st timeline.State, next timeline.TID, nc string) {
	tb.b.Add(timeline.Event{Time: ts, CPU: cpu, Kind: timeline.KindSwitch, Other: prev, OComm: tb.comm(pc), State: st, Task: next, Comm: tb.comm(nc), Prio: 120, OPrio: 120, TGID: -1, Start: timeline.NoTime})
}

func (tb *tlBuild) wake(ts timeline.Time, cpu timeline.CPU, task timeline.TID, tc string, waker timeline.TID, wc string, ctx timeline.Context) {
	tb.b.Add(timeline.Event{Time: ts, CPU: cpu, Kind: timeline.KindWaking, Task: task, Comm: tb.comm(tc), Other: waker, OComm: tb.comm(wc), Ctx: ctx, Prio: 120, OPrio: -1, Arg: int64(cpu), TGID: -1, Start: timeline.NoTime})
}

// sig is a group signal_generate of signal sig with result res.
func (tb *tlBuild) sig(ts timeline.Time, cpu timeline.CPU, target timeline.TID, tc string, sender timeline.TID, sc string, sig, res int64) {
	tb.b.Add(timeline.Event{Time: ts, CPU: cpu, Kind: timeline.KindSignal, Task: target, Comm: tb.comm(tc), Other: sender, OComm: tb.comm(sc), Arg: sig, Arg2: res | 1<<8, Prio: -1, OPrio: -1, TGID: -1, Start: timeline.NoTime})
}

// extract finishes the timeline and extracts its workload.
func (tb *tlBuild) extract(t *testing.T) *Workload {
	t.Helper()
	tl, err := tb.b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	w, err := Extract(tl, topology.Symmetric(2))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestExtractCauses(t *testing.T) {
	tb := newTLBuild()
	// CPU 0: a runs from the start, sleeps at 1 ms; b (woken by a at
	// 0.5 ms, task context) runs 1-2 ms on CPU 0 and sleeps; c sleeps at
	// the start and is woken on idle CPU 1 at 3 ms; a is woken by a
	// hardirq at 4 ms.
	tb.wake(500_000, 0, 11, "b", 10, "a", timeline.CtxTask)
	tb.sw(1_000_000, 0, 10, "a", timeline.StateInterrupt, 11, "b")
	tb.sw(2_000_000, 0, 11, "b", timeline.StateInterrupt, 0, "swapper/0")
	tb.wake(3_000_000, 1, 12, "c", 0, "swapper/1", timeline.CtxTask)
	tb.sw(3_000_000, 1, 0, "swapper/1", timeline.StateRunnable, 12, "c")
	tb.sw(3_500_000, 1, 12, "c", timeline.StateInterrupt, 0, "swapper/1")
	tb.wake(4_000_000, 0, 10, "a", 0, "swapper/0", timeline.CtxHardirq)
	tb.sw(4_000_000, 0, 0, "swapper/0", timeline.StateRunnable, 10, "a")
	tb.sw(4_200_000, 0, 10, "a", timeline.StateInterrupt, 0, "swapper/0")
	w := tb.extract(t)
	find := func(name string) *Task {
		for i := range w.Tasks {
			if w.Tasks[i].Comm == name {
				return &w.Tasks[i]
			}
		}
		t.Fatalf("no task %s", name)
		return nil
	}
	a, bb, c := find("a"), find("b"), find("c")
	if len(a.Segments) != 2 || a.Segments[0].Wake.Kind != WakeStart || a.Segments[0].Work != 1_000_000 {
		t.Errorf("a segments = %+v, want a 1 ms WakeStart burst first", a.Segments)
	}
	if got := a.Segments[1].Wake; got.Kind != WakeTimer || got.Delay != 3_000_000 {
		t.Errorf("a second wake = %+v, want a timer 3 ms after the sleep", got)
	}
	if got := bb.Segments[0].Wake; got.Kind != WakeTask || got.Work != 500_000 || w.Tasks[got.Waker].Comm != "a" {
		t.Errorf("b wake = %+v, want a at 500000 ns of its work", got)
	}
	if got := bb.Segments[0].Work; got != 1_000_000 {
		t.Errorf("b work = %d, want 1000000", got)
	}
	if got := c.Segments[0].Wake; got.Kind != WakeAt || got.At != 3_000_000 {
		t.Errorf("c wake = %+v, want an outside wake at 3 ms", got)
	}
	if a.End != EndSleep {
		t.Errorf("a end = %v, want sleep", a.End)
	}
}

// TestExtractKilled: a task that a delivered signal reaches while it runs,
// and that exits without blocking, gets KillAt; one that blocks between the
// signal and its exit, or whose signal was not delivered, does not.
func TestExtractKilled(t *testing.T) {
	tb := newTLBuild()
	// CPU 0: hog runs from 0, killed by timeout (running on CPU 1) at
	// 5 ms, exits at 5.1 ms; then ignored runs until it exits at 7.5 ms,
	// signalled at 6.5 ms with SIGCHLD, which ends no task. CPU 1: sleeper
	// runs, is signalled at 5 ms, blocks at 5.2 ms, runs again and exits
	// at 7 ms. ignored is also signalled (while not running) with res=1.
	tb.sw(100_000, 0, 0, "swapper/0", timeline.StateRunnable, 20, "hog")
	tb.sw(100_000, 1, 0, "swapper/1", timeline.StateRunnable, 21, "timeout")
	tb.sig(5_000_000, 1, 20, "hog", 21, "timeout", 15, 0)
	tb.sw(5_000_100, 1, 21, "timeout", timeline.StateInterrupt, 22, "sleeper")
	tb.sig(5_000_200, 1, 22, "sleeper", 21, "timeout", 15, 0)
	tb.sig(5_000_300, 1, 23, "ignored", 21, "timeout", 15, 1)
	tb.sw(5_100_000, 0, 20, "hog", timeline.StateDead, 23, "ignored")
	tb.sw(5_200_000, 1, 22, "sleeper", timeline.StateInterrupt, 0, "swapper/1")
	tb.wake(6_000_000, 1, 22, "sleeper", 0, "swapper/1", timeline.CtxHardirq)
	tb.sw(6_000_000, 1, 0, "swapper/1", timeline.StateRunnable, 22, "sleeper")
	tb.sig(6_500_000, 1, 23, "ignored", 22, "sleeper", 17, 0)
	tb.sw(7_000_000, 1, 22, "sleeper", timeline.StateDead, 0, "swapper/1")
	tb.sw(7_500_000, 0, 23, "ignored", timeline.StateDead, 0, "swapper/0")
	w := tb.extract(t)
	want := map[string]timeline.Time{"hog": 5_000_000, "sleeper": 0, "ignored": 0, "timeout": 0}
	for _, tk := range w.Tasks {
		if k, ok := want[tk.Comm]; ok && tk.KillAt != k {
			t.Errorf("%s: KillAt %d, want %d", tk.Comm, tk.KillAt, k)
		}
	}
	var found bool
	for _, a := range w.Assumptions {
		found = found || (a.Name == AssumeKilledAt && a.Tasks == 1)
	}
	if !found {
		t.Errorf("no %s assumption for 1 task: %+v", AssumeKilledAt, w.Assumptions)
	}
}

// TestExtractBusyIPI: a wakeup raised on CPU 0 whose wakee then preempts
// the task running on CPU 1 measures an IPI to a busy CPU (8 us here); a
// wakeup that preempts its own waker on its CPU, or lands on an idle CPU,
// does not count.
func TestExtractBusyIPI(t *testing.T) {
	tb := newTLBuild()
	tb.sw(100_000, 0, 0, "swapper/0", timeline.StateRunnable, 10, "a")
	tb.sw(100_000, 1, 0, "swapper/1", timeline.StateRunnable, 11, "hog")
	tb.wake(1_000_000, 0, 12, "b", 10, "a", timeline.CtxTask) // b last ran on CPU 1
	tb.sw(1_008_000, 1, 11, "hog", timeline.StateRunnable, 12, "b")
	tb.sw(1_100_000, 1, 12, "b", timeline.StateInterrupt, 11, "hog")
	tb.wake(2_000_000, 0, 13, "c", 10, "a", timeline.CtxTask)
	tb.sw(2_003_000, 0, 10, "a", timeline.StateRunnable, 13, "c") // preempts its waker: not an IPI
	tb.sw(2_100_000, 0, 13, "c", timeline.StateInterrupt, 10, "a")
	tb.sw(3_000_000, 0, 10, "a", timeline.StateInterrupt, 0, "swapper/0")
	w := tb.extract(t)
	if d := w.WakeDelays; d.BusyIPI != 1 || d.BusyIPINs != 8_000 {
		t.Errorf("busy IPI: %d samples, median %d ns; want 1 of 8000 ns", d.BusyIPI, d.BusyIPINs)
	}
	if d := w.WakeDelays; d.TaskPreempt != 1 || d.TaskPreemptNs != 3_000 {
		t.Errorf("task preemption: %d samples, median %d ns; want 1 of 3000 ns", d.TaskPreempt, d.TaskPreemptNs)
	}
}
