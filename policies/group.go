package policies

import (
	"math"

	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
)

// Group scheduling (CONFIG_FAIR_GROUP_SCHED, kernel/sched/fair.c), one
// level: each task group of the workload (replay.Group: a cgroup or an
// autogroup) has, on every CPU, its own fair queue (groupRQ) and an entity
// in that CPU's root queue standing for it. The group's tasks compete
// inside its queue by their own weights; the group's entity competes in the
// root queue with the root group's tasks and the other groups' entities by
// a weight that follows calc_group_shares: the group's weight (tg->shares)
// times the share of the group's load that sits on this CPU. The pick
// descends from the root queue into the picked group's queue
// (pick_task_fair); vruntime, lag, deadline and slice protection of a group
// entity are those of any entity of the root queue, and a change of its
// weight goes through reweight_entity. Tasks of the root group take
// exactly the paths they take without groups.

// taskGroup is a task_group's global state.
type taskGroup struct {
	shares  int64 // tg->shares, scaled down (nice 0 = 1024)
	loadAvg int64 // tg->load_avg: Σ over CPUs of the queues' tgContrib
}

// groupRQ is a task group's queue on one CPU (the group's cfs_rq there),
// with the PELT state the group's entity and calc_group_shares need.
type groupRQ struct {
	cfsRQ
	g  int   // index into Model.tg and Workload.Groups
	se int32 // the group's entity in the CPU's root queue (index into Model.ent)

	// PELT of the group's queue: the sum of its tasks' load and
	// utilization (attached and detached with them), decaying with the
	// queue's runnable weight and with its tasks' running.
	loadAvg, util float64
	// seFrac is the group entity's load_sum / divider: how much of the
	// recent time (PELT-weighted) the entity was runnable on this CPU.
	// Its load_avg is its current weight times seFrac.
	seFrac float64

	tgContrib int64         // cfs_rq->tg_load_avg_contrib
	tgStamp   timeline.Time // cfs_rq->last_update_tg_load_avg
	tgStamped bool
}

// initGroups sizes the per-CPU group queues and the group entities, which
// take the entity indices after the tasks': nTask + g*ncpu + cpu.
func (m *Model) initGroups(groups []replay.Group) {
	m.tg = make([]taskGroup, len(groups))
	for g, gr := range groups {
		m.tg[g].shares = gr.Weight
		for cpu, rq := range m.rq {
			if rq.grq == nil {
				rq.grq = make([]*groupRQ, len(groups))
			}
			idx := m.nTask + g*m.ncpu + cpu
			gq := &groupRQ{g: g, se: int32(idx)}
			gq.cfsRQ = cfsRQ{rq: rq, cfsCurr: -1, grp: gq}
			rq.grq[g] = gq
			e := &m.ent[idx]
			e.cls = clsFair
			e.policy = replay.PolicyNormal
			e.w = nice0Load // init_tg_cfs_entry: NICE_0_LOAD until the first update_cfs_group
			e.cpu = int32(cpu)
			e.peltCPU = -1
			e.lastWakee = -1
			e.recentUsedCPU = -1
			e.grp = -1
			e.gq = gq
			e.slice = m.baseSlice
		}
	}
}

// groupEnqueued is the part of enqueue_task_fair above a task that entered
// gq: the group's entity enters the root queue (enqueue_entity with
// ENQUEUE_WAKEUP), is requeued if it was delayed, or, already queued, is
// reweighted (update_cfs_group).
func (m *Model) groupEnqueued(gq *groupRQ) {
	root := &gq.rq.cfsRQ
	se := &m.ent[gq.se]
	switch {
	case !se.onRQ:
		m.updateCurr(root)
		m.updateCFSGroup(gq)
		m.placeEntity(root, se, false)
		root.sumAdd(se)
		root.cfsQ = append(root.cfsQ, gq.se)
		root.nrQueued++
		se.onRQ = true
		se.delayed = false
	case se.delayed:
		m.requeueDelayed(root, int(gq.se))
		m.updateCFSGroup(gq)
	default:
		m.updateCFSGroup(gq)
	}
}

