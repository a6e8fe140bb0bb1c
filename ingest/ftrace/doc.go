// Package ftrace reads the text the kernel's ftrace ring buffer prints, in
// its three common shapes: the tracefs `trace` file (a header, then one line
// per record), a `trace_pipe` stream (no header; `CPU:N [LOST M EVENTS]`
// lines where a slow reader lost records), and the text `trace-cmd report`
// prints from a trace.dat file. One Reader handles all three; it tells them
// apart by their headers and layouts and says which it saw in Meta.Format
// ("ftrace", "trace_pipe", "trace-cmd").
//
// It imports timeline and ingest/parse only; it must not import metrics,
// replay, report or the other format packages.
//
// # Record layout
//
// Every record line has the kernel's context columns (trace_print_context in
// kernel/trace/trace_output.c), then the event name and the event's own text:
//
//	            bash-13113   (  13113) [000]    575.448244: sched_waking: comm=rcu_preempt pid=15 prio=120 target_cpu=000
//	         python3-12910   [000] d..2.   571.524370: sched_switch: prev_comm=python3 prev_pid=12910 ...
//	capture13113:             bash-13113 [000]   575.448257: sched_wakeup:         rcu_preempt:15 [120] CPU:000
//
// The columns, left to right:
//   - An optional trace-cmd instance prefix ("capture13113: ").
//   - TASK-PID: the comm, right-aligned in 16 columns, a dash, the pid. Comms
//     may hold spaces, dashes and colons; the pid is the digits after the last
//     dash before the CPU column. "<...>" means the comm was not recorded
//     (NoComm); "<idle>" is kept as printed.
//   - "(  tgid)" or "(-------)" when the record-tgid option was on.
//   - "[CPU]".
//   - The irq-info flags ("d..2.", 4 characters on old kernels) when that
//     option was on; the third character gives Event.Ctx ('h'/'H' hardirq,
//     's' softirq, 'z'/'Z' NMI, '.' task).
//   - The timestamp: seconds with any number of fraction digits up to 9, or a
//     bare integer for counter clocks (x86-tsc, counter), taken as is.
//   - "event_name: ", padded to 20 columns by trace-cmd, then the fields.
//
// Fields follow the kernel's TP_printk key=value layout, except where
// trace-cmd's sched plugin (libtraceevent plugins/plugin_sched_switch.c)
// prints its own:
//
//	sched_switch:  bash:13113 [120] R ==> rcu_preempt:15 [120]
//	sched_wakeup:  python3:7734 [120] CPU:000    (older: [120] success=1 CPU:000)
//
// The plugin prints prev_state with the letters "SDTtZXxW" and R for none,
// so the kernel's I shows as W, Z as X and R+ as R; the Reader parses the
// letters as printed and does not translate them back. Markers are
// "tracing_mark_write: text" in the kernel's text and
// "print: tracing_mark_write: text" in trace-cmd's.
//
// Non-record lines: "# tracer: nop" (Format "ftrace"), "# entries-in-buffer/
// entries-written: A/B   #P:N" (Meta.EntriesInBuffer, EntriesWritten,
// NCPU; A == B with no lost-event line makes Meta.Coverage complete, A < B
// lost, see coverage.go), "##### CPU N buffer started ####" (a KindBufferStart for CPU N),
// "CPU:N [LOST M EVENTS]" (kernel) and "CPU:N [M EVENTS DROPPED]" or
// "CPU:N [EVENTS DROPPED]" (trace-cmd report, tracecmd/trace-read.c) (a
// KindLost), "cpus=N" and "version = N" (trace-cmd; Format "trace-cmd",
// NCPU). trace-cmd's "CPU:N [SUBBUFFER START]" (--buffer-breaks) is skipped:
// it marks a page boundary, not a gap. Other "#" lines and blank lines are
// skipped.
//
// # Events
//
// The Reader emits sched_switch, sched_waking, sched_wakeup,
// sched_wakeup_new, sched_migrate_task, sched_process_fork,
// sched_process_exec, sched_process_exit, sched_process_free, task_newtask,
// task_rename, cpu_idle and markers, with the fields the timeline.Event
// contract gives each kind; other events are counted in Meta.Unknown by name.
// Lost and buffer-start records are held back and emitted just before the
// next record of their CPU, with that record's time (see timeline.KindLost);
// those still pending at the end are emitted then, at their CPU's last
// record time. Uninterpreted records count as their CPU's records for this
// and for the time order: a timestamp lower than the previous record's on
// the same CPU is an error (parse.ErrBackwards).
//
// A malformed line is a *parse.ParseError ("trace.txt:12: sched_switch:
// field prev_state: want ..., got "Q"") wrapping parse.ErrTruncated,
// ErrBadField or ErrBackwards; a last line without its newline is
// truncated. With parse.Options.Lenient the line is skipped and counted in
// Meta.Skipped instead.
//
// # Not supported
//
// trace-cmd report -l (latency layout, CPU without brackets), tracers other
// than nop (function tracer lines have no "event:" name), and marker texts
// with embedded newlines (the continuation line is not a record).
package ftrace
