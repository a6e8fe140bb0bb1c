// Package metrics measures a timeline: per-task and per-CPU accounting,
// wakeup latency, idle-with-runnable windows and misplaced tasks. Every
// metric is one pass over a timeline.Timeline (usually one Walk), so a
// recorded trace and a replayed run are measured by the same code.
//
// Definitions are in docs/metrics.md. It imports timeline and topology only.
package metrics
