package policies

import (
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
)

// cfsRQ is one cfs_rq: a CPU's root queue (embedded in its runQueue), or a
// task group's queue on that CPU (groupRQ). Its entities are tasks and, in
// the root queue, the entities of the groups with tasks queued on the CPU.
type cfsRQ struct {
	rq *runQueue

	// every queued entity, running and delayed ones included
	cfsQ     []int32
	cfsCurr  int32 // running entity of this queue, -1
	load     int64 // Σ weight of queued entities (cfs_rq->load)
	avg      int64 // Σ (v - v0) × weight of queued entities
	v0       int64 // base of avg (the kernel's min_vruntime / zero_vruntime role)
	nrQueued int   // len(cfsQ) (cfs_rq->nr_queued)
	hNr      int   // runnable tasks at and below this queue: queued and not delayed (h_nr_running)
	runW     int64 // Σ weight of the runnable (not delayed) tasks queued here: the PELT load input

	grp *groupRQ // the group this queue belongs to; nil for the root queue
}

// runQueue is one CPU's rq: the fair (cfs) and RT queues, PELT sums and
// balancing state. The embedded cfsRQ is the root fair queue.
type runQueue struct {
	cpu     int
	capOrig int64 // arch_scale_cpu_capacity
	capOf   int64 // capacity_of: capOrig minus RT pressure, refreshed by balancing
	curr    int32 // running task (any class), -1

	cfsRQ
	grq []*groupRQ // per task group, its queue on this CPU (none without groups)

	// RT: queued RT/DL tasks, the running one included
	rtQ  []int32
	rtNr int

	// PELT sums (util and rtUtil scaled by capacity; load in weight units)
	util, runnable, loadAvg, rtUtil, utilEst float64
	peltLast                                 timeline.Time

	misfitLoad int64
	lastIdle   int64 // when the CPU last switched to idle (ns)

	// balancing
	sd                 []*schedDomain // lowest first
	nextBalance        int64          // jiffies
	avgIdle            int64
	maxIdleBalanceCost int64
	idleStamp          timeline.Time // 0: not idle-stamped
	activeBalance      bool
	ni                 newidleState
}

func newRunQueue(cpu int, capOrig int64) *runQueue {
	rq := &runQueue{
		cpu: cpu, capOrig: capOrig, capOf: capOrig, curr: -1,
		// sched_init: avg_idle = 2 * sysctl_sched_migration_cost,
		// max_idle_balance_cost = sysctl_sched_migration_cost.
		avgIdle: 2 * migrationCost, maxIdleBalanceCost: migrationCost,
	}
	rq.cfsRQ = cfsRQ{rq: rq, cfsCurr: -1}
	return rq
}

// taskQ returns the fair queue of rq that task t is (or would be) queued
// on: its group's, or the root queue.
func (m *Model) taskQ(rq *runQueue, t int) *cfsRQ {
	if g := m.ent[t].grp; g >= 0 {
		return &rq.grq[g].cfsRQ
	}
	return &rq.cfsRQ
}

// calcDeltaFair converts real time to virtual time for weight w
// (calc_delta_fair): delta × NICE_0_LOAD / w.
func calcDeltaFair(delta, w int64) int64 {
	if w == nice0Load {
		return delta
	}
	return delta * nice0Load / w
}

// avgVruntime is avg_vruntime: the load-weighted mean vruntime of the
// queued entities, floored.
func (q *cfsRQ) avgVruntime() int64 {
	if q.load == 0 {
		return q.v0
	}
	a := q.avg
	if a < 0 {
		a -= q.load - 1
	}
	return q.v0 + a/q.load
}

// eligibleV is vruntime_eligible: v <= V, compared without the division.
func (q *cfsRQ) eligibleV(v int64) bool {
	return q.avg >= (v-q.v0)*q.load
}

func (q *cfsRQ) sumAdd(e *entity) {
	q.avg += (e.v - q.v0) * e.w
	q.load += e.w
}

func (q *cfsRQ) sumSub(e *entity) {
	q.avg -= (e.v - q.v0) * e.w
	q.load -= e.w
	if q.load == 0 {
		q.avg = 0
	}
}

