package whatif

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/schedlens/schedlens/compare"
	"github.com/schedlens/schedlens/policies"
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/report"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// DefaultRuns is the number of model seeds a what-if runs on each side
// when not told: enough for a Welch interval with 14 degrees of freedom
// (t = 2.14, against 4.30 with 3 seeds), and 16 replays of the largest
// A/B fixture take about 2 s on 2 cores (docs/whatif.md).
const DefaultRuns = 8

// PredictOptions say how to run a what-if.
type PredictOptions struct {
	// Options are the replay's options; Seed and CPUs are set per run.
	Options
	// Seeds are the model seeds, each run under both models (at least 2);
	// nil: 1..DefaultRuns.
	Seeds []uint64
	// Parallel is how many replays run at once (0: GOMAXPROCS).
	Parallel int
}

// Seeds returns the seeds 1..n.
func Seeds(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}

// Prediction is a what-if: the recording replayed under the baseline model
// and under the baseline with the changes, once per seed each, compared by
// compare.CompareRuns (the seeds as runs), with a verdict per metric.
type Prediction struct {
	// Baseline and WhatIf are the two models' descriptions.
	Baseline, WhatIf string
	// Changes are the changes as written.
	Changes []string
	// CPUs is the what-if's CPU set (nil: every CPU of the recording).
	CPUs topology.CPUSet
	// Tasks are the what-if's nice and affinity changes.
	Tasks []TaskChange
	// Seeds are the model seeds of both sides.
	Seeds []uint64
	// Recorded is the recording measured by the same code.
	Recorded *compare.Side
	// AB is the baseline runs against the what-if runs.
	AB *compare.AB
	// Cells are the judged metrics, in the order of AB.Rows (every row
	// of a metric in Judged).
	Cells []Cell
	// Notes: the baseline run's notes, then what the what-if adds.
	Notes []string
	// HZ is the tick rate the replays ran at.
	HZ int
}

// Cell returns the cell of a scope and metric, or nil.
func (p *Prediction) Cell(scope, metric string) *Cell {
	for i := range p.Cells {
		if p.Cells[i].Scope == scope && p.Cells[i].Metric == metric {
			return &p.Cells[i]
		}
	}
	return nil
}

