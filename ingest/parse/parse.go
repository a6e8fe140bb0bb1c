// Package parse holds what every trace reader shares: the Reader interface,
// reader Options, the Meta a reader learns about its trace, and the
// positioned ParseError. It exists so that the format packages
// (ingest/ftrace, ingest/perf, ingest/perfetto) and the sniffing front end
// (ingest) can share these types without an import cycle; package ingest
// re-exports them. The text readers (ftrace, perf script) also share the
// LineReader that splits their input into positioned lines, Blocks, which
// parses those lines on several goroutines and hands the results back in
// input order, and LostCPUs.
//
// It imports timeline and topology only.
package parse

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Sentinel causes carried by ParseError.Err; test them with errors.Is.
var (
	ErrTruncated    = errors.New("truncated")
	ErrBadField     = errors.New("bad field")
	ErrUnknownEvent = errors.New("unknown event")
	ErrBackwards    = errors.New("timestamp goes backwards")
	// ErrUnrecognized means "this input is not in my format": sniffing moves
	// on to the next reader. Any other error stops.
	ErrUnrecognized = errors.New("unrecognized format")
)

// ParseError is a positioned error about malformed input.
//
//	trace.txt:1042: sched_switch: field prev_state: want one of R,S,D,T,X,Z,I; got "Q"
//	boot.pftrace: offset 0x1f3a0: TracePacket: bytes field 2 truncated: want 180, have 12
type ParseError struct {
	File   string // as the user named it
	Line   int    // 1-based; 0 for binary input
	Offset int64  // byte offset where the bad record starts
	Record string // "sched_switch", "TracePacket.ftrace_events"
	Msg    string // what was expected, what was found
	Err    error  // ErrTruncated, ErrBadField, ... or a wrapped cause
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
	} else {
		b.WriteString("<input>")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	} else {
		fmt.Fprintf(&b, ": offset %#x", e.Offset)
	}
	b.WriteString(": ")
	if e.Record != "" {
		b.WriteString(e.Record)
		b.WriteString(": ")
	}
	if e.Msg != "" {
		b.WriteString(e.Msg)
	} else if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// Options configure a reader.
type Options struct {
	// Name is the file name as the user gave it, used in errors.
	Name string
	// Strings interns comms and marker texts; readers create one when nil.
	Strings *timeline.Strings
	// Lenient makes Next skip a malformed record (counting it in
	// Meta.Skipped and keeping the first errors in Meta.SkippedErrors)
	// instead of returning its error.
	Lenient bool
	// MaxEvents bounds the events ingest.Load keeps (ErrTooManyEvents
	// beyond): 0 derives the bound from the memory available
	// (ingest.MaxEventsFor), a negative value sets none. Streaming
	// readers ignore it.
	MaxEvents int64
	// Progress, when set, is told by ingest.Load and LoadReader how the
	// reading goes: bytes of the input read (before decompression) of
	// its total (0 when unknown: a pipe), and events so far; every 65,536
	// events and once at the end. A perf.data or trace.dat read in place
	// at offsets reports events only.
	Progress func(read, total int64, events int)
	// Workers is how many goroutines a text reader (ftrace, perf
	// script) may parse on, in blocks of lines (Blocks): 0 picks
	// WorkersFor(0), 1 parses in the goroutine that calls Next. The
	// events, strings, Meta and errors are the same for any value.
	Workers int
	// Summary makes a text, perf.data or trace.dat reader hand out events
	// with their time, CPU and kind only (a marker with its text), without
	// parsing their fields: the first read of a streamed analysis
	// (timeline.NewSummaryBuilder) needs no more. A malformed field is
	// then not found, and the comms are not interned; the read after it
	// parses everything.
	Summary bool
}

// WorkersFor returns the parsing goroutines Options.Workers asks for: n
// itself when positive, else one per CPU the process may use
// (GOMAXPROCS), at most 4.
func WorkersFor(n int) int {
	if n > 0 {
		return n
	}
	return min(runtime.GOMAXPROCS(0), 4)
}

// MaxSkippedErrors is how many skipped-record errors Meta keeps.
const MaxSkippedErrors = 20

