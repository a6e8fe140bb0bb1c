package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/schedlens/schedlens/compare"
	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/topology"
)

func init() { subcommands = append(subcommands, newCompareCmd) }

func newCompareCmd() *cobra.Command {
	var (
		f        traceFlags
		aff      affinityFlags
		topoFlag string
		top      int
	)
	cmd := &cobra.Command{
		Use:   "compare BASE NEW | compare BASE... --vs NEW...",
		Short: "Compare the traces of a workload before and after a change, with significance",
		Long: `compare measures each trace with the definitions of tasks, latency and idle
(per trace: its own window, topology and affinity) and sets the two sides
side by side, overall, per scheduling class and per comm (tasks are matched by
comm: pids differ between runs): run and runnable time, wakeup latency p50,
p90, p99, max and mean, preemptions, migrations, context switches,
idle-with-runnable time and completion time.

With two or more runs on each side (BASE1 BASE2 ... --vs NEW1 NEW2 ...), every
figure is the mean over its side's runs and Welch's t-test on the per-run
figures decides which changes are significant. With one run on a side, only
the wakeup latency figures are tested, by a bootstrap over their samples, and
the report says that run-to-run noise is not measured. Rows whose 95% interval
excludes 0 are marked *...*; any other change is inside the noise.
--start-marker and --end-marker apply to every trace. Method: docs/compare.md.`,
		Example: `  schedlens compare before.txt.zst after.txt.zst
  schedlens compare base-1.dat.txt base-2.txt base-3.txt \
      --vs new-1.txt new-2.txt new-3.txt
  schedlens compare --start-marker START --end-marker END --format html \
      a.pftrace b.txt > ab.html`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			basePaths, newPaths, err := splitSides(cmd.Flags(), args)
			if err != nil {
				return err
			}
			if err := f.checkFormat(compare.ABFormats...); err != nil {
				return err
			}
			if len(f.pids) > 0 {
				return usagef("--pid: pids differ between runs; select tasks with --comm")
			}
			if top < 1 {
				return usagef("--top %d: want 1 or more", top)
			}
			if err := f.validate(); err != nil {
				return err
			}
			if err := checkInputs(topoFlag, &aff); err != nil {
				return err
			}
			var sides [2][]compare.Run
			for i, paths := range [][]string{basePaths, newPaths} {
				for _, p := range paths {
					run, err := measureRun(cmd, &f, &aff, topoFlag, p)
					if err != nil {
						return err
					}
					sides[i] = append(sides[i], run)
				}
			}
			if w := recordingOrder(basePaths, newPaths); w != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+w)
				f.warnings = append(f.warnings, w)
			}
			rep := &compare.ABReport{AB: compare.CompareRuns(sides[0], sides[1], "base", "new"), Window: f.windowText(),
				Filter: f.filterText(), Top: top, Command: commandLine(cmd, args), Version: Version, Warnings: f.warnings}
			return compare.WriteAB(cmd.OutOrStdout(), rep, f.format)
		},
	}
	cmd.Flags().SetInterspersed(false) // splitSides reads the flags after the first trace
	f.register(cmd, strings.Join(compare.ABFormats, "|"))
	aff.register(cmd)
	fl := cmd.Flags()
	fl.Bool("vs", false, "the traces after it are the new side's runs (those before it the base's)")
	fl.StringVar(&topoFlag, "topology", "", "CPU topology of every trace: a file (topology.txt or JSON) or a preset name (default: each trace's own)")
	fl.IntVar(&top, "top", 5, "comms that get their own table and CDF plot")
	return cmd
}

