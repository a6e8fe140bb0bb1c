package policies

import (
	"math"

	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
)

// Wake placement for the fair class: select_task_rq_fair and its helpers
// (kernel/sched/fair.c). EAS (find_energy_efficient_cpu) is not modeled:
// there is no Energy Model in a trace.

// idleCPU is idle_cpu(): the idle task runs, nothing is queued and no
// wakeup is on its way.
func (m *Model) idleCPU(cpu int) bool {
	return m.s.CPUState(cpu) == replay.CPUIdle && m.NrRunning(cpu) == 0 && m.s.WakePending(cpu) == 0
}

// schedIdleCPU is sched_idle_cpu(): only SCHED_IDLE tasks are runnable.
func (m *Model) schedIdleCPU(cpu int) bool {
	rq := m.rq[cpu]
	if rq.rtNr > 0 || rq.hNr == 0 {
		return false
	}
	// Group entities are never SCHED_IDLE: one queued means a runnable
	// task of a group, which its queue is checked for below.
	for _, t := range rq.cfsQ {
		if e := &m.ent[t]; e.gq == nil && !e.delayed && e.policy != replay.PolicyIdle {
			return false
		}
	}
	for _, gq := range rq.grq {
		for _, t := range gq.cfsQ {
			if e := &m.ent[t]; !e.delayed && e.policy != replay.PolicyIdle {
				return false
			}
		}
	}
	return true
}

func (m *Model) idleOrSchedIdle(cpu int) bool { return m.idleCPU(cpu) || m.schedIdleCPU(cpu) }

// asymFits is asym_fits_cpu: with asymmetric capacities the task must fit.
func (m *Model) asymFits(util float64, cpu int) bool {
	if !m.asym {
		return true
	}
	return fitsCapacity(util, m.rq[cpu].capOf)
}

// recordWakee is record_wakee, for the waker's flip count.
func (m *Model) recordWakee(waker, wakee int) {
	if waker < 0 {
		return
	}
	w := &m.ent[waker]
	j := timeline.Time(m.s.TickNS()) * timeline.Time(m.s.HZ())
	if m.now() > w.flipDecay+j {
		w.wakeeFlips >>= 1
		w.flipDecay = m.now()
	}
	if int(w.lastWakee) != wakee {
		w.lastWakee = int32(wakee)
		w.wakeeFlips++
	}
}

// wakeWide is wake_wide: wakers and wakees that flip between many partners
// are spread instead of pulled to the waker's CPU.
func (m *Model) wakeWide(waker, wakee, cpu int) bool {
	if waker < 0 {
		return false
	}
	master, slave := m.ent[waker].wakeeFlips, m.ent[wakee].wakeeFlips
	factor := m.domains.llcSize[cpu]
	if master < slave {
		master, slave = slave, master
	}
	if slave < factor || master < slave*factor {
		return false
	}
	return true
}

// selectFair is select_task_rq_fair.
func (m *Model) selectFair(t, from, waker int, flags replay.WakeFlags) int {
	e := &m.ent[t]
	prev := int(e.cpu)
	cpu := from
	newCPU := prev
	ttwu := flags&replay.WakeTTWU != 0
	fork := flags&(replay.WakeForkFlag|replay.WakeAffinity|replay.WakeStartup) != 0
	sync := flags&replay.WakeSyncFlag != 0
	wantAffine := false
	if ttwu {
		m.recordWakee(waker, t)
		wantAffine = !m.wakeWide(waker, t, cpu) && m.allowed(t, cpu)
	}
	var slow *schedDomain
	for _, sd := range m.rq[cpu].sd {
		if wantAffine && sd.wakeAffine && sd.contains(prev) {
			if cpu != prev {
				newCPU = m.wakeAffine(sd, t, cpu, prev, sync, waker)
			}
			slow = nil
			break
		}
		if fork {
			slow = sd // every level has SD_BALANCE_FORK/EXEC
		} else if !wantAffine {
			break
		}
	}
	if slow != nil {
		newCPU = m.findIdlestCPU(slow, t, cpu, prev)
	} else if ttwu {
		newCPU = m.selectIdleSibling(t, prev, newCPU)
	} else if fork {
		newCPU = cpu
	}
	if !m.allowed(t, newCPU) {
		if top := m.topDomain(cpu); top != nil {
			newCPU = m.findIdlestCPU(top, t, cpu, prev)
		}
		if !m.allowed(t, newCPU) {
			newCPU = m.firstAllowedIdleOr(t, prev)
		}
	}
	return newCPU
}

