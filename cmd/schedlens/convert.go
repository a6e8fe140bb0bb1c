package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/ingest/perfetto"
	"github.com/schedlens/schedlens/outfile"
	"github.com/schedlens/schedlens/progress"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

func init() { subcommands = append(subcommands, newConvertCmd) }

func newConvertCmd() *cobra.Command {
	var (
		out          string
		compact      bool
		lenient      bool
		quiet        bool
		topologyFlag string
	)
	cmd := &cobra.Command{
		Use:   "convert TRACE -o OUT.pftrace",
		Short: "Write any trace as a Perfetto trace (for ui.perfetto.dev and trace_processor)",
		Long: `convert streams any input schedlens reads into a Perfetto protobuf trace:
ftrace event bundles per CPU (optionally in the compact_sched encoding), the
process tree, system info with the CPU topology, lost-event counts, and the
task affinity and task-group changes a schedlens recording carries. The
output is written to a temporary file beside OUT and renamed when complete
(keeping OUT's mode); a device, FIFO or /dev/stdout is written in place, and
"-o -" writes to stdout. OUT may not be the input.`,
		Example: `  schedlens convert trace.txt.zst -o trace.pftrace
  schedlens convert --compact-sched perf-script.txt.gz -o small.pftrace
  schedlens convert --topology juno-r2 trace.txt -o juno.pftrace`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("-o OUT.pftrace is required")
			}
			var bar *progress.Bar
			if progress.Wanted(cmd.ErrOrStderr(), quiet) {
				bar = progress.Reading(cmd.ErrOrStderr(), args[0])
			}
			n, err := convertTrace(cmd.ErrOrStderr(), args[0], out, cmd.OutOrStdout(), compact, lenient, topologyFlag, bar)
			bar.Done()
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d events to %s\n", n, out)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&out, "output", "o", "", "output file (Perfetto protobuf)")
	fl.BoolVar(&compact, "compact-sched", false, "write sched_switch and sched_waking in the compact_sched encoding")
	fl.BoolVar(&lenient, "lenient", false, "skip malformed input records (counted) instead of stopping")
	fl.BoolVar(&quiet, "quiet", false, "no progress on stderr (shown only when stderr is a terminal and the work takes over a second)")
	fl.StringVar(&topologyFlag, "topology", "", "CPU topology to record: a file (topology.txt or JSON) or a preset name")
	return cmd
}

