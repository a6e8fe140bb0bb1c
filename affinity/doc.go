// Package affinity holds the one model of which CPUs each task may run on,
// over time, that the metrics and the replay share.
//
// A Map is built from, in rising order of authority:
//
//  1. the task's name: per-CPU kernel threads ("ksoftirqd/3", "kworker/3:1")
//     are bound to the CPU their name carries;
//  2. an inference from the trace, stated as such (Infer): a task that
//     waited behind another task several times while a CPU it never used
//     in that stretch sat idle is taken as pinned to the CPUs it used, one
//     stretch at a time, so that a mask released mid-trace is followed;
//  3. what a recorder saw (timeline.Timeline.Affinity, from schedlens
//     record);
//  4. an affinity file given by the user (ParseRules): per pid or comm,
//     optionally for a time range; later lines win.
//
// A task none of these covers is free to run on every CPU (Assumed).
package affinity