func (m *Model) topDomain(cpu int) *schedDomain {
	if sds := m.rq[cpu].sd; len(sds) > 0 {
		return sds[len(sds)-1]
	}
	return nil
}

func (m *Model) firstAllowedIdleOr(t, prev int) int {
	first := -1
	for c := 0; c < m.ncpu; c++ {
		if !m.allowed(t, c) {
			continue
		}
		if m.idleCPU(c) {
			return c
		}
		if first < 0 {
			first = c
		}
	}
	if first < 0 {
		return prev
	}
	return first
}

// wakeAffine is wake_affine: the waker's CPU or the wakee's previous one.
// It counts the choices a watched WA_* feature's other setting makes
// differently.
func (m *Model) wakeAffine(sd *schedDomain, t, thisCPU, prev int, sync bool, waker int) int {
	got := m.wakeAffineWith(m.cfg.Features, true, sd, t, thisCPU, prev, sync, waker)
	for _, f := range []Feature{FeatWAIdle, FeatWAWeight, FeatWABias} {
		if m.watched(f) && m.wakeAffineWith(m.cfg.Features^f, false, sd, t, thisCPU, prev, sync, waker) != got {
			m.featDiverged(f)
		}
	}
	return got
}

// wakeAffineWith is wake_affine under the WA_* features in feats. With
// fresh false (the alternatives the knob counters evaluate) the loads are
// read as they were last brought up to date: bringing PELT sums up to now
// at a point the run itself does not would change the run (the sums are
// floating point, so an extra update moves them in the last bits).
func (m *Model) wakeAffineWith(feats Feature, fresh bool, sd *schedDomain, t, thisCPU, prev int, sync bool, waker int) int {
	target := -1
	if feats&FeatWAIdle != 0 {
		target = m.wakeAffineIdle(thisCPU, prev, sync)
	}
	if feats&FeatWAWeight != 0 && target < 0 {
		target = m.wakeAffineWeight(feats&FeatWABias != 0, fresh, sd, t, thisCPU, prev, sync, waker)
	}
	if target != thisCPU {
		return prev
	}
	return target
}

func (m *Model) wakeAffineIdle(thisCPU, prev int, sync bool) int {
	if m.idleCPU(thisCPU) && m.s.SameLLC(thisCPU, prev) {
		if m.idleCPU(prev) {
			return prev
		}
		return thisCPU
	}
	if sync && m.NrRunning(thisCPU) == 1 {
		return thisCPU
	}
	if m.idleCPU(prev) {
		return prev
	}
	return -1
}

func (m *Model) wakeAffineWeight(bias, fresh bool, sd *schedDomain, t, thisCPU, prev int, sync bool, waker int) int {
	cpuLoad, tLoad := m.cpuLoad, m.taskLoad
	if !fresh {
		cpuLoad = func(rq *runQueue) int64 { return int64(m.rootLoadAvg(rq)) }
		tLoad = m.loadAsIs
	}
	thisEff := cpuLoad(m.rq[thisCPU])
	if sync && waker >= 0 {
		cur := tLoad(waker)
		if cur > thisEff {
			return thisCPU
		}
		thisEff -= cur
	}
	taskLoad := tLoad(t)
	thisEff += taskLoad
	if bias {
		thisEff *= 100
	}
	thisEff *= m.rq[prev].capOf
	prevEff := cpuLoad(m.rq[prev]) - taskLoad
	if bias {
		prevEff *= 100 + (sd.imbalancePct-100)/2
	}
	prevEff *= m.rq[thisCPU].capOf
	if sync {
		prevEff++
	}
	if thisEff < prevEff {
		return thisCPU
	}
	return -1
}