// rebase moves v0 to V when the sums drift far from it, keeping the
// products well inside int64 (the kernel does the same with min_vruntime).
func (q *cfsRQ) rebase() {
	if q.load == 0 {
		return
	}
	V := q.avgVruntime()
	if d := V - q.v0; d > 1<<28 || d < -(1<<28) {
		q.avg -= d * q.load
		q.v0 = V
	}
}

func (q *cfsRQ) removeFair(t int32) {
	for i, x := range q.cfsQ {
		if x == t {
			last := len(q.cfsQ) - 1
			q.cfsQ[i] = q.cfsQ[last]
			q.cfsQ = q.cfsQ[:last]
			return
		}
	}
}

// protected reports whether e's slice protection holds (RUN_TO_PARITY):
// 6.6/6.12 keep the deadline in vlag while running (the "HACK" in
// set_next_entity); 6.18 keeps a vprot horizon.
func (m *Model) protected(e *entity) bool {
	if m.cfg.Has(FeatProtectVprot) {
		return e.vprot-e.v > 0
	}
	return e.vlag == e.dl
}

// armProtect is the protection part of set_next_entity, for e picked on q.
func (m *Model) armProtect(q *cfsRQ, e *entity) {
	if !m.cfg.Has(FeatProtectVprot) {
		e.vlag = e.dl
		return
	}
	// set_protect_slice (6.18): RUN_TO_PARITY protects up to the deadline
	// or the shortest queued slice; NO_RUN_TO_PARITY the normalized base
	// slice as a quantum.
	e.vprot = m.vprotHorizon(q, e, m.cfg.Has(FeatRunToParity))
	if m.watched(FeatRunToParity) {
		e.vprotAlt = m.vprotHorizon(q, e, !m.cfg.Has(FeatRunToParity))
	}
}

// vprotHorizon is the horizon set_protect_slice gives e under
// RUN_TO_PARITY (parity) or NO_RUN_TO_PARITY.
func (m *Model) vprotHorizon(q *cfsRQ, e *entity, parity bool) int64 {
	slice := m.normSlice
	if parity {
		slice = m.minSlice(q)
	}
	slice = min(slice, e.slice)
	vprot := e.dl
	if slice != e.slice {
		vprot = min(vprot, e.v+calcDeltaFair(slice, e.w))
	}
	return vprot
}

// cancelProtect is cancel_protect_slice.
func (m *Model) cancelProtect(e *entity) {
	if m.cfg.Has(FeatProtectVprot) {
		e.vprot, e.vprotAlt = e.v, e.v
		return
	}
	if e.vlag == e.dl {
		e.vlag = e.dl + 1
	}
}

func (m *Model) minSlice(q *cfsRQ) int64 {
	s := int64(1 << 62)
	for _, x := range q.cfsQ {
		s = min(s, m.ent[x].slice)
	}
	return s
}

// updateCurr is update_curr for one fair queue: charge its running entity
// (a task, or a group entity in the root queue), advance its vruntime,
// renew its deadline, and ask for a reschedule when the version's rule
// says so.
func (m *Model) updateCurr(q *cfsRQ) {
	c := q.cfsCurr
	if c < 0 {
		return
	}
	e := &m.ent[c]
	now := m.now()
	delta := int64(now - e.execStart)
	if delta <= 0 {
		return
	}
	e.execStart = now
	e.sumExec += delta
	dv := calcDeltaFair(delta, e.w)
	e.v += dv
	if e.onRQ {
		q.avg += dv * e.w
		q.rebase()
	}
	resched := m.updateDeadline(e)
	if q.nrQueued <= 1 {
		return
	}
	switch {
	case m.cfg.Has(FeatProtectVprot):
		// 6.18: reschedule once the protected horizon is passed and let
		// the pick decide.
		resched = resched || !m.protected(e)
	case m.cfg.Has(FeatPreemptShort) || m.watched(FeatPreemptShort):
		// 6.12 did_preempt_short: protection cancelled (or never re-armed
		// because the same task was picked again) and current ineligible.
		short := e.vlag != e.dl && !q.eligibleV(e.v)
		if short && !resched {
			m.featDiverged(FeatPreemptShort)
		}
		resched = resched || (short && m.cfg.Has(FeatPreemptShort))
	}
	if resched {
		*m.c.needPreempt++
		m.s.Resched(q.rq.cpu)
	}
}

