package perfetto

// Field numbers of the Perfetto messages this package reads and writes. Each
// constant names the .proto file (under protos/perfetto/ in the Perfetto
// repository, checked at commit ec5d16b14b743ba6063d720956d6d6af6610fd72) and
// the field it stands for. Only the fields schedlens uses are listed; every
// other field is skipped by wire type.

// Trace (trace/trace.proto).
const (
	fTracePacket = 1 // repeated TracePacket packet = 1
)

// TracePacket (trace/trace_packet.proto).
const (
	fPacketFtraceEvents       = 1   // FtraceEventBundle ftrace_events = 1
	fPacketProcessTree        = 2   // ProcessTree process_tree = 2
	fPacketClockSnapshot      = 6   // ClockSnapshot clock_snapshot = 6
	fPacketTimestamp          = 8   // uint64 timestamp = 8
	fPacketSequenceID         = 10  // uint32 trusted_packet_sequence_id = 10
	fPacketInternedData       = 12  // InternedData interned_data = 12
	fPacketSequenceFlags      = 13  // uint32 sequence_flags = 13
	fPacketFtraceStats        = 34  // FtraceStats ftrace_stats = 34
	fPacketTraceStats         = 35  // TraceStats trace_stats = 35
	fPacketIncrementalCleared = 41  // bool incremental_state_cleared = 41 (deprecated)
	fPacketPreviousDropped    = 42  // uint32 previous_packet_dropped = 42 (was bool)
	fPacketSystemInfo         = 45  // SystemInfo system_info = 45
	fPacketCompressed         = 50  // bytes compressed_packets = 50 (zlib/deflate of a Trace)
	fPacketCPUInfo            = 67  // CpuInfo cpu_info = 67
	fPacketServiceEvent       = 69  // TracingServiceEvent service_event = 69
	fPacketFirstOnSequence    = 87  // bool first_packet_on_sequence = 87
	fPacketMachineID          = 98  // uint32 machine_id = 98
	fPacketZstdCompressed     = 133 // bytes zstd_compressed_packets = 133

	// fPacketTaskAttrs is schedlens' own TracePacket field (not in
	// Perfetto's protos): task affinity and task-group changes, the
	// TaskAttrs message below. 9870 lies in TracePacket's extension range
	// 1000-9999, in the part protos/perfetto/trace/extensions.json leaves
	// unallocated (2000-9999, carved from its low end); trace_processor
	// hands a TracePacket field only to a module registered for it and
	// skips the others (proto_trace_reader.cc, proto_trace_parser_impl.cc).
	// See docs/perfetto.md.
	fPacketTaskAttrs = 9870
	// fPacketMachine is schedlens' own TracePacket field, next to
	// fPacketTaskAttrs and skipped by Perfetto's tools alike: what
	// SystemInfo and CpuInfo cannot say about the traced machine, the
	// Machine message below.
	fPacketMachine = 9871
)

// Machine, schedlens' message in TracePacket field 9871 (docs/perfetto.md
// gives its .proto form).
const (
	fMachineClock    = 1 // optional string clock = 1: the source's trace clock ("mono", "boot", "global", ...)
	fMachineTopology = 2 // optional string topology_json = 2: topology.WriteJSON of the whole topology
	fMachineSysctl   = 3 // repeated string sysctl = 3: "kernel.sched_autogroup_enabled=1", a scheduler sysctl as the source read it
)

// TaskAttrs, schedlens' message in TracePacket field 9870 (docs/perfetto.md
// gives its .proto form).
const (
	fAttrsAffinity = 1 // repeated Affinity affinity = 1
	fAttrsGroup    = 2 // repeated Group group = 2

	fAffTimestamp = 1 // Affinity: uint64 timestamp = 1 (ns, the clock of the ftrace events)
	fAffTid       = 2 // Affinity: int32 tid = 2
	fAffCPUMask   = 3 // Affinity: repeated uint64 cpu_mask = 3 [packed]; none = every CPU

	fGroupTimestamp     = 1 // Group: uint64 timestamp = 1
	fGroupTid           = 2 // Group: int32 tid = 2
	fGroupPath          = 3 // Group: string cgroup_path = 3 ("" unknown)
	fGroupWeight        = 4 // Group: uint32 cpu_weight = 4 (0 unknown or no cpu controller)
	fGroupAutogroup     = 5 // Group: int64 autogroup = 5 (0 none)
	fGroupAutogroupNice = 6 // Group: int32 autogroup_nice = 6
)

