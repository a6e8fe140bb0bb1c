package main

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/fixtures"
	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/outfile"
	"github.com/schedlens/schedlens/report"
	"github.com/schedlens/schedlens/topology"
)

func init() {
	subcommands = append(subcommands, newReportCmd, newLatencyCmd, newIdleCmd, newMisplacedCmd)
}

// embeddedAbout describes the built-in trace for reports.
const embeddedAbout = "hackbench -g 4 -l 300 beside cyclictest on a 2-CPU x86_64 virtual machine, Linux 6.18, " +
	"captured with ftrace (" + fixtures.EmbeddedName + ")."

// analysisFlags are the flags of report, latency, idle and misplaced.
type analysisFlags struct {
	traceFlags
	topology  string
	affinity  affinityFlags
	minWindow time.Duration
	ownList   time.Duration
	top       int
	samples   string
	exact     bool
}

func (f *analysisFlags) register(cmd *cobra.Command, samples bool) {
	f.traceFlags.register(cmd, strings.Join(report.Formats, "|"))
	fl := cmd.Flags()
	fl.StringVar(&f.topology, "topology", "", "CPU topology: a topology.json/topology.txt file or a preset (juno-r2, smt2-<cores>, sym-<n>, ...); default: the trace's own, else a topology file next to it, else identical CPUs")
	f.affinity.register(cmd)
	f.registerStream(cmd, streamPercentiles)
	fl.BoolVar(&f.exact, "exact", false, "with a streamed read, keep every latency sample for exact percentiles (more memory; a loaded read is always exact)")
	fl.DurationVar(&f.minWindow, "min-window", 0, "count idle-with-runnable windows only from this length (e.g. 50us, 1ms); 0 counts all")
	fl.DurationVar(&f.ownList, "own-queue-list", metrics.DefaultOwnQueueList*time.Nanosecond, "list idle-with-own-queue windows from this length (idle, and JSON); 0 lists all")
	fl.IntVar(&f.top, "top", 0, "rows in ranked tables (default 10 in report; all in the section commands)")
	if samples {
		fl.StringVar(&f.samples, "samples", "", "also write every wakeup and preemption sample to FILE: CSV if it ends in .csv, JSON lines if .jsonl or .json")
	}
}

// analysis is a loaded and analysed trace, ready to render.
type analysis struct {
	in  *report.Input
	win metrics.Window
}

