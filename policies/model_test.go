package policies

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
)

// The schedules below are computed by hand from the model's rules; the
// comment of each test gives the derivation.

func TestTwoHogsShareInSlices(t *testing.T) {
	// One CPU: base slice 0.75 ms, HZ 250. a is picked first (tie on
	// deadline, queue order). Every 4 ms tick finds the current task past
	// its deadline and the other one eligible: they alternate each tick.
	r, sp, _ := run(t, `
topology symmetric 1
hz 250
end 40ms
task a
  forever
task b
  forever
`, "6.12", 0)
	got := switches(r.Timeline, 0)
	if len(got) != 11 { // 0, 4, ..., 40 ms (the run ends after the 40 ms tick)
		t.Fatalf("switches = %d, want 11: %v", len(got), got)
	}
	for k, s := range got {
		want := timeline.Time(4_000_000 * k)
		next := "a"
		if k%2 == 1 {
			next = "b"
		}
		if s.at != want || s.next != next {
			t.Errorf("switch %d = %s at %s, want %s at %s", k, s.next, s.at.Seconds(), next, want.Seconds())
		}
		if k > 0 && s.state != timeline.StatePreempted {
			t.Errorf("switch %d prev_state = %v, want R+", k, s.state)
		}
	}
	for _, name := range []string{"a", "b"} {
		if got := r.Tasks[taskIndex(t, sp, name)].CPUTime; got != 20_000_000 {
			t.Errorf("%s CPU time = %d, want 20 ms", name, got)
		}
	}
}

func TestTickQuantizedSlices(t *testing.T) {
	// The same at HZ 100: a slice ends at the 10 ms tick that notices it.
	r, _, _ := run(t, `
topology symmetric 1
hz 100
end 50ms
task a
  forever
task b
  forever
`, "6.12", 0)
	for k, s := range switches(r.Timeline, 0) {
		if want := timeline.Time(10_000_000 * k); s.at != want {
			t.Errorf("switch %d at %s, want %s", k, s.at.Seconds(), want.Seconds())
		}
	}
}

func TestNiceWeightShare(t *testing.T) {
	// nice -5 weighs 3121, nice 0 1024 (sched_prio_to_weight): the CPU
	// splits 3121:1024, 75.30% for the nice -5 task.
	tests := []struct {
		name   string
		a, b   string
		wa, wb float64
	}{
		{"nice-5-vs-0", "nice -5", "nice 0", 3121, 1024},
		{"nice0-vs-19", "nice 0", "nice 19", 1024, 15},
		{"idle-vs-nice19", "policy idle", "nice 19", 3, 15},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := fmt.Sprintf(`
topology symmetric 1
hz 1000
end 3s
task a %s
  forever
task b %s
  forever
`, tc.a, tc.b)
			r, _, _ := run(t, src, "6.12", 0)
			got := float64(r.Tasks[0].CPUTime) / float64(r.Tasks[0].CPUTime+r.Tasks[1].CPUTime)
			want := tc.wa / (tc.wa + tc.wb)
			if math.Abs(got-want)/want > 0.01 {
				t.Errorf("share of a = %.4f, want %.4f within 1%%", got, want)
			}
		})
	}
}

func TestEligibleWakerPreempts(t *testing.T) {
	// h runs alone; s sleeps until 10 ms (a timer on CPU 0). At 10 ms h's
	// deadline renews to 10.75 ms (no longer protected) and s is placed
	// at V with deadline V + 0.75 ms = 10.75 ms: the pick (ties go to the
	// queued entity) is s, which preempts at once.
	r, sp, _ := run(t, `
topology symmetric 1
hz 250
end 20ms
task h
  forever
task s
  sleep 10ms
  run 1ms
`, "6.12", 0)
	at, _ := firstSwitchIn(r.Timeline, "s", 0)
	if at != 10_000_000 {
		t.Errorf("s switched in at %s, want 0.010000", at.Seconds())
	}
	tr := r.Tasks[taskIndex(t, sp, "s")]
	if tr.LatencyN != 1 || tr.LatencyMax != 0 {
		t.Errorf("s latency n=%d max=%d, want one sample of 0", tr.LatencyN, tr.LatencyMax)
	}
}

