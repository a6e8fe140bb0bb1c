// Package report renders the results of metrics.Analyze (and the per-task
// accounting) for people and scripts: plain text that fits in 80 columns
// and reads well quoted in a mail reply, markdown for bug trackers, JSON
// with stable keys and nanosecond units, and HTML with two SVG plots. Every
// table is followed by one-line definitions of its columns, and every text
// report ends with the exact command line and the schedlens version.
//
// Write renders the whole report or one section (latency, idle, misplaced)
// from an Input the command assembles; WriteSamples writes every latency
// sample as CSV or JSON lines. docs/report.md shows the output.
//
// It imports metrics, timeline and topology; it must not import ingest,
// replay or cmd, and nothing imports it but cmd.
package report