// Predict runs the what-if of changes on tl: baseline is the baseline
// model's description (Policy.Resolve), changes are parsed by ParseChange.
func Predict(tl *timeline.Timeline, baseline string, changes []Change, o PredictOptions) (*Prediction, error) {
	if len(changes) == 0 {
		return nil, fmt.Errorf("whatif: no change")
	}
	whatIf, cpus, err := Apply(baseline, changes)
	if err != nil {
		return nil, err
	}
	seeds := o.Seeds
	if seeds == nil {
		seeds = Seeds(DefaultRuns)
	}
	if len(seeds) < 2 {
		return nil, fmt.Errorf("whatif: %d seeds; the interval across seeds needs at least 2", len(seeds))
	}
	tasks := TaskChanges(changes)
	p := &Prediction{Baseline: baseline, WhatIf: whatIf, CPUs: cpus, Tasks: tasks, Seeds: seeds}
	for _, c := range changes {
		p.Changes = append(p.Changes, c.Text)
	}
	// Progress: the simulated time of every run, of all runs' total.
	var runProgress func(k int) func(doneNs, totalNs int64)
	if report := o.Progress; report != nil {
		var mu sync.Mutex
		done, total := make([]int64, 2*len(seeds)), make([]int64, 2*len(seeds))
		runProgress = func(k int) func(doneNs, totalNs int64) {
			return func(d, t int64) {
				mu.Lock()
				defer mu.Unlock()
				done[k], total[k] = d, t
				var sd, st int64
				for i := range done {
					sd += done[i]
					st += total[i]
					if total[i] == 0 {
						st += t // not started: as long as this one
					}
				}
				report(sd, st)
			}
		}
	}
	// The recording, measured once for every run, before the workloads
	// are extracted (its analysis does not wait beside them).
	rec, err := MeasureRecording(tl, o.Options)
	if err != nil {
		return nil, err
	}
	// Each side's workload is extracted once and read by all its seeds;
	// the runs are measured over their whole length, as real runs are.
	var prep [2]*Prepared
	for side, desc := range []string{baseline, whatIf} {
		so := o.Options
		so.WholeRun, so.DropSchedules = true, true
		// The events are read by both extractions.
		so.DropRecording = o.DropRecording && side == 1
		if side == 1 {
			so.CPUs, so.Tasks = cpus, tasks
		}
		if prep[side], err = Prepare(tl, desc, so); err != nil {
			return nil, err
		}
		if side == 0 {
			if err := autogroupMatters(baseline, whatIf, prep[0].Workload()); err != nil {
				return nil, err
			}
		}
	}
	progressOf := func(k int) func(doneNs, totalNs int64) {
		if runProgress == nil {
			return nil
		}
		return runProgress(k)
	}
	if o.DropRecording {
		prep[0].DropRecording()
	}
	first, err := prep[0].Run(seeds[0], progressOf(0), rec)
	if err != nil {
		return nil, err
	}
	p.Recorded, p.HZ = first.Recorded, first.Options.HZ
	o.Recorded = first.Recorded
	// What is kept of a run: its figures, not its schedule (16 modeled
	// timelines held to the end would be most of the memory).
	type kept struct {
		policy  string
		ncpu    int
		modeled *compare.Side
		notes   []string
	}
	keep := func(r *Run) *kept {
		return &kept{policy: r.Policy, ncpu: r.Result.Timeline.NCPU, modeled: r.Modeled, notes: r.Notes}
	}
	runs := [2][]*kept{make([]*kept, len(seeds)), make([]*kept, len(seeds))}
	runs[0][0] = keep(first)
	first = nil
	// Run k is side k/len(seeds), seed k%len(seeds); run 0 is done.
	err = inParallel(2*len(seeds)-1, o.Parallel, func(j int) error {
		k := j + 1
		side, i := k/len(seeds), k%len(seeds)
		r, err := prep[side].Run(seeds[i], progressOf(k), o.Recorded)
		if err != nil {
			return err
		}
		runs[side][i] = keep(r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var sides [2][]compare.Run
	for s := range 2 {
		for i, r := range runs[s] {
			tr := report.Trace{Path: r.policy + " seed " + strconv.FormatUint(seeds[i], 10), Format: "model", CPUs: r.ncpu}
			sides[s] = append(sides[s], compare.Run{Trace: tr, Side: r.modeled})
		}
	}
	p.AB = compare.CompareRuns(sides[0], sides[1], "baseline", "what-if")
	p.Cells = judgeAll(p.AB, p.Recorded)
	p.Notes = append(p.Notes, runs[0][0].notes...)
	// What the what-if's own workload assumes beyond the baseline's (the
	// CPUs it moved, the tasks it changed, the autogroups it dropped, its
	// own overrun): the first seed's, as the baseline's notes are.
	for _, n := range runs[1][0].notes {
		if !slices.Contains(runs[0][0].notes, n) {
			p.Notes = append(p.Notes, "what-if run: "+n)
		}
	}
	return p, nil
}

// inParallel calls f(0) .. f(n-1), par at a time (par <= 0: as many as
// there are CPUs for Go), and returns the error of the lowest index that
// failed.
func inParallel(n, par int, f func(i int) error) error {
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(par, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// autogroupMatters refuses a what-if whose only change of autogroups
// finds none in the workload: it would change nothing (the recording has
// no group table, as text traces do, or only cgroups).
func autogroupMatters(baseline, whatIf string, w *replay.Workload) error {
	b, errB := policies.Parse(baseline)
	x, errX := policies.Parse(whatIf)
	if errB != nil || errX != nil || b.Tunables.Autogroup() == x.Tunables.Autogroup() {
		return nil
	}
	// The baseline's workload holds its autogroups, or, when the baseline
	// has them off, says how many tasks it moved out of them.
	if slices.ContainsFunc(w.Groups, func(g replay.Group) bool { return g.Autogroup }) ||
		slices.ContainsFunc(w.Assumptions, func(a replay.Assumption) bool { return a.Name == replay.AssumeNoAutogroup && a.Tasks > 0 }) {
		return nil
	}
	b.Tunables, x.Tunables = b.Tunables.Without(policies.TunAutogroup), x.Tunables.Without(policies.TunAutogroup)
	if b != x {
		return nil // other changes come with it
	}
	return fmt.Errorf("sched_autogroup_enabled: the recording shows no autogroup (no task groups: text traces carry none; schedlens record writes them), so the change changes nothing")
}
