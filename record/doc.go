// Package record captures scheduler events live with eBPF and writes them
// as a Perfetto trace, the kernel-side counterpart of the ingest readers.
//
// BPF programs on the BTF-enabled scheduler tracepoints (tp_btf:
// sched_switch, sched_waking, sched_wakeup, sched_wakeup_new,
// sched_migrate_task, sched_process_fork, sched_process_exit,
// sched_process_free, task_rename) copy what the ftrace event would carry
// into a fixed 88-byte record: prev/next pid, comm and prio, prev_state in
// the kernel's report encoding (R+ for a preemption), target and origin
// CPUs, the waker (the task running on the CPU), the thread groups, and the
// execution context (task, softirq, hardirq, NMI) derived from
// preempt_count. Records travel through one BPF ring buffer per CPU (Linux
// 5.8+) or per-CPU perf buffers, are time-stamped with bpf_ktime_get_ns
// (CLOCK_MONOTONIC), and are put back in per-CPU time order in user space
// (see stream) before they reach a Sink such as *perfetto.Writer. Records
// the kernel could not queue are counted per CPU and become KindLost
// events at the place of the gap.
//
// At switch-in, waking, new-task wakeup and migration the BPF side also
// compares the task's allowed CPUs (cpus_mask), v2 cgroup id and autogroup
// with what it last sent for that pid and sends a variable-size attribute
// record when they differ; user space names the cgroup and reads its
// cpu.weight (cgroup.go) and hands the Sink timeline.AffinityChange and
// timeline.GroupChange records.
//
// The BPF object is compiled ahead of time from bpf/sched.bpf.c with
// bpf2go and committed (sched_bpfel.go, sched_bpfel.o); `go generate
// ./record` rebuilds it (needs clang, llvm-strip and libbpf headers).
//
// Entry points: Check (can this process record here?), Open (load and
// attach), Recorder.Run (stream into any Sink), Recorder.WriteFile (a
// complete Perfetto file, written to a temporary name and renamed).
//
// Besides cilium/ebpf it imports timeline, topology and, for the trace
// file, ingest/perfetto's writer. It must not import metrics, replay,
// policies, report or cmd.
package record
