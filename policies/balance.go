package policies

import (
	"slices"

	"github.com/schedlens/schedlens/replay"
)

// Load balancing over sched domains (kernel/sched/fair.c,
// sched_balance_rq and friends): periodic balancing from the tick, idle
// balancing by a kicked idle CPU on behalf of the tickless idle ones, newidle
// balancing when a CPU runs out of work (the only one whose time is
// charged, see CostModel), and active balancing through the stopper.

type idleType uint8

const (
	cpuNotIdle idleType = iota
	cpuIdle
	cpuNewlyIdle
)

type migType uint8

const (
	migrateLoad migType = iota
	migrateUtil
	migrateTask
	migrateMisfit
)

type groupType uint8

// Group types in increasing order of need (enum group_type).
const (
	groupHasSpare groupType = iota
	groupFullyBusy
	groupMisfitTask
	groupSMTBalance
	groupAsymPacking
	groupImbalanced
	groupOverloaded
)

// lb_env flags
const (
	lbfAllPinned = 1 << iota
	lbfNeedBreak
	lbfSomePinned
	lbfActive
)

const (
	nrMigrate         = 32  // sysctl_sched_nr_migrate and SCHED_NR_MIGRATE_BREAK
	maxPinnedInterval = 512 // MAX_PINNED_INTERVAL (ms)
)

// policy timer and stopper kinds
const (
	timerNohzBalance  = 1
	stopActiveBalance = 1
)

type sgStats struct {
	avgLoad, groupLoad, groupUtil, groupRunnable, groupCapacity, misfitLoad int64
	sumNr, sumHNr, idleCPUs, weight                                         int
	gtype                                                                   groupType
	smtBalance                                                              bool
	maxCap, minCap                                                          int64
}

type lbEnv struct {
	sd        *schedDomain
	dst, src  int
	idle      idleType
	cpus      []bool
	imbalance int64
	mtype     migType
	flags     int
	loop      int
	loopMax   int
	loopBreak int

	local, busiest      sgStats
	busiestGrp          *schedGroup
	totalLoad, totalCap int64
	avgLoad             int64
	preferSibling       bool

	cost         int64
	moved        int
	done         bool
	contBalance  bool
	activeKicked bool
}

type newidleState struct {
	active      bool
	level       int
	env         *lbEnv
	afterStep   bool
	currCost    int64
	nextBalance int64
}

func (m *Model) lbNew(dst int, sd *schedDomain, idle idleType) *lbEnv {
	env := &lbEnv{sd: sd, dst: dst, idle: idle, cpus: make([]bool, m.ncpu), loopBreak: nrMigrate, contBalance: true, src: -1}
	for _, c := range sd.span {
		env.cpus[c] = true
	}
	return env
}

// shrBound is shr_bound: x >> n with the shift capped below the word size.
func shrBound(x int64, n int) int64 {
	if n > 63 {
		n = 63
	}
	return x >> uint(n)
}

// checkCPUCapacity is check_cpu_capacity: capacity reduced by RT/IRQ
// pressure beyond imbalance_pct.
func checkCPUCapacity(rq *runQueue, sd *schedDomain) bool {
	return rq.capOf*sd.imbalancePct < rq.capOrig*100
}

// rdOverloaded is rd->overloaded: some CPU has more than one task (or a
// misfit task).
func (m *Model) rdOverloaded() bool {
	for c := 0; c < m.ncpu; c++ {
		if m.NrRunning(c) > 1 || m.rq[c].misfitLoad > 0 {
			return true
		}
	}
	return false
}

// isCoreIdle is is_core_idle: every SMT sibling of cpu is idle.
func (m *Model) isCoreIdle(cpu int) bool {
	if !m.smt {
		return true
	}
	for _, c := range m.s.Topology().Siblings(cpu) {
		if c != cpu && !m.idleCPU(c) {
			return false
		}
	}
	return true
}

// shouldWeBalance is should_we_balance: one CPU per group balances a level.
func (m *Model) shouldWeBalance(env *lbEnv) bool {
	if !env.cpus[env.dst] {
		return false
	}
	if env.idle == cpuNewlyIdle {
		return !m.newidleBailout(env.dst)
	}
	g := env.sd.groups[0]
	idleSMT := -1
	skip := m.coreScratch()
	defer m.clearScratch(skip)
	for _, c := range g.cpus {
		if !env.cpus[c] || skip[c] || !m.idleCPU(c) {
			continue
		}
		if !env.sd.shareCap && !m.isCoreIdle(c) {
			if idleSMT < 0 {
				idleSMT = c
			}
			for _, s := range m.s.Topology().Siblings(c) {
				skip[s] = true
			}
			continue
		}
		return c == env.dst
	}
	if idleSMT >= 0 {
		return idleSMT == env.dst
	}
	return g.cpus[0] == env.dst
}

