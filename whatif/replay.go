package whatif

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/compare"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/policies"
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Policy names the modeled kernel: a version (explicit, else the newest
// modeled one at or below the trace's release, else the default), or a
// full description, plus patch knobs and sched_feat switches.
type Policy struct {
	// Description is "mainline" (or "") for the chosen version's
	// mainline, else a full description such as
	// "6.12,+resched-ineligible,NO_RUN_TO_PARITY" (its version wins).
	Description string
	// Kernel is a version given by the user ("" = none).
	Kernel string
	// Release is what the trace says of its kernel release.
	Release policies.Release
	// Patches ("+name", "-name" or "name" for "+name") and Features
	// ("NO_RUN_TO_PARITY") are appended in order.
	Patches  []string
	Features []string
}

// Resolve returns the model's full description and notes on how the
// version was chosen; an error names what is wrong with the description.
func (p Policy) Resolve() (desc string, notes []string, err error) {
	explicit := p.Kernel
	full := p.Description != "" && p.Description != "mainline"
	if full {
		explicit = policies.Version(p.Description)
	}
	version, notes := policies.ChooseKernel(explicit, p.Release)
	desc = version
	if full {
		desc = p.Description
	}
	for _, x := range p.Patches {
		if !strings.HasPrefix(x, "+") && !strings.HasPrefix(x, "-") {
			x = "+" + x
		}
		desc += "," + x
	}
	for _, ft := range p.Features {
		desc += "," + ft
	}
	cfg, err := policies.Parse(desc)
	if err != nil {
		return "", nil, fmt.Errorf("policy %q: %w", desc, err)
	}
	if _, err := policies.New(cfg); err != nil {
		return "", nil, fmt.Errorf("policy %q: %w", desc, err)
	}
	return desc, notes, nil
}

// Changes returns the policy's patches ("+name", "-name" or "name" for
// "+name") and features as changes, to apply on a baseline.
func (p Policy) Changes() ([]Change, error) {
	var out []Change
	for _, x := range p.Patches {
		if !strings.HasPrefix(x, "+") && !strings.HasPrefix(x, "-") {
			x = "+" + x
		}
		c, err := ParseChange(x)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	for _, x := range p.Features {
		c, err := ParseChange(x)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Options say what the recording machine imposed and how to run.
type Options struct {
	// Topology of the recording machine (nil: the timeline's own).
	Topology *topology.Topology
	// Window clips the figures (zero: the valid window).
	Window metrics.Window
	// Filter restricts the figures to some tasks (both runs).
	Filter metrics.Filter
	// Affinity gives the tasks' allowed CPUs over time (nil: kthreads by
	// name, what the recording holds, no inference).
	Affinity *affinity.Map
	// Speed says how fast each CPU ran the recorded work.
	Speed replay.SpeedSpec
	// WakeRule says which task wake ends a recorded sleep.
	WakeRule replay.WakeRule
	// HZ is the model's tick rate; 0 takes it from the recording (the
	// runs a tick ended), else 250.
	HZ int
	// Seed makes the run reproducible.
	Seed uint64
	// Recorded is the recording measured under the same options, to
	// reuse across runs; nil measures it.
	Recorded *compare.Side
	// CPUs restricts the modeled machine to these CPUs of the recording
	// (nil: every CPU), as if the others were offline (restrictCPUs).
	CPUs topology.CPUSet
	// Tasks are nice and affinity changes of tasks by comm, applied
	// before CPUs (applyTaskChanges).
	Tasks []TaskChange
	// WholeRun measures a modeled run that went on past the recording's
	// end over all of it, every figure, as compare measures each real run
	// over its own window; without it only completion counts the overrun
	// and every other figure the recording's window. Predict sets it: a
	// what-if's runs are compared as real A/B runs are.
	WholeRun bool
	// NoOverrun stops the modeled run at the recording's end even when
	// tasks that exit in the recording have not.
	NoOverrun bool
	// Progress, when set, is told how much of the recording's span the
	// model has simulated (replay.Options.Progress); Predict sums it over
	// all its runs.
	Progress func(doneNs, totalNs int64)
	// DropSchedules: the caller wants the modeled runs' figures, not their
	// events. Each run's schedule (Run.Result.Timeline) drops its events
	// once measured (timeline.DropEvents: its tasks and figures stay), so
	// that it does not hold them beside the next run's. Verdicts' runs
	// always do.
	DropSchedules bool
	// DropRecording: the caller reads nothing of the recording's events
	// after Predict or Prepare, which then drop them once the recording
	// is measured and the (last) workload extracted: the workloads hold
	// what the runs need. Prepare drops them as soon as its extraction
	// has read them, before the workload is built.
	DropRecording bool
	// NoWakeupSamples: the recording and the runs are measured without
	// their wakeup samples (compare.Options.NoWakeupSamples).
	NoWakeupSamples bool
}

// Run is one modeled run beside the recording.
type Run struct {
	// Policy is the model's full description.
	Policy string
	// Workload is what was replayed, with its assumptions.
	Workload *replay.Workload
	// Options are the replay's options after calibration.
	Options replay.Options
	// Result is the engine's result (modeled timeline, per-task results,
	// counters, knob counts).
	Result *replay.Result
	// Recorded and Modeled are the two runs measured by the same code.
	Recorded, Modeled *compare.Side
	// Window is the recorded window the figures cover.
	Window metrics.Window
	// Notes say what the run rests on: the wake rule, then the
	// workload's assumptions, each as "assumed NAME: DETAIL".
	Notes []string
}

// Replay replays tl under the model desc (Policy.Resolve) and measures both
// runs.
func Replay(tl *timeline.Timeline, desc string, o Options) (*Run, error) {
	pr, err := Prepare(tl, desc, o)
	if err != nil {
		return nil, err
	}
	return pr.Run(o.Seed, o.Progress, o.Recorded)
}

// Prepared is a recording's workload made ready for a model: extracted,
// with the options' changes applied (autogroups, task changes, the CPUs
// modeled), the cost model calibrated and the engine's options set. Every
// seed's run reads it and none changes it, so one Prepared serves any
// number of runs, at once if need be.
type Prepared struct {
	tl      *timeline.Timeline
	desc    string
	o       Options
	cfg     policies.Config
	w       *replay.Workload
	topo    *topology.Topology // the topology modeled
	recTopo *topology.Topology // the recording's
	kept    []int              // model CPU i is the trace's CPU kept[i] (denseCPUs)
	ro      replay.Options
	win     metrics.Window
}

// Prepare extracts tl's workload for the model desc under o (everything but
// o's Seed, Progress and Recorded, which each run takes).
func Prepare(tl *timeline.Timeline, desc string, o Options) (*Prepared, error) {
	if tl == nil || tl.Len() == 0 {
		return nil, fmt.Errorf("whatif: empty timeline")
	}
	topo, win := recordingScope(tl, o)
	cfg, err := policies.Parse(desc)
	if err != nil {
		return nil, fmt.Errorf("policy %q: %w", desc, err)
	}
	// The events go once read, unless a timeline without per-CPU bounds
	// leaves presentCPUs to find the CPUs from them.
	drop := o.DropRecording && len(tl.CPUFirst) > 0
	w, err := replay.ExtractWith(tl, topo, replay.ExtractOptions{Affinity: o.Affinity, Speed: o.Speed, DropEvents: drop})
	if err != nil {
		return nil, err
	}
	if !cfg.Tunables.Autogroup() {
		noAutogroup(w)
	}
	if err := applyTaskChanges(w, topo.NCPU(), o.Tasks); err != nil {
		return nil, err
	}
	recTopo := topo
	var kept []int
	if o.CPUs != nil {
		if topo, _, err = restrictCPUs(w, topo, o.CPUs); err != nil {
			return nil, err
		}
	} else if keep, ok := presentCPUs(tl, w, topo); ok {
		if topo, kept, err = denseCPUs(w, topo, keep); err != nil {
			return nil, err
		}
	}
	cost, costNote := policies.CalibratedCost(w, topo)
	cfg.Cost = cost
	w.Assumptions = append(w.Assumptions, costNote)
	// Each run builds its own model (a model holds one run's state); one is
	// built here so that a policy the model refuses fails before any run.
	if _, err := policies.New(cfg); err != nil {
		return nil, fmt.Errorf("policy %q: %w", desc, err)
	}
	w.WakeRule = o.WakeRule
	if a, ok := wakeRuleAssumption(o.WakeRule); ok {
		w.Assumptions = append(w.Assumptions, a)
	}
	ro := replay.CalibratedOptions(w)
	if o.HZ > 0 {
		ro.HZ = o.HZ
	}
	if !o.NoOverrun && w.End > w.Start {
		ro.Overrun = w.End - w.Start
	}
	return &Prepared{tl: tl, desc: desc, o: o, cfg: cfg, w: w, topo: topo, recTopo: recTopo, kept: kept, ro: ro, win: win}, nil
}

// Verdicts judges the fidelity of a replay under each of seeds, against
// the recording measured once (rec, nil: measured by the first run), the
// runs as many at a time as there are CPUs for Go; a run's schedule is
// dropped once judged. replay's seed check uses it.
func (pr *Prepared) Verdicts(seeds []uint64, rec *compare.Side) ([]compare.SeedVerdict, error) {
	out := make([]compare.SeedVerdict, len(seeds))
	// The runs at once share what none of them changes.
	plan, err := replay.NewPlan(pr.w)
	if err != nil {
		return nil, err
	}
	err = inParallel(len(seeds), 0, func(i int) error {
		r, err := pr.run(seeds[i], nil, rec, true, plan)
		if err != nil {
			return fmt.Errorf("seed %d: %w", seeds[i], err)
		}
		out[i] = compare.SeedVerdict{Seed: seeds[i], Verdict: compare.Judge(compare.Compare(r.Recorded, r.Modeled, "recorded", "modeled"))}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Workload is the prepared workload (read it, do not change it).
func (pr *Prepared) Workload() *replay.Workload { return pr.w }

// Run replays the prepared workload under seed and measures both runs:
// the recording (rec, when not nil, is the recording measured already, to
// reuse) and the modeled run. progress, when set, is told how much of the
// recording's span the model has simulated.
func (pr *Prepared) Run(seed uint64, progress func(doneNs, totalNs int64), rec *compare.Side) (*Run, error) {
	return pr.run(seed, progress, rec, pr.o.DropSchedules, nil)
}

// MeasureRecording measures the recording tl under the options of every
// run, for Run and Verdicts to take. Measured before the workload is
// extracted (Prepare) and the events dropped (DropRecording), its
// analysis waits beside neither the workload nor a modeled schedule.
func MeasureRecording(tl *timeline.Timeline, o Options) (*compare.Side, error) {
	if tl == nil || tl.Len() == 0 {
		return nil, fmt.Errorf("whatif: empty timeline")
	}
	topo, win := recordingScope(tl, o)
	return compare.Measure(tl, compare.Options{Window: win, Topology: topo, Filter: o.Filter, Affinity: o.Affinity, NoWakeupSamples: o.NoWakeupSamples})
}

// DropRecording drops the recording's events (the caller reads them no
// more; the runs need the workload and a measured recording only) and
// gives their memory back to the system before the runs allocate; it
// does nothing when they are gone already (Prepare's extraction dropped
// them, or the recording was never loaded whole).
func (pr *Prepared) DropRecording() {
	if pr.tl.Summary() {
		return
	}
	pr.tl.DropEvents()
	debug.FreeOSMemory()
}

// recordingScope is the topology and window a recording is measured on.
func recordingScope(tl *timeline.Timeline, o Options) (*topology.Topology, metrics.Window) {
	topo := o.Topology
	if topo == nil {
		topo = tl.Topology
	}
	if topo == nil {
		topo = topology.Symmetric(max(tl.NCPU, 1))
	}
	win := o.Window
	if win == (metrics.Window{}) {
		win = metrics.DefaultWindow(tl)
	}
	return topo, win
}

// run is Run, dropping the schedule's events once measured when drop, on plan
// (nil: the run makes its own).
func (pr *Prepared) run(seed uint64, progress func(doneNs, totalNs int64), rec *compare.Side, drop bool, plan *replay.Plan) (*Run, error) {
	model, err := policies.New(pr.cfg)
	if err != nil {
		return nil, fmt.Errorf("policy %q: %w", pr.desc, err)
	}
	w, o, topo, win := pr.w, pr.o, pr.topo, pr.win
	ro := pr.ro
	ro.Seed, ro.Progress, ro.Plan = seed, progress, plan
	// A run measured and dropped keeps its events in a log, walked once,
	// in half the memory of a timeline; one renumbered to the trace's CPUs
	// needs the timeline.
	ro.Log = drop && pr.kept == nil
	res, err := replay.Simulate(w, topo, model, ro)
	if err != nil {
		return nil, err
	}
	if pr.kept != nil {
		// Back to the trace's CPU numbers, measured on its machine.
		if err := res.Timeline.RenumberCPUs(pr.kept, pr.recTopo.NCPU()); err != nil {
			return nil, err
		}
		res.Timeline.Topology = pr.recTopo
		topo = pr.recTopo
	}
	if rec == nil {
		if rec, err = MeasureRecording(pr.tl, pr.o); err != nil {
			return nil, err
		}
	}
	sim := res.Timeline
	simWin := metrics.Window{Start: max(win.Start, sim.ValidStart), End: min(win.End, sim.End)}
	overrun := sim.End > win.End
	scopes := []compare.Options{{Window: simWin, Topology: topo, Filter: o.Filter, DropEvents: drop && !overrun, NoWakeupSamples: o.NoWakeupSamples}}
	if overrun {
		// The run went on past the recording: completion takes all of it.
		// Of the whole run only its completion is read, unless it is the
		// figures'; the recording's window then reads nothing.
		scopes = append(scopes, compare.Options{Window: metrics.Window{Start: simWin.Start, End: sim.End}, Topology: topo, Filter: o.Filter, DropEvents: drop,
			NoWakeupSamples: o.NoWakeupSamples})
		unread := 1
		if o.WholeRun {
			unread = 0
		}
		scopes[unread].AccountOnly = true
	}
	var sides []*compare.Side
	if res.Events != nil {
		// One walk of the log for every scope.
		sides, err = compare.MeasureEvents(sim, res.Events, scopes...)
		res.Events = nil
	} else {
		// The last measure of the schedule may drop its events.
		sides = make([]*compare.Side, len(scopes))
		for i, sc := range scopes {
			if sides[i], err = compare.Measure(sim, sc); err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, err
	}
	mod := sides[0]
	// This run's assumptions: the workload's, then its own.
	asm := slices.Clip(w.Assumptions) // appended to, never w's
	if overrun {
		whole := sides[1]
		measured := "completion counts all of it, every other figure the recording's window"
		if o.WholeRun {
			mod, measured = whole, "every figure counts all of it, as a real run is measured over its whole length"
		} else {
			mod.TakeCompletion(whole)
		}
		asm = append(asm, replay.Assumption{Name: "overrun", Detail: fmt.Sprintf(
			"tasks that exit in the recording had not by its end: the modeled run went on %s past it; %s", dur(sim.End-win.End), measured)})
	}
	r := &Run{Policy: res.Policy, Workload: w, Options: ro, Result: res, Recorded: rec, Modeled: mod, Window: win}
	if r.Policy == "" {
		r.Policy = pr.desc
	}
	for _, a := range asm {
		note := "assumed " + a.Name + ": " + a.Detail
		if a.Tasks > 0 {
			note += fmt.Sprintf(" (%d tasks)", a.Tasks)
		}
		r.Notes = append(r.Notes, note)
	}
	return r, nil
}

func wakeRuleAssumption(rule replay.WakeRule) (replay.Assumption, bool) {
	switch rule {
	case replay.WakeAny:
		return replay.Assumption{Name: "wakers-any", Detail: "--wakers any: a task's sleep that a task wake ended ends at the first task wake issued to it, by any waker"}, true
	case replay.WakeOrdered:
		return replay.Assumption{Name: "wakers-ordered", Detail: "--wakers ordered: a waker that reaches a wake before its wakee has blocked waits for that block (at most 10 ms), as the recording ordered them"}, true
	case replay.WakeLateAny:
		return replay.Assumption{Name: "wakers-late-any", Detail: "--wakers late-any: a sleep ends at its recorded waker's wake, or, once it has lasted longer than in the recording, at the first task wake issued to the sleeper"}, true
	}
	return replay.Assumption{}, false
}

func dur(t timeline.Time) string {
	if t >= 1_000_000_000 {
		return fmt.Sprintf("%.2f s", float64(t)/1e9)
	}
	return fmt.Sprintf("%.1f ms", float64(t)/1e6)
}

// noAutogroup applies sched_autogroup_enabled=0 to the workload: its
// autogroups' tasks go to the root group. The note says how many moved,
// or that the workload had no autogroup to drop.
func noAutogroup(w *replay.Workload) {
	n := len(w.Groups)
	moved := w.DropAutogroups()
	detail := fmt.Sprintf("sched_autogroup_enabled=0: the %d tasks of %d autogroups scheduled in the root group", moved, n-len(w.Groups))
	if n == len(w.Groups) {
		detail = "sched_autogroup_enabled=0: the workload has no autogroup (no group table, or only cgroups), so nothing moves"
	}
	w.Assumptions = append(w.Assumptions, replay.Assumption{Name: replay.AssumeNoAutogroup, Detail: detail, Tasks: moved})
}
