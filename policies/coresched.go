package policies

import "github.com/schedlens/schedlens/replay"

// Core scheduling (kernel/sched/core.c, pick_next_task with
// CONFIG_SCHED_CORE): SMT siblings only run tasks of one cookie at a time.
// The model is active when the machine has SMT and some task has a cookie.
//
// A pick on a CPU is core-wide:
//   - unconstrained (the fast path) when no sync is needed and the CPU's own
//     best task has no cookie: it runs it without looking at the siblings;
//   - synchronized otherwise: every sibling's best task is compared, the
//     highest priority one (RT over fair; among fair tasks the one further
//     behind its queue's average vruntime; ties to the picking CPU's task,
//     which is compared first) sets the core cookie, and each sibling gets its best
//     task of that cookie or the idle task. A sibling given the idle task
//     while it has runnable tasks is forced idle; siblings whose assignment
//     changed are rescheduled by IPI and take their assignment when they
//     pick, unless the core's queues changed in between.
//
// When a sync is needed depends on the version: mainline (CORE_SYNC, since
// 5.14) syncs while a sibling runs a cookied task or a sibling is forced
// idle (need_sync), and task_tick_core reschedules a lone fair task that
// used half its slice while a sibling is forced idle. The 2019 RFC v2 code
// the seed-004 fix was written for (NO_CORE_SYNC) syncs only while a
// sibling runs a cookied task, so a forced-idle sibling is not revisited
// when the last cookied task leaves: patch coresched-idle-ipi kicks it from
// the unconstrained path instead.
type coreSched struct {
	m        *Model
	enabled  bool
	sibs     [][]int // per CPU: its core's CPUs (itself included)
	coreOf   []int
	fi       []bool // per CPU: forced idle by the last sync
	fiCount  []int  // per core
	taskSeqs []uint64
	pickSeqs []uint64
	corePick []int32 // per CPU: assignment of the last sync, -2 none, -1 idle
	pickSeen []uint64
}

const noCorePick = -2

func (c *coreSched) init(m *Model) {
	c.m = m
	c.enabled = false
	if !m.smt {
		return
	}
	for i := 0; i < m.s.NTask(); i++ {
		if m.s.Task(i).Cookie != 0 {
			c.enabled = true
			break
		}
	}
	if !c.enabled {
		return
	}
	n := m.ncpu
	topo := m.s.Topology()
	c.sibs = make([][]int, n)
	c.coreOf = make([]int, n)
	c.fi = make([]bool, n)
	c.corePick = make([]int32, n)
	c.pickSeen = make([]uint64, n)
	cores := map[int]int{}
	for cpu := 0; cpu < n; cpu++ {
		c.sibs[cpu] = topo.Siblings(cpu)
		core := topo.CPUs[cpu].Core
		idx, ok := cores[core]
		if !ok {
			idx = len(cores)
			cores[core] = idx
		}
		c.coreOf[cpu] = idx
		c.corePick[cpu] = noCorePick
	}
	c.fiCount = make([]int, len(cores))
	c.taskSeqs = make([]uint64, len(cores))
	c.pickSeqs = make([]uint64, len(cores))
}

func (c *coreSched) multi(cpu int) bool { return c.enabled && len(c.sibs[cpu]) > 1 }

// taskSeq records an enqueue or dequeue on cpu's core (core_task_seq).
func (c *coreSched) taskSeq(cpu int) {
	if c.enabled {
		c.taskSeqs[c.coreOf[cpu]]++
	}
}

func (c *coreSched) cookieOf(t int) uint64 {
	if t < 0 {
		return 0
	}
	return c.m.ent[t].cookie
}

// siblingCookie is the cookie cpu must match: that of the tasks running on
// its siblings (0 when they idle or run untagged tasks).
func (c *coreSched) siblingCookie(cpu int) uint64 {
	for _, s := range c.sibs[cpu] {
		if s == cpu {
			continue
		}
		if r := c.m.rq[s].curr; r >= 0 && c.m.ent[r].cookie != 0 {
			return c.m.ent[r].cookie
		}
	}
	return 0
}

