package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/progress"
	"github.com/schedlens/schedlens/report"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// traceFlags are the flags every trace-reading command shares.
type traceFlags struct {
	format      string
	start, end  string
	startMarker string
	endMarker   string
	pids        []int
	comms       []string
	lenient     bool
	maxEvents   int64
	jobs        int
	quiet       bool
	stream      string // --stream, on the commands that register it
	// warnings: what load and checkFilter printed on stderr, each once,
	// without the "warning: " prefix, for the JSON header.
	warnings []string
}

func (f *traceFlags) register(cmd *cobra.Command, formats string) {
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "text", "output format: "+formats)
	fl.StringVar(&f.start, "start", "", "window start, seconds on the trace clock as the trace prints them (e.g. 576.223558)")
	fl.StringVar(&f.end, "end", "", "window end, seconds on the trace clock")
	fl.StringVar(&f.startMarker, "start-marker", "", "window starts at the first trace marker (tracing_mark_write) containing this text")
	fl.StringVar(&f.endMarker, "end-marker", "", "window ends at the first trace marker after the start containing this text")
	fl.IntSliceVar(&f.pids, "pid", nil, "only these pids (repeat or comma-separate)")
	fl.StringSliceVar(&f.comms, "comm", nil, "only tasks that had this comm (repeat or comma-separate)")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress on stderr (shown only when stderr is a terminal and the work takes over a second)")
	fl.BoolVar(&f.lenient, "lenient", false, "skip malformed records (counted and reported) instead of stopping at the first")
	fl.IntVar(&f.jobs, "jobs", 0, "parse text traces on this many goroutines; 0: one per CPU, at most 4; the result is the same for any number")
	fl.Int64Var(&f.maxEvents, "max-events", 0, fmt.Sprintf("stop with an error beyond this many events; 0: half the available memory at %d bytes an event; -1: no limit", ingest.BytesPerEvent))
}

func (f *traceFlags) checkFormat(allowed ...string) error {
	for _, a := range allowed {
		if f.format == a {
			return nil
		}
	}
	return usagef("--format %q: want one of %s", f.format, strings.Join(allowed, ", "))
}

// parseSeconds parses seconds as a trace prints them (timeline.ParseSeconds).
func parseSeconds(s string) (timeline.Time, error) { return timeline.ParseSeconds(s) }

// window resolves the window flags against a loaded timeline.
func (f *traceFlags) window(tl *timeline.Timeline) (metrics.Window, error) {
	w := metrics.DefaultWindow(tl)
	if f.start != "" {
		t, err := parseSeconds(f.start)
		if err != nil {
			return w, usagef("--start: %v", err)
		}
		if t > w.Start {
			w.Start = t
		}
	}
	if f.end != "" {
		t, err := parseSeconds(f.end)
		if err != nil {
			return w, usagef("--end: %v", err)
		}
		if t < w.End {
			w.End = t
		}
	}
	if f.startMarker != "" || f.endMarker != "" {
		ms := tl.Markers()
		endFound := false
		found := f.startMarker == ""
		for _, m := range ms {
			if !found && strings.Contains(m.Text, f.startMarker) {
				w.Start = m.Time
				found = true
				if f.endMarker == "" {
					break
				}
				continue
			}
			if found && f.endMarker != "" && m.Time >= w.Start && strings.Contains(m.Text, f.endMarker) {
				w.End = m.Time
				endFound = true
				break
			}
		}
		if !found {
			return w, fmt.Errorf("--start-marker %q: no trace marker contains it (%d markers in the trace)", f.startMarker, len(ms))
		}
		if f.endMarker != "" && !endFound {
			return w, fmt.Errorf("--end-marker %q: no trace marker after the start contains it", f.endMarker)
		}
	}
	if w.End < w.Start {
		return w, usagef("window is empty: start %s is after end %s", w.Start.Seconds(), w.End.Seconds())
	}
	return w, nil
}

func (f *traceFlags) filter() metrics.Filter {
	var flt metrics.Filter
	for _, p := range f.pids {
		flt.PIDs = append(flt.PIDs, timeline.TID(p))
	}
	flt.Comms = f.comms
	return flt
}

// checkFilter fails when --pid/--comm select no task of tl, naming the
// trace's closest pids and comms, and warns on w about each value that
// selects nothing when others do.
func (f *traceFlags) checkFilter(w io.Writer, tl *timeline.Timeline) error {
	warn, err := f.filterWarnings(tl)
	if err != nil {
		return err
	}
	f.warn(w, warn)
	return nil
}

