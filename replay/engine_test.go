package replay

import (
	"reflect"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

func mustSpec(t testing.TB, src string) *Spec {
	t.Helper()
	sp, err := ParseSpec(strings.NewReader(src), "test.spec")
	if err != nil {
		t.Fatalf("ParseSpec: %v", err)
	}
	return sp
}

func simulate(t testing.TB, sp *Spec, pol Policy, opts Options) *Result {
	t.Helper()
	topo := sp.Topology
	if topo == nil {
		topo = topology.Symmetric(1)
	}
	r, err := Simulate(sp.Workload, topo, pol, opts)
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	return r
}

// switches returns "prev->next@time" strings of the timeline's switches on cpu.
func switches(tl *timeline.Timeline, cpu int) []string {
	var out []string
	for i := 0; i < tl.Len(); i++ {
		if tl.Kinds[i] != timeline.KindSwitch || int(tl.CPUs[i]) != cpu {
			continue
		}
		e := tl.Event(i)
		out = append(out, tl.Strings.Get(e.OComm)+"->"+tl.Strings.Get(e.Comm)+"@"+e.Time.Seconds())
	}
	return out
}

func TestEngineSingleTask(t *testing.T) {
	sp := mustSpec(t, `
topology symmetric 1
task a
  run 10ms
`)
	r := simulate(t, sp, newFIFO(0), Options{})
	if got, want := r.Tasks[0].CPUTime, int64(10_000_000); got != want {
		t.Errorf("CPUTime = %d, want %d", got, want)
	}
	if !r.Tasks[0].Finished || r.Tasks[0].Exit != 10_000_000 {
		t.Errorf("Finished = %v Exit = %d, want true 10000000", r.Tasks[0].Finished, r.Tasks[0].Exit)
	}
	got := strings.Join(switches(r.Timeline, 0), " ")
	want := "swapper/0->a@0.000000 a->swapper/0@0.010000"
	if got != want {
		t.Errorf("switches = %q, want %q", got, want)
	}
}

func TestEngineCapacityScaling(t *testing.T) {
	// 1 ms of work on a CPU of capacity 512 takes 2 ms.
	sp := mustSpec(t, `
cpu 0 cap=1024
cpu 1 cap=512
task a cpus 1
  run 1ms
`)
	r := simulate(t, sp, newFIFO(0), Options{})
	if got, want := r.Tasks[0].CPUTime, int64(2_000_000); got != want {
		t.Errorf("CPUTime = %d, want %d", got, want)
	}
	if got, want := r.Tasks[0].Work, int64(1_000_000); got != want {
		t.Errorf("Work = %d, want %d", got, want)
	}
}

func TestEnginePingPong(t *testing.T) {
	// a runs 1 ms, wakes b, waits for b; b runs 2 ms, wakes a. Both on one
	// CPU: a 0-1, b 1-3, a 3-4, b 4-6.
	sp := mustSpec(t, `
topology symmetric 1
task a
  repeat 2 {
    run 1ms
    wake b
    wait b
  }
task b
  repeat 2 {
    wait a
    run 2ms
    wake a
  }
`)
	r := simulate(t, sp, newFIFO(0), Options{})
	got := strings.Join(switches(r.Timeline, 0), " ")
	want := "swapper/0->a@0.000000 a->b@0.001000 b->a@0.003000 a->b@0.004000 b->a@0.006000 a->swapper/0@0.006000"
	if got != want {
		t.Errorf("switches =\n %q\nwant\n %q", got, want)
	}
	if r.Tasks[1].LatencyN != 2 || r.Tasks[1].LatencySum != 0 {
		t.Errorf("b latency n=%d sum=%d, want 2 0", r.Tasks[1].LatencyN, r.Tasks[1].LatencySum)
	}
}

func TestEngineTimers(t *testing.T) {
	// periodic keeps its period even when a run overruns it: expiries at
	// 1, 2, 3 ms; the second run takes 1.5 ms, so the third wake is late
	// (2.5 → fires at once at 3.5? no: expiry 3 ms, block at 3.5 ms).
	sp := mustSpec(t, `
topology symmetric 1
task p
  periodic 1ms
  run 100us
  periodic 1ms
  run 1500us
  periodic 1ms
  run 100us
`)
	r := simulate(t, sp, newFIFO(0), Options{})
	got := strings.Join(switches(r.Timeline, 0), " ")
	want := "swapper/0->p@0.001000 p->swapper/0@0.001100 swapper/0->p@0.002000 p->swapper/0@0.003500 swapper/0->p@0.003500 p->swapper/0@0.003600"
	if got != want {
		t.Errorf("switches =\n %q\nwant\n %q", got, want)
	}
	sp = mustSpec(t, `
topology symmetric 1
task s
  run 1ms
  sleep 2ms
  run 1ms
`)
	r = simulate(t, sp, newFIFO(0), Options{})
	if got, want := r.Tasks[0].Exit, timeline.Time(4_000_000); got != want {
		t.Errorf("sleep: Exit = %d, want %d", got, want)
	}
}

func TestEngineWakeBeforeBlock(t *testing.T) {
	// b is woken by a at 0.5 ms, while b still runs on the other CPU: b
	// does not block at the end of its first segment.
	sp := mustSpec(t, `
topology symmetric 2
task a on 0
  run 500us
  wake b
task b on 1
  run 1ms
  wait a
  run 1ms
`)
	r := simulate(t, sp, newFIFO(0), Options{})
	if got, want := r.Tasks[1].Exit, timeline.Time(2_000_000); got != want {
		t.Errorf("b Exit = %d, want %d", got, want)
	}
	if got := r.Counters["wake-before-block"]; got != 1 {
		t.Errorf("wake-before-block = %d, want 1", got)
	}
	if got := len(switches(r.Timeline, 1)); got != 2 {
		t.Errorf("CPU 1 switches = %d, want 2 (b never left)", got)
	}
}

func TestEngineForkAndRoundRobin(t *testing.T) {
	sp := mustSpec(t, `
topology symmetric 1
hz 1000
task parent
  run 1ms
  fork child
  run 3ms
task child start fork
  run 2ms
`)
	r := simulate(t, sp, newFIFO(2_000_000), Options{})
	if r.Timeline.KindCounts[timeline.KindWakeupNew] != 1 || r.Timeline.KindCounts[timeline.KindFork] != 1 {
		t.Errorf("fork events: wakeup_new=%d fork=%d, want 1 1", r.Timeline.KindCounts[timeline.KindWakeupNew], r.Timeline.KindCounts[timeline.KindFork])
	}
	// The 2 ms slice counts from the pick and is checked at each 1 ms
	// tick: parent 0-2, child 2-4 (done), parent 4-6.
	got := strings.Join(switches(r.Timeline, 0), " ")
	want := "swapper/0->parent@0.000000 parent->child@0.002000 child->parent@0.004000 parent->swapper/0@0.006000"
	if got != want {
		t.Errorf("switches =\n %q\nwant\n %q", got, want)
	}
	for i, tr := range r.Tasks {
		if tr.Work != tr.Demand {
			t.Errorf("task %d Work = %d, want demand %d", i, tr.Work, tr.Demand)
		}
	}
}

func TestEngineAffinityChange(t *testing.T) {
	sp := mustSpec(t, `
topology symmetric 2
task a cpus 0
  affinity 1ms 1
  run 3ms
`)
	r := simulate(t, sp, newFIFO(0), Options{IPIDelay: 10_000})
	if r.Tasks[0].Migrations != 1 {
		t.Errorf("Migrations = %d, want 1", r.Tasks[0].Migrations)
	}
	// moved at 1.01 ms (IPI), then runs the remaining 2 ms on CPU 1.
	if got, want := r.Tasks[0].Exit, timeline.Time(3_010_000); got != want {
		t.Errorf("Exit = %d, want %d", got, want)
	}
}

func TestEngineDeterministic(t *testing.T) {
	ring := `
topology symmetric 4
task r0
  repeat 50 {
    run 30us
    wake r1
    wait r3
  }
task r1
  repeat 50 {
    wait r0
    run 20us
    wake r2
  }
task r2
  repeat 50 {
    wait r1
    run 20us
    wake r3
  }
task r3
  repeat 50 {
    wait r2
    run 20us
    wake r0
  }
`
	sp := mustSpec(t, ring)
	// Plain options, and the delays drawn from distributions as
	// CalibratedOptions sets them: the same seed gives the same events.
	spread := make(DelayDist, 20)
	for i := range spread {
		spread[i] = int64(5_000 + 3_000*i)
	}
	withDists := DefaultOptions()
	withDists.IdleExitDist, withDists.IdleWakeDist, withDists.TaskReschedDist = spread, spread, spread
	for _, opts := range []Options{DefaultOptions(), withDists} {
		opts.Seed = 7
		a := simulate(t, sp, newFIFO(0), opts)
		b := simulate(t, sp, newFIFO(0), opts)
		if a.Timeline.Len() != b.Timeline.Len() {
			t.Fatalf("events %d vs %d", a.Timeline.Len(), b.Timeline.Len())
		}
		for i := 0; i < a.Timeline.Len(); i++ {
			if a.Timeline.Event(i) != b.Timeline.Event(i) {
				t.Fatalf("event %d differs: %+v vs %+v", i, a.Timeline.Event(i), b.Timeline.Event(i))
			}
		}
		for i, tr := range a.Tasks {
			if tr.Work != tr.Demand || !tr.Finished {
				t.Errorf("task %d: Work %d Demand %d Finished %v", i, tr.Work, tr.Demand, tr.Finished)
			}
		}
	}
	// The draws do vary: another seed moves the ring's last exit.
	lastExit := func(seed uint64) timeline.Time {
		o := withDists
		o.Seed = seed
		var last timeline.Time
		for _, tr := range simulate(t, sp, newFIFO(0), o).Tasks {
			last = max(last, tr.Exit)
		}
		return last
	}
	if a, b := lastExit(7), lastExit(8); a == b {
		t.Errorf("seeds 7 and 8 end at the same %v: the delays were not drawn", a)
	}
}

// TestEngineAffinityBeforeStart: a mask change due before the task has
// started (a thread forked later than its recorded pin) waits for its
// first run, so the task is placed like the fork it is, then moved: b
// starts at 2 ms on idle CPU 0 (CPU 1 runs a), its change to CPU 1 came at
// 1 ms, so it is moved there by the stopper at once.
func TestEngineAffinityBeforeStart(t *testing.T) {
	sp := mustSpec(t, `
topology symmetric 2
task a cpus 1
  run 10ms
task b start 2ms
  affinity 1ms 1
  run 1ms
`)
	r := simulate(t, sp, newFIFO(0), Options{IPIDelay: 10_000})
	if got := r.Tasks[1].Migrations; got != 1 {
		t.Errorf("b: Migrations = %d, want 1 (placed on CPU 0 at its start, then moved)", got)
	}
	n := 0
	for i := 0; i < r.Timeline.Len(); i++ {
		if ev := r.Timeline.Event(i); ev.Kind == timeline.KindMigrate {
			n++
			if ev.Arg != 1 {
				t.Errorf("migration %d: to CPU %d, want 1", n, ev.Arg)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d migrations in the timeline, want 1", n)
	}
}

// TestEngineOverrun: a task that exits in the workload but has not by the
// end keeps the run going with Options.Overrun (at most that long past the
// end); without it the run stops at the end.
func TestEngineOverrun(t *testing.T) {
	sp := mustSpec(t, `
topology symmetric 1
task a
  run 6ms
  exit
task b
  run 6ms
  exit
`)
	sp.Workload.End = 10_000_000
	for _, tc := range []struct {
		overrun  timeline.Time
		finished bool
		end      timeline.Time
	}{
		{0, false, 10_000_000},
		{5_000_000, true, 12_000_000},
		{1_000_000, false, 11_000_000},
	} {
		r := simulate(t, sp, newFIFO(0), Options{Overrun: tc.overrun})
		done := r.Tasks[0].Finished && r.Tasks[1].Finished
		if done != tc.finished || r.End != tc.end {
			t.Errorf("overrun %d: both finished %v, end %d; want %v, %d", tc.overrun, done, r.End, tc.finished, tc.end)
		}
	}
}

// TestEngineOverrunRunningAtEnd: past the end a task that ran until the
// end in the recording (forever: 4 ms recorded) stops once it has its
// recorded work, so the overrun goes to the task being waited for. With
// 1 ms slices r and x share the CPU until 10 ms (r 6 ms, x 4 ms); r is past
// its 4 ms and stops, x does its last 4 ms alone and exits at 14 ms
// (18 ms if r kept its share).
func TestEngineOverrunRunningAtEnd(t *testing.T) {
	sp := mustSpec(t, `
topology symmetric 1
task r
  run 4ms
  forever
task x
  run 8ms
  exit
`)
	sp.Workload.End = 10_000_000
	r := simulate(t, sp, newFIFO(1_000_000), Options{Overrun: 10_000_000})
	if !r.Tasks[1].Finished || r.Tasks[1].Exit != 14_000_000 {
		t.Errorf("x finished %v at %d, want 14000000", r.Tasks[1].Finished, r.Tasks[1].Exit)
	}
	if got := r.Counters["running-at-end.stopped"]; got != 1 {
		t.Errorf("running-at-end.stopped = %d, want 1", got)
	}
	if r.Tasks[0].CPUTime != 6_000_000 {
		t.Errorf("r ran %d ns, want 6000000 (until the end, nothing after)", r.Tasks[0].CPUTime)
	}
}

// TestEngineKill: a task with KillAt stops at that time, running or
// queued, with the wakes its segment had still to do; one blocked then is
// left alone.
func TestEngineKill(t *testing.T) {
	sp := mustSpec(t, `
topology symmetric 1
task hog
  run 100ms
  wake parent
  exit
task parent
  wait hog
  run 1ms
task late start 40ms
  run 100ms
`)
	w := sp.Workload
	for i := range w.Tasks {
		switch w.Tasks[i].Comm {
		case "hog":
			w.Tasks[i].KillAt = 30_000_000 // running then
		case "late":
			w.Tasks[i].KillAt = 20_000_000 // not started then: missed
		}
	}
	r := simulate(t, sp, newFIFO(0), Options{})
	byComm := map[string]TaskResult{}
	for i, tk := range w.Tasks {
		byComm[tk.Comm] = r.Tasks[i]
	}
	if h := byComm["hog"]; !h.Finished || h.Exit != 30_000_000 || h.CPUTime != 30_000_000 {
		t.Errorf("hog: finished %v exit %d CPU %d, want exit and CPU time 30 ms", h.Finished, h.Exit, h.CPUTime)
	}
	if p := byComm["parent"]; !p.Finished || p.CPUTime != 1_000_000 || p.Exit < 30_000_000 || p.Exit > 41_000_000 {
		t.Errorf("parent: finished %v exit %d CPU %d, want woken by the killed hog's exit", p.Finished, p.Exit, p.CPUTime)
	}
	if l := byComm["late"]; l.CPUTime != 100_000_000 {
		t.Errorf("late: CPU %d, want all its 100 ms (the kill came before it started)", l.CPUTime)
	}
	if r.Counters["killed"] != 1 || r.Counters["kill.not-runnable"] != 1 {
		t.Errorf("counters killed %d, kill.not-runnable %d; want 1 and 1", r.Counters["killed"], r.Counters["kill.not-runnable"])
	}
}

// TestPlanShared: runs that share a Plan (Options.Plan) give what runs
// that build their own give, and a kill (which ends the actions left
// where the task's work stands) leaves the shared Plan as it was; a Plan
// of another workload is refused.
func TestPlanShared(t *testing.T) {
	sp := mustSpec(t, `
topology symmetric 2
task hog
  run 100ms
  wake parent
  wake other
  exit
task parent
  wait hog
  run 1ms
task other
  wait hog
  run 2ms
task late start 40ms
  run 10ms
`)
	w := sp.Workload
	for i := range w.Tasks {
		if w.Tasks[i].Comm == "hog" {
			w.Tasks[i].KillAt = 30_000_000
		}
	}
	own := simulate(t, sp, newFIFO(0), Options{})
	plan, err := NewPlan(w)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := NewPlan(w)
	for run := range 2 {
		r := simulate(t, sp, newFIFO(0), Options{Plan: plan})
		if !reflect.DeepEqual(r.Tasks, own.Tasks) || !reflect.DeepEqual(r.Counters, own.Counters) {
			t.Errorf("run %d with the shared plan: tasks %+v, want %+v", run, r.Tasks, own.Tasks)
		}
	}
	if !reflect.DeepEqual(plan.acts, fresh.acts) || !reflect.DeepEqual(plan.segs, fresh.segs) {
		t.Errorf("the runs changed the shared plan")
	}
	if own.Counters["killed"] != 1 {
		t.Errorf("killed %d, want 1", own.Counters["killed"])
	}
	other := mustSpec(t, "topology symmetric 1\ntask a\n  run 1ms\n")
	if _, err := Simulate(other.Workload, other.Topology, newFIFO(0), Options{Plan: plan}); err == nil {
		t.Errorf("a plan of another workload was taken")
	}
}