// splitSides reads the arguments after the first trace: flags (parsed into
// fs) and traces, which belong to the base side before --vs and to the new
// side after it. Without --vs, exactly two traces compare one against the
// other.
func splitSides(fs *pflag.FlagSet, args []string) (base, new []string, err error) {
	vs := false
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--vs":
			if vs {
				return nil, nil, usagef("--vs given twice")
			}
			vs, args = true, args[1:]
		case a == "--":
			rest := args[1:]
			args = nil
			if vs {
				new = append(new, rest...)
			} else {
				base = append(base, rest...)
			}
		case len(a) > 1 && a[0] == '-':
			// Parse the flags up to the next --vs; what follows them is
			// traces again.
			end := len(args)
			if i := slices.Index(args, "--vs"); i >= 0 {
				end = i
			}
			if err := fs.Parse(args[:end]); err != nil {
				return nil, nil, usageError{err}
			}
			args = append(slices.Clone(fs.Args()), args[end:]...)
		case vs:
			new, args = append(new, a), args[1:]
		default:
			base, args = append(base, a), args[1:]
		}
	}
	switch {
	case vs && (len(base) == 0 || len(new) == 0):
		return nil, nil, usagef("want traces on both sides of --vs: BASE... --vs NEW...")
	case !vs && len(base) != 2:
		return nil, nil, usagef("want two traces (BASE NEW), or BASE... --vs NEW... for repeated runs; got %d", len(base))
	case !vs:
		return base[:1], base[1:], nil
	}
	return base, new, nil
}

// measureRun loads one trace and measures it over its window, with its own
// topology and affinity.
func measureRun(cmd *cobra.Command, f *traceFlags, aff *affinityFlags, topoFlag, path string) (compare.Run, error) {
	n := len(f.warnings)
	ld, err := f.load(cmd, path)
	if err != nil {
		return compare.Run{}, err
	}
	// Each trace's warnings are printed under its loading; in the JSON
	// header they name the trace.
	defer func() {
		for i := n; i < len(f.warnings); i++ {
			f.warnings[i] = path + ": " + f.warnings[i]
		}
	}()
	tl := ld.Timeline
	win, err := f.window(tl)
	if err != nil {
		return compare.Run{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := f.checkFilter(cmd.ErrOrStderr(), tl); err != nil {
		return compare.Run{}, fmt.Errorf("%s: %w", path, err)
	}
	topo, err := topology.Resolve(ld.Meta.Topology, path, topoFlag, tl.NCPU)
	if err != nil {
		return compare.Run{}, fmt.Errorf("%s: %w", path, err)
	}
	am, err := aff.build(tl, nil)
	if err != nil {
		return compare.Run{}, fmt.Errorf("%s: %w", path, err)
	}
	// Only the figures are kept: the events go once walked.
	side, err := compare.Measure(tl, compare.Options{Window: win, Topology: topo, Filter: f.filter(), Affinity: am, DropEvents: true})
	if err != nil {
		return compare.Run{}, fmt.Errorf("%s: %w", path, err)
	}
	return compare.Run{Trace: traceSummary(ld), Side: side}, nil
}

// windowText says how each trace's window was chosen, for the report.
func (f *traceFlags) windowText() string {
	var parts []string
	if f.start != "" {
		parts = append(parts, "from "+f.start+" s")
	}
	if f.end != "" {
		parts = append(parts, "to "+f.end+" s")
	}
	if f.startMarker != "" {
		parts = append(parts, fmt.Sprintf("from the first trace marker containing %q", f.startMarker))
	}
	if f.endMarker != "" {
		parts = append(parts, fmt.Sprintf("to the first marker after the start containing %q", f.endMarker))
	}
	if len(parts) == 0 {
		return "the valid window of each trace"
	}
	return strings.Join(parts, " ") + ", in each trace (on its own clock), within its valid window"
}

// recordingOrder is compare.RecordingOrder over the dates in the meta.txt
// next to each trace ("" when a trace has none).
func recordingOrder(base, new []string) string {
	dates := func(paths []string) []time.Time {
		var out []time.Time
		for _, p := range paths {
			t, _ := ingest.DateNextTo(p)
			out = append(out, t)
		}
		return out
	}
	return compare.RecordingOrder(dates(base), dates(new))
}
