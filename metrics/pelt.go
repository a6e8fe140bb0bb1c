package metrics

import (
	"math"

	"github.com/schedlens/schedlens/timeline"
)

// PELT is a continuous-time re-simulation of the kernel's per-entity load
// tracking utilization (util_avg, kernel/sched/pelt.c), estimated from a
// task's run/sleep history in a trace.
//
// The kernel sums 1024 µs periods with a decay factor y per period, y^32 =
// 1/2, so a contribution halves every 32 periods (32.768 ms). Here the same
// signal is integrated in closed form over each interval:
//
//	running on a CPU of capacity C for d ns:  u' = C + (u - C) * 2^(-d/H)
//	not running for d ns:                     u' = u * 2^(-d/H)
//
// where H is the half-life. Running time counts at the capacity of the CPU
// it ran on (the kernel scales the contribution by arch_scale_cpu_capacity),
// so a task that always runs on a CPU of capacity 383 converges to 383.
// Frequency invariance is not modelled (a trace does not carry the
// frequency): every CPU is taken at its highest frequency, which
// over-estimates the utilization of a task run at a lower frequency.
// Waiting on a runqueue counts as not running, as for util_avg.
type PELT struct {
	// HalfLife in nanoseconds; 0 means DefaultHalfLife.
	HalfLife int64
}

// DefaultHalfLife is the kernel's PELT half-life: 32 periods of 1024 µs.
const DefaultHalfLife int64 = 32 * 1024 * 1000

// fitMargin and capacityScale give the kernel's fit test, fits_capacity()
// in kernel/sched/fair.c: a utilization fits a capacity when
// util * 1280 < capacity * 1024, i.e. with 20% headroom.
const (
	fitMargin     = 1280
	capacityScale = 1024
)

// Fits reports whether util fits a CPU of the given capacity with the
// kernel's 20% margin: util*1280 < capacity*1024.
func Fits(util float64, capacity int) bool {
	return util*fitMargin < float64(capacity)*capacityScale
}

// Misfit reports whether util exceeds the fit margin of a CPU of the given
// capacity: util*1280 > capacity*1024.
func Misfit(util float64, capacity int) bool {
	return util*fitMargin > float64(capacity)*capacityScale
}

// fitThreshold is the utilization at which a task stops fitting capacity.
func fitThreshold(capacity int) float64 {
	return float64(capacity) * capacityScale / fitMargin
}

func (p PELT) lambda() float64 {
	h := p.HalfLife
	if h <= 0 {
		h = DefaultHalfLife
	}
	return math.Ln2 / float64(h)
}

// Decay returns the utilization u after d ns off CPU.
func (p PELT) Decay(u float64, d int64) float64 {
	if d <= 0 {
		return u
	}
	return u * math.Exp(-p.lambda()*float64(d))
}

// Run returns the utilization u after d ns running on a CPU of the given
// capacity.
func (p PELT) Run(u float64, d int64, capacity int) float64 {
	if d <= 0 {
		return u
	}
	c := float64(capacity)
	return c + (u-c)*math.Exp(-p.lambda()*float64(d))
}

// RunUntil returns how many ns a task of utilization u must run on a CPU of
// the given capacity for its utilization to exceed target, rounded up, and
// false when it never does (target at or above capacity). It returns 0 when
// u already exceeds target.
func (p PELT) RunUntil(u, target float64, capacity int) (int64, bool) {
	if u > target {
		return 0, true
	}
	c := float64(capacity)
	if target >= c {
		return 0, false
	}
	// c + (u-c) e^{-λt} > target  <=>  t > ln((c-u)/(c-target)) / λ
	t := math.Log((c-u)/(c-target)) / p.lambda()
	if t > math.MaxInt64/2 {
		return 0, false
	}
	return int64(math.Floor(t)) + 1, true
}

// utilTracker follows the PELT utilization of every task over one walk.
// Spans of one task arrive in time order.
type utilTracker struct {
	p  PELT
	u  []float64
	at []timeline.Time
}

func newUtilTracker(n int, p PELT) *utilTracker {
	ut := &utilTracker{p: p, u: make([]float64, n), at: make([]timeline.Time, n)}
	for i := range ut.at {
		ut.at[i] = timeline.NoTime
	}
	return ut
}

// span advances task id over [start, end]: running at capacity when
// capacity > 0, else decaying. It returns the utilization at start.
func (ut *utilTracker) span(id timeline.TaskID, start, end timeline.Time, capacity int) float64 {
	u := ut.u[id]
	if at := ut.at[id]; at != timeline.NoTime && start > at {
		u = ut.p.Decay(u, int64(start-at))
	}
	u0 := u
	if end > start {
		if capacity > 0 {
			u = ut.p.Run(u, int64(end-start), capacity)
		} else {
			u = ut.p.Decay(u, int64(end-start))
		}
	}
	ut.u[id], ut.at[id] = u, max(end, start)
	return u0
}
