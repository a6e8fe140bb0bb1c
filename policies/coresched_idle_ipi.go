package policies

import "github.com/schedlens/schedlens/replay"

// Seed 004: the fix Julien Desfossez posted against the core-scheduling RFC
// v2 ("[RFC][PATCH 13/16] sched: Add core wide task selection and
// scheduling"), quoted by Subhra Mazumdar on 2019-04-10.
//
// On the unconstrained fast path of the core-wide pick (the pick has no
// cookie and no sync is needed), clear every sibling's stale core_pick and
// send a resched IPI to each sibling that runs the idle task while it has
// runnable tasks, so that it picks again. Without it, a sibling forced idle
// by a cookied task on its twin stays idle after that task leaves, with an
// untagged task (a kworker) waiting in its queue, until something else
// makes it reschedule.
//
// Upstream: mainline core scheduling (5.14+) gets the same effect from the
// need_sync logic after forced idle, modeled by the CORE_SYNC feature (on
// in every modeled version). The knob is off by default; its scenario
// compares the RFC behaviour (NO_CORE_SYNC) with and without it
// (scenarios/004-*.spec).

var infoCoreschedIdleIPI = PatchInfo{
	Patch:    PatchCoreschedIdleIPI,
	Name:     "coresched-idle-ipi",
	Seed:     "004",
	Subject:  "Re: [RFC][PATCH 13/16] sched: Add core wide task selection and scheduling",
	Upstream: "RFC fix; mainline reaches the same effect with need_sync (CORE_SYNC)",
	Scenario: "004-coresched-idle-ipi.spec",
}

// idleSiblingIPI is the patch's loop on the unconstrained path of cpu
// when apply is set. Without the patch it only counts the idle siblings
// with queued tasks the patch would kick.
func (c *coreSched) idleSiblingIPI(cpu int, apply bool) {
	for _, s := range c.sibs[cpu] {
		if apply {
			c.corePick[s] = noCorePick
		}
		if s == cpu {
			continue
		}
		if c.m.s.CPUState(s) == replay.CPUIdle && c.m.NrRunning(s) > 0 {
			c.m.patchDiverged(PatchCoreschedIdleIPI)
			if apply {
				*c.m.c.coreIPI++
				c.m.s.Resched(s)
			}
		}
	}
}
