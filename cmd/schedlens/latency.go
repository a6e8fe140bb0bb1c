package main

import (
	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/report"
)

func newLatencyCmd() *cobra.Command {
	var f analysisFlags
	cmd := &cobra.Command{
		Use:   "latency [TRACE]",
		Short: "Wakeup latency and preemption wait in detail",
		Long: `latency prints the wakeup latency (sched_waking to switch-in) and preemption
wait (R/R+ switch-out to switch-in) distributions: overall, per priority
class, per CPU, per comm and per task, with placement and queue delay, log2
histograms, censored samples and wakeups of running or queued tasks. With
--samples FILE it also writes every sample as CSV or JSON lines.`,
		Example: `  schedlens latency trace.txt.zst
  schedlens latency --comm cyclictest --format json trace.txt.gz
  schedlens latency --samples waits.jsonl perf-script.txt`,
		Args:         cobra.MaximumNArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			an, err := f.analyse(cmd, args, f.format == "html")
			if err != nil {
				return err
			}
			return report.Write(cmd.OutOrStdout(), an.in, report.LatencySection, f.format)
		},
	}
	f.register(cmd, true)
	return cmd
}
