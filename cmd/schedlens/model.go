package main

import (
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
	if pol.Kernel != "" || (pol.Description != "" && pol.Description != "mainline") {
		if _, _, err := pol.Resolve(); err != nil {
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
	if in.desc, in.kernelNotes, err = pol.Resolve(); err != nil {
		return nil, usagef("%v", err)
	}
	if in.aff, err = m.aff.build(in.tl); err != nil {
		return nil, err
	}
	in.opts = whatif.Options{Topology: in.topo, Window: win, Filter: f.filter(), Affinity: in.aff, Speed: speed, WakeRule: rule, HZ: m.hz}
	return in, nil
}
