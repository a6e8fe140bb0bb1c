package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/export"
)

func init() { subcommands = append(subcommands, newBatchCmd) }

func newBatchCmd() *cobra.Command {
	var (
		out       string
		jobs      int
		lenient   bool
		maxEvents int64
	)
	cmd := &cobra.Command{
		Use:   "batch DIR|GLOB -o DIR",
		Short: "Export every trace under a folder (or matching a glob) into one Parquet dataset, in parallel",
		Long: `batch runs export over every trace under a folder (recursively; files that are
not traces, such as topology.txt, are left out) or every file a quoted glob
matches, --jobs at a time. A trace already exported into DIR with the same
content hash is skipped, so an interrupted batch resumes where it stopped; a
trace that fails is recorded in traces with its error and the others go on.
docs/fleet.md describes the dataset.`,
		Example: `  schedlens batch /srv/traces -o fleet/
  schedlens batch 'incidents/*/trace.dat' -o fleet/ --jobs 2`,
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("-o DIR is required")
			}
			traces, others, err := export.Find(args[0])
			if err != nil {
				return err
			}
			if len(traces) == 0 {
				return fmt.Errorf("%s: no trace found (%d other files)", args[0], len(others))
			}
			w := cmd.OutOrStdout()
			failed, skipped := 0, 0
			progress := func(done, total int, o export.Outcome) {
				switch {
				case o.Err != nil:
					failed++
					fmt.Fprintf(w, "[%d/%d] %s trace_id=%s: failed: %v\n", done, total, o.Path, o.ID, o.Err)
				case o.Skipped:
					skipped++
					fmt.Fprintf(w, "[%d/%d] %s trace_id=%s: already exported\n", done, total, o.Path, o.ID)
				default:
					fmt.Fprintf(w, "[%d/%d] %s trace_id=%s: %d events, %d bytes\n", done, total, o.Path, o.ID, o.Result.Events, o.Result.Bytes)
				}
			}
			_, err = export.Batch(traces, out, export.BatchOptions{Jobs: jobs, Progress: progress,
				Options: export.Options{Lenient: lenient, MaxEvents: maxEvents, Version: Version}})
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%d traces: %d exported, %d already there, %d failed (errors in %s/traces); %d other files left out\n",
				len(traces), len(traces)-failed-skipped, skipped, failed, out, len(others))
			if failed > 0 {
				return fmt.Errorf("%d of %d traces failed", failed, len(traces))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&out, "output", "o", "", "dataset folder (created if missing)")
	fl.IntVar(&jobs, "jobs", 0, "traces exported at once; 0: the CPU count")
	fl.BoolVar(&lenient, "lenient", false, "skip malformed records (counted in traces.skipped_records) instead of failing the trace")
	fl.Int64Var(&maxEvents, "max-events", 0, "fail a trace beyond this many events; 0: half the available memory; -1: no limit")
	return cmd
}
