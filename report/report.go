package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Trace describes the analysed trace for the summary section. NewTrace
// fills what the timeline knows; the caller adds what the reader said.
type Trace struct {
	Path string
	// Embedded: the trace built into the binary, analysed because no file
	// was given; EmbeddedAbout says what it is.
	Embedded      bool
	EmbeddedAbout string

	Format      string // "ftrace", "trace_pipe", "trace-cmd", "perf-script", "perfetto"
	Compression string // "", "gzip", "zstd"
	Clock       string
	Kernel      string

	CPUs            int
	Events          int
	LostEvents      int64     // events the trace says were lost
	LostGaps        int       // lost-event records
	Late            []LateCPU // CPUs whose first event comes after the trace's
	Start           timeline.Time
	End             timeline.Time
	ValidStart      timeline.Time
	ValidStartRule  timeline.StartRule
	ValidStartWhy   string // timeline.Timeline.ValidStartReason
	Inconsistencies int
	SkippedRecords  int64 // malformed records skipped under --lenient
	UnknownEvents   int64 // events schedlens does not interpret
	HasWaking       bool
	HasWakeup       bool
}

// LateCPU is a CPU whose events start after the trace's first event: a
// clipped buffer under timeline.StartLatestCPU, a quiet CPU under
// timeline.StartFirstEvent.
type LateCPU struct {
	CPU     timeline.CPU
	StartNs int64 // its first event
	LateNs  int64 // after the trace's first event
}

// NewTrace summarises tl. What the reader knows and the timeline does not
// (format, compression, clock, kernel, skipped records, events it counted
// but does not interpret) the caller fills in.
func NewTrace(tl *timeline.Timeline, path string) Trace {
	t := Trace{Path: path, CPUs: tl.NCPU, Events: tl.Len(), LostEvents: tl.LostEvents, Start: tl.Start, End: tl.End,
		ValidStart: tl.ValidStart, ValidStartRule: tl.ValidStartRule, ValidStartWhy: tl.ValidStartReason,
		Inconsistencies: len(tl.Inconsistencies()), HasWaking: tl.HasWaking, HasWakeup: tl.HasWakeup}
	for _, g := range tl.Gaps {
		if g.Kind == timeline.GapLost {
			t.LostGaps++
		}
	}
	for c, f := range tl.CPUFirst {
		if f != timeline.NoTime && f > tl.Start {
			t.Late = append(t.Late, LateCPU{CPU: timeline.CPU(c), StartNs: int64(f), LateNs: int64(f - tl.Start)})
		}
	}
	return t
}

// Input is everything a report renders.
type Input struct {
	Trace    Trace
	Analysis *metrics.Analysis
	// Tasks is the per-task accounting of the window (metrics.Account),
	// already filtered; the report ranks it by runnable time.
	Tasks []metrics.TaskTimes
	// Filter describes a --pid/--comm selection ("" for none).
	Filter string
	// Top is how many rows the ranked tables show; 0 means 10.
	Top int
	// Warnings from loading the trace (lost events, skipped records, ...);
	// the report adds its own.
	Warnings []string
	// Command is the exact command line; Version the schedlens version.
	Command string
	Version string
}

func (in *Input) top() int {
	if in.Top <= 0 {
		return 10
	}
	return in.Top
}

// Formats lists the formats of Write.
var Formats = []string{"text", "markdown", "json", "html"}

// Section selects what Write renders.
type Section uint8

// Sections: the whole report or one metric in detail.
const (
	Full Section = iota
	LatencySection
	IdleSection
	MisplacedSection
)