// updateDeadline is update_deadline: a new slice once vruntime reaches the
// deadline.
func (m *Model) updateDeadline(e *entity) bool {
	if e.v-e.dl < 0 {
		return false
	}
	e.slice = m.baseSlice
	e.dl = e.v + calcDeltaFair(e.slice, e.w)
	return true
}

// placeEntity is place_entity: vruntime from V and the saved lag, deadline
// from the request (or kept relative, PLACE_REL_DEADLINE and reweighting).
func (m *Model) placeEntity(q *cfsRQ, e *entity, initial bool) {
	V := q.avgVruntime()
	e.slice = m.baseSlice
	vslice := calcDeltaFair(e.slice, e.w)
	var lag int64
	if m.watched(FeatPlaceLag) && q.nrQueued > 0 && e.vlag != 0 {
		m.featDiverged(FeatPlaceLag)
	}
	if m.cfg.Has(FeatPlaceLag) && q.nrQueued > 0 && e.vlag != 0 {
		// Inflate the lag so that it survives adding the entity's own
		// weight to the average: lag × (W + w) / W.
		load := q.load
		if load <= 0 {
			load = 1
		}
		lag = e.vlag * (load + e.w) / load
	}
	e.v = V - lag
	if e.relDL {
		e.dl += e.v
		e.relDL = false
		return
	}
	if initial && m.watched(FeatPlaceDeadlineInitial) {
		m.featDiverged(FeatPlaceDeadlineInitial)
	}
	if m.cfg.Has(FeatPlaceDeadlineInitial) && initial {
		vslice /= 2
	}
	e.dl = e.v + vslice
}

// updateEntityLag is update_entity_lag: save V - v, clamped to
// ±max(2 × slice, TICK_NSEC) in virtual time.
func (m *Model) updateEntityLag(q *cfsRQ, e *entity) {
	vlag := q.avgVruntime() - e.v
	limit := calcDeltaFair(max(2*e.slice, m.s.TickNS()), e.w)
	e.vlag = min(max(vlag, -limit), limit)
}

// enqueueFair is enqueue_task_fair: t enters its queue on rq (its group's
// or the root), then its group's entity enters the root queue or is
// reweighted.
func (m *Model) enqueueFair(rq *runQueue, t int, flags replay.EnqueueFlags) {
	e := &m.ent[t]
	if e.onRQ {
		return
	}
	q := m.taskQ(rq, t)
	m.updateCurr(q)
	if q.grp != nil {
		m.updateTGLoad(q.grp)
	}
	if flags&replay.EnqNew != 0 {
		e.vlag = 0
		e.relDL = false
	}
	m.placeEntity(q, e, flags&replay.EnqNew != 0)
	q.sumAdd(e)
	q.cfsQ = append(q.cfsQ, int32(t))
	q.nrQueued++
	q.hNr++
	q.runW += e.w
	e.onRQ = true
	e.delayed = false
	m.lbSeq++
	e.lbStamp = m.lbSeq // account_entity_enqueue: list_add to the head of cfs_tasks
	m.utilEstEnqueue(rq, t)
	if q.grp != nil {
		rq.hNr++
		m.groupEnqueued(q.grp)
	}
}

