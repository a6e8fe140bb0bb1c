package replay

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// The speed side of extraction: which speeds the CPUs did the recorded
// work at, and the evidence the walk collects to calibrate them.

// resolveSpeed returns the speed of every CPU of tl's machine under spec,
// and the assumption that says where it came from. SpeedAuto on a machine
// with more than one capacity class walks the trace once to collect the
// evidence calibrateSpeed weighs.
func resolveSpeed(tl *timeline.Timeline, topo *topology.Topology, spec SpeedSpec) ([]int, Assumption, error) {
	n := max(tl.NCPU, 1)
	class, perf := speedClasses(topo, n)
	base := make([]int, n)
	for i := range base {
		base[i] = perf[class[i]]
	}
	a := Assumption{Name: AssumeCPUSpeed}
	switch spec.Mode {
	case SpeedEqual:
		sp := make([]int, n)
		for i := range sp {
			sp[i] = topology.CapacityScale
		}
		a.Detail = "--cpu-speed equal: every CPU did work at speed 1024 whatever its capacity (an emulated guest, or capacities that are only labels)"
		return sp, a, nil
	case SpeedCapacity:
		a.Detail = "--cpu-speed capacity: every CPU did work at its capacity (" + speedText(class, perf) + ")"
		return base, a, nil
	case SpeedTable:
		for i := 0; i < n; i++ {
			if i >= len(spec.Table) || spec.Table[i] <= 0 {
				return nil, a, fmt.Errorf("cpu speed %s: CPU %d has no speed (the trace has %d CPUs)", spec.Source, i, n)
			}
		}
		if len(spec.Table) > n {
			for i := n; i < len(spec.Table); i++ {
				if spec.Table[i] > 0 {
					return nil, a, fmt.Errorf("cpu speed %s: CPU %d is not in the trace (%d CPUs)", spec.Source, i, n)
				}
			}
		}
		sp := slices.Clone(spec.Table[:n])
		tc, tp := make([]int, n), slices.Clone(sp)
		slices.Sort(tp)
		tp = slices.Compact(tp)
		slices.Reverse(tp)
		for i, v := range sp {
			tc[i] = slices.Index(tp, v)
		}
		a.Detail = "--cpu-speed " + spec.Source + ": " + speedText(tc, tp)
		return sp, a, nil
	case SpeedAuto:
	default:
		return nil, a, fmt.Errorf("replay: unknown speed mode %d", spec.Mode)
	}
	if len(perf) == 1 {
		a.Detail = fmt.Sprintf("every CPU has capacity %d: speed %d for all, nothing to calibrate", perf[0], perf[0])
		return base, a, nil
	}
	x := newExtractor(tl, base)
	x.collect(class, len(perf))
	x.run()
	fits, why := calibrateSpeed(perf, x.bursts, x.speedLives())
	sp := slices.Clone(base)
	var parts []string
	for k := 1; k < len(perf); k++ {
		cpus := cpusOfClass(class, k)
		if f := fits[k]; f != nil {
			for i := range sp {
				if class[i] == k {
					sp[i] = f.speed
				}
			}
			parts = append(parts, fmt.Sprintf("CPUs %s (capacity %d) calibrated to speed %d from %s", cpus, perf[k], f.speed, f.evidence))
			continue
		}
		parts = append(parts, fmt.Sprintf("CPUs %s (capacity %d) at speed %d, their capacity, by default: %s", cpus, perf[k], perf[k], why[k]))
	}
	a.Detail = fmt.Sprintf("CPUs %s (capacity %d) at speed %d; ", cpusOfClass(class, 0), perf[0], perf[0]) + strings.Join(parts, "; ") +
		" (without evidence a CPU is taken to run at its capacity, as the kernel's PELT scaling assumes; --cpu-speed equal|capacity|FILE overrides)"
	return sp, a, nil
}

// speedText lists CPUs by speed class: "CPUs 1-2 at 1024, 0,3-5 at 383".
func speedText(class, speed []int) string {
	var parts []string
	for k, v := range speed {
		parts = append(parts, fmt.Sprintf("%s at %d", cpusOfClass(class, k), v))
	}
	return "CPUs " + strings.Join(parts, ", ")
}

// collect makes the walk gather speed evidence: CPU i is in class cls[i]
// of n.
func (x *extractor) collect(cls []int, n int) {
	x.cls, x.nclass = cls, n
}

// noteBurst records the burst task id just ended by blocking, when a
// recorded wakeup began it.
func (x *extractor) noteBurst(id timeline.TaskID) {
	xt := &x.xs[id]
	if x.cls == nil || xt.clsRun == nil || xt.segs.Len() == 0 || xt.segs.Last().wake.kind == WakeStart {
		return
	}
	run := make([]int64, x.nclass)
	for k := range run {
		run[k] = xt.clsRun[k]
		if xt.segCls != nil {
			run[k] -= xt.segCls[k]
		}
	}
	x.bursts = append(x.bursts, speedBurst{task: int(id), run: run})
}

// speedLives returns the run time per class of every task forked and
// exited in the recording, keyed by parent and comm stem.
func (x *extractor) speedLives() []speedLife {
	var out []speedLife
	for id := range x.xs {
		xt := &x.xs[id]
		if xt.state != xDead || xt.clsRun == nil || xt.segs.Len() == 0 || xt.segs.At(0).wake.kind != WakeFork {
			continue
		}
		key := strconv.Itoa(int(xt.segs.At(0).wake.waker)) + "/" + commStem(x.tl.TaskName(timeline.TaskID(id)))
		out = append(out, speedLife{key: key, run: slices.Clone(xt.clsRun)})
	}
	return out
}