// groupDequeued is the part of dequeue_entities above a task that left q
// for good: when q is a group's queue and nothing is left queued in it, the
// group's entity leaves the root queue as a sleeper (DEQUEUE_SLEEP, so
// DELAY_DEQUEUE may keep it there while it is ineligible); otherwise the
// entity is reweighted.
func (m *Model) groupDequeued(q *cfsRQ) {
	gq := q.grp
	if gq == nil {
		return
	}
	if gq.load > 0 {
		m.updateCFSGroup(gq)
		return
	}
	root := &gq.rq.cfsRQ
	se := &m.ent[gq.se]
	if !se.onRQ {
		return
	}
	m.updateCurr(root)
	if se.delayed {
		m.finishDequeue(root, int(gq.se), true)
		return
	}
	if m.watched(FeatDelayDequeue) && !root.eligibleV(se.v) {
		m.featDiverged(FeatDelayDequeue)
	}
	if m.cfg.Has(FeatDelayDequeue) && !root.eligibleV(se.v) {
		se.delayed = true
		*m.c.groupDelayed++
		return
	}
	m.finishDequeue(root, int(gq.se), true)
}

// calcGroupShares is calc_group_shares (kernel/sched/fair.c): the group's
// shares times this CPU's part of the group's load,
//
//	shares = tg->shares × load / (tg->load_avg - contrib + load),
//	load   = max(cfs_rq->load.weight, cfs_rq->avg.load_avg),
//
// clamped to MIN_SHARES..tg->shares. On a single CPU it is tg->shares.
func (m *Model) calcGroupShares(gq *groupRQ) int64 {
	tg := &m.tg[gq.g]
	load := max(gq.load, int64(gq.loadAvg))
	tgWeight := tg.loadAvg - gq.tgContrib + load
	shares := tg.shares * load
	if tgWeight > 0 {
		shares /= tgWeight
	}
	return min(max(shares, replay.MinGroupWeight), tg.shares)
}

// updateCFSGroup is update_cfs_group: the group's entity takes the weight
// calc_group_shares gives; an empty group keeps its weight.
func (m *Model) updateCFSGroup(gq *groupRQ) {
	if gq.load == 0 {
		return
	}
	if w := m.calcGroupShares(gq); m.ent[gq.se].w != w {
		*m.c.groupReweight++
		m.reweightEntity(&gq.rq.cfsRQ, int(gq.se), w)
	}
}

// updateTGLoad is update_tg_load_avg: the group's load on this CPU enters
// tg->load_avg when it moved by more than 1/64 of the last contribution, at
// most once per millisecond.
func (m *Model) updateTGLoad(gq *groupRQ) {
	now := m.now()
	if gq.tgStamped && now-gq.tgStamp < 1_000_000 {
		return
	}
	la := int64(gq.loadAvg)
	delta := la - gq.tgContrib
	if abs := max(delta, -delta); abs > gq.tgContrib/64 {
		m.tg[gq.g].loadAvg += delta
		gq.tgContrib = la
		gq.tgStamp, gq.tgStamped = now, true
	}
}

// updateBlockedGroups is the group part of update_blocked_averages, run by
// the balancer for rq (periodic, nohz idle and newidle balancing): every
// group's load on the CPU, queued or not, refreshes its contribution.
func (m *Model) updateBlockedGroups(rq *runQueue) {
	if len(rq.grq) == 0 {
		return
	}
	m.syncRQ(rq)
	for _, gq := range rq.grq {
		m.updateTGLoad(gq)
	}
}

// reweightEntity is reweight_entity (6.12 and 6.18.2): a queued entity's
// lag is saved and its deadline made relative, both are scaled by old/new
// weight (lag_i = w_i × (V - v_i) is kept), and the entity is placed again
// with the new weight. The running entity is placed against an average
// that counts it, at its old vruntime and new weight, as avg_vruntime does
// for cfs_rq->curr; 6.18.2 leaves a running entity's vprot where it was.
func (m *Model) reweightEntity(q *cfsRQ, x int, w int64) {
	e := &m.ent[x]
	curr := q.cfsCurr == int32(x)
	if e.onRQ {
		m.updateCurr(q)
		m.updateEntityLag(q, e)
		e.dl -= e.v
		e.relDL = true
		q.nrQueued--
		q.sumSub(e)
	}
	e.vlag = e.vlag * e.w / w
	if e.relDL {
		e.dl = e.dl * e.w / w
	}
	e.w = w
	if !e.onRQ {
		return
	}
	if curr {
		q.sumAdd(e)
		old := e.v
		m.placeEntity(q, e, false)
		q.avg += (e.v - old) * e.w
	} else {
		m.placeEntity(q, e, false)
		q.sumAdd(e)
	}
	q.nrQueued++
}

