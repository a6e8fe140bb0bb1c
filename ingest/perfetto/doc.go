// Package perfetto reads and writes Perfetto protobuf traces
// (perfetto.protos.Trace) as schedlens timeline events.
//
// It decodes the wire format with google.golang.org/protobuf/encoding/protowire
// from the field numbers of Perfetto's public .proto files (proto.go cites
// each one); Perfetto publishes no Go module and nothing here is generated.
// It imports timeline, topology and ingest/parse only; it must not import
// metrics, replay, report, cmd or the other format packages.
//
// # Reading
//
// NewReader streams the top-level Trace.packet fields one TracePacket at a
// time into a reused buffer (never a whole Trace): a tag, a length, then that
// many bytes, read in chunks so that a length past the end of the input
// costs no more memory than the input. compressed_packets (zlib or raw
// deflate) and zstd_compressed_packets hold a nested Trace whose packets are
// decoded in place; nesting them again is an error.
// With more than one worker (parse.Options.Workers, one per CPU by default)
// the packets are read ahead in blocks on a goroutine of their own and
// their bundles decoded on worker goroutines, then applied in file order:
// the read is the same as with one (parallel.go).
//
//	Trace
//	  packet (1) TracePacket
//	    ftrace_events (1) FtraceEventBundle      -> events
//	      cpu (1), event (2) FtraceEvent, lost_events (3), compact_sched (4),
//	      ftrace_clock (5), ftrace_timestamp (6), boot_timestamp (7), error (8),
//	      last_read_event_timestamp (9), previous_bundle_end_timestamp (10)
//	    process_tree (2)                         -> Meta.Tasks, Reader.Processes
//	    clock_snapshot (6), service_event (69)   -> clock, Reader.TracingStarted
//	    ftrace_stats (34)                        -> lost records (overrun), Meta.Coverage
//	    trace_stats (35)                         -> Meta.Coverage (service buffers' losses)
//	    system_info (45), cpu_info (67)          -> Meta.Kernel, NCPU, Topology
//	    schedlens_task_attrs (9870, schedlens')  -> Meta.Affinity, Meta.Groups (attrs.go)
//	    trusted_packet_sequence_id (10), sequence_flags (13),
//	    previous_packet_dropped (42), machine_id (98)
//
// A bundle holds one CPU's events. Plain FtraceEvents carry timestamp (1),
// pid (2: the task running when the event was recorded, the text formats'
// TASK-PID) and common_flags (5: irq context, when present) and one of
// sched_switch, sched_waking, sched_wakeup, sched_wakeup_new,
// sched_migrate_task, sched_process_fork/exec/exit/free, task_newtask,
// task_rename, cpu_idle and print. They become events with the meaning the
// text readers give them (timeline.Event's contract); other events are
// counted in Meta.Unknown by name. CompactSched holds sched_switch and
// sched_waking as columns:
//
//	intern_table (5)                 comms, per bundle
//	switch_timestamp (1)             delta-encoded within the bundle
//	switch_prev_state (2), switch_next_pid (3), switch_next_prio (4),
//	switch_next_comm_index (6)
//	waking_timestamp (7)             delta-encoded, separately
//	waking_pid (8), waking_target_cpu (9), waking_prio (10),
//	waking_comm_index (11), waking_common_flags (12, may be short)
//
// The compact form drops a switch's prev side and a waking's waker: the
// reader fills prev pid, comm and prio from the CPU's running task (the
// previous switch's next side on that CPU, across bundles, renamed by
// task_rename and exec while it runs); a CPU's first switch has Other =
// timeline.NoTID; compact wakings have Other = timeline.NoTID; compact
// switches have Ctx = timeline.CtxUnknown. Within a bundle, the plain events,
// the switch column and the waking column are merged by (time, kind), so at
// one timestamp a compact waking comes first and a compact switch last.
// Bundles come in file order, so events of different CPUs interleave by
// bundle, not by time.
//
// Perfetto does not record the waker's comm: OComm of sched_waking, wakeup
// and wakeup_new is the CPU's running task's comm when the waker is that
// task, else the last comm the trace gave the waker, else NoComm.
//
// prev_state is the kernel's raw integer; its bits depend on the kernel
// version (SystemInfo.utsname.release), see stateLayout in state.go. With no
// release the 4.14+ layout is used (R+ = 0x100, I = 0x80, P = 0x40).
//
// Lost data: a bundle's lost_events flag or error entries, or a dropped
// packet on the bundle's sequence (previous_packet_dropped), give a
// KindLost (Arg -1) just before the CPU's next event, Start =
// previous_bundle_end_timestamp when set, else the CPU's last event. A
// CPU's first bundle with previous_bundle_end_timestamp set (earlier
// bundles existed but are not in the file) gives a KindBufferStart with
// Start = that timestamp. FtraceStats overrun+commit_overrun+dropped_events
// growing between START_OF_TRACE and END_OF_TRACE on a CPU no bundle flagged
// gives a KindLost with that count at the end; on a flagged CPU a warning.
//
// Meta.Coverage is complete when every CPU with bundles has ftrace stats at
// both ends and nothing above (nor TraceStats) shows a loss; see coverage.go.
//
// Clocks: see lockClock in meta.go. Malformed input gives a
// *parse.ParseError with the offset of the packet and the message path
// ("TracePacket.ftrace_events.event.sched_switch.prev_state"); a CPU's
// timestamp going backwards wraps parse.ErrBackwards.
//
// # Writing
//
// NewWriter writes events as a trace trace_processor and the Perfetto UI
// open: metadata (SystemInfo, CpuInfo, ProcessTree) on sequence 2, ftrace
// bundles and FtraceStats on sequence 3, each sequence's first packet
// flagged SEQ_INCREMENTAL_STATE_CLEARED. WriterOptions.CompactSched writes
// switches and wakings as compact_sched columns. AddAffinity and AddGroup
// write task affinity and task-group changes in schedlens' own TracePacket
// field 9870 on sequence 2, which Perfetto's tools skip (attrs.go,
// docs/perfetto.md).
package perfetto
