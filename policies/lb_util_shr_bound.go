package policies

// Seed 001: "[PATCH v3] sched/fair: Use all little CPUs for CPU-bound
// workload" (posted 2023-12-06).
//
// In detach_tasks under migrate_util, the candidate's util_est is compared
// with the remaining imbalance after shifting it right by the domain's
// nr_balance_failed (shr_bound), as migrate_load already does. Without it,
// an idle little CPU (capacity 383) balancing at the PKG level of a
// non-DynamIQ big.LITTLE system sees the big group overloaded (three tasks
// on two CPUs), asks for its own spare capacity (~383, migrate_util), and
// skips every task sharing a big CPU (util ~512) on every pass: the little
// CPU stays idle. With it, one failed pass halves the apparent size and the
// next idle balance pulls the task.
//
// Upstream: present in 6.12 and 6.18 (it entered mainline around v6.8), so
// the knob is on by default there; "6.12,-lb-util-shr-bound" removes it.
// Its scenario is the e-mail's Juno-r2 test (scenarios/001-*.spec).

var infoLBUtilShrBound = PatchInfo{
	Patch:    PatchLBUtilShrBound,
	Name:     "lb-util-shr-bound",
	Seed:     "001",
	Subject:  "sched/fair: Use all little CPUs for CPU-bound workload",
	Upstream: "in 6.12 and 6.18 (since about v6.8)",
	Scenario: "001-lb-util-shr-bound.spec",
}

// utilFits is utilTooBig's answer negated, without counting: the test as
// the run's setting of the patch makes it.
func (m *Model) utilFits(util int64, env *lbEnv) bool {
	if m.cfg.With(PatchLBUtilShrBound) {
		return shrBound(util, env.sd.nrBalanceFailed) <= env.imbalance
	}
	return util <= env.imbalance
}

// utilTooBig is the migrate_util test of detach_tasks: is the task's
// utilization more than the imbalance left? It counts the tests the
// other setting of the patch answers differently (after a failed pass,
// the shifted utilization fits where the whole one does not).
func (m *Model) utilTooBig(util int64, env *lbEnv) bool {
	with := shrBound(util, env.sd.nrBalanceFailed) > env.imbalance
	without := util > env.imbalance
	if with != without {
		m.patchDiverged(PatchLBUtilShrBound)
	}
	if m.cfg.With(PatchLBUtilShrBound) {
		return with
	}
	return without
}
