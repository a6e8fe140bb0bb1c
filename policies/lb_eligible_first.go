package policies

// Seed 000: "[PATCH v2] sched/core: Prioritize migrating eligible tasks in
// sched_balance_rq()" (posted 2024-12-23).
//
// can_migrate_task refuses, early in its chain, a task that is not eligible
// on its current queue when PLACE_LAG is on, the destination's queue is not
// empty, and the domain has not failed to balance yet (nr_balance_failed
// is 0). Placement keeps the lag (place_entity), so an ineligible task
// would land ineligible and wait on the destination too; eligible tasks are
// preferred and ineligible ones move only after a failed pass.
//
// Upstream: present in the 6.18 tree the model follows, absent from 6.12,
// so the knob is on by default for 6.18 only ("6.18,-lb-eligible-first"
// removes it). The e-mail's test is hackbench (pipes, sockets) and tbench
// on an i7-13700; its scenario here is a hackbench-like message-passing
// workload on a hybrid-sized 24-CPU machine (scenarios/000-*.spec).

var infoLBEligibleFirst = PatchInfo{
	Patch:    PatchLBEligibleFirst,
	Name:     "lb-eligible-first",
	Seed:     "000",
	Subject:  "sched/core: Prioritize migrating eligible tasks in sched_balance_rq()",
	Upstream: "in 6.18, not in 6.12 (task_is_ineligible_on_dst_cpu)",
	Scenario: "000-lb-eligible-first.spec",
}

// ineligibleOnDst is task_is_ineligible_on_dst_cpu: PLACE_LAG on, entities
// queued in t's group's queue on the destination, and t not eligible in
// the queue it is on.
func (m *Model) ineligibleOnDst(t, dst int) bool {
	e := &m.ent[t]
	if !m.cfg.Has(FeatPlaceLag) || e.cls != clsFair || m.taskQ(m.rq[dst], t).nrQueued == 0 {
		return false
	}
	return !m.taskQ(m.rq[e.cpu], t).eligibleV(e.v)
}
