package main

import (
	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/report"
)

func newMisplacedCmd() *cobra.Command {
	var f analysisFlags
	cmd := &cobra.Command{
		Use:   "misplaced [TRACE]",
		Short: "Misplaced tasks: waiting beside an idle CPU, misfits, SMT contention",
		Long: `misplaced prints, per task and per CPU, the time and count of (a) waiting on a
busy CPU while a CPU the task may use was idle, (b) running as a misfit: a
PELT-style utilization estimate above the fit margin of a small CPU while a
bigger CPU was idle or ran a task that would fit, and (c) running beside a
busy SMT sibling while a whole core was idle. (b) needs a topology with
different capacities and (c) one with SMT siblings (--topology).`,
		Example: `  schedlens misplaced --topology juno-r2 trace.txt
  schedlens misplaced fixtures/real/qemu-smt8-hackbench/trace.txt.zst
  schedlens misplaced --format json --pid 4242 trace.pftrace`,
		Args:         cobra.MaximumNArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			an, err := f.analyse(cmd, args, f.format == "html")
			if err != nil {
				return err
			}
			return report.Write(cmd.OutOrStdout(), an.in, report.MisplacedSection, f.format)
		},
	}
	f.register(cmd, false)
	return cmd
}
