package policies

import "math"

// PELT as a continuous-time exponential average (kernel/sched/pelt.c): the
// kernel accumulates 1024 µs periods with y^32 = 1/2 (LOAD_AVG_PERIOD = 32),
// a half-life of 32 × 1024 µs. Over an interval of constant state, a signal
// s moves as s ← s·d + c·(1-d) with d = 2^(-Δ/half-life) and c its steady
// value: the CPU's capacity for utilization of a running task (frequency
// taken as maximum), 1024 for runnable, the weight for load.
const peltHalfLife = 32 * 1024 * 1000.0 // ns

// utilEstMargin is UTIL_EST_MARGIN (SCHED_CAPACITY_SCALE / 100).
const utilEstMargin = capacityScale / 100

func peltDecay(dt int64) float64 { return math.Exp2(-float64(dt) / peltHalfLife) }

// syncRQ brings cpu's PELT sums up to now, with the state that held since
// the last update. Every policy entry point calls it before changing state.
func (m *Model) syncRQ(rq *runQueue) {
	now := m.now()
	dt := int64(now - rq.peltLast)
	if dt <= 0 {
		if dt < 0 {
			rq.peltLast = now
		}
		return
	}
	rq.peltLast = now
	d := peltDecay(dt)
	k := 1 - d
	fairRun, rtRun := 0.0, 0.0
	if rq.curr >= 0 {
		if m.ent[rq.curr].cls == clsFair {
			fairRun = float64(rq.capOrig)
		} else {
			rtRun = float64(rq.capOrig)
		}
	}
	rq.util = rq.util*d + fairRun*k
	rq.runnable = rq.runnable*d + float64(rq.hNr)*capacityScale*k
	rq.loadAvg = rq.loadAvg*d + float64(rq.runW)*k
	rq.rtUtil = rq.rtUtil*d + rtRun*k
	if len(rq.grq) > 0 {
		m.syncGroups(rq, d)
	}
	if rq.curr >= 0 && m.ent[rq.curr].cls == clsFair {
		m.peltUpdateTask(int(rq.curr))
	}
}

// peltUpdateTask brings task t's signals up to now.
func (m *Model) peltUpdateTask(t int) {
	e := &m.ent[t]
	if e.cls != clsFair {
		return
	}
	now := m.now()
	dt := int64(now - e.peltLast)
	if dt <= 0 {
		return
	}
	e.peltLast = now
	d := peltDecay(dt)
	k := 1 - d
	running := m.rq[e.cpu].curr == int32(t)
	runnable := e.onRQ && !e.delayed
	e.util *= d
	e.runnable *= d
	e.load *= d
	if running {
		e.util += float64(m.rq[e.cpu].capOrig) * k
	}
	if runnable {
		e.runnable += capacityScale * k
		e.load += float64(e.w) * k
	}
}

// peltEnqueue attaches t's signals to rq when it arrives from elsewhere or
// is new (post_init_entity_util_avg), before it is queued. A task of a
// group adds its load to its group's queue, whose entity carries it to the
// root; utilization and runnable go to the root sums directly (what the
// kernel's propagation adds up to).
func (m *Model) peltEnqueue(rq *runQueue, t int) {
	e := &m.ent[t]
	if e.cls != clsFair {
		return
	}
	gq := m.taskGQ(rq, t)
	if e.peltCPU < 0 && e.peltLast == 0 {
		// A task's first enqueue (a fork, or a task present when the
		// workload starts): post_init_entity_util_avg gives it half of
		// its queue's spare capacity, or its share of the queue's
		// utilization by weight.
		util, load := rq.util, rq.loadAvg
		if gq != nil {
			util, load = gq.util, gq.loadAvg
		} else if len(rq.grq) > 0 {
			load = m.rootLoadAvg(rq)
		}
		capLeft := (float64(rq.capOrig) - util) / 2
		if capLeft > 0 {
			if util > 0 {
				e.util = math.Min(util*float64(e.w)/(load+1), capLeft)
			} else {
				e.util = capLeft
			}
		}
		e.runnable = e.util
		e.load = float64(e.w)
		e.peltLast = m.now()
	} else {
		m.peltUpdateTask(t)
	}
	if int(e.peltCPU) != rq.cpu {
		if e.peltCPU >= 0 {
			m.peltDetach(m.rq[e.peltCPU], t)
		}
		rq.util += e.util
		rq.runnable += e.runnable
		if gq != nil {
			m.groupAttach(gq, t)
		} else {
			rq.loadAvg += e.load
		}
		e.peltCPU = int32(rq.cpu)
	}
}

