package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/record"
	"github.com/schedlens/schedlens/topology"
)

func init() { subcommands = append(subcommands, newRecordCmd) }

// recordFlags are the flags of schedlens record.
type recordFlags struct {
	output    string
	duration  time.Duration
	cpus      string
	compact   bool
	bufferMB  int
	transport string
	noAttrs   bool
}

func newRecordCmd() *cobra.Command {
	var f recordFlags
	cmd := &cobra.Command{
		Use:   "record -o FILE [--duration D] [--cpus LIST] [-- COMMAND ARGS...]",
		Short: "Record scheduler events live with eBPF into a Perfetto trace",
		Long: `record attaches BPF programs to the scheduler tracepoints (sched_switch,
sched_waking, sched_wakeup, sched_wakeup_new, sched_migrate_task,
sched_process_fork/exit/free, task_rename, signal_generate) and writes what they see as a
Perfetto trace: ftrace event bundles per CPU, the process tree, the CPU
topology and capacities, the kernel release, per-CPU lost counts, and each
task's allowed CPUs, cgroup (with its cpu.weight) and autogroup at first
sight and at every change.

It stops on Ctrl-C (SIGINT or SIGTERM), after --duration, or when COMMAND
exits; COMMAND is started once recording runs and is stopped (SIGTERM) if
the recording ends first. The trace is written to a temporary file next to
FILE and renamed when complete. Timestamps are CLOCK_MONOTONIC nanoseconds.
It needs root (or CAP_BPF and CAP_PERFMON), kernel BTF and Linux 5.5+.
See docs/record.md.`,
		Example: `  sudo schedlens record -o hackbench.pftrace -- hackbench -g 4 -l 2000
  sudo schedlens record -o idle.pftrace --duration 10s --cpus 0-3
  schedlens report hackbench.pftrace`,
		Args:         cobra.ArbitraryArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRecord(cmd, &f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.output, "output", "o", "", "trace file to write (Perfetto protobuf)")
	fl.DurationVar(&f.duration, "duration", 0, "stop after this long (e.g. 10s); 0 = until Ctrl-C or COMMAND exits")
	fl.StringVar(&f.cpus, "cpus", "", "record only events on these CPUs (e.g. 0-3,8)")
	fl.BoolVar(&f.compact, "compact-sched", false, "write switches and wakings in Perfetto's compact_sched encoding (smaller, no prev/waker details)")
	fl.IntVar(&f.bufferMB, "buffer-mb", 0, "each CPU's kernel buffer in MiB (default 64 MiB shared out over the CPUs, 1 to 8 each)")
	fl.StringVar(&f.transport, "transport", "auto", "kernel-to-user buffer: auto, ringbuf or perf")
	fl.BoolVar(&f.noAttrs, "no-task-attrs", false, "do not record the tasks' allowed CPUs, cgroups and autogroups (saves about 100 ns per event in BPF)")
	return cmd
}

func runRecord(cmd *cobra.Command, f *recordFlags, args []string) error {
	if f.output == "" {
		return usagef("record: -o FILE is required")
	}
	if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
		return usagef("record: unexpected argument %q: put the command to trace after --", args[0])
	}
	if f.duration < 0 {
		return usagef("record: --duration %v: want a positive duration", f.duration)
	}
	if f.bufferMB < 0 || f.bufferMB > 1024 {
		return usagef("record: --buffer-mb %d: want 1 to 1024", f.bufferMB)
	}
	opts := record.Options{BufferBytes: f.bufferMB << 20, NoAttrs: f.noAttrs}
	var err error
	if opts.Transport, err = record.ParseTransport(f.transport); err != nil {
		return usagef("record: --%v", err)
	}
	if f.cpus != "" {
		if opts.CPUs, err = topology.ParseCPUList(f.cpus); err != nil {
			return usagef("record: --cpus: %v", err)
		}
	}
	stderr := cmd.ErrOrStderr()
	progress := isTerminal(stderr)
	if progress {
		opts.Progress = func(p record.Progress) {
			fmt.Fprintf(stderr, "\r\x1b[Krecording %6.1f s  %9.0f events/s  %d lost", p.Elapsed.Seconds(), p.Rate, p.Lost)
		}
	}

	rec, err := record.Open(opts)
	if err != nil {
		return err
	}
	defer rec.Close()

	// Stop on the first SIGINT/SIGTERM; a second one kills the process the
	// default way (only the temporary file is left behind then).
	sigCtx, stopSignals := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	go func() { <-sigCtx.Done(); stopSignals() }()
	ctx := sigCtx
	if f.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.duration)
		defer cancel()
	}
	ctx, endRecording := context.WithCancel(ctx)
	defer endRecording()

	var child *exec.Cmd
	childDone := make(chan error, 1)
	ready := func() error {
		if len(args) == 0 {
			if f.duration == 0 {
				fmt.Fprintln(stderr, "recording until Ctrl-C")
			}
			return nil
		}
		childOut := cmd.OutOrStdout()
		if f.output == "-" {
			childOut = stderr // the trace goes to stdout
		}
		child = traceeCommand(args, childOut, stderr)
		if err := child.Start(); err != nil {
			return fmt.Errorf("starting %s: %w", args[0], err)
		}
		go func() { childDone <- child.Wait(); endRecording() }()
		return nil
	}

	st, err := rec.WriteFile(ctx, f.output, cmd.OutOrStdout(), record.FileOptions{CompactSched: f.compact}, ready)
	if progress {
		fmt.Fprint(stderr, "\r\x1b[K")
	}
	stopped, childErr := stopChild(child, childDone)
	if err != nil {
		return err
	}
	printRecordSummary(stderr, f.output, &st)
	if stopped {
		// The recording ended first (--duration, Ctrl-C) and record
		// stopped the command: its status says nothing about the command.
		return nil
	}
	return childExit(args, childErr)
}

