package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/policies"
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/topology"
	"github.com/schedlens/schedlens/whatif"
)

func init() { subcommands = append(subcommands, newWhatifCmd) }

func newWhatifCmd() *cobra.Command {
	var (
		f        traceFlags
		aff      affinityFlags
		changes  []string
		runs     int
		seeds    []uint
		kernel   string
		hz       int
		topoFlag string
		top      int
		wakers   string
		cpuSpeed string
	)
	cmd := &cobra.Command{
		Use:   "whatif TRACE --change CHANGE [--change CHANGE ...]",
		Short: "Predict what a scheduler change would do to the recorded workload, with a 95% interval and a verdict per metric",
		Long: `whatif replays the recording under the recorded kernel's model (the
baseline: the version of the trace's kernel release, or --kernel) and under
the baseline with the changes, once per seed on each side, and prints per
metric (overall, per class, for the top comms) the two means, the change in %
with its 95% interval across the seeds, and a verdict: better, worse, no
detectable change, or inconclusive when the change does not clear the
baseline's own error on that metric (its figure against the recording).
A change is a seed patch (+name, -name), a sched feature (NAME, NO_NAME), a
debugfs tunable (base_slice_ns=N, migration_cost_ns=N, nr_migrate=N) or
cpus=LIST (the machine restricted to those CPUs, as if the others were
offline; a task allowed only on removed CPUs is moved to the kept ones).
Method and the check against real A/B captures: docs/whatif.md.`,
		Example: `  schedlens whatif --change NO_RUN_TO_PARITY trace.txt.zst
  schedlens whatif --change base_slice_ns=3000000 --runs 16 trace.txt.zst
  schedlens whatif --change +resched-ineligible --change NO_PLACE_LAG --format json trace.txt
  schedlens whatif --change cpus=0 trace.txt.zst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(changes) == 0 {
				return usagef("give at least one --change")
			}
			var parsed []whatif.Change
			for _, s := range changes {
				c, err := whatif.ParseChange(s)
				if err != nil {
					return usagef("--change: %v", err)
				}
				parsed = append(parsed, c)
			}
			seedList := whatif.Seeds(runs)
			if cmd.Flags().Changed("seeds") {
				seedList = nil
				for _, s := range seeds {
					seedList = append(seedList, uint64(s))
				}
			}
			if len(seedList) < 2 {
				return usagef("--runs/--seeds: %d seeds; the interval across seeds needs at least 2", len(seedList))
			}
			rule, err := replay.ParseWakeRule(wakers)
			if err != nil {
				return usagef("--wakers: %v", err)
			}
			speed, err := replay.ParseSpeed(cpuSpeed)
			if err != nil {
				return usagef("--cpu-speed: %v", err)
			}
			pol := whatif.Policy{}
			if cmd.Flags().Changed("kernel") {
				pol.Kernel = kernel
				if _, _, err := pol.Resolve(); err != nil {
					return usagef("%v", err)
				}
			}
			if err := checkInputs(topoFlag, &aff); err != nil {
				return err
			}
			ld, win, err := f.prepare(cmd, args[0], whatif.Formats...)
			if err != nil {
				return err
			}
			tl := ld.Timeline
			topo, err := topology.Resolve(ld.Meta.Topology, args[0], topoFlag, tl.NCPU)
			if err != nil {
				return err
			}
			if pol.Release, err = traceRelease(ld, topo, args[0]); err != nil {
				return err
			}
			desc, kernelNotes, err := pol.Resolve()
			if err != nil {
				return usagef("%v", err)
			}
			am, err := aff.build(tl)
			if err != nil {
				return err
			}
			bar, prog := f.simulationProgress(cmd)
			p, err := whatif.Predict(tl, desc, parsed, whatif.PredictOptions{Seeds: seedList, Options: whatif.Options{
				Topology: topo, Window: win, Filter: f.filter(), Affinity: am, Speed: speed, WakeRule: rule, HZ: hz, Progress: prog}})
			bar.Done()
			if err != nil {
				return err
			}
			p.Notes = append(kernelNotes, p.Notes...)
			rep := &whatif.Report{Prediction: p, Trace: traceSummary(ld), Window: strings.Replace(f.windowText(), "of each trace", "of the trace", 1),
				Filter: f.filterText(), Top: top, Command: commandLine(cmd, args), Version: Version, Warnings: f.warnings}
			return whatif.Write(cmd.OutOrStdout(), rep, f.format)
		},
	}
	f.register(cmd, strings.Join(whatif.Formats, "|"))
	aff.register(cmd)
	fl := cmd.Flags()
	fl.StringArrayVar(&changes, "change", nil, "a change to predict (repeatable): +patch, -patch ("+strings.Join(policies.PatchNames(), ", ")+
		"), FEATURE or NO_FEATURE (any sched feature the model implements, e.g. NO_RUN_TO_PARITY), "+
		strings.Join(policies.TunableNames(), "=N, ")+"=N, or cpus=LIST")
	fl.IntVar(&runs, "runs", whatif.DefaultRuns, "model seeds per side (seeds 1..N); at least 2")
	fl.UintSliceVar(&seeds, "seeds", nil, "the model seeds, instead of 1..--runs (the same seeds give the same report)")
	fl.StringVar(&kernel, "kernel", policies.DefaultKernel(), "kernel version of the baseline model (6.6, 6.12, 6.18); by default the newest modeled version at or below the trace's kernel release when the trace carries it, as replay chooses")
	fl.IntVar(&hz, "hz", 0, "tick rate of the model; 0: from the recording, as replay")
	fl.StringVar(&topoFlag, "topology", "", "CPU topology: a file (topology.txt or JSON) or a preset name")
	fl.IntVar(&top, "top", 5, "comms with their own table")
	fl.StringVar(&cpuSpeed, "cpu-speed", "auto", `how fast each CPU ran the recorded work, as replay: "auto", "equal", "capacity", or a file`)
	fl.StringVar(&wakers, "wakers", "recorded", `what ends a sleep a task wake ended, as replay: "recorded", "any", "late-any" or "ordered"`)
	return cmd
}