// cookieMatchCPU is sched_core_cookie_match: t may be placed on cpu when the
// core is idle or runs t's cookie.
func (c *coreSched) cookieMatchCPU(cpu, t int) bool {
	if !c.enabled || len(c.sibs[cpu]) < 2 {
		return true
	}
	idle := true
	for _, s := range c.sibs[cpu] {
		if !c.m.idleCPU(s) {
			idle = false
			break
		}
	}
	if idle {
		return true
	}
	return c.coreCookie(cpu) == c.m.ent[t].cookie
}

// coreCookie is the cookie of whatever runs on cpu's core.
func (c *coreSched) coreCookie(cpu int) uint64 {
	for _, s := range c.sibs[cpu] {
		if r := c.m.rq[s].curr; r >= 0 {
			if ck := c.m.ent[r].cookie; ck != 0 {
				return ck
			}
		}
	}
	return 0
}

// cookieMatchRunning reports whether t could run on cpu beside its
// siblings' current tasks.
func (c *coreSched) cookieMatchRunning(cpu, t int) bool {
	if !c.multi(cpu) {
		return true
	}
	sc := c.siblingCookie(cpu)
	return sc == c.m.ent[t].cookie || (sc == 0 && !c.siblingRuns(cpu))
}

func (c *coreSched) siblingRuns(cpu int) bool {
	for _, s := range c.sibs[cpu] {
		if s != cpu && c.m.rq[s].curr >= 0 {
			return true
		}
	}
	return false
}

// peek returns the best task of cpu's queue without committing (pick_task),
// its current task included; -1 for none.
func (c *coreSched) peek(cpu int) int {
	m := c.m
	rq := m.rq[cpu]
	if rq.rtNr > 0 {
		return m.pickRT(rq)
	}
	if rq.nrQueued > 0 {
		return m.pickFair(rq)
	}
	return -1
}

// findCookie is sched_core_find: cpu's best runnable task with cookie.
func (c *coreSched) findCookie(cpu int, cookie uint64) int {
	m := c.m
	rq := m.rq[cpu]
	best := -1
	for _, x := range rq.rtQ {
		if m.ent[x].cookie == cookie && (best < 0 || m.ent[x].rtPrio < m.ent[best].rtPrio) {
			best = int(x)
		}
	}
	if best >= 0 {
		return best
	}
	// Deadlines of different queues are compared relative to their own
	// queue's average vruntime.
	var bestDL int64
	m.eachFairTask(rq, func(q *cfsRQ, x int32) {
		e := &m.ent[x]
		if e.delayed || e.cookie != cookie {
			return
		}
		if dl := e.dl - q.avgVruntime(); best < 0 || dl-bestDL < 0 {
			best, bestDL = int(x), dl
		}
	})
	return best
}

// higher reports whether a outranks b for the core (prio_less(b, a)).
func (c *coreSched) higher(a, b int) bool {
	if b < 0 {
		return a >= 0
	}
	if a < 0 {
		return false
	}
	m := c.m
	ea, eb := &m.ent[a], &m.ent[b]
	if ea.cls != eb.cls {
		return ea.cls == clsRT
	}
	if ea.cls == clsRT {
		return ea.rtPrio < eb.rtPrio
	}
	// cfs_prio_less: vruntimes compared after normalizing each by its
	// queue (the kernel uses min_vruntime snapshots; the model uses the
	// average vruntime of the task's own queue).
	da := ea.v - m.taskQ(m.rq[ea.cpu], a).avgVruntime()
	db := eb.v - m.taskQ(m.rq[eb.cpu], b).avgVruntime()
	return da < db
}

