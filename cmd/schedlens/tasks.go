package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/report"
)

func init() { subcommands = append(subcommands, newTasksCmd, newCPUsCmd) }

func newTasksCmd() *cobra.Command {
	var f traceFlags
	cmd := &cobra.Command{
		Use:   "tasks TRACE",
		Short: "Per-task run, runnable, rq-wait, sleep and blocked time",
		Long: `tasks prints, per task instance (pid plus lifetime), its time on CPU, its
runnable time (wakeup latency + preemption wait), its runqueue wait from
enqueue, sleep and blocked time, and counts of switches, preemptions, wakeups
and migrations, over the valid window of the trace or the one given.

A text, perf.data or trace.dat file whose events would take over a
quarter of the memory available is read twice instead of held (--stream):
a summary, then a walk of its events, so that memory grows with tasks, not
events.`,
		Example: `  schedlens tasks trace.txt.zst
  schedlens tasks --start-marker oracle_start --end-marker oracle_end \
      --format json trace.txt
  schedlens tasks --comm cyclictest perf-script.txt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ld, win, acc, err := f.prepareAccount(cmd, args[0], "text", "markdown", "json", "html")
			if err != nil {
				return err
			}
			flt := f.filter()
			var rows []metrics.TaskTimes
			for _, t := range acc.Tasks {
				if flt.Match(ld.Timeline, t.ID) {
					rows = append(rows, t)
				}
			}
			out := cmd.OutOrStdout()
			switch f.format {
			case "json":
				if rows == nil {
					rows = []metrics.TaskTimes{}
				}
				return report.WriteDocument(out, f.header(cmd, args, ld, win), struct {
					Tasks []metrics.TaskTimes `json:"tasks"`
				}{rows})
			case "html":
				var text bytes.Buffer
				if err := tasksText(&text, ld, win, rows, false, commandLine(cmd, args)); err != nil {
					return err
				}
				page := report.HTMLPage{Title: "schedlens tasks: " + ld.Path, Warnings: f.warnings, Text: text.String(),
					Tables: []report.HTMLTable{{Title: fmt.Sprintf("Tasks (%d; click a column to sort)", len(rows)), Table: tasksTable(rows, true),
						Notes: []string{strings.Join(tasksNotes, " ")}}}}
				return page.Write(out)
			default:
				return tasksText(out, ld, win, rows, f.format == "markdown", commandLine(cmd, args))
			}
		},
	}
	f.register(cmd, "text|markdown|json|html")
	f.registerStream(cmd, streamSame)
	return cmd
}

func tasksText(w io.Writer, ld *ingest.Loaded, win metrics.Window, rows []metrics.TaskTimes, md bool, cmdline string) error {
	tl := ld.Timeline
	fmt.Fprintf(w, "trace:  %s\n", ld.Path)
	fmt.Fprintf(w, "format: %s, %d CPUs, %d events\nwindow: %s .. %s s (%s ms)\n", ld.Meta.Format, tl.NCPU, tl.Len(),
		win.Start.Seconds(), win.End.Seconds(), ms(int64(win.End-win.Start)))
	if md {
		fmt.Fprintln(w)
	}
	t := tasksTable(rows, md)
	var err error
	if md {
		err = t.Markdown(w)
	} else {
		err = report.TextTable(w, t)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, l := range tasksNotes {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "command: %s\nschedlens %s\n", wrapCommand(cmdline, 71), Version)
	return nil
}

// tasksNotes define the columns of the tasks table, in lines of the text
// form.
var tasksNotes = []string{
	"Times in ms. run: on CPU. wait: runnable, from sched_waking (or sched_wakeup",
	"without waking, wakeup_new, an R/R+ switch-out) to switch-in. rq: the same",
	"from enqueue (sched_wakeup; - if the trace has none). sleep: S/I. blk: D.",
	"sw: switches in. prmt: switch-outs in R/R+. Exact times clipped to the window,",
	"shown to 0.1 ms (--format json has ns); * = intervals cut by a gap, the window",
	"or an inconsistency.",
}

// tasksTable is the tasks table; the text form cuts comms to the 15
// characters of the kernel's TASK_COMM_LEN, whole keeps them whole.
func tasksTable(rows []metrics.TaskTimes, whole bool) *report.Table {
	t := &report.Table{
		Header: []string{"pid", "comm", "run", "wait", "rq", "sleep", "blk", "sw", "prmt", "wake", "migr"},
		Left:   []bool{false, true},
	}
	for _, r := range rows {
		rq := "-"
		if r.RqWaitNs != nil {
			rq = ms1(*r.RqWaitNs)
		}
		comm := r.Comm
		if !whole && utf8.RuneCountInString(comm) > 15 {
			comm = string([]rune(comm)[:15])
		}
		if r.Inconsistencies > 0 || r.Censored {
			comm += "*"
		}
		t.Add(fmt.Sprint(r.PID), comm, ms1(r.RunNs), ms1(r.RunnableNs), rq, ms1(r.SleepNs), ms1(r.BlockedNs),
			fmt.Sprint(r.SwitchesIn), fmt.Sprint(r.Preemptions), fmt.Sprint(r.Wakeups), fmt.Sprint(r.Migrations))
	}
	return t
}

func newCPUsCmd() *cobra.Command {
	var f traceFlags
	cmd := &cobra.Command{
		Use:   "cpus TRACE",
		Short: "Per-CPU busy, idle and unobserved time, switches and migrations",
		Long: `cpus prints, per CPU, its busy, idle and unobserved time, its context
switches, migrations in and out, and the events lost on it, over the valid
window of the trace or the one given. A large text, perf.data or trace.dat
file is read twice instead of held, as by tasks (--stream).`,
		Example: `  schedlens cpus trace.txt.zst
  schedlens cpus --format json trace_pipe.txt.gz
  schedlens cpus --start 575.5 --end 576 trace.txt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ld, win, acc, err := f.prepareAccount(cmd, args[0], "text", "markdown", "json", "html")
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			html := f.format == "html"
			var text bytes.Buffer
			if html {
				out = &text
			}
			if f.format == "json" {
				return report.WriteDocument(out, f.header(cmd, args, ld, win), struct {
					CPUs []metrics.CPUTimes `json:"cpus"`
				}{acc.CPUs})
			}
			tl := ld.Timeline
			fmt.Fprintf(out, "trace:  %s\nformat: %s, %d CPUs\nwindow: %s .. %s s (%s ms)\n", ld.Path, ld.Meta.Format, tl.NCPU,
				win.Start.Seconds(), win.End.Seconds(), ms(int64(win.End-win.Start)))
			t := &report.Table{Header: []string{"cpu", "busy ms", "idle ms", "unobs ms", "busy %", "switches", "migr in", "migr out", "lost"}}
			span := float64(win.End - win.Start)
			for _, c := range acc.CPUs {
				pct := "-"
				if span > 0 {
					pct = fmt.Sprintf("%.1f", 100*float64(c.BusyNs)/span)
				}
				t.Add(fmt.Sprint(c.CPU), ms1(c.BusyNs), ms1(c.IdleNs), ms1(c.UnobservedNs), pct, fmt.Sprint(c.Switches),
					fmt.Sprint(c.MigrationsIn), fmt.Sprint(c.MigrationsOut), lostCell(c))
			}
			if f.format == "markdown" {
				err = t.Markdown(out)
			} else {
				err = report.TextTable(out, t)
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(out)
			fmt.Fprintln(out, "busy: a task other than idle on CPU. idle: the idle task on CPU. unobs: not")
			fmt.Fprintln(out, "known (before the CPU's buffer starts, in lost-event gaps, after a switch")
			fmt.Fprintln(out, "missing from the trace). busy % of the window. lost: events lost on the CPU.")
			for _, c := range acc.CPUs {
				if c.LostUnknown > 0 {
					fmt.Fprintln(out, "?: a lost-event gap whose count the trace does not give.")
					break
				}
			}
			fmt.Fprintf(out, "command: %s\nschedlens %s\n", wrapCommand(commandLine(cmd, args), 71), Version)
			if html {
				page := report.HTMLPage{Title: "schedlens cpus: " + ld.Path, Warnings: f.warnings, Text: text.String(),
					Tables: []report.HTMLTable{{Title: "CPUs (click a column to sort)", Table: t}}}
				return page.Write(cmd.OutOrStdout())
			}
			return nil
		},
	}
	f.register(cmd, "text|markdown|json|html")
	f.registerStream(cmd, streamSame)
	return cmd
}

// lostCell is the cpus table's lost column: the events lost, "+?" when
// some gap's count is unknown ("?" alone when none is known).
func lostCell(c metrics.CPUTimes) string {
	switch {
	case c.LostUnknown > 0 && c.LostEvents == 0:
		return "?"
	case c.LostUnknown > 0:
		return fmt.Sprintf("%d+?", c.LostEvents)
	}
	return fmt.Sprint(c.LostEvents)
}
