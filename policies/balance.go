package policies

// Load balancing over sched domains (kernel/sched/fair.c,
// sched_balance_rq and friends): periodic balancing from the tick, idle
// balancing by a kicked idle CPU on behalf of the tickless idle ones, newidle
// balancing when a CPU runs out of work (the only one whose time is
// charged, see CostModel), and active balancing through the stopper.
//
// This file holds the balancing environment and one sched_balance_rq pass
// (lbPass); balance_stats.go finds the busiest group and queue,
// balance_detach.go moves tasks, balance_idle.go decides when balancing
// runs (tick, nohz kick, newidle).

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
	nrMigrate         = 32  // SCHED_NR_MIGRATE_BREAK and the default sysctl_sched_nr_migrate
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
	g := env.sd.localGroup()
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
		env.loopMax = min(m.nrMigrate, m.NrRunning(busiest))
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
			sd.parent.localGroup().imbalance = true
		}
		if env.flags&lbfAllPinned != 0 {
			env.cpus[busiest] = false
			subset := true
			for c, in := range env.cpus {
				if in && !sd.localGroup().contains(c) {
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
		sd.parent.localGroup().imbalance = false
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