// Meta is what a reader learns about its trace besides events. Readers fill
// it as they go; it is complete once Next has returned io.EOF.
type Meta struct {
	Format          string                    // "ftrace", "trace_pipe", "trace-cmd", "perf-script", "perfetto"
	NCPU            int                       // from "#P:N", "cpus=N", system info; 0 if unknown
	Clock           string                    // trace clock when the trace says it ("local", "mono", "boot"), else ""
	Kernel          string                    // kernel version when the trace says it
	EntriesInBuffer int64                     // ftrace header "entries-in-buffer/entries-written", -1 if absent
	EntriesWritten  int64                     // idem; written > in-buffer means the ring buffer overwrote events
	Coverage        timeline.Coverage         // what the trace proves about events overwritten, dropped or lost
	CoverageNote    string                    // the facts behind Coverage, in words ("the ftrace header counts ...")
	Topology        *topology.Topology        // CPU topology carried by the trace, or nil
	Unknown         map[string]int64          // events not interpreted, by name
	Skipped         int64                     // malformed records skipped under Lenient
	SkippedErrors   []error                   // the first MaxSkippedErrors of them
	Tasks           map[timeline.TID]TaskInfo // names and thread groups the trace states outside events (Perfetto process tree)
	Affinity        []timeline.AffinityChange // task affinity changes the trace states (schedlens' Perfetto task attributes), in file order
	Groups          []timeline.GroupChange    // task-group changes, likewise
	Sysctls         []string                  // scheduler sysctls the recorder read ("kernel.sched_autogroup_enabled=1"; schedlens' Perfetto machine packet)
	Warnings        []string                  // format-level remarks for the user
}

// TaskInfo is what a trace says about a task outside its events.
type TaskInfo struct {
	TGID int32  // -1 if unknown
	Comm string // thread name, "" if unknown
}

// NewMeta returns a Meta with its absent sentinels set.
func NewMeta(format string) *Meta {
	return &Meta{Format: format, EntriesInBuffer: -1, EntriesWritten: -1, Unknown: map[string]int64{}}
}

// Apply hands what the Builder needs from the trace's Meta to b: the CPU
// count and the coverage that decides the valid window. Call it after the
// reader returned io.EOF.
func (m *Meta) Apply(b *timeline.Builder) {
	b.SetNCPU(m.NCPU)
	b.SetCoverage(m.Coverage, m.CoverageNote)
	for _, a := range m.Affinity {
		b.AddAffinity(a)
	}
	for _, g := range m.Groups {
		b.AddGroup(g)
	}
}

// UnknownEvents is the number of events the reader counted but does not
// interpret (the sum of Unknown).
func (m *Meta) UnknownEvents() int64 {
	var n int64
	for _, c := range m.Unknown {
		n += c
	}
	return n
}

// Skip records a skipped malformed record.
func (m *Meta) Skip(err error) {
	m.Skipped++
	if len(m.SkippedErrors) < MaxSkippedErrors {
		m.SkippedErrors = append(m.SkippedErrors, err)
	}
}

// CPUDeclarer is a Reader whose input states how many CPUs the trace has
// before its events (perf.data's HEADER_NRCPUS, ftrace's "#P:N"), so that
// a walk of the events can begin before the last of them
// (timeline.Builder.WalkAlong). DeclaredCPUs returns 0 when the input
// states none.
type CPUDeclarer interface {
	DeclaredCPUs() int
}

// CoverageDeclarer is a Reader whose input states, before its events,
// what it proves about events overwritten or lost (ftrace's entries
// line): DeclaredCoverage returns the Meta.Coverage and CoverageNote the
// read will end with unless records after it revise them, so that a walk
// beside the read can begin from them; CoverageUnknown and "" when the
// input states nothing.
type CoverageDeclarer interface {
	DeclaredCoverage() (timeline.Coverage, string)
}

// Batcher is a Reader that also hands out a run of events at once, for a
// caller that reads many ahead (ingest's prefetch): NextBatch fills evs
// with the events Next would give, and returns how many and the error
// that ended them (io.EOF at the end). Fewer than len(evs) with a nil
// error means: call again.
type Batcher interface {
	NextBatch(evs []timeline.Event) (int, error)
}

// Reader hands out the events of one trace in file order.
type Reader interface {
	// Next fills ev with the next event. It returns io.EOF at the end and a
	// *ParseError for malformed input; every event before the error has
	// been handed out.
	Next(ev *timeline.Event) error
	// Meta returns what the reader learned so far.
	Meta() *Meta
	// Strings returns the interner that resolves the events' CommIDs.
	Strings() *timeline.Strings
}
