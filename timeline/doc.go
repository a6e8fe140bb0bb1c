// Package timeline is the one model of a scheduler trace that both ingest and
// replay produce and that every metric reads.
//
// A Builder takes events in any interleaving of per-CPU streams (each CPU's
// events in its own order), merges them into one history ordered by time with
// causal tie-breaks (waking < migrate < wakeup < switch), resolves task
// instances (a pid plus a lifetime: pids are reused), and finds the valid
// window (from the first event when the reader proved every CPU was recorded
// from the start, see Coverage; else from the point where every CPU's buffer
// has data) and the per-CPU gaps left by lost events and clipped buffers.
// The result is a columnar Timeline of about 35 bytes per event. Task
// instances are resolved as the events arrive while they arrive in time
// order, else in Finish.
//
// Walk runs the per-task state machine over a Timeline and hands out closed
// Spans: running, runnable after a wakeup, runnable after a preemption,
// sleeping, blocked, stopped, and unknown. Intervals that a gap, a clipped
// buffer or an inconsistency (a switch whose prev is not the task the trace
// last put on that CPU) makes uncertain are handed out as Unknown, never
// charged to a task.
//
// It imports only topology; ingest, metrics and replay import it.
package timeline