// analyse loads the trace (the embedded one when args is empty), resolves
// topology, window, filter and affinity, and runs the metrics.
func (f *analysisFlags) analyse(cmd *cobra.Command, args []string, accounting bool) (*analysis, error) {
	if err := f.checkFormat(report.Formats...); err != nil {
		return nil, err
	}
	if f.minWindow < 0 {
		return nil, usagef("--min-window %v: want a length of 0 or more", f.minWindow)
	}
	if f.ownList < 0 {
		return nil, usagef("--own-queue-list %v: want a length of 0 or more", f.ownList)
	}
	if f.top < 0 {
		return nil, usagef("--top %d: want 0 or more", f.top)
	}
	sampleFormat := ""
	if f.samples != "" {
		switch strings.ToLower(path.Ext(f.samples)) {
		case ".csv":
			sampleFormat = "csv"
		case ".jsonl", ".json", ".ndjson":
			sampleFormat = "jsonl"
		default:
			return nil, usagef("--samples %s: want a file name ending in .csv or .jsonl", f.samples)
		}
	}
	if err := f.validate(); err != nil {
		return nil, err
	}
	if err := checkInputs(f.topology, &f.affinity); err != nil {
		return nil, err
	}
	var ld *ingest.Loaded
	var err error
	if len(args) == 0 && stdinHasTrace() {
		args = []string{"-"}
	}
	embedded := len(args) == 0
	var a *metrics.Analysis
	var acc *metrics.Accounting
	var win metrics.Window
	streamed := false
	var stream bool
	if !embedded {
		if stream, err = f.streams(args[0]); err != nil {
			return nil, err
		}
	}
	if stream {
		ld, win, a, acc, err = f.streamAnalyse(cmd, args[0], accounting)
		streamed = !notStreamed(err)
		if streamed && err != nil {
			return nil, err
		}
	}
	if !streamed {
		// The load warnings are printed once a walk has found the
		// inconsistencies they count (which would cost a walk of its own
		// now), with the filter's after them; before anything else goes
		// to stderr, an error included.
		if embedded {
			ld, err = ingest.LoadReader(bytes.NewReader(fixtures.Embedded), fixtures.EmbeddedName, ingest.Options{Name: fixtures.EmbeddedName, Lenient: f.lenient})
			if err != nil {
				return nil, fmt.Errorf("the embedded trace: %w", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "no TRACE given: analysing the trace built into schedlens (%s)\n", fixtures.EmbeddedName)
		} else if ld, err = f.loadQuiet(cmd, args[0]); err != nil {
			return nil, err
		}
		if win, a, acc, err = f.analyseLoaded(cmd, ld, embedded, accounting); err != nil {
			return nil, err
		}
	}
	tl := ld.Timeline
	in := &report.Input{Trace: traceSummary(ld), Analysis: a, Filter: f.filterText(), Top: f.top,
		Command: commandLine(cmd, args), Version: Version}
	if embedded {
		in.Trace.Embedded, in.Trace.EmbeddedAbout = true, embeddedAbout
	}
	in.Warnings = f.warnings
	if accounting {
		flt := f.filter()
		for _, t := range acc.Tasks {
			if flt.Match(tl, t.ID) {
				in.Tasks = append(in.Tasks, t)
			}
		}
	}
	if f.samples != "" {
		if err := writeSamplesFile(f.samples, ld.Path, sampleFormat, a.Latency); err != nil {
			return nil, err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "%d samples written to %s\n", len(a.Latency.Samples), f.samples)
	}
	return &analysis{in: in, win: win}, nil
}

// analyseLoaded resolves the window, filter, topology and affinity of a
// loaded trace and analyses it (and accounts for it), printing the load
// and filter warnings once its walk has found the inconsistencies.
func (f *analysisFlags) analyseLoaded(cmd *cobra.Command, ld *ingest.Loaded, embedded, accounting bool) (metrics.Window, *metrics.Analysis, *metrics.Accounting, error) {
	tl := ld.Timeline
	filterWarn := ""
	warned := false
	printWarnings := func() {
		if !warned {
			f.warnLoad(cmd, ld)
			f.warn(cmd.ErrOrStderr(), filterWarn)
			warned = true
		}
	}
	defer printWarnings() // on an error
	win, err := f.window(tl)
	if err != nil {
		return win, nil, nil, err
	}
	if filterWarn, err = f.filterWarnings(tl); err != nil {
		return win, nil, nil, err
	}
	topo, err := f.resolveTopology(ld, embedded)
	if err != nil {
		return win, nil, nil, err
	}
	// The affinity inference is fed by the analysis's walk (one walk, not
	// two); the map is made when that walk has ended. A bad --affinity
	// file is refused before the walk.
	if err := f.affinity.read(); err != nil {
		return win, nil, nil, err
	}
	inf := f.affinity.inferrer(tl)
	// What follows the analysis reads the timeline's tasks and figures,
	// not its events.
	opts := f.metricsOptions(win, topo)
	opts.DropEvents = true
	opts.AffinityAfter = func() (*affinity.Map, error) { return f.affinity.build(tl, inf) }
	if inf != nil {
		opts.Also = append(opts.Also, inf)
	}
	var a *metrics.Analysis
	var acc *metrics.Accounting
	if accounting {
		a, acc, err = metrics.AnalyzeAccount(tl, opts)
	} else {
		a, err = metrics.Analyze(tl, opts)
	}
	return win, a, acc, err
}

// metricsOptions are the analysis options the flags give. Only the HTML
// report (its latency CDFs) and --samples read the samples one by one.
func (f *analysisFlags) metricsOptions(win metrics.Window, topo *topology.Topology) metrics.Options {
	return metrics.Options{Window: win, Filter: f.filter(), Topology: topo, MinWindow: int64(f.minWindow),
		OwnQueueList: ownQueueList(f.ownList), NoSamples: f.samples == "" && f.format != "html"}
}

func writeSamplesFile(name, input, format string, lat *metrics.Latency) error {
	fh, err := outfile.Create(name, outfile.Options{Inputs: []string{input}, RemoveOnSignal: true})
	if err != nil {
		return fmt.Errorf("--samples: %w", err)
	}
	defer fh.Abort()
	if err := report.WriteSamples(fh, lat, format); err != nil {
		return fmt.Errorf("--samples %s: %w", name, err)
	}
	if err := fh.Commit(); err != nil {
		return fmt.Errorf("--samples %s: %w", name, err)
	}
	return nil
}

// resolveTopology: --topology, else the trace's own, else a file next to
// it, else (embedded trace) the snapshot embedded with it, else identical
// CPUs.
func (f *analysisFlags) resolveTopology(ld *ingest.Loaded, embedded bool) (*topology.Topology, error) {
	ncpu := ld.Timeline.NCPU
	if embedded && f.topology == "" {
		name := path.Join(path.Dir(fixtures.EmbeddedName), "topology.txt")
		t, err := topology.ReadText(bytes.NewReader(fixtures.EmbeddedTopology), name)
		if err != nil {
			return nil, fmt.Errorf("embedded topology: %w", err)
		}
		t.Source = "embedded:" + name
		if t.NCPU() < ncpu {
			return nil, fmt.Errorf("embedded topology has %d CPUs, the embedded trace %d", t.NCPU(), ncpu)
		}
		return t, nil
	}
	tracePath := ld.Path
	if tracePath == "-" {
		tracePath = ""
	}
	return topology.Resolve(ld.Meta.Topology, tracePath, f.topology, ncpu)
}

func newReportCmd() *cobra.Command {
	var f analysisFlags
	cmd := &cobra.Command{
		Use:   "report [TRACE]",
		Short: "Trace summary, top tasks, wakeup latency, idle-with-runnable and misplaced tasks",
		Long: `report reads a scheduler trace and prints, in one 80-column text meant for a
mail reply (or markdown, JSON, HTML with SVG plots): what the trace holds and
how complete it is, the tasks that waited longest, the wakeup latency and
preemption wait distributions, the time CPUs sat idle while a task that could
have used them waited elsewhere, and misplaced tasks (waiting beside an idle
CPU, misfits on small CPUs, SMT contention). Every table is followed by its
definition; the report ends with the command line and the schedlens version.

With no TRACE it analyses a real trace built into schedlens and says so.
Definitions: docs/metrics.md. Output and options: docs/report.md.`,
		Example: `  schedlens report
  schedlens report --format markdown trace.txt.zst > report.md
  schedlens report --topology juno-r2 --min-window 50us \
      --samples waits.csv trace.dat.txt`,
		Args:         cobra.MaximumNArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			an, err := f.analyse(cmd, args, true)
			if err != nil {
				return err
			}
			return report.Write(cmd.OutOrStdout(), an.in, report.Full, f.format)
		},
	}
	f.register(cmd, true)
	return cmd
}

// ownQueueList maps --own-queue-list to metrics.Options.OwnQueueList,
// where 0 means the default and a negative value every window.
func ownQueueList(d time.Duration) int64 {
	if d == 0 {
		return -1
	}
	return int64(d)
}