// childExit is record's result once the trace is written: nil when the
// traced command exited 0 (or there was none), else an exitError with the
// command's status, as a shell gives it: its exit code, or 128 plus the
// signal that killed it.
func childExit(args []string, err error) error {
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code := ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		if code <= 0 {
			code = 1
		}
		return exitError{code: code, err: fmt.Errorf("%s exited with %v (the trace is complete)", args[0], ee.ProcessState)}
	}
	return fmt.Errorf("%s: %w", args[0], err)
}

// traceeCommand is the command record runs and traces. It gets SIGKILL
// when schedlens dies (the parent-death signal), so a recording killed with
// SIGKILL leaves no workload behind.
func traceeCommand(args []string, stdout, stderr io.Writer) *exec.Cmd {
	c := exec.Command(args[0], args[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, stdout, stderr
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return c
}

// stopChild waits for the traced command, asking it to stop (SIGTERM, then
// SIGKILL after 5 s) if the recording ended first; stopped says it did.
func stopChild(child *exec.Cmd, done <-chan error) (stopped bool, err error) {
	if child == nil || child.Process == nil {
		return false, nil
	}
	select {
	case err := <-done:
		return false, err
	default:
	}
	child.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		return true, err
	case <-time.After(5 * time.Second):
		child.Process.Kill()
		return true, <-done
	}
}

func printRecordSummary(w io.Writer, path string, st *record.Stats) {
	size := ""
	if fi, err := os.Stat(path); err == nil && path != "-" && fi.Mode().IsRegular() {
		size = fmt.Sprintf(" (%.1f MB)", float64(fi.Size())/1e6)
	}
	secs := st.Elapsed.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(st.Events) / secs
	}
	bpf := ""
	if st.BPFTime > 0 {
		bpf = fmt.Sprintf(" + %.2f s in BPF", st.BPFTime.Seconds())
	}
	fmt.Fprintf(w, "recorded %d events in %.2f s (%.0f events/s, %s, %.2f s CPU%s), %d tasks (%d affinity and %d task-group changes), %d lost; wrote %s%s\n",
		st.Events, secs, rate, st.Transport, st.CPUTime.Seconds(), bpf, st.Tasks, st.Affinity, st.Groups, st.TotalLost(), path, size)
	var lost []string
	for cpu, n := range st.Lost {
		if n > 0 {
			lost = append(lost, fmt.Sprintf("%d events lost on CPU %d", n, cpu))
		}
	}
	if len(lost) > 0 {
		fmt.Fprintf(w, "warning: %s (a bigger --buffer-mb helps)\n", strings.Join(lost, ", "))
	}
	if st.Reordered > 0 {
		fmt.Fprintf(w, "warning: %d events arrived out of order and were moved to their CPU's previous event time\n", st.Reordered)
	}
	if !st.Context {
		fmt.Fprintln(w, "note: this kernel gives no execution context: events are not marked task/softirq/hardirq")
	}
	if st.Affinity > 0 && !st.AffinityHook {
		fmt.Fprintln(w, "note: set_cpus_allowed_common cannot be traced here: an affinity change is stamped at the task's next wakeup, migration or switch-in")
	}
}

// isTerminal reports whether w is a terminal (progress goes only there):
// a character device, which also lets progress go to /dev/null, harmlessly.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
