package policies

// Seed 003: "[PATCH] sched: allow newidle balancing to bail out of
// load_balance" (posted 2022-06-08).
//
// should_we_balance returns 0 for CPU_NEWLY_IDLE when the destination
// already has runnable tasks or a wakeup pending (ttwu_pending). It is
// re-evaluated at every "goto redo" of sched_balance_rq, so a long walk over
// all-pinned busiest CPUs stops as soon as a wakeup targets this CPU.
// Without it the check happened only between domains in the newidle loop,
// and a wakeup arriving during a long sched_balance_rq waited for its end.
// The model charges newidle balancing by CostModel, which is what makes the
// difference visible.
//
// Upstream: present in 6.6, 6.12 and 6.18 (it entered mainline around
// v6.0); "6.12,-newidle-bailout" removes it. Its scenario is the e-mail's
// ping-pong pair beside pinned CPU hogs on every other CPU
// (scenarios/003-*.spec).

var infoNewidleBailout = PatchInfo{
	Patch:    PatchNewidleBailout,
	Name:     "newidle-bailout",
	Seed:     "003",
	Subject:  "sched: allow newidle balancing to bail out of load_balance",
	Upstream: "in 6.6, 6.12 and 6.18 (since about v6.0)",
	Scenario: "003-newidle-bailout.spec",
}

// newidleBailout is the patch's test in should_we_balance for
// CPU_NEWLY_IDLE. A task waiting for dst is where the two settings part:
// the patch abandons the pass, the code before it runs it; either way the
// pass is counted as one the other setting decides differently.
func (m *Model) newidleBailout(dst int) bool {
	if m.NrRunning(dst) == 0 && m.s.WakePending(dst) == 0 {
		return false
	}
	m.patchDiverged(PatchNewidleBailout)
	if !m.cfg.With(PatchNewidleBailout) {
		return false
	}
	*m.c.lbNewidleBail++
	return true
}