// groupClassify is group_classify.
func (m *Model) groupClassify(pct int64, g *schedGroup, sgs *sgStats) groupType {
	if groupIsOverloaded(pct, sgs) {
		return groupOverloaded
	}
	if g.imbalance {
		return groupImbalanced
	}
	if sgs.smtBalance {
		return groupSMTBalance
	}
	if sgs.misfitLoad > 0 {
		return groupMisfitTask
	}
	if !groupHasCapacity(pct, sgs) {
		return groupFullyBusy
	}
	return groupHasSpare
}

func groupIsOverloaded(pct int64, sgs *sgStats) bool {
	if sgs.sumNr <= sgs.weight {
		return false
	}
	if sgs.groupCapacity*100 < sgs.groupUtil*pct {
		return true
	}
	if sgs.groupCapacity*pct < sgs.groupRunnable*100 {
		return true
	}
	return false
}

func groupHasCapacity(pct int64, sgs *sgStats) bool {
	if sgs.sumNr < sgs.weight {
		return true
	}
	if sgs.groupCapacity*pct < sgs.groupRunnable*100 {
		return false
	}
	if sgs.groupCapacity*100 > sgs.groupUtil*pct {
		return true
	}
	return false
}

// updateSGStats is update_sg_lb_stats.
func (m *Model) updateSGStats(env *lbEnv, g *schedGroup, local bool) sgStats {
	var sgs sgStats
	sd := env.sd
	sgs.minCap = 1 << 62
	for _, c := range g.cpus {
		rq := m.rq[c]
		cap := m.refreshCapacity(rq)
		sgs.groupCapacity += cap
		sgs.maxCap = max(sgs.maxCap, cap)
		sgs.minCap = min(sgs.minCap, cap)
		if !env.cpus[c] {
			continue
		}
		load := m.cpuLoad(rq)
		sgs.groupLoad += load
		sgs.groupUtil += m.cpuUtilCFS(rq)
		sgs.groupRunnable += m.cpuRunnable(rq)
		sgs.sumHNr += rq.hNr
		nr := m.NrRunning(c)
		sgs.sumNr += nr
		if nr == 0 && m.idleCPU(c) {
			sgs.idleCPUs++
			continue
		}
		if local {
			continue
		}
		if sd.asym {
			sgs.misfitLoad = max(sgs.misfitLoad, rq.misfitLoad)
		} else if env.idle != cpuNotIdle && rq.hNr > 0 && checkCPUCapacity(rq, sd) {
			sgs.misfitLoad = max(sgs.misfitLoad, load)
		}
	}
	g.capacity, g.minCap, g.maxCap = sgs.groupCapacity, sgs.minCap, sgs.maxCap
	sgs.weight = g.weight
	if !local && env.idle != cpuNotIdle && g.smt && sgs.sumHNr > 1 {
		sgs.smtBalance = true
	}
	sgs.gtype = m.groupClassify(sd.imbalancePct, g, &sgs)
	if sgs.gtype == groupOverloaded {
		sgs.avgLoad = sgs.groupLoad * capacityScale / max(sgs.groupCapacity, 1)
	}
	return sgs
}

// pickBusiest is update_sd_pick_busiest.
func (m *Model) pickBusiest(env *lbEnv, g *schedGroup, sgs *sgStats) bool {
	busiest := &env.busiest
	if sgs.sumHNr == 0 {
		return false
	}
	if env.sd.asym && sgs.gtype == groupMisfitTask &&
		(!capacityGreater(m.rq[env.dst].capOf, g.maxCap) || env.local.gtype != groupHasSpare) {
		return false
	}
	if env.busiestGrp == nil {
		return true
	}
	if sgs.gtype > busiest.gtype {
		return true
	}
	if sgs.gtype < busiest.gtype {
		return false
	}
	switch sgs.gtype {
	case groupOverloaded:
		return sgs.avgLoad > busiest.avgLoad
	case groupImbalanced, groupAsymPacking:
		return false
	case groupMisfitTask:
		return sgs.misfitLoad > busiest.misfitLoad
	case groupSMTBalance, groupFullyBusy, groupHasSpare:
		if sgs.gtype == groupFullyBusy || (sgs.gtype == groupSMTBalance && sgs.idleCPUs == 0 && busiest.idleCPUs == 0) {
			if sgs.avgLoad < busiest.avgLoad {
				return false
			}
			if sgs.avgLoad == busiest.avgLoad && env.busiestGrp.smt {
				return false
			}
			break
		}
		if sgs.idleCPUs > busiest.idleCPUs {
			return false
		}
		if sgs.idleCPUs == busiest.idleCPUs && sgs.sumNr <= busiest.sumNr {
			return false
		}
	}
	if env.sd.asym && sgs.gtype <= groupFullyBusy && capacityGreater(g.minCap, m.rq[env.dst].capOf) {
		return false
	}
	return true
}

