package replay

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// A Plan is what every run of a workload reads and none changes: per task
// the cumulative work at each segment's end, and per waker its wakes and
// forks in the order its work reaches them (16 bytes a segment; an
// action names its wake, whose work point each run reads as the action
// comes up). Runs of one workload at once (whatif.Prepared.Verdicts)
// share one Plan (Options.Plan) instead of each building its own; a kill,
// which ends a task's remaining actions where its work stands, caps them
// per run (taskRun.actCap) instead of rewriting them.
type Plan struct {
	w        *Workload
	nseg     int
	segs     [][]int64 // per task, cumulative units at each segment end
	acts     []action
	actStart []int32 // task i's actions are acts[actStart[i]:actStart[i+1]]
}

// NewPlan builds the Plan of w, which must not change while a run reads
// it.
func NewPlan(w *Workload) (*Plan, error) {
	n := len(w.Tasks)
	p := &Plan{w: w, segs: make([][]int64, n), actStart: make([]int32, n+1)}
	// One backing array each for the cumulative segment ends and the
	// actions (counted per waker first).
	nact := make([]int32, n)
	for i := range w.Tasks {
		p.nseg += len(w.Tasks[i].Segments)
		for _, sg := range w.Tasks[i].Segments {
			if sg.Wake.Kind == WakeTask || sg.Wake.Kind == WakeFork {
				nact[sg.Wake.Waker]++
			}
		}
	}
	for i := range n {
		p.actStart[i+1] = p.actStart[i] + nact[i]
	}
	cumAll := make([]int64, p.nseg)
	p.acts = make([]action, p.actStart[n])
	fill := slices.Clone(p.actStart[:n])
	for i := range w.Tasks {
		t := &w.Tasks[i]
		cum := cumAll[:len(t.Segments):len(t.Segments)]
		cumAll = cumAll[len(t.Segments):]
		var sum int64
		for j, sg := range t.Segments {
			if sg.Work > math.MaxInt64>>(unitShift+2) || sum > math.MaxInt64>>2 {
				return nil, fmt.Errorf("replay: task %d (%s) segment %d: work %d too large", i, t.Comm, j, sg.Work)
			}
			sum += sg.Work << unitShift
			cum[j] = sum
			wk := sg.Wake
			if wk.Kind == WakeTask || wk.Kind == WakeFork {
				p.acts[fill[wk.Waker]] = action{target: int32(i), seg: int32(j)}
				fill[wk.Waker]++
			}
		}
		p.segs[i] = cum
	}
	// Each waker's actions in the order its work reaches them (stable:
	// equal points keep the workload's task order), sorted with their
	// points beside them.
	type keyed struct {
		work int64
		a    action
	}
	var ks []keyed
	for i := range n {
		acts := p.acts[p.actStart[i]:p.actStart[i+1]]
		if slices.IsSortedFunc(acts, func(a, b action) int { return cmp.Compare(actionWork(w, a), actionWork(w, b)) }) {
			continue
		}
		ks = ks[:0]
		for _, a := range acts {
			ks = append(ks, keyed{actionWork(w, a), a})
		}
		slices.SortStableFunc(ks, func(a, b keyed) int { return cmp.Compare(a.work, b.work) })
		for k := range ks {
			acts[k] = ks[k].a
		}
	}
	return p, nil
}

// actionWork is the point of a's wake in its waker's work (units).
func actionWork(w *Workload, a action) int64 {
	return w.Tasks[a.target].Segments[a.seg].Wake.Work << unitShift
}

// fits reports whether p was built for w as it stands: the same workload,
// its tasks and segments as many.
func (p *Plan) fits(w *Workload) bool {
	if p.w != w || len(p.segs) != len(w.Tasks) {
		return false
	}
	n := 0
	for i := range w.Tasks {
		if len(w.Tasks[i].Segments) != len(p.segs[i]) {
			return false
		}
		n += len(w.Tasks[i].Segments)
	}
	return n == p.nseg
}
