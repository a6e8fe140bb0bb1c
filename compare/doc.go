// Package compare measures two runs of a workload with the same code and
// sets their figures side by side: the recorded trace against its modeled
// replay (schedlens replay), two sets of real traces (schedlens compare),
// and a baseline model against a changed one.
//
// Measure turns one timeline, window and topology into a Side: the metric
// set (run, runnable, wakeup latency, preemptions, migrations, context
// switches, idle-with-runnable, completion) for the whole window, per comm,
// per scheduling class and per task, computed by metrics.Account and
// metrics.Analyze. Compare pairs two Sides into cells (one metric in one
// scope) with their ratio, change and the CDF distance between the wakeup
// latency distributions. Judge gives the fidelity verdict of a replay, and
// WriteReplay renders the replay report as text, markdown or JSON.
//
// CompareRuns is the A/B of real traces (schedlens compare): one or more
// measured runs a side, each figure the mean over its side's runs, with
// significance from Welch's t-test (two or more runs a side) or a
// bootstrap over the wakeup latency samples (one run); WriteAB renders it
// as text, markdown, JSON or HTML (docs/compare.md).
//
// It imports metrics, timeline, topology, report (for tables, the trace
// summary and the HTML page) and gonum's stat packages; nothing but cmd
// imports it.
package compare
