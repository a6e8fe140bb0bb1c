// Package query runs SQL over a dataset that `schedlens export` or `batch`
// wrote (docs/fleet.md) with an embedded DuckDB: one view per table of the
// dataset, named after it (tasks, cpus, wakeups, runs, idle_windows,
// misplaced, traces), reading every trace's Parquet partition with
// trace_id from the folder names.
//
// DuckDB is a C++ library linked through cgo; its static library makes a
// binary about 95 MB larger and a first build about 45 s longer on a 2-core
// machine. So the package builds only with the build tag duckdb (`go build
// -tags duckdb ./cmd/schedlens`), and `schedlens query` exists only in such
// a binary; the default binary reads and writes the dataset without it.
package query