// filterWarnings is checkFilter's error, or its warnings as they would be
// printed, for a caller that prints them later.
func (f *traceFlags) filterWarnings(tl *timeline.Timeline) (string, error) {
	flt := f.filter()
	if err := flt.Check(tl); err != nil {
		return "", usageError{err}
	}
	misses, _ := flt.Misses(tl)
	var buf bytes.Buffer
	for _, m := range misses {
		fmt.Fprintf(&buf, "warning: --pid/--comm: %s\n", m)
	}
	return buf.String(), nil
}

// warn prints warning lines on w and keeps them for the JSON header.
func (f *traceFlags) warn(w io.Writer, lines string) {
	io.WriteString(w, lines)
	f.warnings = append(f.warnings, warningLines(lines)...)
}

// filterText describes --pid/--comm for reports: "pid 1,2 and comm foo", "" for none.
func (f *traceFlags) filterText() string {
	var parts []string
	if len(f.pids) > 0 {
		var ps []string
		for _, p := range f.pids {
			ps = append(ps, strconv.Itoa(p))
		}
		parts = append(parts, "pid "+strings.Join(ps, ","))
	}
	if len(f.comms) > 0 {
		parts = append(parts, "comm "+strings.Join(f.comms, ","))
	}
	return strings.Join(parts, " and ")
}

// prepare checks the flags, loads the trace and resolves the window: the
// common start of every trace command.
func (f *traceFlags) prepare(cmd *cobra.Command, path string, formats ...string) (*ingest.Loaded, metrics.Window, error) {
	if err := f.checkFormat(formats...); err != nil {
		return nil, metrics.Window{}, err
	}
	ld, err := f.load(cmd, path)
	if err != nil {
		return nil, metrics.Window{}, err
	}
	win, err := f.window(ld.Timeline)
	if err != nil {
		return ld, win, err
	}
	return ld, win, f.checkFilter(cmd.ErrOrStderr(), ld.Timeline)
}

// validate checks the flags that need no trace, so that a usage error does
// not wait for a multi-GB trace to load.
func (f *traceFlags) validate() error {
	if f.jobs < 0 || f.jobs > 256 {
		return usagef("--jobs %d: want 0 (one per CPU) to 256", f.jobs)
	}
	for _, v := range []struct{ name, val string }{{"--start", f.start}, {"--end", f.end}} {
		if v.val == "" {
			continue
		}
		if _, err := parseSeconds(v.val); err != nil {
			return usagef("%s: %v", v.name, err)
		}
	}
	if f.start != "" && f.end != "" {
		s, _ := parseSeconds(f.start)
		e, _ := parseSeconds(f.end)
		if e < s {
			return usagef("--start %s is after --end %s: the window would be empty", f.start, f.end)
		}
	}
	if f.start != "" && f.startMarker != "" {
		return usagef("--start and --start-marker both set the window start: give one")
	}
	if f.end != "" && f.endMarker != "" {
		return usagef("--end and --end-marker both set the window end: give one")
	}
	return nil
}

// checkInputs reads the --topology and --affinity files (or checks the
// preset name) before the trace, so that a mistake in them does not wait
// for a multi-GB trace to load.
func checkInputs(topoFlag string, aff *affinityFlags) error {
	if topoFlag != "" {
		if _, err := topology.LoadOrPreset(topoFlag); err != nil {
			return fmt.Errorf("--topology: %w", err)
		}
	}
	if aff != nil {
		return aff.read()
	}
	return nil
}

// load reads a trace and prints what the user must know about its quality to
// stderr.
func (f *traceFlags) load(cmd *cobra.Command, path string) (*ingest.Loaded, error) {
	ld, err := f.loadQuiet(cmd, path)
	if err != nil {
		return nil, err
	}
	f.warnLoad(cmd, ld)
	return ld, nil
}

