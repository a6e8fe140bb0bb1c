package policies

import (
	"fmt"
	"slices"
	"strings"
)

// Feature is a set of scheduler features, named after the kernel's
// sched_feat switches (kernel/sched/features.h) plus three version switches
// that are not sched_feat in the kernel (PROTECT_VPROT, CORE_SYNC,
// WAKEUP_PICK).
type Feature uint32

// Features.
const (
	// PLACE_LAG: a woken or migrated entity keeps its lag (place_entity).
	FeatPlaceLag Feature = 1 << iota
	// PLACE_DEADLINE_INITIAL: a new task starts with half a slice.
	FeatPlaceDeadlineInitial
	// PLACE_REL_DEADLINE (6.12+): a migrated entity keeps deadline - vruntime.
	FeatPlaceRelDeadline
	// RUN_TO_PARITY: the current task keeps the CPU against wakeups while
	// its slice protection lasts.
	FeatRunToParity
	// PREEMPT_SHORT (6.12+): a wakee with a shorter slice may cancel the
	// protection; in 6.12 update_curr reschedules an unprotected
	// ineligible current (did_preempt_short).
	FeatPreemptShort
	// DELAY_DEQUEUE (6.12+): an ineligible sleeper stays queued until
	// picked or woken.
	FeatDelayDequeue
	// DELAY_ZERO (6.12+): a delayed entity's positive lag is dropped.
	FeatDelayZero
	// WAKEUP_PREEMPTION: wakeups may preempt the current task.
	FeatWakeupPreemption
	// UTIL_EST: utilization estimation at sleep (util_est).
	FeatUtilEst
	// SIS_UTIL: the idle-CPU scan depth follows LLC utilization.
	FeatSISUtil
	// WA_IDLE, WA_WEIGHT, WA_BIAS: wake_affine rules.
	FeatWAIdle
	FeatWAWeight
	FeatWABias
	// LB_MIN: do not migrate tasks of load < 16 before a failure.
	FeatLBMin
	// NONTASK_CAPACITY: RT pressure reduces capacity_of.
	FeatNontaskCapacity
	// PROTECT_VPROT (6.17+): slice protection is the vprot horizon set at
	// pick time (set_protect_slice), not the vlag == deadline marker.
	FeatProtectVprot
	// CORE_SYNC: core scheduling takes the synchronized pick while the core
	// has a cookie or a forced-idle sibling (need_sync, mainline since
	// 5.14). Off models the 2019 RFC v2 code the seed-004 fix was for.
	FeatCoreSync
	// WAKEUP_PICK (the 6.19 rework of check_preempt_wakeup_fair, which
	// later 6.18.y stable kernels are reported to carry): the check asks
	// pick_next_entity, which finishes the dequeue of a delayed sleeper
	// the pick lands on and picks again, so a delayed entity no longer
	// stands between a wakee and the CPU; a forked task (WF_FORK) does not
	// preempt. Off in every modeled version: not verified against a
	// recording (on the 1-CPU hackbench capture it lowers preemptions from
	// 0.52 to 0.48 of the recorded ones).
	FeatWakeupPick
	featEnd
)

var featureNames = []struct {
	f    Feature
	name string
}{
	{FeatPlaceLag, "PLACE_LAG"},
	{FeatPlaceDeadlineInitial, "PLACE_DEADLINE_INITIAL"},
	{FeatPlaceRelDeadline, "PLACE_REL_DEADLINE"},
	{FeatRunToParity, "RUN_TO_PARITY"},
	{FeatPreemptShort, "PREEMPT_SHORT"},
	{FeatDelayDequeue, "DELAY_DEQUEUE"},
	{FeatDelayZero, "DELAY_ZERO"},
	{FeatWakeupPreemption, "WAKEUP_PREEMPTION"},
	{FeatUtilEst, "UTIL_EST"},
	{FeatSISUtil, "SIS_UTIL"},
	{FeatWAIdle, "WA_IDLE"},
	{FeatWAWeight, "WA_WEIGHT"},
	{FeatWABias, "WA_BIAS"},
	{FeatLBMin, "LB_MIN"},
	{FeatNontaskCapacity, "NONTASK_CAPACITY"},
	{FeatProtectVprot, "PROTECT_VPROT"},
	{FeatCoreSync, "CORE_SYNC"},
	{FeatWakeupPick, "WAKEUP_PICK"},
}