// taskGQ returns the queue of t's group on rq, nil for a root task.
func (m *Model) taskGQ(rq *runQueue, t int) *groupRQ {
	if g := m.ent[t].grp; g >= 0 {
		return rq.grq[g]
	}
	return nil
}

// syncGroups advances the PELT state of rq's group queues by decay d over
// an interval in which the current state held (called from syncRQ).
func (m *Model) syncGroups(rq *runQueue, d float64) {
	k := 1 - d
	currG := int32(-1)
	if c := rq.curr; c >= 0 && m.ent[c].cls == clsFair {
		currG = m.ent[c].grp
	}
	for _, gq := range rq.grq {
		run := 0.0
		if currG == int32(gq.g) {
			run = float64(rq.capOrig)
		}
		gq.util = gq.util*d + run*k
		gq.loadAvg = gq.loadAvg*d + float64(gq.runW)*k
		on := 0.0
		if se := &m.ent[gq.se]; se.onRQ && !se.delayed {
			on = 1
		}
		gq.seFrac = gq.seFrac*d + on*k
	}
}

// groupAttach adds task t's signals to its group's queue on rq (a task
// arriving on the CPU): add_tg_cfs_propagate raises the group entity's
// runnable fraction by the task's, up to 1 (update_tg_cfs_load).
func (m *Model) groupAttach(gq *groupRQ, t int) {
	e := &m.ent[t]
	gq.util += e.util
	gq.loadAvg += e.load
	if e.w > 0 {
		gq.seFrac = math.Min(gq.seFrac+e.load/float64(e.w), 1)
	}
}

// groupDetach removes task t's signals from its group's queue on rq (the
// task leaves the CPU or exits): the group entity's runnable fraction is
// estimated again as update_tg_cfs_load does after a removal, no more than
// the queue's load per unit of queued weight and no less than its running
// fraction.
func (m *Model) groupDetach(gq *groupRQ, t int) {
	e := &m.ent[t]
	gq.util = math.Max(gq.util-e.util, 0)
	gq.loadAvg = math.Max(gq.loadAvg-e.load, 0)
	est := 0.0
	if gq.load > 0 {
		est = gq.loadAvg / float64(gq.load)
	}
	running := math.Min(gq.util/float64(gq.rq.capOrig), 1)
	gq.seFrac = math.Max(math.Min(gq.seFrac, est), running)
	m.updateTGLoad(gq)
}

// rootLoadAvg is the root queue's load_avg: the root group's tasks' loads
// plus each group entity's (its weight times its runnable fraction).
func (m *Model) rootLoadAvg(rq *runQueue) float64 {
	l := rq.loadAvg
	for _, gq := range rq.grq {
		l += float64(m.ent[gq.se].w) * gq.seFrac
	}
	return l
}

// taskHLoad is task_h_load for a task of a group (update_cfs_rq_h_load):
// the task's load as a part of its group's load on the CPU, times the
// group entity's part of the root's,
//
//	h_load(root) = root load_avg
//	h_load(gq)   = h_load(root) × se load_avg / (root load_avg + 1)
//	task_h_load  = task load_avg × h_load(gq) / (gq load_avg + 1),
//
// computed when asked instead of cached per jiffy.
func (m *Model) taskHLoad(t int) int64 {
	e := &m.ent[t]
	cpu := e.peltCPU
	if cpu < 0 {
		cpu = e.cpu
	}
	m.syncRQ(m.rq[cpu])
	return m.taskHLoadAsIs(t)
}

// taskHLoadAsIs is taskHLoad with the sums as they stand.
func (m *Model) taskHLoadAsIs(t int) int64 {
	e := &m.ent[t]
	cpu := e.peltCPU
	if cpu < 0 {
		cpu = e.cpu
	}
	rq := m.rq[cpu]
	gq := rq.grq[e.grp]
	root := int64(m.rootLoadAvg(rq))
	seLoad := int64(float64(m.ent[gq.se].w) * gq.seFrac)
	h := root * seLoad / (root + 1)
	return int64(e.load) * h / (int64(gq.loadAvg) + 1)
}

// eachFairTask calls f for every fair task queued on rq, with the queue it
// is on: the root queue's tasks in queue order, then each group's.
func (m *Model) eachFairTask(rq *runQueue, f func(q *cfsRQ, t int32)) {
	for _, x := range rq.cfsQ {
		if m.ent[x].gq == nil {
			f(&rq.cfsRQ, x)
		}
	}
	for _, gq := range rq.grq {
		for _, x := range gq.cfsQ {
			f(&gq.cfsRQ, x)
		}
	}
}