// peltDetach removes t's signals from rq's sums (migration, exit).
func (m *Model) peltDetach(rq *runQueue, t int) {
	e := &m.ent[t]
	if e.cls != clsFair || int(e.peltCPU) != rq.cpu {
		return
	}
	m.syncRQ(rq)
	m.peltUpdateTask(t)
	rq.util = math.Max(rq.util-e.util, 0)
	rq.runnable = math.Max(rq.runnable-e.runnable, 0)
	if gq := m.taskGQ(rq, t); gq != nil {
		m.groupDetach(gq, t)
	} else {
		rq.loadAvg = math.Max(rq.loadAvg-e.load, 0)
	}
	e.peltCPU = -1
}

func (m *Model) utilEstEnqueue(rq *runQueue, t int) {
	e := &m.ent[t]
	if !m.cfg.Has(FeatUtilEst) || e.ueAdded > 0 {
		return
	}
	e.ueAdded = e.utilEst
	rq.utilEst += e.ueAdded
}

func (m *Model) utilEstDequeue(rq *runQueue, t int) {
	e := &m.ent[t]
	if e.ueAdded == 0 {
		return
	}
	rq.utilEst = math.Max(rq.utilEst-e.ueAdded, 0)
	e.ueAdded = 0
}

// utilEstUpdate is util_est_update at a sleep: increases are taken at once,
// decreases through a 1/4 EWMA, skipped within 1%, above the CPU's
// capacity, or when the task did not get all the CPU it wanted.
func (m *Model) utilEstUpdate(rq *runQueue, t int) {
	if !m.cfg.Has(FeatUtilEst) && !m.watched(FeatUtilEst) {
		return
	}
	e := &m.ent[t]
	if m.cfg.Has(FeatUtilEst) {
		// Without UTIL_EST the estimate is kept only for its knob
		// counter, from util_avg as it stands: an update here would
		// change the run.
		m.peltUpdateTask(t)
	}
	dequeued := e.util
	ewma := e.utilEst
	if ewma <= dequeued {
		e.utilEst = dequeued
		return
	}
	diff := ewma - dequeued
	if diff < utilEstMargin {
		return
	}
	if dequeued > float64(rq.capOrig) {
		return
	}
	if dequeued+utilEstMargin < e.runnable {
		return
	}
	e.utilEst = (ewma*4 - diff) / 4
}

// taskUtil and taskUtilEst are task_util and task_util_est, synced to now.
func (m *Model) taskUtil(t int) float64 {
	m.peltUpdateTask(t)
	return m.ent[t].util
}

func (m *Model) taskUtilEst(t int) float64 {
	return m.taskUtilEstWith(t, m.cfg.Has(FeatUtilEst))
}

// taskUtilEstWith is task_util_est under UTIL_EST (est) or without it.
func (m *Model) taskUtilEstWith(t int, est bool) float64 {
	m.peltUpdateTask(t)
	e := &m.ent[t]
	if est {
		return math.Max(e.util, e.utilEst)
	}
	return e.util
}

// taskLoad is task_h_load: a root task's own load, a group's task's part
// of its group entity's load (taskHLoad).
func (m *Model) taskLoad(t int) int64 {
	m.peltUpdateTask(t)
	return m.loadOf(t)
}