// FeatureByName returns the feature called name ("RUN_TO_PARITY").
func FeatureByName(name string) (Feature, bool) {
	for _, n := range featureNames {
		if n.name == name {
			return n.f, true
		}
	}
	return 0, false
}

// FeatureNames returns the name of every modeled feature, in a fixed order.
func FeatureNames() []string { return (featEnd - 1).Names() }

// Names returns the names of the features in f, in a fixed order.
func (f Feature) Names() []string {
	var out []string
	for _, n := range featureNames {
		if f&n.f != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// Patch is a set of the seed patches.
type Patch uint8

// Patches, one per seed e-mail. Each file named after the patch holds its
// hook and its documentation.
const (
	PatchLBEligibleFirst   Patch = 1 << iota // seed 000
	PatchLBUtilShrBound                      // seed 001
	PatchReschedIneligible                   // seed 002
	PatchNewidleBailout                      // seed 003
	PatchCoreschedIdleIPI                    // seed 004
	patchEnd
)

// PatchInfo describes a patch knob.
type PatchInfo struct {
	Patch    Patch
	Name     string // the knob name: "lb-eligible-first"
	Seed     string // "000"
	Subject  string // the e-mail's subject
	Upstream string // where it is in mainline, as far as this model knows
	Scenario string // file name of its scenario in Scenarios()
}

// Patches lists the seed patches in seed order.
var Patches = []PatchInfo{infoLBEligibleFirst, infoLBUtilShrBound, infoReschedIneligible, infoNewidleBailout, infoCoreschedIdleIPI}

// PatchByName returns the patch knob called name.
func PatchByName(name string) (PatchInfo, bool) {
	for _, p := range Patches {
		if p.Name == name {
			return p, true
		}
	}
	return PatchInfo{}, false
}

// Names returns the knob names of the patches in p, in seed order.
func (p Patch) Names() []string {
	var out []string
	for _, pi := range Patches {
		if p&pi.Patch != 0 {
			out = append(out, pi.Name)
		}
	}
	return out
}

// Kernel is a mainline version the model knows: its default features and
// the seed patches already in it.
type Kernel struct {
	Version  string
	Features Feature
	Patches  Patch
	// BaseSlice is normalized_sysctl_sched_base_slice (ns): 0.75 ms in
	// 6.6 and 6.12, 0.70 ms in 6.18 (kernel/sched/fair.c; the 6.18.44
	// the fixtures were recorded on shows sysctl_sched_base_slice 1.4 ms
	// at 2 CPUs in /sys/kernel/debug/sched/debug).
	BaseSlice int64
	Notes     string
}

const commonFeatures = FeatPlaceLag | FeatPlaceDeadlineInitial | FeatRunToParity | FeatWakeupPreemption |
	FeatUtilEst | FeatSISUtil | FeatWAIdle | FeatWAWeight | FeatWABias | FeatNontaskCapacity | FeatCoreSync

// Kernels lists the modeled versions, oldest first. Upstream status of the
// seed patches (see each patch file): 003 entered mainline around v6.0 and
// 001 around v6.8, so both are in 6.12; 000 is in 6.18 and not in 6.12;
// 002 is not upstream as written; 004 was an RFC fix whose effect mainline
// gets from the need_sync logic (CORE_SYNC).
var Kernels = []Kernel{
	{Version: "6.6", Features: commonFeatures, Patches: PatchNewidleBailout, BaseSlice: 750_000,
		Notes: "first EEVDF release: RUN_TO_PARITY with the vlag == deadline marker, no PREEMPT_SHORT, no DELAY_DEQUEUE"},
	{Version: "6.12", Features: commonFeatures | FeatPlaceRelDeadline | FeatPreemptShort | FeatDelayDequeue | FeatDelayZero,
		Patches: PatchNewidleBailout | PatchLBUtilShrBound, BaseSlice: 750_000,
		Notes: "PREEMPT_SHORT, DELAY_DEQUEUE, PLACE_REL_DEADLINE; did_preempt_short reschedules an unprotected ineligible current"},
	{Version: "6.18", Features: commonFeatures | FeatPlaceRelDeadline | FeatPreemptShort | FeatDelayDequeue | FeatDelayZero | FeatProtectVprot,
		Patches: PatchNewidleBailout | PatchLBUtilShrBound | PatchLBEligibleFirst, BaseSlice: 700_000,
		Notes: "slice protection by vprot (RUN_TO_PARITY: up to the deadline or the shortest queued slice; NO_RUN_TO_PARITY: the base slice); " +
			"base slice 0.70 ms (x 1 + ilog2 CPUs), as the recording machine's 6.18.44 reports (1.4 ms at 2 CPUs)"},
}

// KernelByVersion returns the modeled kernel for "6.12" (also "v6.12" or
// "mainline-6.12").
func KernelByVersion(v string) (Kernel, bool) {
	v = strings.TrimPrefix(strings.TrimPrefix(v, "mainline-"), "v")
	for _, k := range Kernels {
		if k.Version == v {
			return k, true
		}
	}
	return Kernel{}, false
}

// CostModel prices newidle balancing, the only balancing whose time the
// model charges: a CPU going idle spends it before its sched_switch, and a
// wakeup aimed at it waits. Costs are ns of the machine seed 003's e-mail
// measured on; Scale says how much slower the modeled machine runs kernel
// code (see cost.go). A pass over a domain costs
//
//	Scale × (PerBalance + PerGroup × groups of the domain
//	         + PerCPU × (CPUs of the domain + CPUs of the busiest group)
//	         + PerTask × tasks detach_tasks examines)
//
// as update_sd_lb_stats visits every group and every CPU of the domain and
// find_busiest_queue every CPU of the busiest group.
type CostModel struct {
	PerBalance int64   // per sched_balance_rq pass (and per redo)
	PerGroup   int64   // per group of the domain a pass reads
	PerCPU     int64   // per CPU whose statistics a pass reads
	PerTask    int64   // per task detach_tasks examines
	Scale      float64 // kernel-time multiplier of the modeled machine; 0 means 1
}

// DefaultCost is calibrated so that the seed-003 scenario's all-pinned redo
// walk over a 64-CPU domain (64 groups of one CPU, about 62 passes of
// 300 + 64 x 10 + 65 x 10 + 2 x 20 ns) costs about 100 µs, the e-mail's
// ~120 µs wakeup latency less its ~6 µs with the patch. The e-mail does not
// split the time between groups and CPUs: they are priced alike.
var DefaultCost = CostModel{PerBalance: 300, PerGroup: 10, PerCPU: 10, PerTask: 20}

// Config selects a mainline model and its knobs.
type Config struct {
	Kernel   string
	Features Feature
	Patches  Patch
	// Tunables are the debugfs tunables the description set; the others
	// keep the kernel's values (tunables.go).
	Tunables Tunables
	// Cost prices newidle balancing; the zero value means DefaultCost.
	Cost CostModel
}

// Mainline returns the configuration of a mainline version ("6.12").
func Mainline(version string) (Config, error) {
	k, ok := KernelByVersion(version)
	if !ok {
		return Config{}, fmt.Errorf("unknown kernel version %q: want one of %s", version, strings.Join(versions(), ", "))
	}
	return Config{Kernel: k.Version, Features: k.Features, Patches: k.Patches}, nil
}

func versions() []string {
	var v []string
	for _, k := range Kernels {
		v = append(v, k.Version)
	}
	return v
}

// Parse reads a policy description: a kernel version, then comma-separated
// switches: "+patch" or "-patch" (a seed patch knob), "FEATURE" or
// "NO_FEATURE" (a sched_feat), "name=value" (a debugfs tunable,
// tunables.go). Examples:
//
//	6.12
//	6.12,+resched-ineligible,NO_RUN_TO_PARITY
//	6.12,base_slice_ns=3000000
//	6.18,-lb-eligible-first
//	6.12+lb-eligible-first           (a patch right after the version)
func Parse(s string) (Config, error) {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	if len(parts) == 0 {
		return Config{}, fmt.Errorf("empty policy: want a kernel version such as 6.12")
	}
	head := strings.TrimPrefix(strings.TrimPrefix(parts[0], "mainline-"), "v")
	n := len(Version(head))
	var extra []string
	if n < len(head) {
		extra = append(extra, head[n:])
		head = head[:n]
	}
	cfg, err := Mainline(head)
	if err != nil {
		return Config{}, err
	}
	// "+a+b" or "-a" chained after the version
	var toks []string
	for _, e := range extra {
		toks = append(toks, splitSigned(e)...)
	}
	toks = append(toks, parts[1:]...)
	for _, t := range toks {
		if err := cfg.apply(t); err != nil {
			return Config{}, err
		}
	}
	return cfg, nil
}

// splitSigned splits "+a+b-c" into "+a", "+b", "-c" at signs that start a
// known patch name.
func splitSigned(s string) []string {
	var out []string
	for len(s) > 0 {
		j := len(s)
		for k := 1; k < len(s); k++ {
			if s[k] == '+' || s[k] == '-' {
				if _, ok := PatchByName(s[k+1:]); ok || isPatchPrefix(s[k+1:]) {
					j = k
					break
				}
			}
		}
		out = append(out, s[:j])
		s = s[j:]
	}
	return out
}

func isPatchPrefix(s string) bool {
	for _, p := range Patches {
		if strings.HasPrefix(s, p.Name) {
			return true
		}
	}
	return false
}

func (c *Config) apply(tok string) error {
	switch {
	case strings.Contains(tok, "="):
		return c.Tunables.parse(tok)
	case strings.HasPrefix(tok, "+") || strings.HasPrefix(tok, "-"):
		p, ok := PatchByName(tok[1:])
		if !ok {
			return fmt.Errorf("unknown patch %q: want one of %s", tok[1:], strings.Join(patchNames(), ", "))
		}
		// A sign that asks for what the version already is would be
		// silently a no-op: say what the version has and how to change it.
		k, _ := KernelByVersion(c.Kernel)
		has := k.Patches&p.Patch != 0
		if tok[0] == '+' {
			if has {
				return fmt.Errorf("+%s: %s already has it (upstream: %s); to model %s without it, write -%s", p.Name, c.Kernel, p.Upstream, c.Kernel, p.Name)
			}
			c.Patches |= p.Patch
		} else {
			if !has {
				return fmt.Errorf("-%s: %s does not have it (upstream: %s); to model %s with it, write +%s", p.Name, c.Kernel, p.Upstream, c.Kernel, p.Name)
			}
			c.Patches &^= p.Patch
		}
	case strings.HasPrefix(tok, "NO_"):
		f, ok := FeatureByName(tok[3:])
		if !ok {
			return fmt.Errorf("unknown feature %q: want one of %s", tok, strings.Join(FeatureNames(), ", "))
		}
		c.Features &^= f
	default:
		f, ok := FeatureByName(tok)
		if !ok {
			if _, isPatch := PatchByName(tok); isPatch {
				return fmt.Errorf("%q is a patch: write +%s or -%s", tok, tok, tok)
			}
			return fmt.Errorf("unknown switch %q: want +patch, -patch, FEATURE or NO_FEATURE", tok)
		}
		c.Features |= f
	}
	return nil
}

// PatchNames returns the knob names of the seed patches, in seed order.
func PatchNames() []string { return patchNames() }

func patchNames() []string {
	var n []string
	for _, p := range Patches {
		n = append(n, p.Name)
	}
	return n
}

// Has reports whether feature f is on.
func (c Config) Has(f Feature) bool { return c.Features&f != 0 }

// With reports whether patch p is applied.
func (c Config) With(p Patch) bool { return c.Patches&p != 0 }

// String returns the canonical description: the version, then the
// differences from that version's defaults (patches first, then features),
// so that Parse(c.String()) == c.
func (c Config) String() string {
	k, ok := KernelByVersion(c.Kernel)
	if !ok {
		return c.Kernel
	}
	parts := []string{k.Version}
	for _, p := range Patches {
		on, def := c.Patches&p.Patch != 0, k.Patches&p.Patch != 0
		switch {
		case on && !def:
			parts = append(parts, "+"+p.Name)
		case !on && def:
			parts = append(parts, "-"+p.Name)
		}
	}
	var feats []string
	for _, n := range featureNames {
		on, def := c.Features&n.f != 0, k.Features&n.f != 0
		switch {
		case on && !def:
			feats = append(feats, n.name)
		case !on && def:
			feats = append(feats, "NO_"+n.name)
		}
	}
	slices.Sort(feats)
	return strings.Join(append(append(parts, feats...), c.Tunables.strings()...), ",")
}