// dequeueFair is dequeue_task_fair: a sleeping ineligible task stays
// queued as delayed under DELAY_DEQUEUE; a task that leaves its group's
// queue empty takes the group's entity off the root queue.
func (m *Model) dequeueFair(rq *runQueue, t int, flags replay.DequeueFlags) {
	e := &m.ent[t]
	if !e.onRQ {
		return
	}
	q := m.taskQ(rq, t)
	m.updateCurr(q)
	sleep := flags&replay.DeqSleep != 0
	if sleep {
		m.utilEstUpdate(rq, t)
	}
	m.utilEstDequeue(rq, t)
	if m.watched(FeatDelayDequeue) && !e.delayed && sleep && !q.eligibleV(e.v) {
		m.featDiverged(FeatDelayDequeue)
	}
	if !e.delayed && m.cfg.Has(FeatDelayDequeue) && sleep && !q.eligibleV(e.v) {
		e.delayed = true
		q.hNr--
		q.runW -= e.w
		if q.grp != nil {
			rq.hNr--
		}
		*m.c.delayed++
		return
	}
	if q.grp != nil {
		m.updateTGLoad(q.grp) // update_load_avg(UPDATE_TG) of a dequeue that is not delayed
	}
	m.finishDequeue(q, t, sleep)
	m.groupDequeued(q)
}

// finishDequeue takes entity x (a task, or a group entity of the root
// queue) off q for good.
func (m *Model) finishDequeue(q *cfsRQ, x int, sleep bool) {
	e := &m.ent[x]
	m.updateEntityLag(q, e)
	if m.watched(FeatPlaceRelDeadline) && !sleep {
		m.featDiverged(FeatPlaceRelDeadline)
	}
	if m.cfg.Has(FeatPlaceRelDeadline) && !sleep {
		e.dl -= e.v
		e.relDL = true
	}
	q.sumSub(e)
	q.removeFair(int32(x))
	q.nrQueued--
	if !e.delayed {
		if e.gq == nil {
			q.hNr--
			q.runW -= e.w
			if q.grp != nil {
				q.rq.hNr--
			}
		}
	} else {
		e.delayed = false
		if m.watched(FeatDelayZero) && e.vlag > 0 {
			m.featDiverged(FeatDelayZero)
		}
		if m.cfg.Has(FeatDelayZero) && e.vlag > 0 {
			e.vlag = 0
		}
	}
	e.onRQ = false
	if q.cfsCurr == int32(x) {
		q.cfsCurr = -1
	}
}

// dequeueDelayed finishes the dequeue of delayed entity x of q, where a
// pick landed on it (pick_next_entity with DELAY_DEQUEUE).
func (m *Model) dequeueDelayed(q *cfsRQ, x int) {
	if m.ent[x].gq != nil {
		m.finishDequeue(q, x, true)
		return
	}
	m.peltUpdateTask(x)
	m.finishDequeue(q, x, true)
	if int(q.rq.curr) == x {
		q.rq.curr = -1
	}
	m.groupDequeued(q)
}

// requeueDelayed is requeue_delayed_entity: delayed entity x of q (a
// sleeping task, or an emptied group) is wanted again before it was picked.
func (m *Model) requeueDelayed(q *cfsRQ, x int) {
	e := &m.ent[x]
	m.updateCurr(q)
	if m.watched(FeatDelayZero) && !m.cfg.Has(FeatDelayZero) && q.avgVruntime()-e.v > 0 {
		m.featDiverged(FeatDelayZero) // the lag update_entity_lag would find and drop
	}
	if m.cfg.Has(FeatDelayZero) {
		m.updateEntityLag(q, e)
		if e.vlag > 0 && m.watched(FeatDelayZero) {
			m.featDiverged(FeatDelayZero)
		}
		if e.vlag > 0 {
			q.sumSub(e)
			q.nrQueued--
			e.vlag = 0
			m.placeEntity(q, e, false)
			q.sumAdd(e)
			q.nrQueued++
		}
	}
	e.delayed = false
	if e.gq != nil {
		return
	}
	q.hNr++
	q.runW += e.w
	if q.grp != nil {
		q.rq.hNr++
	}
	m.utilEstEnqueue(q.rq, x)
}

// pickEEVDF is pick_eevdf on q: the eligible entity with the earliest
// deadline, keeping a protected current under RUN_TO_PARITY. ignoreProtect
// skips the protection (6.18, a wakee with a shorter slice).
func (m *Model) pickEEVDF(q *cfsRQ, ignoreProtect bool) int {
	return m.pickEEVDFFrom(q, ignoreProtect, true)
}