// TracePacket.SequenceFlags (trace/trace_packet.proto).
const (
	seqIncrementalStateCleared = 1 // SEQ_INCREMENTAL_STATE_CLEARED = 1
	seqNeedsIncrementalState   = 2 // SEQ_NEEDS_INCREMENTAL_STATE = 2
)

// TracingServiceEvent (trace/perfetto/tracing_service_event.proto).
const (
	fServiceTracingStarted = 2 // bool tracing_started = 2
)

// FtraceEventBundle (trace/ftrace/ftrace_event_bundle.proto).
const (
	fBundleCPU             = 1  // uint32 cpu = 1
	fBundleEvent           = 2  // repeated FtraceEvent event = 2
	fBundleLostEvents      = 3  // bool lost_events = 3
	fBundleCompactSched    = 4  // CompactSched compact_sched = 4
	fBundleFtraceClock     = 5  // FtraceClock ftrace_clock = 5
	fBundleFtraceTimestamp = 6  // int64 ftrace_timestamp = 6
	fBundleBootTimestamp   = 7  // int64 boot_timestamp = 7
	fBundleError           = 8  // repeated FtraceError error = 8
	fBundleLastReadEventTS = 9  // uint64 last_read_event_timestamp = 9 (v44-v46)
	fBundlePrevBundleEndTS = 10 // uint64 previous_bundle_end_timestamp = 10 (v47+)
)

// FtraceClock (trace/ftrace/ftrace_event_bundle.proto). UNSPECIFIED means
// "boot", Perfetto's default ftrace clock.
const (
	ftraceClockUnspecified = 0 // FTRACE_CLOCK_UNSPECIFIED
	ftraceClockUnknown     = 1 // FTRACE_CLOCK_UNKNOWN
	ftraceClockGlobal      = 2 // FTRACE_CLOCK_GLOBAL
	ftraceClockLocal       = 3 // FTRACE_CLOCK_LOCAL
	ftraceClockMonoRaw     = 4 // FTRACE_CLOCK_MONO_RAW
)

// FtraceEventBundle.CompactSched (trace/ftrace/ftrace_event_bundle.proto).
// All columns are packed repeated scalars; timestamps are delta-encoded
// within one bundle, separately for the switch and the waking columns.
const (
	fCompactSwitchTimestamp  = 1  // repeated uint64 switch_timestamp = 1
	fCompactSwitchPrevState  = 2  // repeated int64 switch_prev_state = 2
	fCompactSwitchNextPid    = 3  // repeated int32 switch_next_pid = 3
	fCompactSwitchNextPrio   = 4  // repeated int32 switch_next_prio = 4
	fCompactInternTable      = 5  // repeated string intern_table = 5
	fCompactSwitchNextComm   = 6  // repeated uint32 switch_next_comm_index = 6
	fCompactWakingTimestamp  = 7  // repeated uint64 waking_timestamp = 7
	fCompactWakingPid        = 8  // repeated int32 waking_pid = 8
	fCompactWakingTargetCPU  = 9  // repeated int32 waking_target_cpu = 9
	fCompactWakingPrio       = 10 // repeated int32 waking_prio = 10
	fCompactWakingComm       = 11 // repeated uint32 waking_comm_index = 11
	fCompactWakingCommonFlag = 12 // repeated uint32 waking_common_flags = 12
)

// compactInternThreshold is the intern table size at which traced_probes
// starts a new bundle (kCompactSchedInternerThreshold in
// src/traced/probes/ftrace/compact_sched.h); the writer does the same.
const compactInternThreshold = 64

