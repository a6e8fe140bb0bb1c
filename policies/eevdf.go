package policies

import (
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
)

// runQueue is one CPU's rq: the fair (cfs) and RT queues, PELT sums and
// balancing state.
type runQueue struct {
	cpu     int
	capOrig int64 // arch_scale_cpu_capacity
	capOf   int64 // capacity_of: capOrig minus RT pressure, refreshed by balancing
	curr    int32 // running task (any class), -1

	// fair: every queued entity, running and delayed ones included
	cfsQ     []int32
	cfsCurr  int32 // running fair entity, -1
	load     int64 // Σ weight of queued entities
	avg      int64 // Σ (v - v0) × weight of queued entities
	v0       int64 // base of avg (the kernel's min_vruntime / zero_vruntime role)
	nrQueued int   // len(cfsQ) (cfs_rq->nr_queued)
	hNr      int   // runnable fair entities: queued and not delayed (h_nr_running)
	runW     int64 // Σ weight of the runnable (not delayed) fair entities

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
	return &runQueue{
		cpu: cpu, capOrig: capOrig, capOf: capOrig, curr: -1, cfsCurr: -1,
		// sched_init: avg_idle = 2 * sysctl_sched_migration_cost,
		// max_idle_balance_cost = sysctl_sched_migration_cost.
		avgIdle: 2 * migrationCost, maxIdleBalanceCost: migrationCost,
	}
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
func (rq *runQueue) avgVruntime() int64 {
	if rq.load == 0 {
		return rq.v0
	}
	a := rq.avg
	if a < 0 {
		a -= rq.load - 1
	}
	return rq.v0 + a/rq.load
}

// eligibleV is vruntime_eligible: v <= V, compared without the division.
func (rq *runQueue) eligibleV(v int64) bool {
	return rq.avg >= (v-rq.v0)*rq.load
}

func (rq *runQueue) sumAdd(e *entity) {
	rq.avg += (e.v - rq.v0) * e.w
	rq.load += e.w
}

func (rq *runQueue) sumSub(e *entity) {
	rq.avg -= (e.v - rq.v0) * e.w
	rq.load -= e.w
	if rq.load == 0 {
		rq.avg = 0
	}
}

// rebase moves v0 to V when the sums drift far from it, keeping the
// products well inside int64 (the kernel does the same with min_vruntime).
func (rq *runQueue) rebase() {
	if rq.load == 0 {
		return
	}
	V := rq.avgVruntime()
	if d := V - rq.v0; d > 1<<28 || d < -(1<<28) {
		rq.avg -= d * rq.load
		rq.v0 = V
	}
}

func (rq *runQueue) removeFair(t int32) {
	for i, x := range rq.cfsQ {
		if x == t {
			last := len(rq.cfsQ) - 1
			rq.cfsQ[i] = rq.cfsQ[last]
			rq.cfsQ = rq.cfsQ[:last]
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

// armProtect is the protection part of set_next_entity.
func (m *Model) armProtect(rq *runQueue, e *entity) {
	if !m.cfg.Has(FeatProtectVprot) {
		e.vlag = e.dl
		return
	}
	// set_protect_slice (6.18): RUN_TO_PARITY protects up to the deadline
	// or the shortest queued slice; NO_RUN_TO_PARITY the normalized base
	// slice as a quantum.
	slice := m.normSlice
	if m.cfg.Has(FeatRunToParity) {
		slice = m.minSlice(rq)
	}
	slice = min(slice, e.slice)
	vprot := e.dl
	if slice != e.slice {
		vprot = min(vprot, e.v+calcDeltaFair(slice, e.w))
	}
	e.vprot = vprot
}

// cancelProtect is cancel_protect_slice.
func (m *Model) cancelProtect(e *entity) {
	if m.cfg.Has(FeatProtectVprot) {
		e.vprot = e.v
		return
	}
	if e.vlag == e.dl {
		e.vlag = e.dl + 1
	}
}

func (m *Model) minSlice(rq *runQueue) int64 {
	s := int64(1 << 62)
	for _, t := range rq.cfsQ {
		s = min(s, m.ent[t].slice)
	}
	return s
}

// updateCurr is update_curr for the fair class: charge the running entity,
// advance its vruntime, renew its deadline, and ask for a reschedule when
// the version's rule says so.
func (m *Model) updateCurr(rq *runQueue) {
	c := rq.cfsCurr
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
		rq.avg += dv * e.w
		rq.rebase()
	}
	resched := m.updateDeadline(e)
	if rq.nrQueued <= 1 {
		return
	}
	switch {
	case m.cfg.Has(FeatProtectVprot):
		// 6.18: reschedule once the protected horizon is passed and let
		// the pick decide.
		resched = resched || !m.protected(e)
	case m.cfg.Has(FeatPreemptShort):
		// 6.12 did_preempt_short: protection cancelled (or never re-armed
		// because the same task was picked again) and current ineligible.
		resched = resched || (e.vlag != e.dl && !rq.eligibleV(e.v))
	}
	if resched {
		*m.c.needPreempt++
		m.s.Resched(rq.cpu)
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
// from the request (or kept relative, PLACE_REL_DEADLINE).
func (m *Model) placeEntity(rq *runQueue, e *entity, initial bool) {
	V := rq.avgVruntime()
	e.slice = m.baseSlice
	vslice := calcDeltaFair(e.slice, e.w)
	var lag int64
	if m.cfg.Has(FeatPlaceLag) && rq.nrQueued > 0 && e.vlag != 0 {
		// Inflate the lag so that it survives adding the entity's own
		// weight to the average: lag × (W + w) / W.
		load := rq.load
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
	if m.cfg.Has(FeatPlaceDeadlineInitial) && initial {
		vslice /= 2
	}
	e.dl = e.v + vslice
}

// updateEntityLag is update_entity_lag: save V - v, clamped to
// ±max(2 × slice, TICK_NSEC) in virtual time.
func (m *Model) updateEntityLag(rq *runQueue, e *entity) {
	vlag := rq.avgVruntime() - e.v
	limit := calcDeltaFair(max(2*e.slice, m.s.TickNS()), e.w)
	e.vlag = min(max(vlag, -limit), limit)
}

func (m *Model) enqueueFair(rq *runQueue, t int, flags replay.EnqueueFlags) {
	e := &m.ent[t]
	if e.onRQ {
		return
	}
	m.updateCurr(rq)
	if flags&replay.EnqNew != 0 {
		e.vlag = 0
		e.relDL = false
	}
	m.placeEntity(rq, e, flags&replay.EnqNew != 0)
	rq.sumAdd(e)
	rq.cfsQ = append(rq.cfsQ, int32(t))
	rq.nrQueued++
	rq.hNr++
	rq.runW += e.w
	e.onRQ = true
	e.delayed = false
	m.lbSeq++
	e.lbStamp = m.lbSeq // account_entity_enqueue: list_add to the head of cfs_tasks
	m.utilEstEnqueue(rq, t)
}

// dequeueFair is dequeue_entity; a sleeping ineligible entity stays queued
// as delayed under DELAY_DEQUEUE.
func (m *Model) dequeueFair(rq *runQueue, t int, flags replay.DequeueFlags) {
	e := &m.ent[t]
	if !e.onRQ {
		return
	}
	m.updateCurr(rq)
	sleep := flags&replay.DeqSleep != 0
	if sleep {
		m.utilEstUpdate(rq, t)
	}
	m.utilEstDequeue(rq, t)
	if e.delayed {
		m.finishDequeue(rq, t, sleep)
		return
	}
	if m.cfg.Has(FeatDelayDequeue) && sleep && !rq.eligibleV(e.v) {
		e.delayed = true
		rq.hNr--
		rq.runW -= e.w
		*m.c.delayed++
		return
	}
	m.finishDequeue(rq, t, sleep)
}

// finishDequeue removes e from the queue for good.
func (m *Model) finishDequeue(rq *runQueue, t int, sleep bool) {
	e := &m.ent[t]
	m.updateEntityLag(rq, e)
	if m.cfg.Has(FeatPlaceRelDeadline) && !sleep {
		e.dl -= e.v
		e.relDL = true
	}
	rq.sumSub(e)
	rq.removeFair(int32(t))
	rq.nrQueued--
	if !e.delayed {
		rq.hNr--
		rq.runW -= e.w
	} else {
		e.delayed = false
		if m.cfg.Has(FeatDelayZero) && e.vlag > 0 {
			e.vlag = 0
		}
	}
	e.onRQ = false
	if rq.cfsCurr == int32(t) {
		rq.cfsCurr = -1
	}
}

// requeueDelayed is requeue_delayed_entity: a delayed sleeper is woken
// before it was picked.
func (m *Model) requeueDelayed(rq *runQueue, t int) {
	e := &m.ent[t]
	m.updateCurr(rq)
	if m.cfg.Has(FeatDelayZero) {
		m.updateEntityLag(rq, e)
		if e.vlag > 0 {
			rq.sumSub(e)
			rq.nrQueued--
			e.vlag = 0
			m.placeEntity(rq, e, false)
			rq.sumAdd(e)
			rq.nrQueued++
		}
	}
	e.delayed = false
	rq.hNr++
	rq.runW += e.w
	m.utilEstEnqueue(rq, t)
}

// pickEEVDF is pick_eevdf: the eligible entity with the earliest deadline,
// keeping a protected current under RUN_TO_PARITY. ignoreProtect skips the
// protection (6.18, a wakee with a shorter slice).
func (m *Model) pickEEVDF(rq *runQueue, ignoreProtect bool) int {
	curr := int(rq.cfsCurr)
	if curr >= 0 && !m.ent[curr].onRQ {
		curr = -1
	}
	if rq.nrQueued == 1 {
		if curr >= 0 {
			return curr
		}
		return int(rq.cfsQ[0])
	}
	if curr >= 0 && !rq.eligibleV(m.ent[curr].v) {
		curr = -1
	}
	if curr >= 0 && !ignoreProtect {
		protect := m.protected(&m.ent[curr])
		if !m.cfg.Has(FeatProtectVprot) {
			protect = protect && m.cfg.Has(FeatRunToParity)
		}
		if protect {
			return curr
		}
	}
	best := -1
	var bestDL int64
	for _, q := range rq.cfsQ {
		if int(q) == int(rq.cfsCurr) {
			continue
		}
		e := &m.ent[q]
		if !rq.eligibleV(e.v) {
			continue
		}
		if best < 0 || e.dl-bestDL < 0 {
			best, bestDL = int(q), e.dl
		}
	}
	if best < 0 || (curr >= 0 && m.ent[curr].dl-bestDL < 0) {
		best = curr
	}
	if best < 0 {
		// Rounding left nothing eligible: take the earliest deadline.
		for _, q := range rq.cfsQ {
			if e := &m.ent[q]; best < 0 || e.dl-bestDL < 0 {
				best, bestDL = int(q), e.dl
			}
		}
	}
	return best
}

// pickFair is pick_task_fair + pick_next_entity: update the current
// entity, pick, and finish the dequeue of delayed entities the pick lands
// on. It returns -1 when no fair task is runnable.
func (m *Model) pickFair(rq *runQueue) int {
	for rq.nrQueued > 0 {
		if rq.cfsCurr >= 0 && m.ent[rq.cfsCurr].onRQ {
			m.updateCurr(rq)
		}
		se := m.pickEEVDF(rq, false)
		if se < 0 {
			return -1
		}
		if m.ent[se].delayed {
			// DELAY_DEQUEUE: a picked delayed entity is dequeued for good.
			m.peltUpdateTask(se)
			m.finishDequeue(rq, se, true)
			if int(rq.curr) == se {
				rq.curr = -1
			}
			continue
		}
		return se
	}
	return -1
}

// setNextFair is set_next_entity + set_next_task_fair.
func (m *Model) setNextFair(rq *runQueue, t int) {
	e := &m.ent[t]
	e.forked = false
	if e.onRQ {
		m.armProtect(rq, e)
	}
	rq.cfsCurr = int32(t)
	e.pickExec = e.sumExec
	m.lbSeq++
	e.lbStamp = m.lbSeq // list_move to the head of cfs_tasks
}

// putPrevFair is put_prev_entity.
func (m *Model) putPrevFair(rq *runQueue, t int) {
	if rq.cfsCurr != int32(t) {
		return
	}
	if m.ent[t].onRQ {
		m.updateCurr(rq)
	}
	rq.cfsCurr = -1
}

// tickFair is entity_tick plus the patch-002 tick check.
func (m *Model) tickFair(rq *runQueue, t int) {
	m.updateCurr(rq)
	m.peltUpdateTask(t)
	if m.cfg.With(PatchReschedIneligible) && m.entityNeedPreempt(rq, t) {
		*m.c.tickResched++
		m.s.Resched(rq.cpu)
	}
}

// checkPreemptWakeupFair is check_preempt_wakeup_fair for wakee p and
// current curr, both fair.
func (m *Model) checkPreemptWakeupFair(rq *runQueue, curr, p int) bool {
	ce, pe := &m.ent[curr], &m.ent[p]
	if !m.cfg.Has(FeatWakeupPreemption) {
		return false
	}
	currIdle := ce.policy == replay.PolicyIdle
	wakeeIdle := pe.policy == replay.PolicyIdle
	if currIdle && !wakeeIdle {
		*m.c.wakePreempt++
		return true
	}
	if currIdle != wakeeIdle {
		return false
	}
	// BATCH and IDLE tasks do not preempt others.
	if pe.policy != replay.PolicyNormal {
		return false
	}
	if int(rq.cfsCurr) != curr {
		return false
	}
	m.updateCurr(rq)
	shorter := m.cfg.Has(FeatPreemptShort) && pe.slice < ce.slice
	ignore := false
	if m.cfg.Has(FeatProtectVprot) {
		ignore = shorter
	} else if shorter && rq.eligibleV(pe.v) && (pe.dl-ce.dl < 0 || !rq.eligibleV(ce.v)) {
		m.cancelProtect(ce)
	}
	if m.cfg.With(PatchReschedIneligible) && m.entityNeedPreempt(rq, curr) {
		*m.c.patchPreempt++
		return true
	}
	if m.cfg.Has(FeatWakeupPick) {
		if pe.forked || pe.delayed {
			return false // WF_FORK, or a delayed entity: no wakeup preemption
		}
		for {
			n := m.pickEEVDF(rq, ignore)
			if n == p {
				break
			}
			if n < 0 || n == curr || !m.ent[n].delayed {
				return false
			}
			// pick_next_entity landed on a delayed sleeper: its dequeue
			// is finished there, and the pick goes on.
			m.peltUpdateTask(n)
			m.finishDequeue(rq, n, true)
			*m.c.wakePickDequeued++
		}
		if ignore {
			m.cancelProtect(ce)
		}
		*m.c.wakePreempt++
		return true
	}
	if m.pickEEVDF(rq, ignore) == p {
		if ignore {
			m.cancelProtect(ce)
		}
		*m.c.wakePreempt++
		return true
	}
	return false
}
