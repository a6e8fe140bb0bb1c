package main

import (
	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/report"
)

func newIdleCmd() *cobra.Command {
	var f analysisFlags
	cmd := &cobra.Command{
		Use:   "idle [TRACE]",
		Short: "Idle-with-runnable windows: CPUs idle while a task that could use them waited",
		Long: `idle lists every window in which a CPU ran its idle task while a task allowed
on it waited on another, busy CPU's runqueue: start, length, idle CPU, the
waiting task and its CPU, their topology distance (SMT sibling, same LLC,
other LLC, other NUMA node) and capacities, and the affinity assumption the
window rests on. Totals by distance, by CPU and by task, and a histogram of
window lengths follow. --min-window sets the shortest window counted.`,
		Example: `  schedlens idle trace.txt.zst
  schedlens idle --topology smt2-4 --min-window 100us trace.txt
  schedlens idle --affinity masks.txt --format json trace.pftrace`,
		Args:         cobra.MaximumNArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			an, err := f.analyse(cmd, args, f.format == "html")
			if err != nil {
				return err
			}
			return report.Write(cmd.OutOrStdout(), an.in, report.IdleSection, f.format)
		},
	}
	f.register(cmd, false)
	return cmd
}
