// Package policies holds the scheduler models that package replay runs: the
// mainline Linux fair/RT scheduler (EEVDF, one level of task groups, PELT,
// wake placement, load balancing over sched domains, core scheduling) for a
// kernel version, and
// the five seed patches as switchable knobs, one file each:
//
//	lb_eligible_first.go   lb-eligible-first   seed 000
//	lb_util_shr_bound.go   lb-util-shr-bound   seed 001
//	resched_ineligible.go  resched-ineligible  seed 002
//	newidle_bailout.go     newidle-bailout     seed 003
//	coresched_idle_ipi.go  coresched-idle-ipi  seed 004
//
// A policy is built from a Config: a kernel version ("6.6", "6.12",
// "6.18"), which fixes the default features and the patches already
// upstream in it, plus feature switches named after sched_feat
// (RUN_TO_PARITY, NO_RUN_TO_PARITY, ...) and patch switches (+name, -name)
// that work in both directions. Parse reads "6.12,+resched-ineligible,
// NO_RUN_TO_PARITY". Scenarios returns the seed patches' test cases as
// workload specs.
//
// The kernel facts used here (weights, constants, decision order) are cited
// in comments by file and function of the Linux sources they come from; the
// code is this package's own.
//
// It imports replay, timeline and topology; nothing imports it but the
// command line and tests.
package policies
