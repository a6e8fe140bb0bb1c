// Package perf reads the text `perf script` prints for a capture of
// scheduler tracepoints (`perf sched record`, `perf record -e sched:...`):
// one line per sample, in time order. It hands the samples out as
// timeline.Events through a parse.Reader; Meta.Format is "perf-script".
// perf.data itself is read by ingest/perfdata.
//
// It imports timeline and ingest/parse only; it must not import metrics,
// replay, report, ingest or the other format packages.
//
// # Sample line layout
//
// perf script prints a sample as the selected header fields, the event name
// and the tracepoint's own text (perf_sample__fprintf_start and
// process_event in tools/perf/builtin-script.c):
//
//	            perf 13341 [000]   590.907234:       sched:sched_waking: comm=migration/0 pid=18 prio=0 target_cpu=000
//	            perf 13341/13341 [000]   590.907234:       sched:sched_waking: comm=migration/0 ...
//	     renamed thr  7457 [001]   642.949567:       sched:sched_switch: prev_comm=renamed thr prev_pid=7457 ...
//	            perf  7452 [000] K       642.410455:          1       sched:sched_waking: ...
//	    perf  7452/7452    0   642.410455:       sched:sched_waking: ...
//	       hackbench  7700 [001]   663.259462: PERF_RECORD_LOST lost 95
//	13341 [000]   590.907234:       sched:sched_waking: comm=migration/0 ...   (-F tid,cpu,time,event,trace)
//
// The header fields, in the order perf prints them:
//
//   - comm ("%16s", so right-aligned in 16 columns; it may hold spaces). With
//     -L (latency layout) it is cut to 8 columns ("%8.8s") and the Reader
//     says so in Meta.Warnings. perf prints ":TID" (":-1" when even the tid
//     is unknown) for a thread it has no comm for; such placeholders are read
//     as NoComm.
//   - tid ("%5d", or "%7d" since perf 6.5), or pid/tid ("%5d/%-5d") when both
//     the pid and tid fields are selected: the pid goes to Event.TGID, the tid
//     is the task running on the CPU. A lone number is taken as the tid
//     (perf's default); with -F pid alone it is the pid and the Reader
//     cannot tell.
//   - "[CPU]" ("[%03d]"), or a bare "%3d" with -L. The CPU column is
//     required: a line without it is a ParseError.
//   - misc ("K", "U", ... padded to 6 columns) with -F +misc, skipped.
//   - the time of day ("2026-12-02 16:25:46.123456") with -F +tod, skipped.
//   - the timestamp and a colon: seconds with 6 fraction digits, 9 with --ns,
//     or a bare integer; any number of fraction digits up to 9 is accepted.
//   - the period ("%10d") with -F +period, skipped.
//   - the event name, right-aligned to the longest name in the capture, and
//     a colon: "sched:sched_switch:". The system prefix is optional when
//     reading; Meta.Unknown counts events by the name without it.
//
// Trailing fields perf prints after the tracepoint text (ip, sym, dso) are
// ignored after the last field the Reader reads. Lines starting with a tab
// (callchains, branch stacks) and blank lines are skipped.
//
// Non-sample lines: "# " lines are the --header block; "# os release : X"
// sets Meta.Kernel and "# nrcpus avail : N" (else "# nrcpus online : N")
// sets Meta.NCPU; "write_backward = 1" in an "# event :" line (perf record
// --overwrite) makes Meta.Coverage lost, as a LOST record does; otherwise it
// is unknown (see coverage.go: perf starts the CPUs' recording in turn). Without that header perf gives no CPU count, so Meta.NCPU
// is the highest CPU seen plus one, with a Meta.Warnings note. With
// --show-lost-events perf prints "PERF_RECORD_LOST lost M" on the CPU whose
// ring buffer lost M records (perf_event__fprintf_lost in
// tools/perf/util/event.c); it becomes a KindLost, held back and emitted
// just before the next event of that CPU (see timeline.KindLost). Other
// PERF_RECORD_* lines (--show-task-events, --show-mmap-events, ...) are
// counted in Meta.Unknown by name and not time-checked, since perf prints
// synthesized records with time 0.
//
// # Events
//
// The Reader emits sched_switch, sched_waking, sched_wakeup,
// sched_wakeup_new, sched_migrate_task, sched_process_fork,
// sched_process_exec, sched_process_exit, sched_process_free,
// task:task_newtask, task:task_rename, power:cpu_idle, and markers
// (ftrace:print, whose "%ps: " ip prefix is dropped, and
// tracing_mark_write), with the fields the timeline.Event contract gives
// each kind. The tracepoint text is read by key in TP_printk order; comm
// values may hold spaces and run to the next key. Other events
// (sched_stat_runtime, irq events, ...) are counted in Meta.Unknown.
// perf prints no irq-info flags, so Event.Ctx is always CtxUnknown.
//
// A record whose timestamp is below the previous record's on the same CPU is
// a ParseError wrapping parse.ErrBackwards. A malformed last line without a
// newline is reported as parse.ErrTruncated.
//
// # Not supported
//
// `perf script -F` selections without the cpu or event field (the event
// kind and CPU cannot be known), -L without the tid field (its bare CPU
// column cannot be told from a tid), comms holding a number followed by ": "
// (taken for the timestamp), and marker texts with embedded newlines (the
// continuation line is not a record).
package perf
