package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/policies"
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
	"github.com/schedlens/schedlens/whatif"
)

// modelFlags are the flags replay and whatif share: what the recording
// machine imposed (topology, affinity, CPU speed), the kernel version, the
// tick rate and the wake rule.
type modelFlags struct {
	aff      affinityFlags
	kernel   string
	hz       int
	topoFlag string
	wakers   string
	cpuSpeed string
	baseline []string // --baseline-change
}

// register adds the shared flags; kernelHelp says how the command uses the
// version.
func (m *modelFlags) register(cmd *cobra.Command, kernelHelp string) {
	m.aff.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&m.kernel, "kernel", policies.DefaultKernel(), kernelHelp+"; by default the newest modeled version at or below the trace's kernel release when the trace carries it (perf.data header, Perfetto system info, topology capture, meta.txt next to the trace)")
	fl.IntVar(&m.hz, "hz", 0, "tick rate (CONFIG_HZ) of the model; 0: from the recording (the runs its tick ended; HZ 250 unless they show a slower tick)")
	fl.StringVar(&m.topoFlag, "topology", "", "CPU topology: a file (topology.txt or JSON) or a preset name")
	fl.StringVar(&m.cpuSpeed, "cpu-speed", "auto", `how fast each CPU ran the recorded work: "auto" (calibrated from the trace where it shows the same work on CPUs of different capacity, else capacity), "equal" (every CPU at 1024: an emulated guest), "capacity", or a file of "CPULIST SPEED" lines`)
	fl.StringArrayVar(&m.baseline, "baseline-change", nil, "what the recording's kernel ran beyond its version's defaults (repeatable, the forms of whatif's --change but cpus=): -patch for a merged seed patch its build reverted, +patch for one it carried, features and tunables the capture set; by default read from meta.txt next to the trace (its sched_patches:, sched_model_features: and sched_knobs: lines); \"none\" for the version's defaults; a full --policy ignores them")
	fl.StringVar(&m.wakers, "wakers", "recorded", `what ends a sleep a task wake ended: "recorded" (the wake the recording shows, when its waker reaches that point of its work) "any" (the first task wake issued to the sleeper, by any waker: readers of a stream many writers feed), "late-any" (the recorded one, or any once the sleep outlasts the recorded one) or "ordered"`)
}

// modelInput is a loaded trace with everything a modeled run needs.
type modelInput struct {
	ld          *ingest.Loaded
	tl          *timeline.Timeline
	win         metrics.Window
	topo        *topology.Topology
	aff         *affinity.Map
	desc        string   // the model's full description
	kernelNotes []string // how the version was chosen
	opts        whatif.Options
}

// load checks the flags (before the trace is read), loads the trace and
// resolves the model: pol gives the description and patches; its kernel
// and release are filled here.
func (m *modelFlags) load(cmd *cobra.Command, f *traceFlags, path string, pol whatif.Policy, formats ...string) (*modelInput, error) {
	if m.hz < 0 || m.hz > replay.MaxHZ {
		return nil, usagef("--hz %d: want 0 (the tick rate of the recording) or a tick rate from 1 to %d (CONFIG_HZ is 100, 250, 300 or 1000)", m.hz, replay.MaxHZ)
	}
	rule, err := replay.ParseWakeRule(m.wakers)
	if err != nil {
		return nil, usagef("--wakers: %v", err)
	}
	speed, err := replay.ParseSpeed(m.cpuSpeed)
	if err != nil {
		return nil, usagef("--cpu-speed: %v", err)
	}
	// The version: --policy's head or --kernel when given (checked before
	// the trace loads), else the trace's kernel release.
	if cmd.Flags().Changed("kernel") {
		pol.Kernel = m.kernel
	}
	full := pol.Description != "" && pol.Description != "mainline"
	userChanges, err := pol.Changes()
	if err != nil {
		return nil, usagef("%v", err)
	}
	switch {
	case full:
		if _, _, err := pol.Resolve(); err != nil {
			return nil, usagef("%v", err)
		}
	case pol.Kernel != "":
		// The patches are checked against the kernel recorded, once known.
		if _, _, err := (whatif.Policy{Kernel: pol.Kernel}).Resolve(); err != nil {
			return nil, usagef("%v", err)
		}
	}
	if err := checkInputs(m.topoFlag, &m.aff); err != nil {
		return nil, err
	}
	ld, win, err := f.prepare(cmd, path, formats...)
	if err != nil {
		return nil, err
	}
	in := &modelInput{ld: ld, tl: ld.Timeline, win: win}
	if in.topo, err = topology.Resolve(ld.Meta.Topology, path, m.topoFlag, in.tl.NCPU); err != nil {
		return nil, err
	}
	if pol.Release, err = traceRelease(ld, in.topo, path); err != nil {
		return nil, err
	}
	if full {
		if in.desc, in.kernelNotes, err = pol.Resolve(); err != nil {
			return nil, usagef("%v", err)
		}
	} else {
		// The kernel recorded: the version's model with what the
		// recording's kernel ran beyond it, then the command's patches and
		// features.
		version, notes, err := whatif.Policy{Kernel: pol.Kernel, Release: pol.Release}.Resolve()
		if err != nil {
			return nil, usagef("%v", err)
		}
		base, recNotes, err := m.recordedBaseline(cmd, version, path, ld.Meta.Sysctls)
		if err != nil {
			return nil, err
		}
		in.desc, in.kernelNotes = base, append(notes, recNotes...)
		if len(userChanges) > 0 {
			if in.desc, _, err = whatif.Apply(base, userChanges); err != nil {
				return nil, usagef("%v", err)
			}
		}
	}
	if in.aff, err = m.aff.build(in.tl, nil); err != nil {
		return nil, err
	}
	in.opts = whatif.Options{Topology: in.topo, Window: win, Filter: f.filter(), Affinity: in.aff, Speed: speed, WakeRule: rule, HZ: m.hz}
	return in, nil
}

// recordedBaseline applies to the version's model what the recording's
// kernel ran beyond it: --baseline-change, else the knobs meta.txt next to
// the trace records, with the sysctls the trace itself states (schedlens
// record reads them) for those meta.txt does not name.
func (m *modelFlags) recordedBaseline(cmd *cobra.Command, version, trace string, traceSysctls []string) (string, []string, error) {
	var changes []whatif.Change
	var notes []string
	source := "--baseline-change"
	if cmd.Flags().Changed("baseline-change") {
		for _, s := range m.baseline {
			if s == "none" {
				continue
			}
			c, err := whatif.ParseChange(s)
			if err != nil {
				return "", nil, usagef("--baseline-change: %v", err)
			}
			changes = append(changes, c)
		}
	} else {
		var err error
		if changes, source, notes, err = whatif.RecordedKnobs(trace, traceSysctls); err != nil {
			return "", nil, err
		}
	}
	if len(changes) == 0 {
		return version, notes, nil
	}
	base, err := whatif.Baseline(version, changes)
	if err != nil {
		return "", nil, usagef("%v", err)
	}
	var texts []string
	for _, c := range changes {
		texts = append(texts, c.Text)
	}
	if base != version {
		notes = append(notes, fmt.Sprintf("baseline: %s with %s, as the recording's kernel ran (%s)", version, strings.Join(texts, ", "), source))
	}
	return base, notes, nil
}