// Write renders section of in in format: "text" (80 columns, for mail),
// "markdown", "json" or "html".
func Write(w io.Writer, in *Input, section Section, format string) error {
	switch format {
	case "text", "markdown":
		d := &doc{w: w, md: format == "markdown"}
		r := &writer{d: d, in: in, a: in.Analysis}
		r.render(section)
		return d.err
	case "json":
		return writeJSON(w, in, section)
	case "html":
		return writeHTML(w, in, section)
	}
	return fmt.Errorf("unknown format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// Time formatting shared by the renderers.

// msf formats ns as milliseconds with microsecond precision.
func msf(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 3, 64) }

// usf formats ns as microseconds: one decimal below 100 us, whole
// microseconds above (traces in text formats have microsecond timestamps).
func usf(ns int64) string {
	if ns < 100_000 && ns > -100_000 {
		return strconv.FormatFloat(float64(ns)/1e3, 'f', 1, 64)
	}
	return strconv.FormatInt((ns+500)/1000, 10)
}

// pct formats a/b as a percentage.
func pct(a, b int64) string {
	if b <= 0 {
		return "-"
	}
	return strconv.FormatFloat(100*float64(a)/float64(b), 'f', 1, 64) + "%"
}

// TopologySummary describes t in one line: "8 CPUs: 4 cores x 2 SMT, 1
// LLC, 1 NUMA node, capacity 1024".
func TopologySummary(t *topology.Topology) string {
	if t == nil {
		return "unknown"
	}
	cores, llcs, nodes := map[int]int{}, map[int]bool{}, map[int]bool{}
	var caps []int
	for _, c := range t.CPUs {
		cores[c.Core]++
		llcs[c.Cluster] = true
		nodes[c.Node] = true
		if !slices.Contains(caps, c.Capacity) {
			caps = append(caps, c.Capacity)
		}
	}
	maxThreads := 0
	for _, n := range cores {
		maxThreads = max(maxThreads, n)
	}
	s := fmt.Sprintf("%d CPUs: %d cores", t.NCPU(), len(cores))
	if maxThreads > 1 {
		s += fmt.Sprintf(" x %d SMT threads", maxThreads)
	} else {
		s += ", no SMT"
	}
	s += fmt.Sprintf(", %d LLC%s, %d NUMA node%s", len(llcs), plural(len(llcs)), len(nodes), plural(len(nodes)))
	slices.Sort(caps)
	if len(caps) == 1 {
		s += fmt.Sprintf(", capacity %d", caps[0])
	} else {
		var cs []string
		for _, c := range slices.Backward(caps) {
			var ids []int
			for _, cpu := range t.CPUs {
				if cpu.Capacity == c {
					ids = append(ids, cpu.ID)
				}
			}
			cs = append(cs, fmt.Sprintf("%d on CPU %s", c, topology.FormatCPUList(ids)))
		}
		s += ", capacity " + strings.Join(cs, ", ")
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// DomainsSummary describes t's sched-domain levels in one line, lowest
// first, with where they come from: "SMT {0-1} {2-3}, MC {0-3}: the
// kernel's listing (file:PATH)" or "...: derived from the CPU topology".
// Levels of more than 8 groups show their count.
func DomainsSummary(t *topology.Topology) string {
	if t == nil {
		return "unknown"
	}
	var levels []string
	for _, d := range t.Domains() {
		gs := d.Groups()
		if len(gs) > 8 {
			levels = append(levels, fmt.Sprintf("%s (%d groups)", d.Name, len(gs)))
			continue
		}
		var parts []string
		for _, g := range gs {
			parts = append(parts, "{"+topology.FormatCPUList(g)+"}")
		}
		levels = append(levels, d.Name+" "+strings.Join(parts, " "))
	}
	if len(levels) == 0 {
		levels = append(levels, "none")
	}
	return strings.Join(levels, ", ") + ": " + t.DomainSource()
}

// TopologySource says where the topology came from, for people.
func TopologySource(t *topology.Topology) string {
	if t == nil {
		return "none"
	}
	src := t.Source
	switch {
	case strings.HasPrefix(src, "file:"):
		return "from " + strings.TrimPrefix(src, "file:")
	case strings.HasPrefix(src, "preset:"):
		return "preset " + strings.TrimPrefix(src, "preset:")
	case strings.HasPrefix(src, "embedded:"):
		return "from " + strings.TrimPrefix(src, "embedded:") + " (embedded with the trace)"
	case src == "trace":
		return "from the trace"
	case src == "default", src == "":
		return "assumed (no topology in the trace, next to it, or from --topology)"
	}
	return src
}
