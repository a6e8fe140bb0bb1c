package policies

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
)

// Group scheduling, checked against shares worked out by hand from
// calc_group_shares and the nice table. On one CPU a group's entity weighs
// exactly its group's weight (its load is all the group's load), so the
// CPU splits between the root queue's entities by weight, and each group's
// part between its tasks by theirs. HZ 250 and a 0.75 ms slice: the
// entities alternate at ticks, so every share holds to within a tick
// (4 ms) over the run.

const tickNS = 4_000_000

// cpuTimes replays src under policy and returns each task's CPU time by
// name.
func cpuTimes(t *testing.T, src, policy string) map[string]int64 {
	t.Helper()
	r, sp, _ := run(t, src, policy, 0)
	out := map[string]int64{}
	for i, tk := range sp.Workload.Tasks {
		out[tk.Comm] = r.Tasks[i].CPUTime
	}
	return out
}

// wantShares checks that each named task got its share of the run within a
// tick.
func wantShares(t *testing.T, got map[string]int64, total float64, shares map[string]float64) {
	t.Helper()
	for name, sh := range shares {
		want := total * sh
		if d := math.Abs(float64(got[name]) - want); d > tickNS {
			t.Errorf("%s: CPU time %.3f ms, want %.3f ms (share %.4f) within a tick", name, float64(got[name])/1e6, want/1e6, sh)
		}
	}
}

var groupVersions = []string{"6.6", "6.12", "6.18"}

func TestGroupEqualWeightsOneCPU(t *testing.T) {
	// Groups A and B weigh 1024 each (cpu.weight 100). A has one task, B
	// four: the root queue holds two entities of 1024, 50% each; inside B
	// four tasks of 1024, 12.5% each. Flat, a would get 20%.
	src := `
topology symmetric 1
hz 250
end 1s
group A weight 100
group B
task a group A
  forever
task b{i} x4 group B
  forever
`
	for _, v := range groupVersions {
		t.Run(v, func(t *testing.T) {
			got := cpuTimes(t, src, v)
			wantShares(t, got, 1e9, map[string]float64{"a": 0.5, "b0": 0.125, "b1": 0.125, "b2": 0.125, "b3": 0.125})
			t.Logf("a %.0f ms, b0..b3 %.0f %.0f %.0f %.0f ms", float64(got["a"])/1e6, float64(got["b0"])/1e6, float64(got["b1"])/1e6, float64(got["b2"])/1e6, float64(got["b3"])/1e6)
		})
	}
}

func TestGroupCPUWeight(t *testing.T) {
	// cpu.weight 200 and 100: shares 2048 and 1024
	// (sched_weight_from_cgroup), one task each: 2/3 and 1/3.
	src := `
topology symmetric 1
hz 250
end 1.2s
group A weight 200
group B weight 100
task a group A
  forever
task b group B
  forever
`
	for _, v := range groupVersions {
		t.Run(v, func(t *testing.T) {
			got := cpuTimes(t, src, v)
			wantShares(t, got, 1.2e9, map[string]float64{"a": 2.0 / 3, "b": 1.0 / 3})
			t.Logf("a %.0f ms, b %.0f ms", float64(got["a"])/1e6, float64(got["b"])/1e6)
		})
	}
}

func TestGroupAutogroupNice(t *testing.T) {
	// Autogroups of nice 5 and 0 weigh sched_prio_to_weight[25] = 335 and
	// 1024: 335/1359 = 24.65% and 75.35%. Their tasks are nice 0 and
	// -10, which only ranks them inside their own groups.
	src := `
topology symmetric 1
hz 250
end 1s
group A nice 5
group B nice 0
task a group A
  forever
task b nice -10 group B
  forever
`
	for _, v := range groupVersions {
		t.Run(v, func(t *testing.T) {
			got := cpuTimes(t, src, v)
			wantShares(t, got, 1e9, map[string]float64{"a": 335.0 / 1359, "b": 1024.0 / 1359})
			t.Logf("a %.0f ms, b %.0f ms", float64(got["a"])/1e6, float64(got["b"])/1e6)
		})
	}
}