// selectIdleSibling is select_idle_sibling: an idle CPU near target.
func (m *Model) selectIdleSibling(t, prev, target int) int {
	util := 0.0
	if m.asym {
		util = m.taskUtilEst(t)
	}
	ok := func(cpu int) bool {
		return m.allowed(t, cpu) && m.idleOrSchedIdle(cpu) && m.asymFits(util, cpu) && m.core.cookieMatchCPU(cpu, t)
	}
	if ok(target) {
		return target
	}
	if prev != target && m.s.SameLLC(prev, target) && ok(prev) {
		return prev
	}
	if m.ent[t].kthread && prev == target && m.NrRunning(prev) <= 1 && m.asymFits(util, prev) && m.allowed(t, prev) {
		return prev
	}
	e := &m.ent[t]
	recent := int(e.recentUsedCPU)
	e.recentUsedCPU = int32(prev)
	if recent != prev && recent != target && recent >= 0 && m.s.SameLLC(recent, target) && ok(recent) {
		return recent
	}
	if m.asym {
		if sd := m.domains.sdAsym[target]; sd != nil {
			if i := m.selectIdleCapacity(t, sd, target, util); i >= 0 {
				return i
			}
			return target
		}
	}
	sd := m.domains.sdLLC[target]
	if sd == nil {
		return target
	}
	sh := m.domains.llcOf[target]
	hasIdleCore := false
	if m.smt {
		hasIdleCore = sh.hasIdleCores
		if !hasIdleCore && m.s.SameLLC(prev, target) {
			for _, c := range m.s.Topology().Siblings(prev) {
				if c != prev && sd.contains(c) && ok(c) {
					return c
				}
			}
		}
	}
	if i := m.selectIdleCPU(t, sd, hasIdleCore, target); i >= 0 {
		return i
	}
	return target
}

// selectIdleCapacity is select_idle_capacity.
func (m *Model) selectIdleCapacity(t int, sd *schedDomain, target int, util float64) int {
	best, bestCap, bestFits := -1, int64(-1), 2
	n := len(sd.span)
	start := 0
	for i, c := range sd.span {
		if c == target {
			start = i
			break
		}
	}
	for k := 0; k < n; k++ {
		cpu := sd.span[(start+k)%n]
		if !m.allowed(t, cpu) || !m.idleOrSchedIdle(cpu) || !m.core.cookieMatchCPU(cpu, t) {
			continue
		}
		cap := m.rq[cpu].capOf
		fits := 0
		if fitsCapacity(util, cap) {
			fits = 1
		}
		if fits > 0 {
			return cpu
		}
		if fits < bestFits || (fits == bestFits && cap > bestCap) {
			best, bestCap, bestFits = cpu, cap, fits
		}
	}
	return best
}

// scanWouldFind reports whether select_idle_cpu's plain scan of sd from
// position k on (start the first position) finds an idle CPU for t: what
// an unlimited depth would have found where SIS_UTIL stopped.
func (m *Model) scanWouldFind(t int, sd *schedDomain, start, k int) bool {
	n := len(sd.span)
	for ; k < n; k++ {
		cpu := sd.span[(start+k)%n]
		if m.allowed(t, cpu) && m.idleOrSchedIdle(cpu) && m.core.cookieMatchCPU(cpu, t) {
			return true
		}
	}
	return false
}

// selectIdleCPU is select_idle_cpu with SIS_UTIL's scan depth and the
// idle-core search. Without SIS_UTIL, when its knob is counted, a scan
// that finds a CPU where the depth would have been 1 (no scan at all) is
// one SIS_UTIL decides differently.
func (m *Model) selectIdleCPU(t int, sd *schedDomain, hasIdleCore bool, target int) int {
	cpu := m.selectIdleCPUScan(t, sd, hasIdleCore, target)
	if cpu >= 0 && !m.cfg.Has(FeatSISUtil) && m.watched(FeatSISUtil) && m.domains.llcOf[target].nrIdleScan == 0 {
		m.featDiverged(FeatSISUtil)
	}
	return cpu
}

