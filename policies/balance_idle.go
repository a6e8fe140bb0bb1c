package policies

import "github.com/schedlens/schedlens/replay"

// When balancing runs (kernel/sched/fair.c): the periodic
// sched_balance_domains from the tick, the nohz idle balance a busy CPU
// kicks on behalf of the tickless idle CPUs, and newidle balancing
// (sched_balance_newidle) when a CPU runs out of work, the one whose time
// the model charges.

// updateNewidleCost is update_newidle_cost: track the maximum newidle cost
// per domain, decayed by ~1% per second.
func (m *Model) updateNewidleCost(sd *schedDomain, cost int64) {
	j := m.jiffies()
	if cost > sd.maxNewidleLBCost {
		sd.maxNewidleLBCost = cost
		sd.lastDecayMaxLBCost = j
	} else if j > sd.lastDecayMaxLBCost+int64(m.s.HZ()) {
		sd.maxNewidleLBCost = sd.maxNewidleLBCost * 253 / 256
		sd.lastDecayMaxLBCost = j
	}
}

// balanceDomains is sched_balance_domains: balance each level whose
// interval has passed.
func (m *Model) balanceDomains(cpu int, idle idleType) {
	rq := m.rq[cpu]
	m.updateBlockedGroups(rq)
	j := m.jiffies()
	next := j + 60*int64(m.s.HZ())
	update := false
	busy := idle == cpuNotIdle
	cont := true
	var maxCost int64
	for _, sd := range rq.sd {
		m.updateNewidleCost(sd, 0)
		maxCost += sd.maxNewidleLBCost
	}
	for _, sd := range rq.sd {
		if !cont {
			break
		}
		interval := m.balanceInterval(sd, busy)
		if j >= sd.lastBalance+interval {
			env := m.lbNew(cpu, sd, idle)
			m.lbRun(env)
			cont = env.contBalance
			if env.moved > 0 {
				if m.idleCPU(cpu) {
					idle = cpuIdle
				} else {
					idle = cpuNotIdle
				}
				busy = idle == cpuNotIdle
			}
			sd.lastBalance = j
			interval = m.balanceInterval(sd, busy)
		}
		if next > sd.lastBalance+interval {
			next = sd.lastBalance + interval
			update = true
		}
	}
	rq.maxIdleBalanceCost = max(m.migCost, maxCost)
	if update {
		rq.nextBalance = next
	}
}

// balanceTrigger is sched_balance_trigger at the tick of a busy CPU, with
// nohz_balancer_kick.
func (m *Model) balanceTrigger(rq *runQueue) {
	if len(rq.sd) == 0 {
		return
	}
	if m.jiffies() >= rq.nextBalance {
		m.balanceDomains(rq.cpu, cpuNotIdle)
	}
	m.nohzBalancerKick(rq)
}

// nohzBalancerKick is nohz_balancer_kick: a busy CPU's tick kicks an idle
// CPU to balance on behalf of the tickless idle CPUs.
func (m *Model) nohzBalancerKick(rq *runQueue) {
	j := m.jiffies()
	ilb := -1
	nextBal := int64(1) << 62
	for c := 0; c < m.ncpu; c++ {
		if c == rq.cpu || !m.idleCPU(c) {
			continue
		}
		if ilb < 0 {
			ilb = c
		}
		nextBal = min(nextBal, m.rq[c].nextBalance)
	}
	if ilb < 0 || j < m.nohzNext || j < nextBal {
		return
	}
	kick := m.NrRunning(rq.cpu) >= 2
	if !kick && len(rq.sd) > 0 && rq.hNr >= 1 && checkCPUCapacity(rq, rq.sd[0]) {
		kick = true
	}
	if !kick {
		if sd := m.domains.sdAsym[rq.cpu]; sd != nil {
			kick = rq.misfitLoad > 0 && (rq.capOrig < m.maxCap || checkCPUCapacity(rq, sd))
		} else if sd := m.domains.sdLLC[rq.cpu]; sd != nil {
			busy := 0
			for _, c := range sd.span {
				if !m.idleCPU(c) {
					busy++
				}
			}
			kick = busy > 1
		}
	}
	if !kick {
		return
	}
	m.nohzNext = j + 1
	*m.c.nohzKicks++
	m.s.After(m.now(), ilb, timerNohzBalance, 0)
}