func TestGroupBesideRootTasks(t *testing.T) {
	// Two root tasks beside a group of six: the root queue holds r0, r1
	// and G's entity, 1024 each: a third each; G's six tasks split their
	// third, 1/18 each. Flat, every task would get 1/8.
	src := `
topology symmetric 1
hz 250
end 1.08s
group G
task r{i} x2
  forever
task g{i} x6 group G
  forever
`
	for _, v := range groupVersions {
		t.Run(v, func(t *testing.T) {
			got := cpuTimes(t, src, v)
			want := map[string]float64{"r0": 1.0 / 3, "r1": 1.0 / 3}
			for i := range 6 {
				want[fmt.Sprintf("g%d", i)] = 1.0 / 18
			}
			wantShares(t, got, 1.08e9, want)
			t.Logf("r0 %.0f ms, r1 %.0f ms, g0 %.0f ms", float64(got["r0"])/1e6, float64(got["r1"])/1e6, float64(got["g0"])/1e6)
		})
	}
}

func TestGroupSharesAcrossCPUs(t *testing.T) {
	// Group G has one task pinned to CPU 0 and two to CPU 1, each CPU
	// also runs a pinned root task. G's load is 1024 on CPU 0 and 2048 on
	// CPU 1, 3072 in all, so calc_group_shares gives its entity
	// 1024 x 1024/3072 = 341 on CPU 0 and 1024 x 2048/3072 = 682 on CPU 1:
	// g0 gets 341/1365 = 24.98% of CPU 0, g1 and g2 half of 682/1706 =
	// 39.98% of CPU 1 each.
	src := `
topology symmetric 2
hz 250
end 1s
group G
task r{i} x2 cpus {i}
  forever
task g0 group G cpus 0
  forever
task g{i+1} x2 group G cpus 1
  forever
`
	for _, v := range groupVersions {
		t.Run(v, func(t *testing.T) {
			r, sp, m := run(t, src, v, 0)
			got := map[string]int64{}
			for i, tk := range sp.Workload.Tasks {
				got[tk.Comm] = r.Tasks[i].CPUTime
			}
			wantShares(t, got, 1e9, map[string]float64{
				"r0": 1024.0 / 1365, "g0": 341.0 / 1365,
				"r1": 1024.0 / 1706, "g1": 341.0 / 1706, "g2": 341.0 / 1706,
			})
			for cpu, want := range []int64{341, 682} {
				if w := m.ent[m.rq[cpu].grq[0].se].w; w != want {
					t.Errorf("G's entity on CPU %d weighs %d, want %d", cpu, w, want)
				}
			}
			t.Logf("r0 %.0f g0 %.0f | r1 %.0f g1 %.0f g2 %.0f ms", float64(got["r0"])/1e6, float64(got["g0"])/1e6, float64(got["r1"])/1e6, float64(got["g1"])/1e6, float64(got["g2"])/1e6)
		})
	}
}

func TestGroupBalanceByGroupLoad(t *testing.T) {
	// Two equal groups on two CPUs, A with one hog, B with three. Alone on
	// a CPU, A's entity weighs 1024 there, and B's weighs 1024 on the
	// other CPU (all of B's load is there): the root loads are equal and
	// the balancer leaves them. Any other split is unequal (A's task with
	// one of B's: 1024 + 341 against 683) and is balanced away. So each
	// group gets a CPU: a about 2 s of 2 s, each b a third of 2 s. Flat,
	// the four tasks would get about 1 s each.
	src := `
topology symmetric 2
hz 250
end 2s
group A
group B
task a group A
  forever
task b{i} x3 group B
  forever
`
	for _, v := range groupVersions {
		t.Run(v, func(t *testing.T) {
			r, sp, _ := run(t, src, v, -1)
			got := map[string]int64{}
			for i, tk := range sp.Workload.Tasks {
				got[tk.Comm] = r.Tasks[i].CPUTime
			}
			if got["a"] < 1_900_000_000 {
				t.Errorf("a: CPU time %.0f ms, want about 2000 ms (a CPU of its own)", float64(got["a"])/1e6)
			}
			for i := range 3 {
				name := fmt.Sprintf("b%d", i)
				if d := math.Abs(float64(got[name]) - 2e9/3); d > 0.05*2e9/3 {
					t.Errorf("%s: CPU time %.0f ms, want a third of 2000 ms within 5%%", name, float64(got[name])/1e6)
				}
			}
			t.Logf("a %.0f ms, b0..b2 %.0f %.0f %.0f ms, %d balancer moves", float64(got["a"])/1e6, float64(got["b0"])/1e6, float64(got["b1"])/1e6, float64(got["b2"])/1e6, r.Counters["lb.moved"])
		})
	}
}