func TestRunToParity(t *testing.T) {
	// h was picked at 0 with a half slice (deadline 0.375 ms, protected).
	// w (nice -10, weight 9548) wakes at 0.2 ms with deadline 0.2 +
	// 0.75 x 1024/9548 = 0.2804 ms, earlier than h's: it is the EEVDF pick.
	// RUN_TO_PARITY keeps h on the CPU until the 10 ms tick renews its
	// deadline; NO_RUN_TO_PARITY lets w preempt at once.
	src := `
topology symmetric 1
hz 100
end 30ms
task h
  forever
task w nice -10
  sleep 200us
  run 100us
`
	tests := []struct {
		policy string
		want   timeline.Time
	}{
		{"6.12", 10_000_000},
		{"6.12,NO_RUN_TO_PARITY", 200_000},
		{"6.6", 10_000_000},
		{"6.6,NO_RUN_TO_PARITY", 200_000},
		{"6.18", 10_000_000},
	}
	for _, tc := range tests {
		t.Run(tc.policy, func(t *testing.T) {
			r, _, _ := run(t, src, tc.policy, 0)
			if at, _ := firstSwitchIn(r.Timeline, "w", 0); at != tc.want {
				t.Errorf("w switched in at %s, want %s", at.Seconds(), tc.want.Seconds())
			}
		})
	}
}

func TestIdleCPUPullsFromOverloaded(t *testing.T) {
	// Three hogs queued on CPU 0, CPU 1 idle and tickless. CPU 0's first
	// tick (4 ms) sees two or more tasks and kicks CPU 1 (nohz idle
	// balance); CPU 1's MC-level balance finds CPU 0 overloaded, computes
	// migrate_task with an imbalance of (3 - 0) >> 1 = 1 and pulls the
	// least recently run queued task.
	r, _, _ := run(t, `
topology symmetric 2
hz 250
end 40ms
task h{i} x3 on 0
  forever
`, "6.12", 0)
	migs := migrations(r.Timeline)
	if len(migs) == 0 {
		t.Fatal("no migration")
	}
	if m := migs[0]; m.at != 4_000_000 || m.from != 0 || m.to != 1 {
		t.Errorf("first migration = %+v, want one task 0 -> 1 at 4 ms", m)
	}
	busy := 0
	for _, tr := range r.Tasks {
		busy += int(tr.CPUTime)
	}
	if want := 40_000_000 + 36_000_000; busy != want {
		t.Errorf("total CPU time = %d, want %d (CPU 1 busy from 4 ms)", busy, want)
	}
}

func TestNewidleBalancePulls(t *testing.T) {
	// CPU 1's task exits at 1 ms; its newidle balance (root domain
	// overloaded, avg_idle 1 ms above the zero initial cost) pulls one of
	// the two hogs waiting on CPU 0 at once, and switches to it after the
	// cost of the pass.
	r, _, _ := run(t, `
topology symmetric 2
hz 250
end 10ms
task h{i} x3 on 0
  forever
task x on 1
  run 1ms
`, "6.12", 0)
	migs := migrations(r.Timeline)
	if len(migs) == 0 || migs[0].at != 1_000_000 || migs[0].to != 1 {
		t.Fatalf("migrations = %+v, want a pull to CPU 1 at 1 ms", migs)
	}
	at, cpu := firstSwitchIn(r.Timeline, migs[0].task, 1_000_000)
	if cpu != 1 || at < 1_000_000 || at > 1_005_000 {
		t.Errorf("%s switched in on CPU %d at %s, want CPU 1 within 5 us of 1 ms", migs[0].task, cpu, at.Seconds())
	}
	if r.Counters["lb.newidle.pulled"] < 1 {
		t.Errorf("lb.newidle.pulled = %d, want >= 1", r.Counters["lb.newidle.pulled"])
	}
}