// updateSDLBStats is update_sd_lb_stats.
func (m *Model) updateSDLBStats(env *lbEnv) {
	sd := env.sd
	env.preferSibling = sd.child != nil && sd.child.preferSibling
	env.busiestGrp = nil
	env.totalLoad, env.totalCap = 0, 0
	var sumUtil int64
	for i, g := range sd.groups {
		local := i == 0
		sgs := m.updateSGStats(env, g, local)
		env.totalLoad += sgs.groupLoad
		env.totalCap += sgs.groupCapacity
		sumUtil += sgs.groupUtil
		if local {
			env.local = sgs
			continue
		}
		if m.pickBusiest(env, g, &sgs) {
			env.busiestGrp = g
			env.busiest = sgs
		}
	}
	if m.cfg.Has(FeatSISUtil) && env.idle != cpuNewlyIdle && m.domains.sdLLC[env.dst] == sd {
		m.updateIdleCPUScan(env.dst, sumUtil, len(sd.span), sd.imbalancePct)
	}
}

// updateIdleCPUScan is update_idle_cpu_scan (SIS_UTIL): the scan depth
// falls with the LLC's utilization, reaching 0 at about 85%.
func (m *Model) updateIdleCPUScan(cpu int, sumUtil int64, llc int, pct int64) {
	x := sumUtil / int64(llc)
	tmp := x * x * pct * pct / (10000 * capacityScale)
	tmp = min(tmp, capacityScale)
	y := (capacityScale - tmp) * int64(llc) / capacityScale
	m.domains.llcOf[cpu].nrIdleScan = int(y)
}

// siblingImbalance is sibling_imbalance.
func (m *Model) siblingImbalance(env *lbEnv) int64 {
	busiest, local := &env.busiest, &env.local
	if env.idle == cpuNotIdle || busiest.sumNr == 0 {
		return 0
	}
	nb, nl := int64(env.busiestGrp.cores), int64(env.sd.groups[0].cores)
	if nb == nl {
		return max(int64(busiest.sumNr-local.sumNr), 0)
	}
	imb := max(nl*int64(busiest.sumNr)-nb*int64(local.sumNr), 0)
	imb = (2*imb + nl + nb) / (nl + nb)
	if imb <= 1 && local.sumNr == 0 && busiest.sumNr > 1 {
		imb = 2
	}
	return imb
}

// findBusiestGroup is sched_balance_find_src_group.
func (m *Model) findBusiestGroup(env *lbEnv) *schedGroup {
	m.updateSDLBStats(env)
	if env.busiestGrp == nil {
		env.imbalance = 0
		return nil
	}
	busiest, local := &env.busiest, &env.local
	force := false
	switch busiest.gtype {
	case groupMisfitTask, groupAsymPacking, groupImbalanced:
		force = true
	}
	if !force {
		if local.gtype > busiest.gtype {
			return nil
		}
		if local.gtype == groupOverloaded {
			if local.avgLoad >= busiest.avgLoad {
				return nil
			}
			env.avgLoad = env.totalLoad * capacityScale / max(env.totalCap, 1)
			if local.avgLoad >= env.avgLoad {
				return nil
			}
			if 100*busiest.avgLoad <= env.sd.imbalancePct*local.avgLoad {
				return nil
			}
		}
		if env.preferSibling && local.gtype == groupHasSpare && m.siblingImbalance(env) > 1 {
			force = true
		}
	}
	if !force && busiest.gtype != groupOverloaded {
		if env.idle == cpuNotIdle {
			return nil
		}
		smtVs := busiest.gtype == groupSMTBalance && m.smt && env.sd.groups[0].smt != env.busiestGrp.smt
		if !smtVs {
			if busiest.weight > 1 && local.idleCPUs <= busiest.idleCPUs+1 {
				return nil
			}
			if busiest.sumHNr == 1 {
				return nil
			}
		}
	}
	m.calculateImbalance(env)
	if env.imbalance <= 0 {
		return nil
	}
	return env.busiestGrp
}