// FtraceEvent (trace/ftrace/ftrace_event.proto): common fields and the
// members of the "event" oneof this package interprets.
const (
	fEventTimestamp   = 1   // uint64 timestamp = 1
	fEventPid         = 2   // uint32 pid = 2 (common_pid: the task that recorded it)
	fEventCommonFlags = 5   // uint32 common_flags = 5
	fEvPrint          = 3   // PrintFtraceEvent print = 3
	fEvSchedSwitch    = 4   // SchedSwitchFtraceEvent sched_switch = 4
	fEvCPUIdle        = 13  // CpuIdleFtraceEvent cpu_idle = 13
	fEvSchedWakeup    = 17  // SchedWakeupFtraceEvent sched_wakeup = 17
	fEvSchedWaking    = 20  // SchedWakingFtraceEvent sched_waking = 20
	fEvSchedWakeupNew = 114 // SchedWakeupNewFtraceEvent sched_wakeup_new = 114
	fEvTaskNewtask    = 235 // TaskNewtaskFtraceEvent task_newtask = 235
	fEvTaskRename     = 236 // TaskRenameFtraceEvent task_rename = 236
	fEvSignalGenerate = 325 // SignalGenerateFtraceEvent signal_generate = 325
	fEvProcessExec    = 237 // SchedProcessExecFtraceEvent sched_process_exec = 237
	fEvProcessExit    = 238 // SchedProcessExitFtraceEvent sched_process_exit = 238
	fEvProcessFork    = 239 // SchedProcessForkFtraceEvent sched_process_fork = 239
	fEvProcessFree    = 240 // SchedProcessFreeFtraceEvent sched_process_free = 240
	fEvMigrateTask    = 491 // SchedMigrateTaskFtraceEvent sched_migrate_task = 491
)

// ftrace common_flags bits (the trace_entry flags byte, TRACE_FLAG_* in the
// kernel's include/linux/trace_events.h, 6.13+ layout; HARDIRQ, SOFTIRQ and
// NMI have had these values since they exist).
const (
	traceFlagHardirq = 0x08 // TRACE_FLAG_HARDIRQ
	traceFlagSoftirq = 0x10 // TRACE_FLAG_SOFTIRQ
	traceFlagNMI     = 0x40 // TRACE_FLAG_NMI
)

// SchedSwitchFtraceEvent (trace/ftrace/sched.proto).
const (
	fSwitchPrevComm  = 1 // string prev_comm = 1
	fSwitchPrevPid   = 2 // int32 prev_pid = 2
	fSwitchPrevPrio  = 3 // int32 prev_prio = 3
	fSwitchPrevState = 4 // int64 prev_state = 4
	fSwitchNextComm  = 5 // string next_comm = 5
	fSwitchNextPid   = 6 // int32 next_pid = 6
	fSwitchNextPrio  = 7 // int32 next_prio = 7
)

// SchedWakingFtraceEvent, SchedWakeupFtraceEvent and
// SchedWakeupNewFtraceEvent (trace/ftrace/sched.proto) share one layout.
const (
	fWakeComm      = 1 // string comm = 1
	fWakePid       = 2 // int32 pid = 2
	fWakePrio      = 3 // int32 prio = 3
	fWakeSuccess   = 4 // int32 success = 4
	fWakeTargetCPU = 5 // int32 target_cpu = 5
)

// SchedMigrateTaskFtraceEvent (trace/ftrace/sched.proto).
const (
	fMigrateComm    = 1 // string comm = 1
	fMigratePid     = 2 // int32 pid = 2
	fMigratePrio    = 3 // int32 prio = 3
	fMigrateOrigCPU = 4 // int32 orig_cpu = 4
	fMigrateDestCPU = 5 // int32 dest_cpu = 5
)

// SchedProcessForkFtraceEvent (trace/ftrace/sched.proto).
const (
	fForkParentComm = 1 // string parent_comm = 1
	fForkParentPid  = 2 // int32 parent_pid = 2
	fForkChildComm  = 3 // string child_comm = 3
	fForkChildPid   = 4 // int32 child_pid = 4
)

// SchedProcessExitFtraceEvent (trace/ftrace/sched.proto).
const (
	fExitComm = 1 // string comm = 1
	fExitPid  = 2 // int32 pid = 2
	fExitTgid = 3 // int32 tgid = 3
	fExitPrio = 4 // int32 prio = 4
)