func TestWakeAffine(t *testing.T) {
	// Two LLCs, {0,1} and {2,3}. w runs on CPU 2 and wakes t, which last
	// ran on CPU 0.
	//  - sync, CPU 0 busy: wake_affine_idle returns the waker's CPU (sync
	//    and one task there), select_idle_sibling finds CPU 3 idle in that
	//    LLC;
	//  - not sync, CPU 0 idle: wake_affine_idle keeps prev (idle), and
	//    select_idle_sibling takes it.
	topo := `
cpu 0 core=0 llc=0
cpu 1 core=1 llc=0
cpu 2 core=2 llc=1
cpu 3 core=3 llc=1
hz 250
end 5ms
`
	tests := []struct {
		name string
		body string
		want int
	}{
		{"sync-to-waker-llc", `
task hog cpus 0 on 0
  forever
task hog1 cpus 1 on 1
  forever
task w cpus 2 on 2
  run 1ms
  wake t sync
  run 1ms
task t on 0
  wait w
  run 500us
`, 3},
		{"prev-idle", `
task w cpus 2 on 2
  run 1ms
  wake t
  run 1ms
task t on 0
  wait w
  run 500us
`, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _, _ := run(t, topo+tc.body, "6.12", 0)
			if _, cpu := firstSwitchIn(r.Timeline, "t", 0); cpu != tc.want {
				t.Errorf("t ran on CPU %d, want %d", cpu, tc.want)
			}
		})
	}
}

const junoTopo = `
cpu 0 core=0 llc=0 cap=383
cpu 1 core=1 llc=1 cap=1024
cpu 2 core=2 llc=1 cap=1024
cpu 3 core=3 llc=0 cap=383
cpu 4 core=4 llc=0 cap=383
cpu 5 core=5 llc=0 cap=383
`

func TestMisfitMigrationJuno(t *testing.T) {
	// A hog starts on little CPU 0 (capacity 383) with util 383/2. Its
	// util grows as 383 - 191.5 x 2^(-t/32.768 ms) and stops fitting
	// (util x 1280 >= 383 x 1024, util >= 306.4) after 32.768 x log2(2.5)
	// = 43.3 ms; the 44 ms tick marks the CPU misfit and kicks an idle big
	// CPU, whose PKG-level balance classifies the little group misfit,
	// picks migrate_misfit and starts an active balance: the stopper moves
	// the hog to big CPU 1 at 44 ms.
	r, _, _ := run(t, junoTopo+`
hz 250
end 100ms
task hog on 0
  forever
`, "6.12", 0)
	migs := migrations(r.Timeline)
	if len(migs) != 1 {
		t.Fatalf("migrations = %+v, want one", migs)
	}
	if m := migs[0]; m.at != 44_000_000 || m.from != 0 || (m.to != 1 && m.to != 2) {
		t.Errorf("migration = %+v, want 0 -> big CPU at 44 ms", m)
	}
	if r.Counters["lb.active.misfit"] != 1 {
		t.Errorf("lb.active.misfit = %d, want 1", r.Counters["lb.active.misfit"])
	}
	// The hog did 44 ms at 383 then 56 ms at 1024.
	want := int64(44_000_000*383/1024 + 56_000_000)
	if got := r.Tasks[0].Work; got < want-1000 || got > want+1000 {
		t.Errorf("work = %d, want %d", got, want)
	}
}

func TestForkSlowPathIdleCPU(t *testing.T) {
	// The parent keeps CPU 0 busy and forks at 1 ms: the slow path
	// (sched_balance_find_dst_cpu) finds the idlest group, an idle CPU.
	r, _, _ := run(t, `
topology symmetric 4
hz 250
end 5ms
task p on 0
  run 1ms
  fork c
  run 3ms
task c start fork
  run 1ms
`, "6.12", 0)
	at, cpu := firstSwitchIn(r.Timeline, "c", 0)
	if at != 1_000_000 || cpu == 0 {
		t.Errorf("child ran on CPU %d at %s, want an idle CPU at 1 ms", cpu, at.Seconds())
	}
}

func TestRTStrictPriority(t *testing.T) {
	// A FIFO task woken at 5 ms preempts the fair hog at once and keeps
	// the CPU for its whole 2 ms through ticks.
	r, sp, _ := run(t, `
topology symmetric 1
hz 250
end 10ms
task hog
  forever
task rt rt 50
  sleep 5ms
  run 2ms
`, "6.12", 0)
	got := switches(r.Timeline, 0)
	want := []switchEv{
		{at: 0, prev: "swapper/0", next: "hog"},
		{at: 5_000_000, prev: "hog", next: "rt"},
		{at: 7_000_000, prev: "rt", next: "hog"},
	}
	if len(got) != len(want) {
		t.Fatalf("switches = %v, want %v", got, want)
	}
	for k := range want {
		if got[k].at != want[k].at || got[k].prev != want[k].prev || got[k].next != want[k].next {
			t.Errorf("switch %d = %+v, want %+v", k, got[k], want[k])
		}
	}
	if tr := r.Tasks[taskIndex(t, sp, "rt")]; tr.Preempted != 0 {
		t.Errorf("rt preempted %d times, want 0", tr.Preempted)
	}
}

