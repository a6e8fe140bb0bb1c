package policies

import (
	"math/bits"

	"github.com/schedlens/schedlens/replay"
)

// Knob counting: at each decision point a knob controls, the model also
// evaluates what the knob's other setting would have decided there, from
// the same state, and counts the decisions that differ. The count is
// local (it does not follow the run the other setting would have had), and
// it means the same with the knob on or off: "the patch refused N
// migrations the unpatched check allowed" and "without the patch, N
// migrations were allowed that the patch refuses" are the two readings of
// one counter. Patches are always evaluated; a sched_feat only when it
// differs from the kernel version's default (watch), so a run at the
// defaults pays nothing for features.

const (
	nPatches  = 5
	nFeatures = 18
)

type knobCounters struct {
	patch [nPatches]*int64
	feat  [nFeatures]*int64
	watch Feature // features toggled from the version's default
	// noWatch (tests) evaluates no feature alternative, to check that
	// evaluating them does not change the run.
	noWatch bool
}

func patchIndex(p Patch) int     { return bits.TrailingZeros8(uint8(p)) }
func featureIndex(f Feature) int { return bits.TrailingZeros32(uint32(f)) }

// knobCounterName is the Result.Counters name of a knob's divergence count.
func knobCounterName(name string) string { return "knob." + name }

func (m *Model) initKnobs() {
	k, _ := KernelByVersion(m.cfg.Kernel)
	m.k.watch = (m.cfg.Features ^ k.Features) & (featEnd - 1)
	if m.k.noWatch {
		m.k.watch = 0
	}
	for _, p := range Patches {
		m.k.patch[patchIndex(p.Patch)] = m.s.Counter(knobCounterName(p.Name))
	}
	for _, n := range featureNames {
		if m.k.watch&n.f != 0 {
			m.k.feat[featureIndex(n.f)] = m.s.Counter(knobCounterName(n.name))
		}
	}
}

// patchDiverged counts a decision of patch p that its other setting
// would have taken differently.
func (m *Model) patchDiverged(p Patch) { *m.k.patch[patchIndex(p)]++ }

// watched reports whether feature f differs from the version's default,
// so that its alternative is evaluated.
func (m *Model) watched(f Feature) bool { return m.k.watch&f != 0 }

// featDiverged counts a decision of watched feature f that its other
// setting would have taken differently.
func (m *Model) featDiverged(f Feature) {
	if c := m.k.feat[featureIndex(f)]; c != nil {
		*c++
	}
}