func TestGroupOfEverythingIsFlat(t *testing.T) {
	// On one CPU, a workload whose fair tasks are all in one group runs as
	// without groups: the group's entity is alone in the root queue and
	// its queue holds what the root queue would. Sleepers, nice levels and
	// wakeup preemption included, the switches must be the same.
	body := `
topology symmetric 1
hz 250
end 300ms
task hog %s
  forever
task nice5 nice 5 %s
  forever
task p %s
  repeat 400 {
    run 90us
    wake q
    wait q
  }
task q %s
  repeat 400 {
    wait p
    run 140us
    wake p
  }
task tick %s
  repeat 200 {
    periodic 1300us
    run 200us
  }
`
	flat := fmt.Sprintf(body, "", "", "", "", "")
	g := "group G"
	grouped := "group G weight 300\n" + fmt.Sprintf(body, g, g, g, g, g)
	for _, v := range []string{"6.6", "6.12", "6.18", "6.18,NO_DELAY_DEQUEUE", "6.18,WAKEUP_PICK"} {
		t.Run(v, func(t *testing.T) {
			a, _, _ := run(t, flat, v, 0)
			b, _, _ := run(t, grouped, v, 0)
			sa, sb := switches(a.Timeline, 0), switches(b.Timeline, 0)
			if len(sa) != len(sb) {
				t.Fatalf("%d switches grouped, %d flat", len(sb), len(sa))
			}
			for k := range sa {
				if sa[k] != sb[k] {
					t.Fatalf("switch %d: grouped %+v, flat %+v", k, sb[k], sa[k])
				}
			}
			t.Logf("%d identical switches", len(sa))
		})
	}
}