// nohzIdleBalance is _nohz_idle_balance on the kicked CPU: run the
// balancing of every idle CPU whose time has come, this CPU last.
func (m *Model) nohzIdleBalance(ilb int) {
	if !m.idleCPU(ilb) {
		return
	}
	j := m.jiffies()
	next := j + 60*int64(m.s.HZ())
	for k := 1; k <= m.ncpu; k++ {
		c := (ilb + k) % m.ncpu
		if !m.idleCPU(c) {
			continue
		}
		if !m.idleCPU(ilb) {
			break // need_resched on the balancing CPU: stop
		}
		rq := m.rq[c]
		m.syncRQ(rq)
		if j >= rq.nextBalance {
			m.balanceDomains(c, cpuIdle)
		}
		next = min(next, rq.nextBalance)
	}
	m.nohzNext = next
}

// newidleStart is sched_balance_newidle: a CPU about to idle tries to pull
// work, walking its domains bottom up while the expected idle time covers
// the balancing cost.
func (m *Model) newidleStart(rq *runQueue) replay.Pick {
	rq.idleStamp = m.now()
	if rq.idleStamp == 0 {
		rq.idleStamp = 1
	}
	if len(rq.sd) == 0 {
		return m.goIdle(rq)
	}
	sd0 := rq.sd[0]
	j := m.jiffies()
	nb := j + int64(m.s.HZ())
	if !m.rdOverloaded() || rq.avgIdle < sd0.maxNewidleLBCost {
		nb = min(nb, sd0.lastBalance+m.balanceInterval(sd0, false))
		if rq.nextBalance > nb {
			rq.nextBalance = nb
		}
		return m.goIdle(rq)
	}
	m.updateBlockedGroups(rq)
	rq.ni = newidleState{active: true, nextBalance: nb}
	*m.c.lbNewidleRuns++
	return m.newidleContinue(rq)
}

// newidleContinue runs newidle balancing one pass at a time; each pass
// costs time during which the CPU is between tasks.
func (m *Model) newidleContinue(rq *runQueue) replay.Pick {
	ni := &rq.ni
	for {
		if ni.env == nil {
			if ni.level >= len(rq.sd) {
				break
			}
			sd := rq.sd[ni.level]
			ni.nextBalance = min(ni.nextBalance, sd.lastBalance+m.balanceInterval(sd, false))
			if rq.avgIdle < ni.currCost+sd.maxNewidleLBCost {
				break
			}
			ni.env = m.lbNew(rq.cpu, sd, cpuNewlyIdle)
		}
		env := ni.env
		if !ni.afterStep {
			c := m.lbPass(env)
			env.cost += c
			*m.c.lbNewidleNS += c
			if c > 0 {
				ni.afterStep = true
				return replay.Pick{Task: -1, Delay: c}
			}
		}
		ni.afterStep = false
		if !env.done {
			continue
		}
		m.updateNewidleCost(env.sd, env.cost)
		ni.currCost += env.cost
		ni.env = nil
		ni.level++
		if env.moved > 0 {
			*m.c.newidlePulled++
			break
		}
		if !env.contBalance {
			break
		}
		if m.NrRunning(rq.cpu) > 0 || m.s.WakePending(rq.cpu) > 0 {
			break
		}
	}
	ni.active = false
	ni.env = nil
	if ni.currCost > rq.maxIdleBalanceCost {
		rq.maxIdleBalanceCost = ni.currCost
	}
	if rq.nextBalance > ni.nextBalance {
		rq.nextBalance = ni.nextBalance
	}
	if next := m.pickLocal(rq, -1); next >= 0 {
		rq.idleStamp = 0
		return replay.Pick{Task: next}
	}
	return m.goIdle(rq)
}

// goIdle records that cpu switches to the idle task.
func (m *Model) goIdle(rq *runQueue) replay.Pick {
	rq.lastIdle = int64(m.now())
	rq.misfitLoad = 0
	m.updateIdleCore(rq.cpu)
	return replay.Pick{Task: -1}
}
