package policies

import (
	"slices"

	"github.com/schedlens/schedlens/replay"
)

// The moving side of sched_balance_rq (kernel/sched/fair.c): which task of
// the busiest queue may go (can_migrate_task, task_hot), detach_tasks and
// attach_tasks, and active balancing through the stopper.

// cfsTasksTail returns src's fair tasks, of every group, from the tail of
// cfs_tasks (least recently run or enqueued first).
func (m *Model) cfsTasksTail(rq *runQueue) []int32 {
	var l []int32
	if len(rq.grq) == 0 {
		l = slices.Clone(rq.cfsQ)
	} else {
		m.eachFairTask(rq, func(_ *cfsRQ, x int32) { l = append(l, x) })
	}
	slices.SortFunc(l, func(a, b int32) int {
		sa, sb := m.ent[a].lbStamp, m.ent[b].lbStamp
		switch {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		return 0
	})
	return l
}

// taskHot is task_hot: ran within sysctl_sched_migration_cost, or its core
// cookie does not match the destination.
func (m *Model) taskHot(t int, env *lbEnv) bool {
	e := &m.ent[t]
	if e.cls != clsFair || e.policy == replay.PolicyIdle || env.sd.shareCap {
		return false
	}
	if m.core.enabled && !m.core.cookieMatchCPU(env.dst, t) {
		return true
	}
	return int64(m.now()-e.execStart) < m.migCost
}

// canMigrateTask is can_migrate_task.
func (m *Model) canMigrateTask(t int, env *lbEnv) bool {
	e := &m.ent[t]
	if e.delayed || !e.onRQ {
		return false // delayed sleepers are not moved by this model
	}
	if env.sd.nrBalanceFailed == 0 && m.ineligibleOnDst(t, env.dst) {
		if m.cfg.With(PatchLBEligibleFirst) {
			*m.c.lbIneligibleSkip++
			if m.canMigrateRest(t, env, false) {
				m.patchDiverged(PatchLBEligibleFirst)
			}
			return false
		}
		ok := m.canMigrateRest(t, env, true)
		if ok {
			m.patchDiverged(PatchLBEligibleFirst)
		}
		return ok
	}
	return m.canMigrateRest(t, env, true)
}

// canMigrateRest is can_migrate_task after the seed-000 test. With apply
// false it only answers, leaving env's flags alone (the alternative the
// knob counter evaluates).
func (m *Model) canMigrateRest(t int, env *lbEnv, apply bool) bool {
	e := &m.ent[t]
	if e.kthread {
		return false
	}
	if !m.allowed(t, env.dst) {
		if apply {
			env.flags |= lbfSomePinned
		}
		return false
	}
	if apply {
		env.flags &^= lbfAllPinned
	}
	if int(m.rq[env.src].curr) == t {
		return false
	}
	if env.flags&lbfActive != 0 {
		return true
	}
	if !m.taskHot(t, env) || env.sd.nrBalanceFailed > env.sd.cacheNiceTries {
		return true
	}
	return false
}

// detachTasks is detach_tasks + attach_tasks: it returns how many tasks
// moved and how many it examined.
func (m *Model) detachTasks(env *lbEnv) (moved, examined int) {
	src := m.rq[env.src]
	if m.NrRunning(env.src) <= 1 {
		env.flags &^= lbfAllPinned
		return 0, 0
	}
	if env.imbalance <= 0 {
		return 0, 0
	}
	list := m.cfsTasksTail(src)
	i := 0
	for len(list) > 0 {
		if env.idle != cpuNotIdle && m.NrRunning(env.src) <= 1 {
			break
		}
		env.loop++
		if env.loop > env.loopMax && env.flags&lbfAllPinned == 0 {
			break
		}
		if env.loop > env.loopBreak {
			env.loopBreak += nrMigrate
			env.flags |= lbfNeedBreak
			break
		}
		i %= len(list)
		p := int(list[i])
		examined++
		ok := m.canMigrateTask(p, env)
		if ok {
			switch env.mtype {
			case migrateLoad:
				load := max(m.taskLoad(p), 1)
				light := load < 16 && env.sd.nrBalanceFailed == 0
				if light && m.watched(FeatLBMin) && shrBound(load, env.sd.nrBalanceFailed) <= env.imbalance {
					m.featDiverged(FeatLBMin)
				}
				if m.cfg.Has(FeatLBMin) && light {
					ok = false
				} else if shrBound(load, env.sd.nrBalanceFailed) > env.imbalance {
					ok = false
				} else {
					env.imbalance -= load
				}
			case migrateUtil:
				util := int64(m.taskUtilEst(p))
				if m.watched(FeatUtilEst) && m.utilFits(util, env) != m.utilFits(int64(m.taskUtilEstWith(p, !m.cfg.Has(FeatUtilEst))), env) {
					m.featDiverged(FeatUtilEst)
				}
				if m.utilTooBig(util, env) {
					*m.c.lbUtilSkip++
					ok = false
				} else {
					env.imbalance -= util
				}
			case migrateTask:
				env.imbalance--
			case migrateMisfit:
				if m.taskFitsCPU(p, env.src) {
					ok = false
				} else {
					env.imbalance = 0
				}
			}
		}
		if !ok {
			// list_move to the head: the next tail is the next task
			m.lbSeq++
			m.ent[p].lbStamp = m.lbSeq
			i++
			continue
		}
		if !m.s.Migrate(p, env.dst) {
			i++
			continue
		}
		moved++
		*m.c.lbMoved++
		list = slices.Delete(list, i, i+1)
		if env.idle == cpuNewlyIdle {
			// CONFIG_PREEMPTION: newidle stops after the first task.
			break
		}
		if env.imbalance <= 0 {
			break
		}
	}
	return moved, examined
}

// needActiveBalance is need_active_balance.
func (m *Model) needActiveBalance(env *lbEnv) bool {
	sd := env.sd
	if env.mtype == migrateTask && sd.nrBalanceFailed > sd.cacheNiceTries+2 {
		return true
	}
	src, dst := m.rq[env.src], m.rq[env.dst]
	if env.idle != cpuNotIdle && src.hNr == 1 && checkCPUCapacity(src, sd) && src.capOf*sd.imbalancePct < dst.capOf*100 {
		return true
	}
	return env.mtype == migrateMisfit
}

// activeBalanceStop is active_load_balance_cpu_stop on the busiest CPU:
// move one task (the previously running one is off the CPU now) to dst.
func (m *Model) activeBalanceStop(cpu, dst int) {
	rq := m.rq[cpu]
	rq.activeBalance = false
	if m.NrRunning(cpu) == 0 {
		return
	}
	var sd *schedDomain
	for _, d := range m.rq[dst].sd {
		if d.contains(cpu) {
			sd = d
			break
		}
	}
	if sd == nil {
		return
	}
	env := &lbEnv{sd: sd, dst: dst, src: cpu, idle: cpuIdle, flags: lbfActive, cpus: nil}
	for _, p := range m.cfsTasksTail(rq) {
		if !m.canMigrateTask(int(p), env) {
			continue
		}
		if m.s.Migrate(int(p), dst) {
			*m.c.lbMoved++
			sd.nrBalanceFailed = 0
		}
		return
	}
}