func TestRTWakePlacement(t *testing.T) {
	// hi (prio 49) runs on CPU 0; lo (prio 59) last ran there and wakes at
	// 1 ms: select_task_rq_rt sees a higher RT task on its CPU and
	// find_lowest_rq picks idle CPU 1.
	r, _, _ := run(t, `
topology symmetric 2
hz 250
end 5ms
task hi rt 50 on 0
  run 4ms
task lo rt 40 on 0
  sleep 1ms
  run 1ms
`, "6.12", 0)
	at, cpu := firstSwitchIn(r.Timeline, "lo", 0)
	if at != 1_000_000 || cpu != 1 {
		t.Errorf("lo ran on CPU %d at %s, want CPU 1 at 1 ms", cpu, at.Seconds())
	}
}

func TestPELTHalfLife(t *testing.T) {
	// A new hog starts with util 512 (half the idle CPU's capacity) and
	// approaches 1024 with a 32.768 ms half-life: after 200 ms,
	// 1024 - 512 x 2^(-200/32.768) = 1016.5.
	_, _, m := run(t, `
topology symmetric 1
hz 250
end 200ms
task hog
  forever
`, "6.12", 0)
	got := m.taskUtil(0)
	want := 1024 - 512*math.Exp2(-200/32.768)
	if math.Abs(got-want) > 0.5 {
		t.Errorf("util after 200 ms = %.2f, want %.2f", got, want)
	}
}

func TestDelayDequeue(t *testing.T) {
	// d runs 3 ms bursts beside a hog and sleeps 1 ms: at the end of a
	// burst it is past the average vruntime, so under DELAY_DEQUEUE (6.12)
	// it stays queued while asleep and is requeued in place when woken.
	// 6.6 has no delayed dequeue.
	src := `
topology symmetric 1
hz 1000
end 200ms
task hog
  forever
task d
  repeat 40 {
    run 3ms
    sleep 1ms
  }
`
	r12, _, _ := run(t, src, "6.12", 0)
	r6, _, _ := run(t, src, "6.6", 0)
	if r12.Counters["eevdf.delayed-dequeue"] == 0 {
		t.Errorf("6.12: no delayed dequeue")
	}
	if r6.Counters["eevdf.delayed-dequeue"] != 0 {
		t.Errorf("6.6: %d delayed dequeues, want 0", r6.Counters["eevdf.delayed-dequeue"])
	}
	for _, r := range []*replay.Result{r12, r6} {
		if n := len(r.Timeline.Inconsistencies()); n != 0 {
			t.Errorf("%s: %d timeline inconsistencies, first %+v", r.Policy, n, r.Timeline.Inconsistencies()[0])
		}
	}
}

func TestVersionsDiffer(t *testing.T) {
	// The three modeled versions are distinct policies with their own
	// names, and each runs a mixed workload to the end with a consistent
	// timeline.
	src := `
topology smt 2 2
hz 250
end 100ms
task w{i} x6
  repeat 50 {
    run {100+50*i}us
    sleep {200+100*(i%3)}us
  }
task hog{i} x3
  forever
`
	seen := map[string]bool{}
	for _, v := range []string{"6.6", "6.12", "6.18"} {
		r, _, _ := run(t, src, v, -1)
		if seen[r.Policy] {
			t.Errorf("policy name %q repeated", r.Policy)
		}
		seen[r.Policy] = true
		if n := len(r.Timeline.Inconsistencies()); n != 0 {
			t.Errorf("%s: %d inconsistencies, first %+v", v, n, r.Timeline.Inconsistencies()[0])
		}
		if !strings.HasPrefix(r.Policy, v) {
			t.Errorf("policy name %q does not start with %s", r.Policy, v)
		}
	}
}
