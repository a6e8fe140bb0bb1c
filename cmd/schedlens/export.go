package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/export"
)

func init() { subcommands = append(subcommands, newExportCmd) }

func newExportCmd() *cobra.Command {
	var (
		out       string
		lenient   bool
		maxEvents int64
	)
	cmd := &cobra.Command{
		Use:   "export TRACE... -o DIR",
		Short: "Write traces' analysis as a Parquet dataset (tasks, cpus, wakeups, runs, ...)",
		Long: `export analyses each trace over its valid window (as tasks, cpus, latency, idle
and misplaced do with no options) and writes the figures as a Parquet dataset
under DIR: one folder per table (traces, tasks, cpus, wakeups, runs,
idle_windows, misplaced), one partition per trace named by its content hash
(TABLE/trace_id=ID/part-0.parquet), zstd-compressed. DuckDB, Spark and other
Parquet readers read it without schedlens: see docs/fleet.md. A trace that
cannot be read is recorded in traces with its error and the others go on.`,
		Example: `  schedlens export -o fleet/ host1/trace.txt.zst host2/perf.data
  duckdb -c "SELECT comm, sum(run_ns)
      FROM read_parquet('fleet/tasks/*/*.parquet') GROUP BY comm"`,
		Args:         cobra.MinimumNArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("-o DIR is required")
			}
			opts := export.Options{Lenient: lenient, MaxEvents: maxEvents, Version: Version}
			failed := 0
			for _, p := range args {
				res, err := export.Export(p, out, opts)
				if err != nil {
					failed++
					sha, _ := export.HashFile(p)
					id, werr := export.WriteFailure(p, sha, out, err, opts)
					if werr != nil {
						return werr
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "%s: %v (recorded in traces, trace_id=%s)\n", p, err, id)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s trace_id=%s: %d events, %d tasks, %d wakeups, %d runs, %d bytes\n", p, res.ID,
					res.Events, res.Rows[export.TableTasks], res.Rows[export.TableWakeups], res.Rows[export.TableRuns], res.Bytes)
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d traces failed (their errors are in %s/traces)", failed, len(args), out)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&out, "output", "o", "", "dataset folder (created if missing; a trace's partitions are replaced)")
	fl.BoolVar(&lenient, "lenient", false, "skip malformed records (counted in traces.skipped_records) instead of failing the trace")
	fl.Int64Var(&maxEvents, "max-events", 0, "fail a trace beyond this many events; 0: half the available memory; -1: no limit")
	return cmd
}