func (m *Model) selectIdleCPUScan(t int, sd *schedDomain, hasIdleCore bool, target int) int {
	nr := math.MaxInt32
	sh := m.domains.llcOf[target]
	n := len(sd.span)
	start := 0
	for i, c := range sd.span {
		if c == target {
			start = (i + 1) % n
			break
		}
	}
	// SIS_UTIL's depth, and for its knob counter the depth the other
	// setting has (depth <= 0: unlimited).
	depth, alt := 0, 0
	if m.cfg.Has(FeatSISUtil) {
		depth = sh.nrIdleScan + 1
	} else if m.watched(FeatSISUtil) && sh.nrIdleScan > 0 {
		alt = sh.nrIdleScan + 1
	}
	if depth > 0 {
		nr = depth
		if nr == 1 {
			if m.watched(FeatSISUtil) && m.scanWouldFind(t, sd, start, 0) {
				m.featDiverged(FeatSISUtil)
			}
			return -1
		}
	}
	tries := 0
	skip := m.coreScratch()
	idleCPU := -1
	for k := 0; k < n; k++ {
		cpu := sd.span[(start+k)%n]
		if !m.allowed(t, cpu) || skip[cpu] {
			continue
		}
		if hasIdleCore {
			// select_idle_core: a core whose siblings are all idle
			idle := true
			for _, c := range m.s.Topology().Siblings(cpu) {
				if !m.idleCPU(c) {
					idle = false
					if idleCPU < 0 && m.schedIdleCPU(c) && m.allowed(t, c) && sd.contains(c) {
						idleCPU = c
					}
					continue
				}
				if idleCPU < 0 && m.allowed(t, c) && sd.contains(c) && m.core.cookieMatchCPU(c, t) {
					idleCPU = c
				}
			}
			if idle && m.core.cookieMatchCPU(cpu, t) {
				m.clearScratch(skip)
				return cpu
			}
			for _, c := range m.s.Topology().Siblings(cpu) {
				skip[c] = true
			}
			continue
		}
		nr--
		tries++
		if nr <= 0 {
			if m.watched(FeatSISUtil) && m.scanWouldFind(t, sd, start, k) {
				m.featDiverged(FeatSISUtil)
			}
			m.clearScratch(skip)
			return -1
		}
		if m.idleOrSchedIdle(cpu) && m.core.cookieMatchCPU(cpu, t) {
			if alt > 0 && tries >= alt {
				m.featDiverged(FeatSISUtil) // beyond the depth SIS_UTIL allows
			}
			idleCPU = cpu
			break
		}
	}
	m.clearScratch(skip)
	if hasIdleCore {
		sh.hasIdleCores = false
	}
	return idleCPU
}

func (m *Model) coreScratch() []bool {
	if len(m.scratch) < m.ncpu {
		m.scratch = make([]bool, m.ncpu)
	}
	return m.scratch[:m.ncpu]
}

func (m *Model) clearScratch(b []bool) { clear(b) }

// updateIdleCore is __update_idle_core: when a CPU goes idle and its whole
// core is idle, the LLC gets the has_idle_cores hint.
func (m *Model) updateIdleCore(cpu int) {
	if !m.smt {
		return
	}
	for _, c := range m.s.Topology().Siblings(cpu) {
		if c != cpu && !m.idleCPU(c) {
			return
		}
	}
	m.domains.llcOf[cpu].hasIdleCores = true
}

// findIdlestCPU is sched_balance_find_dst_cpu, the slow path of fork and
// exec placement: descend from sd to the idlest group, then the idlest CPU.
func (m *Model) findIdlestCPU(sd *schedDomain, t, cpu, prev int) int {
	newCPU := cpu
	anyAllowed := false
	for _, c := range sd.span {
		if m.allowed(t, c) {
			anyAllowed = true
			break
		}
	}
	if !anyAllowed {
		return prev
	}
	for sd != nil {
		g := m.findIdlestGroup(sd, t, cpu)
		if g == nil {
			sd = sd.child
			continue
		}
		newCPU = m.findIdlestGroupCPU(g, t, cpu)
		if newCPU == cpu {
			sd = sd.child
			continue
		}
		// continue at the level below, around the new CPU
		weight := len(sd.span)
		cpu = newCPU
		sd = nil
		for _, tmp := range m.rq[cpu].sd {
			if weight <= len(tmp.span) {
				break
			}
			sd = tmp
		}
	}
	return newCPU
}

type wakeupStats struct {
	load, util, runnable, avgLoad int64
	sumNr, sumHNr, idle           int
	gtype                         groupType
	misfit                        bool
	capacity, maxCap              int64
	weight                        int
}