func TestCalcGroupShares(t *testing.T) {
	// calc_group_shares by hand: shares 1024, this CPU's load 100 of a
	// group load of 100000 (contribution 100): 1024 x 100/100000 = 1,
	// clamped up to MIN_SHARES 2; all the load here: 1024; a load above
	// the contribution counts as it is now: 1024 x 3000/(6000-1000+3000)
	// = 384.
	m := &Model{tg: []taskGroup{{shares: 1024}}}
	gq := &groupRQ{}
	tests := []struct {
		name            string
		qload           int64
		loadAvg         float64
		tgLoad, contrib int64
		want            int64
	}{
		{"min-shares", 100, 100, 100000, 100, 2},
		{"all-here", 1024, 1024, 1024, 1024, 1024},
		{"stale-contribution", 3000, 2900, 6000, 1000, 384},
		{"load-avg-above-weight", 1000, 3000, 6000, 1000, 384},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gq.load, gq.loadAvg, gq.tgContrib = tc.qload, tc.loadAvg, tc.contrib
			m.tg[0].loadAvg = tc.tgLoad
			if got := m.calcGroupShares(gq); got != tc.want {
				t.Errorf("calcGroupShares = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestReweightKeepsLag(t *testing.T) {
	// reweight_entity keeps lag_i = w_i x (V - v_i): a queued entity of
	// weight 1024 at V - 3000 (lag 3,072,000) beside one of 1024 at V + 3000 is
	// reweighted to 2048. Its vlag becomes 1500; placed again with the
	// PLACE_LAG inflation (W + w)/W = (1024 + 2048)/1024 against the other
	// entity alone (V' = its vruntime), it lands 4500 behind it, so that the
	// new average V'' = (2048 x v + 1024 x v_other)/3072 sits 1500 above it:
	// lag 2048 x 1500 = 3,072,000, as before.
	// A model attached to a run; CPU 1's queues stay empty.
	_, _, m := run(t, "topology symmetric 2\nend 1ms\ntask a cpus 0\n  forever\n", "6.12", 0)
	q := &m.rq[1].cfsRQ
	if q.nrQueued != 0 {
		t.Fatalf("CPU 1 queue holds %d entities, want 0", q.nrQueued)
	}
	m.ent = append(m.ent, entity{}, entity{})
	x, y := len(m.ent)-2, len(m.ent)-1
	ex, ey := &m.ent[x], &m.ent[y]
	ex.w, ey.w = 1024, 1024
	ex.v, ey.v = 100_000-3000, 100_000+3000
	ex.slice, ey.slice = m.baseSlice, m.baseSlice
	for _, k := range []int{x, y} {
		m.ent[k].onRQ = true
		q.sumAdd(&m.ent[k])
		q.cfsQ = append(q.cfsQ, int32(k))
		q.nrQueued++
	}
	V := q.avgVruntime()
	before := ex.w * (V - ex.v)
	m.reweightEntity(q, x, 2048)
	ex = &m.ent[x]
	after := ex.w * (q.avgVruntime() - ex.v)
	if before != 3_072_000 || after != before || q.avgVruntime() != V {
		t.Errorf("lag before %d, after %d, V %d -> %d; want lag 3072000 both, V unchanged", before, after, V, q.avgVruntime())
	}
	if ex.v != 98_500 {
		t.Errorf("reweighted vruntime %d, want 98500", ex.v)
	}
	if q.load != 3072 {
		t.Errorf("queue load %d, want 3072", q.load)
	}
}

// checkedModel runs the model and checks the fair queues' bookkeeping
// after every call the engine makes.
type checkedModel struct {
	*Model
	t     *testing.T
	calls int
	fail  bool
}

func (c *checkedModel) check(what string) {
	c.calls++
	if c.fail {
		return
	}
	if err := c.Model.queueInvariants(); err != nil {
		c.fail = true
		c.t.Errorf("after %s at %d ns (call %d): %v", what, c.Model.now(), c.calls, err)
	}
}

func (c *checkedModel) Enqueue(cpu, t int, f replay.EnqueueFlags) {
	c.Model.Enqueue(cpu, t, f)
	c.check("Enqueue")
}
func (c *checkedModel) Dequeue(cpu, t int, f replay.DequeueFlags) {
	c.Model.Dequeue(cpu, t, f)
	c.check("Dequeue")
}
func (c *checkedModel) Requeue(t int) (int, bool) {
	cpu, ok := c.Model.Requeue(t)
	c.check("Requeue")
	return cpu, ok
}
func (c *checkedModel) WakeupPreempt(cpu, t int) bool {
	ok := c.Model.WakeupPreempt(cpu, t)
	c.check("WakeupPreempt")
	return ok
}
func (c *checkedModel) Pick(cpu, prev int, q bool) replay.Pick {
	p := c.Model.Pick(cpu, prev, q)
	c.check("Pick")
	if p.Delay == 0 && !c.fail {
		if err := c.Model.currInvariants(cpu); err != nil {
			c.fail = true
			c.t.Errorf("after Pick on CPU %d at %d ns (call %d, prev %d, picked %d): %v", cpu, c.Model.now(), c.calls, prev, p.Task, err)
		}
	}
	return p
}
func (c *checkedModel) PutPrev(cpu, prev int) {
	c.Model.PutPrev(cpu, prev)
	c.check("PutPrev")
}
func (c *checkedModel) Tick(cpu int) {
	c.Model.Tick(cpu)
	c.check("Tick")
}
func (c *checkedModel) Stop(cpu, kind int, arg int64) {
	c.Model.Stop(cpu, kind, arg)
	c.check("Stop")
}

// queueInvariants checks every fair queue: its sums match its entities,
// each task is where its group says, the runnable counts add up through
// the hierarchy, a group's entity is queued exactly while its queue holds
// tasks (or delayed once it is empty), and the running task is its queues'
// current entity.
func (m *Model) queueInvariants() error {
	for _, rq := range m.rq {
		queues := []*cfsRQ{&rq.cfsRQ}
		for _, gq := range rq.grq {
			queues = append(queues, &gq.cfsRQ)
		}
		rootRunnable := 0
		for _, q := range queues {
			var load, avg, runW int64
			runnable := 0
			for _, x := range q.cfsQ {
				e := &m.ent[x]
				load += e.w
				avg += (e.v - q.v0) * e.w
				if !e.onRQ || int(e.cpu) != rq.cpu {
					return fmt.Errorf("CPU %d: entity %d queued but onRQ %v cpu %d", rq.cpu, x, e.onRQ, e.cpu)
				}
				if e.gq != nil {
					if q.grp != nil {
						return fmt.Errorf("CPU %d: group entity %d in a group queue", rq.cpu, x)
					}
					continue
				}
				if (q.grp == nil) != (e.grp < 0) || (q.grp != nil && int32(q.grp.g) != e.grp) {
					return fmt.Errorf("CPU %d: task %d of group %d queued in the wrong queue", rq.cpu, x, e.grp)
				}
				if !e.delayed {
					runnable++
					runW += e.w
				}
			}
			if len(q.cfsQ) != q.nrQueued || load != q.load || avg != q.avg || runW != q.runW {
				return fmt.Errorf("CPU %d group %v: nrQueued %d/%d load %d/%d avg %d/%d runW %d/%d (kept/recomputed)", rq.cpu, q.grp != nil, q.nrQueued, len(q.cfsQ), q.load, load, q.avg, avg, q.runW, runW)
			}
			if gq := q.grp; gq != nil {
				if q.hNr != runnable {
					return fmt.Errorf("CPU %d group %d: hNr %d, %d runnable tasks", rq.cpu, gq.g, q.hNr, runnable)
				}
				se := &m.ent[gq.se]
				if q.nrQueued > 0 && (!se.onRQ || se.delayed) || q.nrQueued == 0 && se.onRQ && !se.delayed {
					return fmt.Errorf("CPU %d group %d: %d queued, entity onRQ %v delayed %v", rq.cpu, gq.g, q.nrQueued, se.onRQ, se.delayed)
				}
				if se.onRQ && (se.w < replay.MinGroupWeight || se.w > m.tg[gq.g].shares) {
					return fmt.Errorf("CPU %d group %d: entity weight %d outside %d..%d", rq.cpu, gq.g, se.w, replay.MinGroupWeight, m.tg[gq.g].shares)
				}
			}
			rootRunnable += runnable
		}
		if rq.hNr != rootRunnable {
			return fmt.Errorf("CPU %d: root hNr %d, %d runnable tasks in all its queues", rq.cpu, rq.hNr, rootRunnable)
		}
		if c := int(rq.curr); c >= 0 && m.ent[c].cls == clsFair && m.ent[c].onRQ {
			q := m.taskQ(rq, c)
			if q.cfsCurr != int32(c) {
				return fmt.Errorf("CPU %d: task %d runs, its queue's current entity is %d", rq.cpu, c, q.cfsCurr)
			}
			if gq := q.grp; gq != nil && m.ent[gq.se].onRQ && rq.cfsCurr != gq.se {
				return fmt.Errorf("CPU %d: task %d of group %d runs, the root's current entity is %d", rq.cpu, c, gq.g, rq.cfsCurr)
			}
		}
	}
	return nil
}

// currInvariants checks, once cpu has picked, that the current entity of
// each of its fair queues is the running task's (or its group's): none when
// it idles or runs an RT task.
func (m *Model) currInvariants(cpu int) error {
	rq := m.rq[cpu]
	wantRoot, wantG, g := int32(-1), int32(-1), int32(-1)
	if c := rq.curr; c >= 0 && m.ent[c].cls == clsFair {
		if g = m.ent[c].grp; g >= 0 {
			wantRoot, wantG = rq.grq[g].se, c
		} else {
			wantRoot = c
		}
	}
	if rq.cfsCurr != wantRoot {
		return fmt.Errorf("root queue's current entity %d, want %d (running task %d)", rq.cfsCurr, wantRoot, rq.curr)
	}
	for _, gq := range rq.grq {
		want := int32(-1)
		if int32(gq.g) == g {
			want = wantG
		}
		if gq.cfsCurr != want {
			return fmt.Errorf("group %d queue's current entity %d, want %d (running task %d)", gq.g, gq.cfsCurr, want, rq.curr)
		}
	}
	return nil
}

// groupedMixed is mixedWorkload with its tasks spread over three groups of
// different weights and the root group, plus an RT task that preempts them
// and core-scheduling cookies on two groups' tasks.
func groupedMixed() string {
	s := "group A weight 300\ngroup B nice 3\ngroup C weight 50\n" + mixedWorkload + `task rt rt 10
  repeat 300 {
    periodic 3ms
    run 400us
  }
`
	for _, r := range []struct{ from, to string }{
		{"task p{i} x6", "task p{i} x6 group A"},
		{"task q{i} x6", "task q{i} x6 group B cookie 7"},
		{"task tick{i} x3", "task tick{i} x3 group A"},
		{"task child{i} x2 start fork", "task child{i} x2 start fork group C"},
		{"task hog{i} x3", "task hog{i} x3 group C cookie 9"},
	} {
		s = strings.Replace(s, r.from, r.to, 1)
	}
	return s
}

func TestGroupInvariantsAndConservation(t *testing.T) {
	// Ping-pong pairs, timers, forks, hogs and a pinned task in three
	// groups and the root, an RT task, core-scheduling cookies on two
	// groups' tasks, on big.LITTLE and SMT machines with balancing:
	// after every call of the engine the queues' bookkeeping holds, every
	// task that finishes gets exactly its demand, the timeline is
	// consistent, and tasks of groups migrate.
	src := groupedMixed()
	for _, tp := range []struct{ name, text string }{{"juno", junoTopo}, {"smt", "topology smt 2 2\n"}} {
		for _, pol := range []string{"6.6", "6.12", "6.18", "6.18,NO_RUN_TO_PARITY", "6.18,WAKEUP_PICK", "6.18,+resched-ineligible,NO_RUN_TO_PARITY"} {
			t.Run(tp.name+"/"+pol, func(t *testing.T) {
				sp, err := replay.ParseSpec(strings.NewReader(tp.text+src), "grouped.spec")
				if err != nil {
					t.Fatal(err)
				}
				cm := &checkedModel{Model: MustParse(pol), t: t}
				opts := sp.Options()
				opts.IPIDelay, opts.IPIJitter = 2000, 2000
				r, err := replay.Simulate(sp.Workload, sp.Topology, cm, opts)
				if err != nil {
					t.Fatal(err)
				}
				if n := len(r.Timeline.Inconsistencies()); n > 0 {
					t.Errorf("%d timeline inconsistencies, first %+v", n, r.Timeline.Inconsistencies()[0])
				}
				finished := 0
				for i, tr := range r.Tasks {
					if tr.Finished {
						finished++
						if d := sp.Workload.Tasks[i].Demand(); tr.Work != d {
							t.Errorf("%s: work %d, want demand %d", sp.Workload.Tasks[i].Comm, tr.Work, d)
						}
					}
				}
				if finished < len(r.Tasks)-1 {
					t.Errorf("%d of %d tasks finished, want nearly all", finished, len(r.Tasks))
				}
				moved := 0
				for i, tr := range r.Tasks {
					if sp.Workload.Tasks[i].Group > 0 {
						moved += int(tr.Migrations)
					}
				}
				if moved == 0 {
					t.Errorf("no task of a group migrated: the test does not exercise groups across CPUs")
				}
				if !strings.HasPrefix(pol, "6.6") && r.Counters["group.delayed-dequeue"] == 0 {
					t.Errorf("no group entity was delayed: DELAY_DEQUEUE of groups is not exercised")
				}
				if r.Counters["group.reweight"] == 0 {
					t.Errorf("no group entity was reweighted")
				}
				if tp.name == "smt" && r.Counters["core.sync-picks"] == 0 {
					t.Errorf("no synchronized core pick: core scheduling with groups is not exercised")
				}
				t.Logf("%d checked calls, %d migrations of group tasks, %d reweights, %d delayed tasks, %d delayed groups", cm.calls, moved, r.Counters["group.reweight"], r.Counters["eevdf.delayed-dequeue"], r.Counters["group.delayed-dequeue"])
			})
		}
	}
}

// sessionOf is the synthetic group table of TestGroupRealFixture: the
// autogroup each command of the ftrace-hackbench-cyclictest capture is
// put in (0: an explicit root record). Commands not listed get no record.
var sessionOf = map[string]int{
	"hackbench": 2, "cyclictest": 2, "bash": 2, // the workload's session (/autogroup-2, as the capture's debug file showed)
	"ninja": 1, "clang++": 1, "sh": 1, // the build beside it
	"python3":     3, // the scripts
	"kworker/0:1": 0, "kworker/1:1": 0, "kworker/u8:1": 0, "ksoftirqd/0": 0, "ksoftirqd/1": 0,
	"rcu_preempt": 0, "migration/0": 0, "migration/1": 0, "kcompactd0": 0, "kdamond.0": 0, "damon-regions": 0,
}

func TestGroupRealFixture(t *testing.T) {
	// The hackbench capture with a compiler and scripts beside it, replayed
	// flat and with a synthetic group table (three autogroups: workload,
	// build, scripts; kernel threads in the root). Flat, the build's three
	// clang++ jobs get far more than they got; as sessions, each of the
	// three groups gets a share of a contended CPU whatever its number of
	// threads, and the build and the scripts get about what they got.
	if testing.Short() {
		t.Skip("replays a real trace twice")
	}
	tl, topo := loadReal(t, "../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz")
	win := metrics.DefaultWindow(tl)
	byComm := func(tl *timeline.Timeline, win metrics.Window) map[string]int64 {
		out := map[string]int64{}
		for _, tk := range metrics.Account(tl, win).Tasks {
			out[tk.Comm] += tk.RunNs
		}
		return out
	}
	rec := byComm(tl, win)
	var table []timeline.GroupChange
	for id := range tl.Tasks {
		if ag, ok := sessionOf[tl.TaskName(timeline.TaskID(id))]; ok {
			table = append(table, timeline.GroupChange{At: tl.Start, TID: tl.Tasks[id].PID, Autogroup: ag})
		}
	}
	var wakeCost map[string]int64 // per comm, the model's wake costs (replay.TaskResult.WakeCost) of the last replay
	replayed := func(groups []timeline.GroupChange) (*replay.Workload, map[string]int64) {
		tl.Groups = groups
		defer func() { tl.Groups = nil }()
		w, err := replay.Extract(tl, topo)
		if err != nil {
			t.Fatal(err)
		}
		opts := replay.CalibratedOptions(w)
		opts.Seed, opts.HZ = 1, 250
		res, err := replay.Simulate(w, topo, MustParse("6.18"), opts)
		if err != nil {
			t.Fatal(err)
		}
		sim := res.Timeline
		if n := len(sim.Inconsistencies()); n > 0 {
			t.Errorf("modeled timeline has %d inconsistencies", n)
		}
		wakeCost = map[string]int64{}
		for i, tr := range res.Tasks {
			wakeCost[w.Tasks[i].Comm] += tr.WakeCost
		}
		simWin := win
		simWin.Start, simWin.End = max(simWin.Start, sim.ValidStart), min(simWin.End, sim.End)
		return w, byComm(sim, simWin)
	}
	_, flat := replayed(nil)
	w, grouped := replayed(table)
	if len(w.Groups) != 3 || w.Assumptions[0].Name != replay.AssumeGroups {
		t.Fatalf("workload has %d groups, first assumption %q; want 3 and %q", len(w.Groups), w.Assumptions[0].Name, replay.AssumeGroups)
	}
	for _, c := range []string{"clang++", "python3"} {
		t.Logf("%s: recorded %.0f ms, modeled flat %.0f ms, with groups %.0f ms", c, float64(rec[c])/1e6, float64(flat[c])/1e6, float64(grouped[c])/1e6)
		errFlat := math.Abs(float64(flat[c]-rec[c])) / float64(rec[c])
		errGrouped := math.Abs(float64(grouped[c]-rec[c])) / float64(rec[c])
		if errGrouped >= errFlat || errGrouped > 0.2 {
			t.Errorf("%s: modeled CPU time off by %.0f%% with groups, %.0f%% flat; want closer with groups, within 20%%", c, 100*errGrouped, 100*errFlat)
		}
	}
	// It finishes: its recorded work, and what its wakes cost in the model
	// beyond their recorded cost.
	if want := rec["hackbench"] + wakeCost["hackbench"]; math.Abs(float64(grouped["hackbench"]-want))/float64(want) > 0.001 {
		t.Errorf("hackbench got %d ns with groups, want its recorded %d ns + wake cost %d within 0.1%% (it finishes)", grouped["hackbench"], rec["hackbench"], wakeCost["hackbench"])
	}
}

// FuzzGroupReplay replays scenario specs with task groups under the
// mainline model, checking the queues' bookkeeping after every call of the
// engine, that no task gets more work than its demand, and that the
// modeled timeline is consistent. Seeds are the hand-worked group
// scenarios and the grouped mixed workload.
func FuzzGroupReplay(f *testing.F) {
	f.Add("topology symmetric 2\nhz 250\nend 200ms\n" + strings.Replace(groupedMixed(), "end 3s\n", "", 1))
	f.Add(junoTopo + "end 300ms\n" + strings.Replace(groupedMixed(), "end 3s\n", "", 1))
	f.Add("topology symmetric 2\nend 100ms\ngroup G\ntask r{i} x2 cpus {i}\n  forever\ntask g{i} x3 group G\n  repeat 50 {\n    run 300us\n    sleep 200us\n  }\n")
	f.Add("topology smt 2 2\nend 100ms\ngroup A nice 5\ngroup B weight 900\ntask a{i} x3 group A\n  repeat 40 {\n    run 500us\n    wake b{i}\n    wait b{i}\n  }\ntask b{i} x3 group B\n  repeat 40 {\n    wait a{i}\n    run 200us\n    wake a{i}\n  }\ntask r\n  forever\n")
	f.Fuzz(func(t *testing.T, src string) {
		sp, err := replay.ParseSpec(strings.NewReader(src), "fuzz.spec")
		if err != nil || sp.Topology == nil || len(sp.Topology.CPUs) > 16 || len(sp.Workload.Tasks) > 200 {
			return
		}
		pol := []string{"6.6", "6.12", "6.18", "6.18,WAKEUP_PICK"}[len(src)%4]
		cm := &checkedModel{Model: MustParse(pol), t: t}
		opts := sp.Options()
		opts.End = min(max(opts.End, 1), 300_000_000)
		opts.MaxEvents = 200_000
		r, err := replay.Simulate(sp.Workload, sp.Topology, cm, opts)
		if errors.Is(err, replay.ErrTooManyEvents) {
			return
		}
		if err != nil {
			t.Fatalf("%s: Simulate: %v", pol, err)
		}
		if n := len(r.Timeline.Inconsistencies()); n > 0 {
			t.Fatalf("%s: %d timeline inconsistencies, first %+v", pol, n, r.Timeline.Inconsistencies()[0])
		}
		for i, tr := range r.Tasks {
			if tk := &sp.Workload.Tasks[i]; tk.End != replay.EndRun && tr.Work > tk.Demand() {
				t.Errorf("%s: task %s did %d of work, demand %d", pol, tk.Comm, tr.Work, tk.Demand())
			}
		}
	})
}