// pickEEVDFQuiet is pickEEVDF without counting knob decisions, for the
// alternatives the knob counters evaluate.
func (m *Model) pickEEVDFQuiet(q *cfsRQ, ignoreProtect bool) int {
	return m.pickEEVDFFrom(q, ignoreProtect, false)
}

func (m *Model) pickEEVDFFrom(q *cfsRQ, ignoreProtect, count bool) int {
	curr := int(q.cfsCurr)
	if curr >= 0 && !m.ent[curr].onRQ {
		curr = -1
	}
	if q.nrQueued == 1 {
		if curr >= 0 {
			return curr
		}
		return int(q.cfsQ[0])
	}
	if curr >= 0 && !q.eligibleV(m.ent[curr].v) {
		curr = -1
	}
	if curr >= 0 && !ignoreProtect {
		ce := &m.ent[curr]
		protect := m.protected(ce)
		var alt bool // the protection under the other RUN_TO_PARITY
		if !m.cfg.Has(FeatProtectVprot) {
			alt = protect && !m.cfg.Has(FeatRunToParity)
			protect = protect && m.cfg.Has(FeatRunToParity)
		} else {
			alt = ce.vprotAlt-ce.v > 0
		}
		if count && protect != alt && m.watched(FeatRunToParity) && m.pickEEVDFQuiet(q, true) != curr {
			m.featDiverged(FeatRunToParity)
		}
		if protect {
			return curr
		}
	}
	best := -1
	var bestDL int64
	for _, x := range q.cfsQ {
		if int(x) == int(q.cfsCurr) {
			continue
		}
		e := &m.ent[x]
		if !q.eligibleV(e.v) {
			continue
		}
		if best < 0 || e.dl-bestDL < 0 {
			best, bestDL = int(x), e.dl
		}
	}
	if best < 0 || (curr >= 0 && m.ent[curr].dl-bestDL < 0) {
		best = curr
	}
	if best < 0 {
		// Rounding left nothing eligible: take the earliest deadline.
		for _, x := range q.cfsQ {
			if e := &m.ent[x]; best < 0 || e.dl-bestDL < 0 {
				best, bestDL = int(x), e.dl
			}
		}
	}
	return best
}

// pickFair is pick_task_fair + pick_next_entity: from the root queue down,
// update each queue's current entity and pick, descending into a picked
// group's queue, and finish the dequeue of delayed entities the pick lands
// on (then start again from the root). It returns -1 when no fair task is
// runnable.
func (m *Model) pickFair(rq *runQueue) int {
again:
	for rq.nrQueued > 0 {
		q := &rq.cfsRQ
		for {
			if q.cfsCurr >= 0 && m.ent[q.cfsCurr].onRQ {
				m.updateCurr(q)
			}
			x := m.pickEEVDF(q, false)
			if x < 0 {
				if q.grp == nil {
					return -1
				}
				// A group entity queued over an empty queue cannot occur;
				// should it, the entity leaves and the pick starts again.
				m.finishDequeue(&rq.cfsRQ, int(q.grp.se), true)
				continue again
			}
			if m.ent[x].delayed {
				// DELAY_DEQUEUE: a picked delayed entity is dequeued for good.
				m.dequeueDelayed(q, x)
				continue again
			}
			if gq := m.ent[x].gq; gq != nil {
				q = &gq.cfsRQ
				continue
			}
			return x
		}
	}
	return -1
}

// setNextFair is set_next_task_fair: set_next_entity on each level whose
// current entity changes (the group's entity stays current when the
// previous task was of the same group, as pick_next_task_fair does).
func (m *Model) setNextFair(rq *runQueue, t int) {
	e := &m.ent[t]
	q := m.taskQ(rq, t)
	if gq := q.grp; gq != nil && rq.cfsCurr != gq.se {
		g := &m.ent[gq.se]
		if g.onRQ {
			m.armProtect(&rq.cfsRQ, g)
		}
		rq.cfsCurr = gq.se
		g.execStart = m.now()
		g.pickExec = g.sumExec
	}
	e.forked = false
	if e.onRQ {
		m.armProtect(q, e)
	}
	q.cfsCurr = int32(t)
	e.pickExec = e.sumExec
	m.lbSeq++
	e.lbStamp = m.lbSeq // list_move to the head of cfs_tasks
}