// calculateImbalance is calculate_imbalance.
func (m *Model) calculateImbalance(env *lbEnv) {
	local, busiest := &env.local, &env.busiest
	switch busiest.gtype {
	case groupMisfitTask:
		if env.sd.asym {
			env.mtype, env.imbalance = migrateMisfit, 1
		} else {
			env.mtype, env.imbalance = migrateLoad, busiest.misfitLoad
		}
		return
	case groupAsymPacking:
		env.mtype, env.imbalance = migrateTask, int64(busiest.sumHNr)
		return
	case groupSMTBalance, groupImbalanced:
		env.mtype, env.imbalance = migrateTask, 1
		return
	}
	if local.gtype == groupHasSpare {
		if busiest.gtype > groupFullyBusy && !env.sd.shareLLC {
			// Fill the local group's spare capacity (migrate_util).
			env.mtype = migrateUtil
			env.imbalance = max(local.groupCapacity, local.groupUtil) - local.groupUtil
			if env.idle != cpuNotIdle && env.imbalance == 0 {
				env.mtype, env.imbalance = migrateTask, 1
			}
			return
		}
		env.mtype = migrateTask
		if busiest.weight == 1 || env.preferSibling {
			env.imbalance = m.siblingImbalance(env)
		} else {
			env.imbalance = max(int64(local.idleCPUs-busiest.idleCPUs), 0)
		}
		if env.sd.numa {
			// adjust_numa_imbalance: allow a small imbalance while the
			// destination is lightly used (imb_numa_nr taken as 25% of the
			// domain).
			if local.sumNr+1 <= max(len(env.sd.span)/4, 1) && env.imbalance <= 2 {
				env.imbalance = 0
			}
		}
		env.imbalance >>= 1
		return
	}
	if local.gtype < groupOverloaded {
		local.avgLoad = local.groupLoad * capacityScale / max(local.groupCapacity, 1)
		if local.avgLoad >= busiest.avgLoad {
			env.imbalance = 0
			return
		}
		env.avgLoad = env.totalLoad * capacityScale / max(env.totalCap, 1)
		if local.avgLoad >= env.avgLoad {
			env.imbalance = 0
			return
		}
	}
	env.mtype = migrateLoad
	env.imbalance = min((busiest.avgLoad-env.avgLoad)*busiest.groupCapacity, (env.avgLoad-local.avgLoad)*local.groupCapacity) / capacityScale
}

// findBusiestQueue is sched_balance_find_src_rq.
func (m *Model) findBusiestQueue(env *lbEnv, g *schedGroup) int {
	busiest := -1
	var bUtil, bLoad int64
	bCap := int64(1)
	bNr := 0
	for _, c := range g.cpus {
		if !env.cpus[c] {
			continue
		}
		rq := m.rq[c]
		nr := rq.hNr
		if nr == 0 {
			continue
		}
		cap := rq.capOf
		if env.sd.asym && !capacityGreater(m.rq[env.dst].capOf, cap) && nr == 1 {
			continue
		}
		switch env.mtype {
		case migrateLoad:
			load := m.cpuLoad(rq)
			if nr == 1 && load > env.imbalance && !checkCPUCapacity(rq, env.sd) {
				continue
			}
			if load*bCap > bLoad*cap {
				bLoad, bCap, busiest = load, cap, c
			}
		case migrateUtil:
			if nr <= 1 {
				continue
			}
			if u := m.cpuUtilBoost(rq); bUtil < u {
				bUtil, busiest = u, c
			}
		case migrateTask:
			if bNr < nr {
				bNr, busiest = nr, c
			}
		case migrateMisfit:
			if rq.misfitLoad > bLoad {
				bLoad, busiest = rq.misfitLoad, c
			}
		}
	}
	return busiest
}

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
	if m.cfg.With(PatchLBEligibleFirst) && env.sd.nrBalanceFailed == 0 && m.ineligibleOnDst(t, env.dst) {
		*m.c.lbIneligibleSkip++
		return false
	}
	if e.kthread {
		return false
	}
	if !m.allowed(t, env.dst) {
		env.flags |= lbfSomePinned
		return false
	}
	env.flags &^= lbfAllPinned
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
				if m.cfg.Has(FeatLBMin) && load < 16 && env.sd.nrBalanceFailed == 0 {
					ok = false
				} else if shrBound(load, env.sd.nrBalanceFailed) > env.imbalance {
					ok = false
				} else {
					env.imbalance -= load
				}
			case migrateUtil:
				util := int64(m.taskUtilEst(p))
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

