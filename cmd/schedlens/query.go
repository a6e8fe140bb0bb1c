//go:build duckdb

package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/query"
)

func init() { subcommands = append(subcommands, newQueryCmd) }

func newQueryCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "query DATASET SQL",
		Short: "Run SQL over a dataset of export or batch with embedded DuckDB",
		Long: `query opens the dataset that export or batch wrote to DATASET in an in-memory
DuckDB, with one view per table named after it (tasks, cpus, wakeups, runs,
idle_windows, misplaced, traces; trace_id from the partition folders), and
prints the result of one SQL statement. Only in a binary built with
-tags duckdb (README); example queries: docs/fleet.md.`,
		Example: `  schedlens query fleet/ "SELECT comm, sum(run_ns) / 1e6 AS run_ms
      FROM tasks GROUP BY comm ORDER BY run_ms DESC LIMIT 10"
  schedlens query --format csv fleet/ "SELECT * FROM traces"`,
		Args:         cobra.ExactArgs(2),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			ok := false
			for _, f := range query.Formats {
				ok = ok || f == format
			}
			if !ok {
				return usagef("--format %q: want one of %s", format, strings.Join(query.Formats, ", "))
			}
			db, err := query.Open(args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			res, err := db.Query(cmd.Context(), args[1])
			if err != nil {
				return err
			}
			h := query.Header{SchemaVersion: 1, Command: commandLine(cmd, args), Version: Version, Dataset: args[0], SQL: args[1]}
			return query.Write(cmd.OutOrStdout(), h, res.Columns, res.Rows, format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: "+strings.Join(query.Formats, "|"))
	return cmd
}
