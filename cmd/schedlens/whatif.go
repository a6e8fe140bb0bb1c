package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/policies"
	"github.com/schedlens/schedlens/whatif"
)

func init() { subcommands = append(subcommands, newWhatifCmd) }

func newWhatifCmd() *cobra.Command {
	var (
		f       traceFlags
		m       modelFlags
		changes []string
		runs    int
		seeds   []uint
		top     int
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
debugfs tunable (base_slice_ns=N, migration_cost_ns=N, nr_migrate=N), the
sysctl sched_autogroup_enabled=0|1 (autogroups' tasks in the root group),
cpus=LIST (the machine restricted to those CPUs, as if the others were
offline; a task allowed only on removed CPUs is moved to the kept ones), or
a change of every task of one comm for its whole life: nice:COMM=N (as nice
would start it) or affinity:COMM=CPULIST (as taskset would).
The baseline models the kernel that was recorded: when meta.txt next to the
trace (or, for the autogroup sysctl, the trace itself) says the capture ran
with sched features, tunables or sysctls set, or on a build with a seed
patch reverted or added, the baseline has them too (--baseline-change
overrides).
Method and the check against real A/B captures: docs/whatif.md; the seed
patches on real kernels: docs/seeds.md.`,
		Example: `  schedlens whatif --change NO_RUN_TO_PARITY trace.txt.zst
  schedlens whatif --change base_slice_ns=3000000 --runs 16 trace.txt.zst
  schedlens whatif --change +resched-ineligible --change NO_PLACE_LAG \
      --format json trace.txt
  schedlens whatif --change cpus=0 trace.txt.zst
  schedlens whatif --change affinity:stress-ng=0 --change nice:cyclictest=-10 \
      trace.pftrace`,
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
			in, err := m.load(cmd, &f, args[0], whatif.Policy{}, whatif.Formats...)
			if err != nil {
				return err
			}
			// A change the baseline already has is the user's to fix.
			if _, _, err := whatif.Apply(in.desc, parsed); err != nil {
				return usagef("--change: %v", err)
			}
			bar, prog := f.simulationProgress(cmd)
			opts := in.opts
			opts.Progress, opts.DropRecording = prog, true
			p, err := whatif.Predict(in.tl, in.desc, parsed, whatif.PredictOptions{Seeds: seedList, Options: opts})
			bar.Done()
			if err != nil {
				return err
			}
			p.Notes = append(in.kernelNotes, p.Notes...)
			rep := &whatif.Report{Prediction: p, Trace: traceSummary(in.ld), Window: strings.Replace(f.windowText(), "of each trace", "of the trace", 1),
				Filter: f.filterText(), Top: top, Command: commandLine(cmd, args), Version: Version, Warnings: f.warnings}
			return whatif.Write(cmd.OutOrStdout(), rep, f.format)
		},
	}
	f.register(cmd, strings.Join(whatif.Formats, "|"))
	m.register(cmd, "kernel version of the baseline model (6.6, 6.12, 6.18)")
	fl := cmd.Flags()
	fl.StringArrayVar(&changes, "change", nil, "a change to predict (repeatable): +patch, -patch ("+strings.Join(policies.PatchNames(), ", ")+
		"), FEATURE or NO_FEATURE (any sched feature the model implements, e.g. NO_RUN_TO_PARITY), "+
		strings.Join(policies.TunableNames(), "=N, ")+"=N, or cpus=LIST")
	fl.IntVar(&runs, "runs", whatif.DefaultRuns, "model seeds per side (seeds 1..N); at least 2")
	fl.UintSliceVar(&seeds, "seeds", nil, "the model seeds, instead of 1..--runs (the same seeds give the same report)")
	fl.IntVar(&top, "top", 5, "comms with their own table")
	return cmd
}