// putPrevFair is put_prev_entity on each level of task t. When keep is a
// fair task of t's group, the group's entity stays current (the partial
// put of pick_next_task_fair); keep -1 puts every level
// (put_prev_task_fair).
func (m *Model) putPrevFair(rq *runQueue, t, keep int) {
	q := m.taskQ(rq, t)
	if q.cfsCurr == int32(t) {
		if m.ent[t].onRQ {
			m.updateCurr(q)
		}
		q.cfsCurr = -1
	}
	gq := q.grp
	if gq == nil || rq.cfsCurr != gq.se {
		return
	}
	if keep >= 0 && m.ent[keep].cls == clsFair && m.ent[keep].grp == m.ent[t].grp {
		return
	}
	if m.ent[gq.se].onRQ {
		m.updateCurr(&rq.cfsRQ)
	}
	rq.cfsCurr = -1
}

// tickFair is task_tick_fair: entity_tick on each level from the task up
// (update_curr, the group's load contribution, update_cfs_group), plus the
// patch-002 check on each level.
func (m *Model) tickFair(rq *runQueue, t int) {
	q := m.taskQ(rq, t)
	m.updateCurr(q)
	m.peltUpdateTask(t)
	if q.grp != nil {
		m.updateTGLoad(q.grp)
	}
	m.tickNeedPreempt(rq, q, t)
	gq := q.grp
	if gq == nil || rq.cfsCurr != gq.se {
		return
	}
	m.updateCurr(&rq.cfsRQ)
	m.updateCFSGroup(gq)
	m.tickNeedPreempt(rq, &rq.cfsRQ, int(gq.se))
}

// checkPreemptWakeupFair is check_preempt_wakeup_fair for wakee p and
// current curr, both fair tasks: the test runs between their entities on
// the first queue they share (find_matching_se): the tasks themselves in
// one queue, else the group entities (or root tasks) in the root queue.
func (m *Model) checkPreemptWakeupFair(rq *runQueue, curr, p int) bool {
	if !m.cfg.Has(FeatWakeupPreemption) {
		if m.watched(FeatWakeupPreemption) && m.wakeupWouldPreempt(rq, curr, p) {
			m.featDiverged(FeatWakeupPreemption)
		}
		return false
	}
	preempt := m.wakeupPreemptFair(rq, curr, p)
	if preempt && m.watched(FeatWakeupPreemption) {
		m.featDiverged(FeatWakeupPreemption)
	}
	return preempt
}

// matchingSE is find_matching_se for current curr and wakee p: the tasks
// themselves when they share a queue, else their group entities (or root
// tasks) in the root queue.
func (m *Model) matchingSE(rq *runQueue, curr, p int) (se, pse int, q *cfsRQ) {
	ce, pe := &m.ent[curr], &m.ent[p]
	se, pse, q = curr, p, m.taskQ(rq, curr)
	if ce.grp != pe.grp {
		q = &rq.cfsRQ
		if ce.grp >= 0 {
			se = int(rq.grq[ce.grp].se)
		}
		if pe.grp >= 0 {
			pse = int(rq.grq[pe.grp].se)
		}
	}
	return se, pse, q
}

// idlePreempt is the SCHED_IDLE part of the wakeup check: 1 preempt, -1
// do not, 0 go on. se_is_idle is a SCHED_IDLE task; group entities are
// never idle (no cpu.idle groups are modeled). BATCH and IDLE wakees do
// not preempt.
func (m *Model) idlePreempt(curr, p, se, pse int) int {
	currIdle := se == curr && m.ent[curr].policy == replay.PolicyIdle
	wakeeIdle := pse == p && m.ent[p].policy == replay.PolicyIdle
	if currIdle && !wakeeIdle {
		return 1
	}
	if currIdle != wakeeIdle || m.ent[p].policy != replay.PolicyNormal {
		return -1
	}
	return 0
}