// loadQuiet is load without the warnings, for a caller that walks the
// timeline before it prints them: the count of inconsistencies they give
// then costs no walk of its own.
func (f *traceFlags) loadQuiet(cmd *cobra.Command, path string) (*ingest.Loaded, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	var ld *ingest.Loaded
	err := f.read(cmd, path, "", func(opts ingest.Options) (err error) {
		if path == "-" {
			ld, err = ingest.LoadReader(stdinFile, path, opts)
		} else {
			ld, err = ingest.Load(path, opts)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return ld, nil
}

// read runs one read of the trace at path with the options the flags set,
// drawing its progress (named with pass, if any) when it is wanted; the
// bar is done before anything else goes to stderr. A failed read's error
// is loadError's.
func (f *traceFlags) read(cmd *cobra.Command, path, pass string, read func(ingest.Options) error) error {
	opts := ingest.Options{Name: path, Lenient: f.lenient, MaxEvents: f.maxEvents, Workers: f.jobs}
	if path == "-" {
		opts.Name = "<stdin>"
	}
	var bar *progress.Bar
	if progress.Wanted(cmd.ErrOrStderr(), f.quiet) {
		name := opts.Name
		if pass != "" {
			name += " (" + pass + ")"
		}
		bar = progress.Reading(cmd.ErrOrStderr(), name)
		opts.Progress = func(read, total int64, events int) { bar.Update(read, total, events) }
	}
	err := read(opts)
	bar.Done()
	if err != nil {
		return f.loadError(err)
	}
	return nil
}

// loadError is a failed read's error, with the --lenient hint when a
// malformed record stopped it.
func (f *traceFlags) loadError(err error) error {
	var rerr *ingest.RecordError
	if !f.lenient && errors.As(err, &rerr) && !errors.Is(err, ingest.ErrTooManyEvents) {
		// Only a malformed record can be skipped; a missing, empty or
		// unrecognized file cannot.
		return fmt.Errorf("%w (use --lenient to skip malformed records)", err)
	}
	return err
}

// simulationProgress is the progress of model runs on stderr when it is
// wanted (a terminal, no --quiet), else nil; Done it when the runs end.
func (f *traceFlags) simulationProgress(cmd *cobra.Command) (*progress.Bar, func(doneNs, totalNs int64)) {
	if !progress.Wanted(cmd.ErrOrStderr(), f.quiet) {
		return nil, nil
	}
	bar := progress.Simulating(cmd.ErrOrStderr(), cmd.Name())
	return bar, func(d, t int64) { bar.Update(d, t, 0) }
}

// header is the head of a JSON document about one loaded trace.
func (f *traceFlags) header(cmd *cobra.Command, args []string, ld *ingest.Loaded, win metrics.Window) report.Header {
	t := traceSummary(ld)
	return report.Header{Command: commandLine(cmd, args), Version: Version, Trace: report.NewTraceJSON(&t),
		Window: report.WindowRangeJSON{StartNs: int64(win.Start), EndNs: int64(win.End)}, Warnings: f.warnings}
}

// warningLines splits what warnLoad and checkFilter print into the
// warnings of the JSON header: one a line, without "warning: ", each once.
func warningLines(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(strings.TrimPrefix(l, "warning: ")); l != "" && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// traceSummary is the report's summary of a loaded trace: the timeline's
// figures and what the reader knows beside them.
func traceSummary(ld *ingest.Loaded) report.Trace {
	t := report.NewTrace(ld.Timeline, ld.Path)
	t.Format, t.Compression, t.Clock, t.Kernel = ld.Meta.Format, ld.Compression, ld.Meta.Clock, ld.Meta.Kernel
	t.SkippedRecords = ld.Meta.Skipped
	t.UnknownEvents = ld.Meta.UnknownEvents()
	return t
}

func warnLoad(w io.Writer, ld *ingest.Loaded) {
	tl, m := ld.Timeline, ld.Meta
	if m.Skipped > 0 {
		fmt.Fprintf(w, "warning: %d malformed records skipped (--lenient); first: %v\n", m.Skipped, m.SkippedErrors[0])
	}
	// Each lost gap has its line up to maxLostLines; beyond, one line sums
	// them per CPU (a perf record with a small buffer writes hundreds).
	const maxLostLines = 5
	var lost []timeline.Gap
	for _, g := range tl.Gaps {
		if g.Kind == timeline.GapLost {
			lost = append(lost, g)
		}
	}
	if len(lost) <= maxLostLines {
		for _, g := range lost {
			n := "an unknown number of"
			if g.Lost >= 0 {
				n = strconv.FormatInt(g.Lost, 10)
			}
			fmt.Fprintf(w, "warning: %s events lost on CPU %d between %s and %s; nothing is measured across the gap\n", n, g.CPU, g.Start.Seconds(), g.End.Seconds())
		}
	} else {
		type cpuLost struct {
			gaps, unknown int
			events        int64
			span          timeline.Time
		}
		by := map[timeline.CPU]*cpuLost{}
		var cpus []timeline.CPU
		for _, g := range lost {
			c := by[g.CPU]
			if c == nil {
				c = &cpuLost{}
				by[g.CPU] = c
				cpus = append(cpus, g.CPU)
			}
			c.gaps++
			c.span += g.End - g.Start
			if g.Lost >= 0 {
				c.events += g.Lost
			} else {
				c.unknown++
			}
		}
		slices.Sort(cpus)
		var parts []string
		for _, cpu := range cpus {
			c := by[cpu]
			p := fmt.Sprintf("CPU %d: %d gaps, %d events", cpu, c.gaps, c.events)
			if c.unknown > 0 {
				p += fmt.Sprintf(" and %d gaps of an unknown count", c.unknown)
			}
			parts = append(parts, p+fmt.Sprintf(", %s ms", strconv.FormatFloat(float64(c.span)/1e6, 'f', 3, 64)))
		}
		fmt.Fprintf(w, "warning: events lost in %d gaps (%s); nothing is measured across a gap (cpus --format json lists the counts per CPU)\n", len(lost), strings.Join(parts, "; "))
	}
	if tl.ValidStart != tl.Start {
		fmt.Fprintf(w, "warning: CPU buffers start at different times: the valid window starts at %s, not %s; %s\n", tl.ValidStart.Seconds(), tl.Start.Seconds(), tl.ValidStartReason)
	}
	if n := len(tl.Inconsistencies()); n > 0 {
		fmt.Fprintf(w, "warning: %d inconsistencies (switch events missing from the trace); the intervals they touch are counted as unknown, not charged to a task\n", n)
	}
	for _, s := range m.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
}

// stdinFile is the standard input traces are read from ("-", or a pipe
// into a command given no TRACE); tests replace it.
var stdinFile = os.Stdin

// stdinHasTrace reports whether standard input is a pipe or a regular file
// (not a terminal, nor a device such as /dev/null): then a command given no
// TRACE reads it.
func stdinHasTrace() bool {
	if stdinFile == nil {
		return false
	}
	fi, err := stdinFile.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeNamedPipe != 0 || fi.Mode().IsRegular()
}

// outputError describes a failure to write the -o file by the path the user
// gave, not by the temporary file written beside it.
func outputError(out string, err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("-o %s: %s: %w", out, pe.Op, pe.Err)
	case errors.As(err, &le):
		return fmt.Errorf("-o %s: %w", out, le.Err)
	}
	return fmt.Errorf("-o %s: %w", out, err)
}

// ms1 formats nanoseconds as milliseconds to 0.1 ms, for narrow tables.
func ms1(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 1, 64) }

// ms formats nanoseconds as milliseconds with microsecond precision.
func ms(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 3, 64) }

// commandLine is the command line as the user typed it, shell-quoted, for
// reproducible reports.
func commandLine(cmd *cobra.Command, args []string) string {
	_ = args
	parts := []string{"schedlens"}
	for i := 0; i < len(invocation); i++ {
		a := invocation[i]
		// The profiling flags, --jobs and --stream change nothing in the output:
		// leaving them out keeps the report the same with and without
		// them.
		name, _, hasValue := strings.Cut(a, "=")
		if name == "--cpuprofile" || name == "--memprofile" || name == "--jobs" || name == "--stream" {
			if !hasValue {
				i++
			}
			continue
		}
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// wrapCommand breaks a command line into shell continuation lines of at most
// width columns (a single word longer than that stays whole).
func wrapCommand(line string, width int) string {
	return fold(line, "", " \\\n", "    ", width, 2)
}

// wrapText folds text into lines of at most width columns (a word longer
// than that stays whole), the first prefixed by first, the others by an
// indent as wide as it.
func wrapText(first, text string, width int) string {
	return fold(text, first, "\n", strings.Repeat(" ", len(first)), width, 0)
}

// fold writes the words of text after first, breaking a line with brk
// followed by indent before a word that would end past width-reserve.
func fold(text, first, brk, indent string, width, reserve int) string {
	var b strings.Builder
	b.WriteString(first)
	col := len(first)
	for i, w := range strings.Fields(text) {
		if i > 0 {
			if col+1+len(w)+reserve > width {
				b.WriteString(brk + indent)
				col = len(indent)
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(w)
		col += len(w)
	}
	return b.String()
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,:+@%", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}
