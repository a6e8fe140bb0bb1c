// Package compare measures two runs of a workload with the same code and
// sets their figures side by side: the recorded trace against its modeled
// replay (schedlens replay), and the engine that two real traces and a
// baseline model against a changed one will share.
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
// It imports metrics, timeline, topology and report (for tables and the
// trace summary); nothing but cmd imports it.
package compare