// lbPass runs sched_balance_rq from its start (or a redo) to its end or to
// the next redo, and returns the time it takes under the cost model.
func (m *Model) lbPass(env *lbEnv) int64 {
	return m.cost.scaled(m.lbPassCost(env))
}

// lbPassCost is lbPass at Scale 1.
func (m *Model) lbPassCost(env *lbEnv) int64 {
	sd := env.sd
	cost := m.cost.PerBalance
	switch env.idle {
	case cpuNewlyIdle:
		*m.c.lbNewidle++
	case cpuIdle:
		*m.c.lbIdle++
	default:
		*m.c.lbPeriodic++
	}
	if !m.shouldWeBalance(env) {
		env.contBalance = false
		m.lbOutBalanced(env)
		return cost
	}
	cost += m.cost.PerGroup*int64(len(sd.groups)) + m.cost.PerCPU*int64(len(sd.span))
	g := m.findBusiestGroup(env)
	if g == nil {
		m.lbOutBalanced(env)
		return cost
	}
	cost += m.cost.PerCPU * int64(len(g.cpus))
	busiest := m.findBusiestQueue(env, g)
	if busiest < 0 {
		m.lbOutBalanced(env)
		return cost
	}
	env.src = busiest
	env.flags |= lbfAllPinned
	moved := 0
	if m.NrRunning(busiest) > 1 {
		env.loopMax = min(nrMigrate, m.NrRunning(busiest))
		for {
			mv, ex := m.detachTasks(env)
			moved += mv
			cost += m.cost.PerTask * int64(ex)
			if env.flags&lbfNeedBreak != 0 {
				env.flags &^= lbfNeedBreak
				if env.loop < m.NrRunning(busiest) {
					continue
				}
			}
			break
		}
		if env.flags&lbfSomePinned != 0 && env.imbalance > 0 && sd.parent != nil {
			sd.parent.groups[0].imbalance = true
		}
		if env.flags&lbfAllPinned != 0 {
			env.cpus[busiest] = false
			subset := true
			for c, in := range env.cpus {
				if in && !sd.groups[0].inGroup[c] {
					subset = false
					break
				}
			}
			if !subset {
				// redo with the busiest CPU left out
				env.loop, env.loopBreak, env.flags = 0, nrMigrate, 0
				env.src = -1
				*m.c.lbRedo++
				return cost
			}
			m.lbOutAllPinned(env)
			return cost
		}
	}
	env.moved += moved
	active := false
	if moved == 0 {
		*m.c.lbFailedPasses++
		if env.idle != cpuNewlyIdle && env.mtype != migrateMisfit {
			sd.nrBalanceFailed++
		}
		if m.needActiveBalance(env) {
			src := m.rq[busiest]
			curr := int(src.curr)
			if curr < 0 || !m.allowed(curr, env.dst) {
				env.flags |= lbfAllPinned
				m.lbOutOnePinned(env)
				return cost
			}
			if !src.activeBalance {
				src.activeBalance = true
				active = true
				env.activeKicked = true
				*m.c.lbActive++
				if env.mtype == migrateMisfit {
					*m.c.activeMisfit++
				}
				m.s.StopCPU(busiest, stopActiveBalance, int64(env.dst))
			}
		}
	} else {
		sd.nrBalanceFailed = 0
	}
	if !active || m.needActiveBalance(env) {
		sd.balanceInterval = sd.minInterval
	}
	env.done = true
	return cost
}

func (m *Model) lbOutBalanced(env *lbEnv) {
	if sd := env.sd; sd.parent != nil && env.flags&lbfAllPinned == 0 {
		sd.parent.groups[0].imbalance = false
	}
	m.lbOutAllPinned(env)
}

func (m *Model) lbOutAllPinned(env *lbEnv) {
	env.sd.nrBalanceFailed = 0
	m.lbOutOnePinned(env)
}

func (m *Model) lbOutOnePinned(env *lbEnv) {
	env.done = true
	if env.idle == cpuNewlyIdle || env.mtype == migrateMisfit {
		return
	}
	sd := env.sd
	if (env.flags&lbfAllPinned != 0 && sd.balanceInterval < maxPinnedInterval) || sd.balanceInterval < sd.maxInterval {
		sd.balanceInterval *= 2
	}
}

// lbRun runs a whole sched_balance_rq without charging time (periodic and
// idle balancing).
func (m *Model) lbRun(env *lbEnv) {
	for guard := 0; !env.done && guard < 4*m.ncpu+8; guard++ {
		m.lbPass(env)
	}
	env.done = true
}

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
		if d.inSpan[cpu] {
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
