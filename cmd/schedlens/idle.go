package main

import (
	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/report"
)

func newIdleCmd() *cobra.Command {
	var f analysisFlags
	cmd := &cobra.Command{
		Use:   "idle [TRACE]",
		Short: "Idle-with-runnable windows: CPUs idle while a task that could use them waited (elsewhere or on their own queue)",
		Long: `idle lists every window in which a CPU ran its idle task while a task allowed
on it waited on another, busy CPU's runqueue: start, length, idle CPU, the
waiting task and its CPU, their topology distance (SMT sibling, same LLC,
other LLC, other NUMA node) and capacities, and the affinity assumption the
window rests on. Totals by distance, by CPU and by task, and a histogram of
window lengths follow. --min-window sets the shortest window counted.

A second measure follows: idle with its own queue non-empty, a CPU idle
while a task queued on it (woken onto it, migrated or preempted there) has
not switched in yet. That is an idle CPU's wake-up path (microseconds), or
under core scheduling a CPU forced idle beside a sibling running a task of
another cookie (cookies from core_sched_cookie trace markers). Its total,
distribution and per-CPU figures cover every window; windows from
--own-queue-list (default 1ms) are listed with the queued task, the SMT
sibling's task and how long the whole core idled.`,
		Example: `  schedlens idle trace.txt.zst
  schedlens idle --topology smt2-4 --min-window 100us trace.txt
  schedlens idle --affinity masks.txt --format json trace.pftrace
  schedlens idle --own-queue-list 100ms trace.txt.zst`,
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