// SchedProcessFreeFtraceEvent (trace/ftrace/sched.proto).
const (
	fFreeComm = 1 // string comm = 1
	fFreePid  = 2 // int32 pid = 2
	fFreePrio = 3 // int32 prio = 3
)

// SchedProcessExecFtraceEvent (trace/ftrace/sched.proto).
const (
	fExecFilename = 1 // string filename = 1
	fExecPid      = 2 // int32 pid = 2
	fExecOldPid   = 3 // int32 old_pid = 3
)

// TaskNewtaskFtraceEvent (trace/ftrace/task.proto).
const (
	fNewtaskPid        = 1 // int32 pid = 1
	fNewtaskComm       = 2 // string comm = 2
	fNewtaskCloneFlags = 3 // uint64 clone_flags = 3
)

// TaskRenameFtraceEvent (trace/ftrace/task.proto).
const (
	fRenamePid     = 1 // int32 pid = 1
	fRenameOldComm = 2 // string oldcomm = 2
	fRenameNewComm = 3 // string newcomm = 3
)

// CpuIdleFtraceEvent (trace/ftrace/power.proto).
const (
	fIdleState = 1 // uint32 state = 1
	fIdleCPUID = 2 // uint32 cpu_id = 2
)

// SignalGenerateFtraceEvent (protos/perfetto/trace/ftrace/signal.proto).
const (
	fSigCode   = 1 // int32 code = 1
	fSigComm   = 2 // string comm = 2
	fSigGroup  = 3 // int32 group = 3
	fSigPid    = 4 // int32 pid = 4
	fSigResult = 5 // int32 result = 5
	fSigSig    = 6 // int32 sig = 6
)

// PrintFtraceEvent (trace/ftrace/ftrace.proto).
const (
	fPrintIP  = 1 // uint64 ip = 1
	fPrintBuf = 2 // string buf = 2
)

// FtraceStats and FtraceCpuStats (trace/ftrace/ftrace_stats.proto).
const (
	fStatsPhase          = 1 // Phase phase = 1
	fStatsCPUStats       = 2 // repeated FtraceCpuStats cpu_stats = 2
	fCPUStatsCPU         = 1 // uint64 cpu = 1
	fCPUStatsEntries     = 2 // uint64 entries = 2
	fCPUStatsOverrun     = 3 // uint64 overrun = 3
	fCPUStatsDropped     = 8 // uint64 dropped_events = 8
	statsPhaseStart      = 1 // START_OF_TRACE = 1
	statsPhaseEnd        = 2 // END_OF_TRACE = 2
	fCPUStatsReadEvents  = 9 // uint64 read_events = 9
	fCPUStatsCommitOverr = 4 // uint64 commit_overrun = 4
)

// TraceStats and TraceStats.BufferStats (common/trace_stats.proto): the
// tracing service's counters of its own buffers, written at the end of a
// trace recorded by traced. The counters listed are those that count data
// lost.
const (
	fTraceStatsBuffers         = 1  // repeated BufferStats buffer_stats = 1
	fTraceStatsChunksDiscarded = 8  // uint64 chunks_discarded = 8 (before reaching a buffer)
	fBufChunksOverwritten      = 3  // BufferStats: uint64 chunks_overwritten = 3
	fBufPatchesFailed          = 6  // BufferStats: uint64 patches_failed = 6
	fBufAbiViolations          = 9  // BufferStats: uint64 abi_violations = 9
	fBufBytesOverwritten       = 13 // BufferStats: uint64 bytes_overwritten = 13
	fBufChunksDiscarded        = 18 // BufferStats: uint64 chunks_discarded = 18
	fBufTraceWriterPacketLoss  = 19 // BufferStats: uint64 trace_writer_packet_loss = 19
)

// ProcessTree (trace/ps/process_tree.proto).
const (
	fTreeProcesses     = 1 // repeated Process processes = 1
	fTreeThreads       = 2 // repeated Thread threads = 2
	fProcPid           = 1 // Process: int32 pid = 1
	fProcPpid          = 2 // Process: int32 ppid = 2
	fProcCmdline       = 3 // Process: repeated string cmdline = 3
	fProcIsKthread     = 8 // Process: bool is_kthread = 8
	fProcCmdlineIsComm = 9 // Process: bool cmdline_is_comm = 9
	fThreadTid         = 1 // Thread: int32 tid = 1
	fThreadName        = 2 // Thread: string name = 2
	fThreadTgid        = 3 // Thread: int32 tgid = 3
)