// convertTrace streams in to a Perfetto trace at out and returns the number
// of events written. The process tree comes from the input's own (Perfetto)
// or from the comms and thread groups its events carry.
func convertTrace(stderr io.Writer, in, out string, stdout io.Writer, compact, lenient bool, topoFlag string, bar *progress.Bar) (int, error) {
	opts := ingest.Options{Name: in, Lenient: lenient}
	if bar != nil {
		opts.Progress = func(int64, int64, int) {} // counts the bytes read
	}
	s, err := ingest.Open(in, opts)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	tmp, err := outfile.Create(out, outfile.Options{Inputs: []string{in}, Stdout: stdout, RemoveOnSignal: true})
	if err != nil {
		return 0, outputError(out, err)
	}
	defer tmp.Abort()
	strs := s.Strings()
	var w *perfetto.Writer
	type taskInfo struct {
		tgid int32
		comm timeline.CommID
	}
	tasks := map[timeline.TID]*taskInfo{}
	note := func(pid timeline.TID, comm timeline.CommID, tgid int32) {
		if pid <= 0 {
			return
		}
		ti := tasks[pid]
		if ti == nil {
			ti = &taskInfo{tgid: -1}
			tasks[pid] = ti
		}
		if comm != timeline.NoComm {
			ti.comm = comm
		}
		if tgid >= 0 && ti.tgid < 0 {
			ti.tgid = tgid
		}
	}
	var pending []timeline.Event
	n := 0
	var ev timeline.Event
	for {
		err := s.Next(&ev)
		if err == io.EOF {
			if bar != nil {
				read, total := s.BytesRead()
				bar.Update(read, total, n)
			}
			break
		}
		if err != nil {
			return n, err
		}
		if bar != nil && n&(1<<16-1) == 0 {
			read, total := s.BytesRead()
			bar.Update(read, total, n)
		}
		header := ev.Other
		if ev.Kind == timeline.KindExit {
			header = ev.Task
		}
		note(ev.Task, ev.Comm, -1)
		note(ev.Other, ev.OComm, -1)
		if header != timeline.NoTID {
			note(header, timeline.NoComm, ev.TGID)
		}
		if w == nil {
			// The writer needs the trace's metadata, which text readers
			// learn from their header: start it at the first event.
			pending = append(pending, ev)
			if len(pending) < 64 {
				continue
			}
			if w, err = startWriter(tmp, s, compact, in, topoFlag); err != nil {
				return n, err
			}
			for i := range pending {
				if err := w.Add(&pending[i]); err != nil {
					return n, outputError(out, err)
				}
				n++
			}
			pending = nil
			continue
		}
		if err := w.Add(&ev); err != nil {
			return n, outputError(out, err)
		}
		n++
	}
	if w == nil {
		if w, err = startWriter(tmp, s, compact, in, topoFlag); err != nil {
			return n, err
		}
		for i := range pending {
			if err := w.Add(&pending[i]); err != nil {
				return n, outputError(out, err)
			}
			n++
		}
	}
	for pid, ti := range s.Meta().Tasks {
		note(pid, strs.IDString(ti.Comm), ti.TGID)
	}
	// By pid, so that the same input always gives the same bytes.
	for _, pid := range slices.Sorted(maps.Keys(tasks)) {
		ti := tasks[pid]
		if err := w.Task(pid, ti.tgid, strs.Get(ti.comm)); err != nil {
			return n, outputError(out, err)
		}
	}
	// Affinity and task-group changes (a schedlens recording's task
	// attributes) are known once the input is read.
	for _, a := range s.Meta().Affinity {
		if err := w.AddAffinity(a); err != nil {
			return n, outputError(out, err)
		}
	}
	for _, g := range s.Meta().Groups {
		if err := w.AddGroup(g); err != nil {
			return n, outputError(out, err)
		}
	}
	if err := s.Truncated(); err != nil {
		fmt.Fprintf(stderr, "warning: %v; what decompressed before it is converted (--lenient)\n", err)
	}
	if m := s.Meta(); m.Skipped > 0 {
		fmt.Fprintf(stderr, "warning: %d malformed records skipped (--lenient); first: %v\n", m.Skipped, m.SkippedErrors[0])
	}
	w.SetIncomplete(s.Meta().Coverage != timeline.CoverageComplete)
	if err := w.Close(); err != nil {
		return n, outputError(out, err)
	}
	if err := tmp.Commit(); err != nil {
		return n, outputError(out, err)
	}
	return n, nil
}

// sourceClock is the trace clock of the input: what the trace says, else
// the "clock:" line of a meta.txt next to it, else "" (unknown).
func sourceClock(fromTrace, path string) string {
	if fromTrace != "" || path == "-" {
		return fromTrace
	}
	c, _ := ingest.ClockNextTo(path)
	return c
}

func startWriter(f io.Writer, s *ingest.Stream, compact bool, in, topoFlag string) (*perfetto.Writer, error) {
	m := s.Meta()
	var topo *topology.Topology
	if m.Topology != nil || topoFlag != "" {
		t, err := topology.Resolve(m.Topology, in, topoFlag, m.NCPU)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		topo = t
	} else if t, err := topology.Resolve(nil, in, "", m.NCPU); err == nil && t.Source != "default" {
		topo = t
	}
	return perfetto.NewWriter(f, perfetto.WriterOptions{
		CompactSched: compact, Strings: s.Strings(), Topology: topo, Kernel: m.Kernel, NCPU: m.NCPU, Clock: sourceClock(m.Clock, in), ClockStated: true, Sysctls: m.Sysctls,
		// What the source proves, known at its end (SetIncomplete before
		// Close); losses found on the way travel as lost-event records.
		CoverageAtClose: true,
	})
}