// pick is the core-wide pick on cpu. ok false means "unconstrained: do the
// ordinary local pick".
func (c *coreSched) pick(cpu, prev int) (replay.Pick, bool) {
	m := c.m
	core := c.coreOf[cpu]
	// 1. An assignment from a sibling's sync, still valid.
	if cp := c.corePick[cpu]; cp != noCorePick {
		c.corePick[cpu] = noCorePick
		if c.pickSeqs[core] == c.taskSeqs[core] && c.pickSeen[cpu] != c.pickSeqs[core] {
			c.pickSeen[cpu] = c.pickSeqs[core]
			return c.commit(cpu, prev, int(cp)), true
		}
	}
	sibCookie := c.siblingCookie(cpu)
	needSync := sibCookie != 0
	if !needSync && c.fiCount[core] > 0 && m.watched(FeatCoreSync) {
		m.featDiverged(FeatCoreSync)
	}
	if m.cfg.Has(FeatCoreSync) && c.fiCount[core] > 0 {
		needSync = true
	}
	for _, s := range c.sibs[cpu] {
		c.fi[s] = false
	}
	c.fiCount[core] = 0
	c.taskSeqs[core]++
	if !needSync {
		local := c.peek(cpu)
		if c.cookieOf(local) == 0 {
			// the unconstrained pick
			c.idleSiblingIPI(cpu, m.cfg.With(PatchCoreschedIdleIPI))
			return replay.Pick{}, false
		}
	}
	// 2. The synchronized pick.
	*m.c.coreSyncPicks++
	sibs := c.sibs[cpu]
	best := make([]int, len(sibs))
	maxT := -1
	order := c.wrapOrder(cpu)
	for _, k := range order {
		p := c.peek(sibs[k])
		best[k] = p
		if p >= 0 && (maxT < 0 || c.higher(p, maxT)) {
			maxT = p
		}
	}
	cookie := c.cookieOf(maxT)
	var next int
	for k, s := range sibs {
		p := best[k]
		if p >= 0 && c.cookieOf(p) != cookie {
			p = c.findCookie(s, cookie)
		}
		if p < 0 && m.NrRunning(s) > 0 {
			c.fi[s] = true
			c.fiCount[core]++
			*m.c.coreForceIdle++
		}
		if s == cpu {
			next = p
			continue
		}
		if int(m.rq[s].curr) != p {
			c.corePick[s] = int32(p)
			m.s.Resched(s)
		} else {
			c.corePick[s] = noCorePick
		}
	}
	c.pickSeqs[core] = c.taskSeqs[core]
	c.pickSeen[cpu] = c.pickSeqs[core]
	return c.commit(cpu, prev, next), true
}

func (c *coreSched) wrapOrder(cpu int) []int {
	sibs := c.sibs[cpu]
	start := 0
	for k, s := range sibs {
		if s == cpu {
			start = k
		}
	}
	out := make([]int, len(sibs))
	for k := range sibs {
		out[k] = (start + k) % len(sibs)
	}
	return out
}

// commit makes next (-1: idle) cpu's current task.
func (c *coreSched) commit(cpu, prev, next int) replay.Pick {
	m := c.m
	rq := m.rq[cpu]
	if next >= 0 {
		e := &m.ent[next]
		queued := (e.cls == clsFair && e.onRQ && !e.delayed && int(e.cpu) == cpu)
		if e.cls == clsRT {
			for _, x := range rq.rtQ {
				if int(x) == next {
					queued = true
				}
			}
		}
		if !queued {
			next = -1
		}
	}
	if next < 0 {
		m.putPrevIfOther(rq, prev, -1, -1)
		if m.NrRunning(cpu) == 0 {
			return m.newidleStart(rq)
		}
		return m.goIdle(rq)
	}
	if next != prev || int(rq.curr) != prev {
		m.putPrevIfOther(rq, prev, next, -1) // put_prev_set_next_task: every level
		if int(rq.curr) != next {
			m.setNext(rq, next)
		}
	}
	return replay.Pick{Task: next}
}

// tick is task_tick_core: a lone fair task that used half its slice while a
// sibling is forced idle gives the core a new pick.
func (c *coreSched) tick(cpu, curr int) {
	m := c.m
	if !c.multi(cpu) || !(m.cfg.Has(FeatCoreSync) || m.watched(FeatCoreSync)) {
		return
	}
	e := &m.ent[curr]
	if c.fiCount[c.coreOf[cpu]] > 0 && e.cls == clsFair && m.rq[cpu].nrQueued == 1 && (e.sumExec-e.pickExec)*2 > e.slice {
		if !m.s.NeedResched(cpu) {
			m.featDiverged(FeatCoreSync)
		}
		if m.cfg.Has(FeatCoreSync) {
			m.s.Resched(cpu)
		}
	}
}