// wakeupWouldPreempt answers the wakeup check as with WAKEUP_PREEMPTION on,
// from the state as it stands, for its knob counter: it neither charges
// the current task nor cancels its protection.
func (m *Model) wakeupWouldPreempt(rq *runQueue, curr, p int) bool {
	se, pse, q := m.matchingSE(rq, curr, p)
	switch m.idlePreempt(curr, p, se, pse) {
	case 1:
		return true
	case -1:
		return false
	}
	if int(q.cfsCurr) != se {
		return false
	}
	ignore := m.cfg.Has(FeatProtectVprot) && m.cfg.Has(FeatPreemptShort) && m.ent[pse].slice < m.ent[se].slice
	if m.cfg.With(PatchReschedIneligible) && m.entityNeedPreempt(q, se) {
		return true
	}
	return m.wakeupPickPreempts(q, se, pse, ignore)
}

// countWakeupPick counts a wakeup check that WAKEUP_PICK's two settings
// decide differently, from the state before either acts: a forked or
// delayed wakee the classic test lets preempt, or a pick that lands on a
// delayed sleeper (the pick-based rule dequeues it and picks again).
func (m *Model) countWakeupPick(q *cfsRQ, se, pse int, ignore bool) {
	n := m.pickEEVDFQuiet(q, ignore)
	pe := &m.ent[pse]
	if (pe.forked || pe.delayed) && n == pse || n >= 0 && n != pse && n != se && m.ent[n].delayed {
		m.featDiverged(FeatWakeupPick)
	}
}

// wakeupPreemptFair is check_preempt_wakeup_fair past the
// WAKEUP_PREEMPTION test.
func (m *Model) wakeupPreemptFair(rq *runQueue, curr, p int) bool {
	pe := &m.ent[p]
	se, pse, q := m.matchingSE(rq, curr, p)
	switch m.idlePreempt(curr, p, se, pse) {
	case 1:
		*m.c.wakePreempt++
		return true
	case -1:
		return false
	}
	if int(q.cfsCurr) != se {
		return false
	}
	m.updateCurr(q)
	sE, pE := &m.ent[se], &m.ent[pse]
	if m.watched(FeatPreemptShort) && pE.slice < sE.slice && q.eligibleV(pE.v) {
		m.featDiverged(FeatPreemptShort)
	}
	shorter := m.cfg.Has(FeatPreemptShort) && pE.slice < sE.slice
	ignore := false
	if m.cfg.Has(FeatProtectVprot) {
		ignore = shorter
	} else if shorter && q.eligibleV(pE.v) && (pE.dl-sE.dl < 0 || !q.eligibleV(sE.v)) {
		m.cancelProtect(sE)
	}
	if m.entityNeedPreempt(q, se) {
		// The patch preempts here; without it the pick below decides.
		if !m.wakeupPickPreempts(q, se, pse, ignore) {
			m.patchDiverged(PatchReschedIneligible)
		}
		if m.cfg.With(PatchReschedIneligible) {
			*m.c.patchPreempt++
			return true
		}
	}
	if m.watched(FeatWakeupPick) {
		m.countWakeupPick(q, se, pse, ignore)
	}
	if m.cfg.Has(FeatWakeupPick) {
		if pe.forked || pe.delayed {
			return false // WF_FORK, or a delayed entity: no wakeup preemption
		}
		for {
			n := m.pickEEVDF(q, ignore)
			if n == pse {
				break
			}
			if n < 0 || n == se || !m.ent[n].delayed {
				return false
			}
			// pick_next_entity landed on a delayed sleeper: its dequeue
			// is finished there, and the pick goes on.
			m.dequeueDelayed(q, n)
			*m.c.wakePickDequeued++
		}
		if ignore {
			m.cancelProtect(sE)
		}
		*m.c.wakePreempt++
		return true
	}
	if m.pickEEVDF(q, ignore) == pse {
		if ignore {
			m.cancelProtect(sE)
		}
		*m.c.wakePreempt++
		return true
	}
	return false
}