// SystemInfo and Utsname (common/system_info.proto).
const (
	fSysUtsname  = 1 // Utsname utsname = 1
	fSysNumCPUs  = 8 // uint32 num_cpus = 8
	fUtsSysname  = 1 // Utsname: string sysname = 1
	fUtsVersion  = 2 // Utsname: string version = 2
	fUtsRelease  = 3 // Utsname: string release = 3
	fUtsMachine  = 4 // Utsname: string machine = 4
	fCPUInfoCPUs = 1 // CpuInfo (trace/system_info/cpu_info.proto): repeated Cpu cpus = 1
	fCPUProc     = 1 // CpuInfo.Cpu: string processor = 1
	fCPUFreqs    = 2 // CpuInfo.Cpu: repeated uint32 frequencies = 2
	fCPUCapacity = 3 // CpuInfo.Cpu: uint32 capacity = 3
)

// ClockSnapshot (trace/clock_snapshot.proto) and BuiltinClock
// (common/builtin_clock.proto).
const (
	fSnapClocks       = 1 // repeated Clock clocks = 1
	fSnapPrimaryClock = 2 // BuiltinClock primary_trace_clock = 2
	fClockID          = 1 // Clock: uint32 clock_id = 1
	fClockTimestamp   = 2 // Clock: uint64 timestamp = 2
	clockRealtime     = 1 // BUILTIN_CLOCK_REALTIME
	clockMonotonic    = 3 // BUILTIN_CLOCK_MONOTONIC
	clockMonoRaw      = 5 // BUILTIN_CLOCK_MONOTONIC_RAW
	clockBoottime     = 6 // BUILTIN_CLOCK_BOOTTIME
)

// Sequence ids the writer uses. 0 is invalid and 1 is the tracing service's
// own sequence in traces recorded by traced (kServicePacketSequenceID), so
// the writer's producers start at 2.
const (
	seqWriterMeta   = 2 // system_info, cpu_info, process_tree
	seqWriterFtrace = 3 // ftrace bundles and ftrace stats
)

// ftraceEventNames names the FtraceEvent oneof members that schedlens does
// not interpret but that sched traces commonly carry, for Meta.Unknown
// (trace/ftrace/ftrace_event.proto). Others are counted as
// "ftrace_event_<field number>".
var ftraceEventNames = map[uint32]string{
	11: "cpu_frequency", 12: "cpu_frequency_limits", 14: "clock_enable", 15: "clock_disable",
	16: "clock_set_rate", 18: "sched_blocked_reason", 19: "sched_cpu_hotplug",
	21: "ipi_entry", 22: "ipi_exit", 23: "ipi_raise", 24: "softirq_entry", 25: "softirq_exit",
	26: "softirq_raise", 36: "irq_handler_entry", 37: "irq_handler_exit",
	56: "workqueue_activate_work", 57: "workqueue_execute_end", 58: "workqueue_execute_start",
	59: "workqueue_queue_work", 113: "suspend_resume", 241: "sched_process_hang",
	242: "sched_process_wait", 313: "rss_stat", 324: "signal_deliver", 325: "signal_generate",
	326: "oom_score_adj_update", 329: "sys_enter", 330: "sys_exit", 353: "sched_pi_setprio",
	359: "rss_stat_throttled", 408: "console", 421: "sched_cpu_util_cfs", 437: "funcgraph_entry",
	438: "funcgraph_exit", 481: "suspend_resume_minimal", 487: "sched_switch_with_ctrs",
	540: "sched_wakeup_task_attr", 551: "hrtimer_start", 552: "hrtimer_cancel",
	553: "hrtimer_expire_entry", 554: "hrtimer_expire_exit", 555: "timer_start",
	556: "timer_cancel", 557: "timer_expire_entry", 558: "timer_expire_exit",
	559: "local_timer_entry", 560: "local_timer_exit", 604: "sched_group_tracker",
}