// loadAsIs is task_h_load of t with every signal as it stands: nothing is
// brought up to now (for the knob counters' alternatives).
func (m *Model) loadAsIs(t int) int64 {
	if m.ent[t].grp >= 0 {
		return m.taskHLoadAsIs(t)
	}
	return int64(m.ent[t].load)
}

// loadOf is task_h_load of t with t's signals as they stand.
func (m *Model) loadOf(t int) int64 {
	if m.ent[t].grp >= 0 {
		return m.taskHLoad(t)
	}
	return int64(m.ent[t].load)
}

// cpuUtilCFS is cpu_util_cfs: max(util_avg, util_est) capped at capacity.
func (m *Model) cpuUtilCFS(rq *runQueue) int64 {
	m.syncRQ(rq)
	u := rq.util
	if m.cfg.Has(FeatUtilEst) {
		u = math.Max(u, rq.utilEst)
	}
	return min(int64(u), rq.capOrig)
}

// cpuUtilBoost is cpu_util_cfs_boost: runnable counts too.
func (m *Model) cpuUtilBoost(rq *runQueue) int64 {
	m.syncRQ(rq)
	u := math.Max(rq.util, rq.runnable)
	if m.cfg.Has(FeatUtilEst) {
		u = math.Max(u, rq.utilEst)
	}
	return min(int64(u), rq.capOrig)
}

// cpuLoad and cpuRunnable are cpu_load and cpu_runnable: cpu_load is the
// root queue's load, group entities included.
func (m *Model) cpuLoad(rq *runQueue) int64 {
	m.syncRQ(rq)
	return int64(m.rootLoadAvg(rq))
}

func (m *Model) cpuRunnable(rq *runQueue) int64 {
	m.syncRQ(rq)
	return int64(rq.runnable)
}

// refreshCapacity is update_cpu_capacity: capacity_of is the original
// capacity minus what RT tasks use (NONTASK_CAPACITY).
func (m *Model) refreshCapacity(rq *runQueue) int64 {
	m.syncRQ(rq)
	c := rq.capOrig
	if m.watched(FeatNontaskCapacity) && int64(rq.rtUtil) > 0 {
		m.featDiverged(FeatNontaskCapacity)
	}
	if m.cfg.Has(FeatNontaskCapacity) {
		c -= int64(rq.rtUtil)
	}
	rq.capOf = max(c, 1)
	return rq.capOf
}

// fitsCapacity is fits_capacity: util × 1280 < capacity × 1024, a 20%
// margin (kernel/sched/fair.c).
func fitsCapacity(util float64, capacity int64) bool {
	return util*1280 < float64(capacity)*1024
}

// capacityGreater is capacity_greater: more than ~5% bigger.
func capacityGreater(a, b int64) bool { return a*1024 > b*1078 }

// taskFitsCPU is task_fits_cpu without uclamp.
func (m *Model) taskFitsCPU(t, cpu int) bool {
	return fitsCapacity(m.taskUtilEst(t), m.rq[cpu].capOf)
}

// updateMisfit is update_misfit_status.
func (m *Model) updateMisfit(rq *runQueue, t int) {
	if !m.asym {
		return
	}
	if t < 0 {
		rq.misfitLoad = 0
		return
	}
	e := &m.ent[t]
	if e.cls != clsFair || m.s.AllowedCount(t) == 1 || rq.capOrig == m.maxAllowedCapacity(t) || m.taskFitsCPU(t, rq.cpu) {
		rq.misfitLoad = 0
		return
	}
	if rq.misfitLoad == 0 {
		*m.c.misfitSet++
	}
	rq.misfitLoad = max(m.taskLoad(t), 1)
}

// overutilized is cpu_overutilized: utilization above 80% of capacity.
func (m *Model) overutilized(rq *runQueue) bool {
	return !fitsCapacity(float64(m.cpuUtilCFS(rq)), rq.capOf)
}
