// Package replay re-runs a workload under a modeled scheduler and emits the
// schedule it produces as a timeline.Timeline, so that every metric and
// report reads a replayed run exactly as it reads a recorded one.
//
// It holds three things:
//
//   - Workload: per task instance, a chain of CPU-demand segments separated
//     by blocking, each wakeup tied to its cause (another task at a point in
//     its own work, a timer, an interrupt, or an outside event at a fixed
//     time), and the task group it belongs to (Workload.Groups: cgroups and
//     autogroups one level below the root). Work is measured in nanoseconds
//     of a capacity-1024 CPU, so a segment recorded on a little CPU replays
//     faster on a big one. What a trace cannot tell is recorded as a named
//     Assumption, never invented silently. Workloads come from Extract (a
//     recorded Timeline), from the text spec format (ParseSpec, for
//     hand-written scenarios) or from JSON.
//   - The engine: a deterministic discrete-event simulation (same workload,
//     topology, policy and seed give the same events) of per-CPU run
//     queues. It moves time, consumes work, fires wakeups, delivers IPIs,
//     runs the tick and records every sched_switch, sched_waking,
//     sched_wakeup(_new), sched_migrate_task, fork and exit through
//     timeline.Builder.
//   - The Policy interface: every scheduling decision (where a task wakes,
//     which task runs, when to preempt, what to balance) is delegated to a
//     Policy. Package policies holds the mainline Linux model and the
//     patch knobs; this package holds no scheduler model of its own.
//
// Entry points: Run and Simulate (the engine), ParseSpec (scenario files),
// Extract (workload from a recorded timeline). docs/replay.md describes the
// model, its assumptions and the command line.
//
// It imports timeline and topology only; policies imports it, never the
// reverse.
package replay