// knobWhat says, per knob, what its count counts with the knob on and off.
var knobWhat = map[string][2]string{
	"lb-eligible-first": {
		"tasks can_migrate_task refused as ineligible on their queue that it allows without the patch",
		"tasks can_migrate_task allowed that the patch refuses as ineligible on their queue"},
	"lb-util-shr-bound": {
		"migrate_util tasks allowed to move that the unshifted util > imbalance test refuses",
		"migrate_util tasks refused that the patch's shr_bound test allows"},
	"resched-ineligible": {
		"ticks and wakeups that rescheduled an unprotected or ineligible current where mainline keeps it",
		"ticks and wakeups that kept an unprotected or ineligible current that the patch reschedules"},
	"newidle-bailout": {
		"newidle balance passes abandoned for a waiting task that mainline before the patch runs",
		"newidle balance passes run while a task waited that the patch abandons"},
	"coresched-idle-ipi": {
		"reschedule IPIs to an idle SMT sibling with queued tasks that the RFC pick does not send",
		"idle SMT siblings with queued tasks left idle that the patch kicks"},
	"PLACE_LAG": {
		"placements that kept a non-zero lag (NO_PLACE_LAG places at V)",
		"placements at V of an entity with a non-zero lag (PLACE_LAG keeps it)"},
	"PLACE_DEADLINE_INITIAL": {
		"new tasks given half a slice to their first deadline",
		"new tasks given a whole slice that PLACE_DEADLINE_INITIAL halves"},
	"PLACE_REL_DEADLINE": {
		"dequeues other than sleeps (migrations, exits) that kept the deadline relative to vruntime",
		"dequeues other than sleeps (migrations, exits) that dropped the deadline PLACE_REL_DEADLINE keeps"},
	"RUN_TO_PARITY": {
		"picks that kept a protected current over an earlier deadline (NO_RUN_TO_PARITY switches)",
		"picks that switched away from a current RUN_TO_PARITY would keep"},
	"PREEMPT_SHORT": {
		"reschedules of an unprotected ineligible current (did_preempt_short) or short-slice wakeup cancellations",
		"unprotected ineligible currents kept that PREEMPT_SHORT reschedules"},
	"DELAY_DEQUEUE": {
		"sleeps of an ineligible entity kept queued as delayed",
		"sleeps of an ineligible entity dequeued at once that DELAY_DEQUEUE keeps queued"},
	"DELAY_ZERO": {
		"delayed entities whose positive lag was dropped",
		"delayed entities that kept a positive lag DELAY_ZERO drops"},
	"WAKEUP_PREEMPTION": {
		"wakeups that preempted the current task (NO_WAKEUP_PREEMPTION never does; evaluated from the same state)",
		"wakeups that did not preempt where the wakeup check would (evaluated without charging the current task first)"},
	"UTIL_EST": {
		"migrate_util decisions util_est changed (the task's estimate against its util_avg)",
		"migrate_util decisions util_est would change"},
	"SIS_UTIL": {
		"wakeup idle-CPU scans the utilization depth cut short before an idle CPU",
		"wakeup idle-CPU scans that found an idle CPU beyond the utilization depth"},
	"WA_IDLE": {
		"wake_affine choices WA_IDLE changed", "wake_affine choices WA_IDLE would change"},
	"WA_WEIGHT": {
		"wake_affine choices WA_WEIGHT changed", "wake_affine choices WA_WEIGHT would change"},
	"WA_BIAS": {
		"wake_affine choices WA_BIAS changed", "wake_affine choices WA_BIAS would change"},
	"LB_MIN": {
		"light tasks (load < 16) detach_tasks refused before a failed balance",
		"light tasks (load < 16) detach_tasks moved that LB_MIN refuses"},
	"NONTASK_CAPACITY": {
		"capacity_of readings lowered by RT pressure",
		"capacity_of readings RT pressure would lower"},
	"CORE_SYNC": {
		"core-wide picks after a forced idle that need_sync marked for the synchronized pick (the RFC code does not), and half-slice tick reschedules",
		"core-wide picks after a forced idle left to need_sync's other reasons (CORE_SYNC forces the synchronized pick), and half-slice tick reschedules not made"},
	"WAKEUP_PICK": {
		"wakeup checks the pick-based rule decided differently (a delayed sleeper dequeued, a forked wakee refused)",
		"wakeup checks the pick-based rule would decide differently"},
}

// knobNotCounted names the knobs whose alternative the model does not
// evaluate, and why.
var knobNotCounted = map[string]string{
	"PROTECT_VPROT": "the other slice-protection rule keeps per-task state (the vlag marker or the vprot horizon) this run does not maintain",
}

// Knobs implements replay.KnobReporter: every patch knob, then every
// feature that differs from the kernel version's default.
func (m *Model) Knobs() []replay.Knob {
	k, _ := KernelByVersion(m.cfg.Kernel)
	var out []replay.Knob
	for _, p := range Patches {
		on := m.cfg.With(p.Patch)
		out = append(out, m.knob(p.Name, on, on != (k.Patches&p.Patch != 0), *m.k.patch[patchIndex(p.Patch)]))
	}
	for _, n := range featureNames {
		if m.k.watch&n.f == 0 {
			continue
		}
		out = append(out, m.knob(n.name, m.cfg.Has(n.f), true, *m.k.feat[featureIndex(n.f)]))
	}
	return out
}

// knob returns the report of one knob.
func (m *Model) knob(name string, on, toggled bool, count int64) replay.Knob {
	kn := replay.Knob{Name: name, On: on, Toggled: toggled, Count: count}
	if why, ok := knobNotCounted[name]; ok {
		kn.NotCounted, kn.What, kn.Count = true, why, 0
		return kn
	}
	w := knobWhat[name]
	if on {
		kn.What = w[0]
	} else {
		kn.What = w[1]
	}
	return kn
}
