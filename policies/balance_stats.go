package policies

// The statistics side of sched_balance_rq (kernel/sched/fair.c): per-group
// load statistics and classification (update_sg_lb_stats, group_classify),
// the choice of the busiest group and queue (sched_balance_find_src_group,
// sched_balance_find_src_rq) and how much to move (calculate_imbalance).

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
	for g, local := range sd.orderedGroups() {
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
	if (m.cfg.Has(FeatSISUtil) || m.watched(FeatSISUtil)) && env.idle != cpuNewlyIdle && m.domains.sdLLC[env.dst] == sd {
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
	nb, nl := int64(env.busiestGrp.cores), int64(env.sd.localGroup().cores)
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
		smtVs := busiest.gtype == groupSMTBalance && m.smt && env.sd.localGroup().smt != env.busiestGrp.smt
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
