package policies

// Seed 002: "[PATCH v2] sched/fair: Reschedule the cfs_rq when current is
// ineligible" (posted 2024-05-29).
//
// A helper, check_entity_need_preempt, says "preempt" when, under
// RUN_TO_PARITY, the current entity's slice protection is gone (the
// vlag == deadline marker no longer holds; in the 6.18 model, its vprot
// horizon is passed), or, under NO_RUN_TO_PARITY, when the current entity
// is not eligible. It is called at the end of entity_tick (a resched) and
// in check_preempt_wakeup_fair right after update_curr (a preemption, before
// the "is the wakee the pick" test). Under NO_RUN_TO_PARITY an ineligible
// current therefore loses the CPU at the next tick or wakeup, whoever is
// best, instead of running to its deadline.
//
// Upstream: not in mainline as written (absent from 6.12 and 6.18); 6.18's
// vprot protection is a different answer to the same problem. The knob is
// off by default everywhere. Its scenario is the e-mail's cyclictest beside
// hackbench on four CPUs, under NO_RUN_TO_PARITY (scenarios/002-*.spec).

var infoReschedIneligible = PatchInfo{
	Patch:    PatchReschedIneligible,
	Name:     "resched-ineligible",
	Seed:     "002",
	Subject:  "sched/fair: Reschedule the cfs_rq when current is ineligible",
	Upstream: "not upstream (6.18 protects slices with vprot instead)",
	Scenario: "002-resched-ineligible.spec",
}

// tickNeedPreempt is the patch's call at the end of entity_tick for x, the
// running entity of q. A reschedule it asks for while none is pending and
// another entity is queued is one mainline does not make (with x alone the
// pick that follows takes x again, so nothing differs).
func (m *Model) tickNeedPreempt(rq *runQueue, q *cfsRQ, x int) {
	if !m.entityNeedPreempt(q, x) {
		return
	}
	if q.nrQueued > 1 && !m.s.NeedResched(rq.cpu) {
		m.patchDiverged(PatchReschedIneligible)
	}
	if m.cfg.With(PatchReschedIneligible) {
		*m.c.tickResched++
		m.s.Resched(rq.cpu)
	}
}

// wakeupPickPreempts answers, without changing state or counting, what
// the end of check_preempt_wakeup_fair decides for wakee pse against se
// on q: the pick test (with WAKEUP_PICK, a forked or delayed wakee does
// not preempt, and a pick landing on a delayed sleeper counts as no).
func (m *Model) wakeupPickPreempts(q *cfsRQ, se, pse int, ignore bool) bool {
	if pe := &m.ent[pse]; m.cfg.Has(FeatWakeupPick) && (pe.forked || pe.delayed) {
		return false
	}
	return m.pickEEVDFQuiet(q, ignore) == pse
}

// entityNeedPreempt is check_entity_need_preempt for x, the running entity
// of q.
func (m *Model) entityNeedPreempt(q *cfsRQ, x int) bool {
	e := &m.ent[x]
	if m.cfg.Has(FeatRunToParity) {
		return !m.protected(e)
	}
	return !q.eligibleV(e.v)
}
