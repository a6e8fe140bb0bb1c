package replay

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/schedlens/schedlens/timeline"
)

// Result is the outcome of Simulate.
type Result struct {
	Timeline *timeline.Timeline
	// Events are the modeled events, with Options.Log (Timeline is then
	// their summary); nil otherwise.
	Events *timeline.EventLog
	Policy string
	Tasks  []TaskResult
	// Counters are the engine's and the policy's event counts, by name
	// ("switch", "preempt", "migrate", "lb.newidle.pulled", ...).
	Counters map[string]int64
	// Knobs: per policy knob, how often it changed a decision, when the
	// policy is a KnobReporter; nil otherwise.
	Knobs   []Knob
	Start   timeline.Time
	End     timeline.Time // when the run stopped
	Steps   int64         // simulation events processed
	Emitted int64         // timeline events emitted
}

// TaskResult is what one task got in a replay.
type TaskResult struct {
	CPUTime    int64         // ns on a CPU
	Work       int64         // ns of capacity-1024 work done (of its demand)
	WakeCost   int64         // ns of work its wakes cost beyond (or, negative, short of) their recorded cost: the model's CPU work is Work + WakeCost (Options.WakeCostPlain)
	Demand     int64         // the workload's demand (its segments' total work)
	Finished   bool          // consumed its whole demand
	Exit       timeline.Time // when it exited, NoTime if it did not
	Wakeups    int64         // wakeups, forks and starts that made it runnable
	Preempted  int64         // involuntary switch-outs
	Migrations int64         // CPU changes
	Wait       int64         // ns runnable but not running
	LatencyN   int64         // wakeup latency samples (waking to switch-in)
	LatencySum int64         // ns
	LatencyMax int64         // ns
	Latencies  []int64       // every sample, when Options.KeepLatencies
}

// unobservedGaps are the stretches the recording did not observe, on the
// modeled timeline's CPUs.
func (s *Sim) unobservedGaps(ncpu int) []timeline.Gap {
	var gs []timeline.Gap
	for _, g := range s.w.Unobserved {
		if int(g.CPU) < ncpu {
			gs = append(gs, g)
		}
	}
	return gs
}

// finish charges the running tasks up to the stop time, builds the
// timeline and collects the per-task results and counters.
func (s *Sim) finish() (*Result, error) {
	for cpu := range s.cpus {
		if s.cpus[cpu].state == CPURunning {
			s.account(cpu)
		}
	}
	var tl *timeline.Timeline
	switch {
	case s.opts.Discard:
	case s.log != nil:
		var err error
		if tl, err = s.b.Finish(); err != nil {
			return nil, fmt.Errorf("replay: summarizing the modeled events: %w", err)
		}
		tl.Topology = s.topo
		if err := tl.AddGaps(s.unobservedGaps(tl.NCPU)); err != nil {
			return nil, err
		}
	default:
		var err error
		if tl, err = s.b.Finish(); err != nil {
			return nil, fmt.Errorf("replay: building timeline: %w", err)
		}
		tl.Topology = s.topo
		// Inconsistencies are those of the events alone, found before
		// the stretches the recording did not observe become gaps.
		tl.Inconsistencies()
		tl.Gaps = append(tl.Gaps, s.unobservedGaps(tl.NCPU)...)
		slices.SortStableFunc(tl.Gaps, func(a, b timeline.Gap) int { return cmp.Compare(a.End, b.End) })
	}
	r := &Result{Timeline: tl, Events: s.log, Policy: s.pol.Name(), Start: s.w.Start, End: s.now, Steps: s.steps, Emitted: s.emitted, Counters: map[string]int64{}}
	for name, c := range s.counters {
		r.Counters[name] = *c
	}
	if kr, ok := s.pol.(KnobReporter); ok {
		r.Knobs = kr.Knobs()
	}
	r.Tasks = make([]TaskResult, len(s.tasks))
	for i := range s.tasks {
		tr := &s.tasks[i]
		res := tr.res
		res.Work = tr.done >> unitShift
		if s.w.Tasks[i].End == EndRun {
			res.Finished = false
		}
		r.Tasks[i] = res
	}
	return r, nil
}
