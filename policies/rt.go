package policies

import "github.com/schedlens/schedlens/replay"

// The RT class (kernel/sched/rt.c) as strict priority above fair: the
// highest priority (lowest prio number) runs, FIFO order inside a priority,
// SCHED_RR rotating every 100 ms (RR_TIMESLICE). Placement avoids CPUs that
// run an equal or higher RT priority (find_lowest_rq over cpupri levels),
// a woken task that cannot run is pushed to a CPU of lower priority, and a
// CPU dropping to a lower priority pulls from RT-overloaded CPUs. RT
// throttling (sched_rt_runtime_us) is not modeled. SCHED_DEADLINE tasks are
// treated as RT tasks above every RT priority.

const (
	prioFairLevel = 140 // a CPU running or queueing fair tasks (CPUPRI_NORMAL)
	prioIdleLevel = 200 // an idle CPU (CPUPRI_IDLE)
)

func (m *Model) enqueueRT(rq *runQueue, t int, flags replay.EnqueueFlags) {
	e := &m.ent[t]
	for _, x := range rq.rtQ {
		if int(x) == t {
			return
		}
	}
	m.rtSeq++
	e.rtSeq = m.rtSeq
	rq.rtQ = append(rq.rtQ, int32(t))
	rq.rtNr++
	if rq.rtNr == 2 {
		m.rtOverloaded++
	}
}

func (m *Model) dequeueRT(rq *runQueue, t int) {
	for i, x := range rq.rtQ {
		if int(x) == t {
			last := len(rq.rtQ) - 1
			rq.rtQ[i] = rq.rtQ[last]
			rq.rtQ = rq.rtQ[:last]
			if rq.rtNr == 2 {
				m.rtOverloaded--
			}
			rq.rtNr--
			return
		}
	}
}

// pickRT returns the highest-priority queued RT task, FIFO inside a
// priority.
func (m *Model) pickRT(rq *runQueue) int {
	best := -1
	for _, x := range rq.rtQ {
		e := &m.ent[x]
		if best < 0 || e.rtPrio < m.ent[best].rtPrio || (e.rtPrio == m.ent[best].rtPrio && e.rtSeq < m.ent[best].rtSeq) {
			best = int(x)
		}
	}
	return best
}

// tickRT is task_tick_rt: SCHED_RR rotation.
func (m *Model) tickRT(rq *runQueue, t int) {
	e := &m.ent[t]
	if e.policy != replay.PolicyRR {
		return
	}
	e.rtSlice -= m.s.TickNS()
	if e.rtSlice > 0 {
		return
	}
	e.rtSlice = rrTimeslice
	for _, x := range rq.rtQ {
		if int(x) != t && m.ent[x].rtPrio == e.rtPrio {
			m.rtSeq++
			e.rtSeq = m.rtSeq // requeue_task_rt to the tail
			m.s.Resched(rq.cpu)
			return
		}
	}
}

// rqPrioLevel is the CPU's cpupri level: its highest RT priority, or the
// fair level, or idle. Larger is lower priority.
func (m *Model) rqPrioLevel(cpu int) int {
	rq := m.rq[cpu]
	lvl := prioIdleLevel
	if rq.hNr > 0 || (rq.curr >= 0 && m.ent[rq.curr].cls == clsFair) {
		lvl = prioFairLevel
	}
	for _, x := range rq.rtQ {
		if p := m.ent[x].rtPrio; p < lvl {
			lvl = p
		}
	}
	return lvl
}

// findLowestRQ is find_lowest_rq: among t's allowed CPUs, one at the lowest
// priority level, preferring t's CPU, then one sharing its LLC.
func (m *Model) findLowestRQ(t int) int {
	e := &m.ent[t]
	prev := int(e.cpu)
	best, bestLvl := -1, -2
	for cpu := 0; cpu < m.ncpu; cpu++ {
		if !m.allowed(t, cpu) {
			continue
		}
		if m.core.enabled && !m.core.cookieMatchCPU(cpu, t) {
			continue
		}
		lvl := m.rqPrioLevel(cpu)
		switch {
		case lvl > bestLvl:
			best, bestLvl = cpu, lvl
		case lvl == bestLvl:
			if cpu == prev || (best != prev && m.s.SameLLC(cpu, prev) && !m.s.SameLLC(best, prev)) {
				best = cpu
			}
		}
	}
	return best
}

// selectRT is select_task_rq_rt.
func (m *Model) selectRT(t, from int) int {
	e := &m.ent[t]
	prev := int(e.cpu)
	if !m.allowed(t, prev) {
		if c := m.findLowestRQ(t); c >= 0 {
			return c
		}
		return prev
	}
	curr := int(m.rq[prev].curr)
	if curr >= 0 && m.ent[curr].cls == clsRT && (m.s.AllowedCount(curr) < 2 || m.ent[curr].rtPrio <= e.rtPrio) {
		target := m.findLowestRQ(t)
		if target >= 0 && e.rtPrio < m.rqPrioLevel(target) {
			return target
		}
	}
	return prev
}

// rtTaskWoken is task_woken_rt: push a woken task that cannot run here.
func (m *Model) rtTaskWoken(rq *runQueue, t int) {
	curr := int(rq.curr)
	e := &m.ent[t]
	if curr < 0 || curr == t || m.s.AllowedCount(t) < 2 || m.s.NeedResched(rq.cpu) {
		return
	}
	ce := &m.ent[curr]
	if ce.cls != clsRT || (m.s.AllowedCount(curr) >= 2 && ce.rtPrio > e.rtPrio) {
		return
	}
	target := m.findLowestRQ(t)
	if target >= 0 && target != rq.cpu && e.rtPrio < m.rqPrioLevel(target) {
		if m.s.Migrate(t, target) {
			*m.c.rtPush++
		}
	}
}

// pullRT is pull_rt_task: take the highest queued (not running) RT task of
// an RT-overloaded CPU that beats this CPU's level.
func (m *Model) pullRT(rq *runQueue) {
	myLvl := prioIdleLevel
	if rq.hNr > 0 {
		myLvl = prioFairLevel
	}
	for _, x := range rq.rtQ {
		myLvl = min(myLvl, m.ent[x].rtPrio)
	}
	best, bestPrio := -1, myLvl
	for cpu := 0; cpu < m.ncpu; cpu++ {
		src := m.rq[cpu]
		if cpu == rq.cpu || src.rtNr < 2 {
			continue
		}
		for _, x := range src.rtQ {
			if x == src.curr || !m.allowed(int(x), rq.cpu) {
				continue
			}
			if p := m.ent[x].rtPrio; p < bestPrio {
				best, bestPrio = int(x), p
			}
		}
	}
	if best >= 0 && m.s.Migrate(best, rq.cpu) {
		*m.c.rtPull++
	}
}