func (m *Model) groupWakeupStats(sd *schedDomain, g *schedGroup, t int) wakeupStats {
	var st wakeupStats
	e := &m.ent[t]
	st.misfit = sd.asym
	for _, c := range g.cpus {
		rq := m.rq[c]
		load, util, run := m.cpuLoad(rq), m.cpuUtilCFS(rq), m.cpuRunnable(rq)
		if int(e.peltCPU) == c {
			load = max(load-m.loadOf(t), 0)
			util = max(util-int64(e.util), 0)
			run = max(run-int64(e.runnable), 0)
		}
		st.load += load
		st.util += util
		st.runnable += run
		nr := m.NrRunning(c)
		st.sumHNr += rq.hNr
		st.sumNr += nr
		if nr == 0 && m.idleCPU(c) {
			st.idle++
		}
		cap := m.refreshCapacity(rq)
		st.capacity += cap
		st.maxCap = max(st.maxCap, cap)
		if sd.asym && st.misfit && m.taskFitsCPU(t, c) {
			st.misfit = false
		}
	}
	st.weight = g.weight
	sgs := sgStats{groupUtil: st.util, groupRunnable: st.runnable, groupCapacity: st.capacity, sumNr: st.sumNr, weight: st.weight}
	if st.misfit {
		sgs.misfitLoad = 1
	}
	st.gtype = m.groupClassify(sd.imbalancePct, g, &sgs)
	if st.gtype == groupFullyBusy || st.gtype == groupOverloaded {
		st.avgLoad = st.load * capacityScale / max(st.capacity, 1)
	}
	return st
}

// findIdlestGroup is sched_balance_find_dst_group.
func (m *Model) findIdlestGroup(sd *schedDomain, t, thisCPU int) *schedGroup {
	var idlest, local *schedGroup
	var idlestSt, localSt wakeupStats
	for g := range sd.orderedGroups() {
		allowedIn := false
		for _, c := range g.cpus {
			if m.allowed(t, c) {
				allowedIn = true
				break
			}
		}
		if !allowedIn {
			continue
		}
		st := m.groupWakeupStats(sd, g, t)
		if g.contains(thisCPU) {
			local, localSt = g, st
			continue
		}
		if idlest == nil || m.pickIdlest(idlestSt, st) {
			idlest, idlestSt = g, st
		}
	}
	if idlest == nil {
		return nil
	}
	if local == nil {
		return idlest
	}
	if localSt.gtype < idlestSt.gtype {
		return nil
	}
	if localSt.gtype > idlestSt.gtype {
		return idlest
	}
	switch localSt.gtype {
	case groupOverloaded, groupFullyBusy:
		imb := int64(nice0Load) * (sd.imbalancePct - 100) / 100
		if sd.numa && idlestSt.avgLoad+imb >= localSt.avgLoad {
			return nil
		}
		if idlestSt.avgLoad >= localSt.avgLoad+imb {
			return nil
		}
		if 100*localSt.avgLoad <= sd.imbalancePct*idlestSt.avgLoad {
			return nil
		}
	case groupImbalanced, groupAsymPacking, groupSMTBalance:
		return nil
	case groupMisfitTask:
		if localSt.maxCap >= idlestSt.maxCap {
			return nil
		}
	case groupHasSpare:
		if localSt.idle >= idlestSt.idle {
			return nil
		}
	}
	return idlest
}

// pickIdlest is update_pick_idlest: is candidate idler than the current
// idlest?
func (m *Model) pickIdlest(idlest, cand wakeupStats) bool {
	if cand.gtype < idlest.gtype {
		return true
	}
	if cand.gtype > idlest.gtype {
		return false
	}
	switch cand.gtype {
	case groupOverloaded, groupFullyBusy:
		return idlest.avgLoad > cand.avgLoad
	case groupImbalanced, groupAsymPacking, groupSMTBalance:
		return false
	case groupMisfitTask:
		return idlest.maxCap < cand.maxCap
	case groupHasSpare:
		if idlest.idle > cand.idle {
			return false
		}
		if idlest.idle == cand.idle && idlest.util <= cand.util {
			return false
		}
	}
	return true
}

// findIdlestGroupCPU is sched_balance_find_dst_group_cpu: an idle CPU
// (the most recently idled: warmest cache), else the least loaded.
func (m *Model) findIdlestGroupCPU(g *schedGroup, t, thisCPU int) int {
	if g.weight == 1 {
		return g.cpus[0]
	}
	shallow, least := -1, -1
	var latest int64 = -1
	minLoad := int64(math.MaxInt64)
	for _, c := range g.cpus {
		if !m.allowed(t, c) || !m.core.cookieMatchCPU(c, t) {
			continue
		}
		if m.schedIdleCPU(c) {
			return c
		}
		if m.idleCPU(c) {
			if m.rq[c].lastIdle > latest {
				latest = m.rq[c].lastIdle
				shallow = c
			}
			continue
		}
		if shallow < 0 {
			if l := m.cpuLoad(m.rq[c]); l < minLoad {
				minLoad, least = l, c
			}
		}
	}
	if shallow >= 0 {
		return shallow
	}
	if least >= 0 {
		return least
	}
	return thisCPU
}
