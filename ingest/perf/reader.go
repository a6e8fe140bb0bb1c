package perf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

const (
	// maxCPU is the highest CPU number accepted (the one limit,
	// topology.MaxCPUs); it bounds the per-CPU state a hostile input can
	// make us keep.
	maxCPU = topology.MaxCPUs - 1
	// maxLine bounds one line; longer lines are a ParseError.
	maxLine = 4 << 20
)

// Reader reads `perf script` text. It implements parse.Reader. It is not
// safe for concurrent use.
//
// A line is parsed by a lineParser, which needs nothing from the lines
// before it, and then applied in order by the Reader (apply): the texts
// interned, per-CPU time checks, lost records and the event held behind
// them, header lines, Meta, the counts of events not interpreted. With
// more than one worker (parse.Options.Workers) the parsing runs on several
// goroutines, block by block (parse.Blocks), and the Reader applies the
// results in input order, so the events, the interned strings, Meta and
// every error are the same as with one.
type Reader struct {
	lr     parse.LineReader
	parser lineParser // serial mode
	res    lineRes    // the current line's parse, serial mode
	pipe   *parse.Blocks[lineRes, struct{}]
	opts   parse.Options
	strs   *timeline.Strings
	meta   *parse.Meta

	lost   parse.LostCPUs // per CPU: last record time, a loss not yet handed out
	maxCPU int

	held    timeline.Event // event to hand out after a KindLost
	hasHeld bool

	eof bool // input exhausted; flushing pending losses
	err error

	ncpuAvail  int // from "# nrcpus avail", 0 if absent
	ncpuOnline int // from "# nrcpus online", 0 if absent
	latency    bool
	names      map[string]string // event names counted in Meta.Unknown

	header    bool // a --header block was read
	backward  bool // its event attributes say write_backward (perf record --overwrite)
	lostLines int  // PERF_RECORD_LOST records read
	firstLost int  // line of the first
}

var _ parse.Reader = (*Reader)(nil)

// NewReader returns a Reader of the perf script text r. It reads nothing
// until Next, unless it parses on several goroutines
// (parse.Options.Workers), which start reading at once; Close stops them.
func NewReader(r io.Reader, opts parse.Options) (*Reader, error) {
	if r == nil {
		return nil, errors.New("perf: nil input")
	}
	strs := opts.Strings
	if strs == nil {
		strs = timeline.NewStrings()
	}
	rd := &Reader{
		parser: lineParser{name: opts.Name, summary: opts.Summary},
		opts:   opts,
		strs:   strs,
		meta:   parse.NewMeta("perf-script"),
		maxCPU: -1,
		names:  map[string]string{},
	}
	rd.lr.Init(r, opts.Name, maxLine, opts.Lenient, readErr)
	if w := parse.WorkersFor(opts.Workers); w > 1 {
		rd.pipe = parse.StartBlocks(&rd.lr, w, blockLines, rd.newParser)
	}
	return rd, nil
}

// Meta returns what the Reader learned so far; it is complete after Next
// has returned io.EOF.
func (r *Reader) Meta() *parse.Meta { return r.meta }

// Strings returns the interner of the events' comms and marker texts.
func (r *Reader) Strings() *timeline.Strings { return r.strs }

// Next fills ev with the next event. It returns io.EOF at the end of the
// input and a *parse.ParseError for malformed input (unless Options.Lenient).
// After an error other than a skipped one, Next keeps returning it.
func (r *Reader) Next(ev *timeline.Event) error {
	if r.hasHeld {
		*ev = r.held
		r.hasHeld = false
		return nil
	}
	if r.err != nil {
		ev.Reset()
		return r.err
	}
	for !r.eof {
		res, err := r.nextLine()
		if err == io.EOF {
			r.finish()
			break
		}
		if err != nil {
			return r.fail(ev, err)
		}
		ok, perr := r.apply(res)
		if perr != nil {
			if r.opts.Lenient {
				r.meta.Skip(perr)
				continue
			}
			return r.fail(ev, perr)
		}
		if ok {
			*ev = res.ev
			r.commit(ev)
			return nil
		}
	}
	return r.flush(ev)
}

// nextLine returns the parse of the next line, from the workers or parsed
// here.
func (r *Reader) nextLine() (*lineRes, error) {
	if r.pipe != nil {
		res, _, err := r.pipe.Next()
		return res, err
	}
	line, err := r.lr.Next()
	if err != nil {
		return nil, err
	}
	r.parser.parse(line, r.lr.Pos(), &r.res)
	return &r.res, nil
}

// fail makes err the error Next returns from now on; the goroutines of a
// parallel read stop, since nothing more will be read.
func (r *Reader) fail(ev *timeline.Event, err error) error {
	ev.Reset()
	r.err = err
	r.Close()
	return err
}

// readErr makes the error about the input name that failed while its line
// at pos was read.
func readErr(name string, pos parse.LinePos, err error) error {
	return &parse.ParseError{File: name, Line: pos.Line, Offset: pos.Off, Record: "perf script line",
		Msg: "reading input: " + err.Error(), Err: err}
}

// apply carries out a parsed line in input order: it interns the line's
// texts, checks a sample's time against its CPU's previous record, records
// a loss, reads a header line, counts what is not interpreted. It reports
// whether res.ev is an event to hand out; lines that carry none (comments,
// counted records, lost records) give false and no error.
func (r *Reader) apply(res *lineRes) (bool, *parse.ParseError) {
	switch res.kind {
	case resNone:
		return false, nil
	case resErr:
		return false, res.err
	case resHeader:
		r.headerLine(res.get(res.name), res.lineNo)
		return false, nil
	case resCount:
		r.countUnknown(res.get(res.name))
		r.noteLayout(res.latency)
		return false, nil
	case resLost:
		if r.lostLines++; r.lostLines == 1 {
			r.firstLost = res.lineNo
		}
		if res.err != nil {
			return false, res.err
		}
		cpu := int(res.ev.CPU)
		r.growCPU(cpu)
		r.lost.Add(cpu, res.ev.Arg, res.ev.Time)
		r.noteLayout(res.latency)
		return false, nil
	}
	ev := &res.ev
	if res.comm.hi > 0 {
		if ev.Kind == timeline.KindMarker {
			ev.Arg = int64(r.strs.ID(res.get(res.comm)))
		} else {
			ev.Comm = r.strs.ID(res.get(res.comm))
		}
	}
	if res.ocomm.hi > 0 {
		ev.OComm = r.strs.ID(res.get(res.ocomm))
	}
	cpu := int(ev.CPU)
	if last := r.lost.LastOf(cpu); last != timeline.NoTime && ev.Time < last {
		return false, r.parser.errorf(parse.LinePos{Line: res.lineNo, Off: res.off}, string(res.get(res.name)), parse.ErrBackwards,
			"timestamp %s on CPU %d is before the CPU's previous record at %s",
			fmtTime(ev.Time), cpu, fmtTime(last))
	}
	r.growCPU(cpu)
	r.lost.See(cpu, ev.Time)
	r.noteLayout(res.latency)
	if ev.Kind == timeline.KindUnknown {
		// Count by the bare name, as ftrace prints it, unless the bare name
		// is one this Reader interprets in another system
		// ("probe:sched_switch").
		name := res.get(res.name)
		if knownName(name) {
			name = res.get(res.full)
		}
		r.countUnknown(name)
		return false, nil
	}
	return true, nil
}

// noteLayout warns, once, about a layout that loses information.
func (r *Reader) noteLayout(latency bool) {
	if latency && !r.latency {
		r.latency = true
		r.meta.Warnings = append(r.meta.Warnings,
			"perf script -L layout: the comm column is cut to 8 characters")
	}
}

func (r *Reader) growCPU(cpu int) {
	if cpu > r.maxCPU {
		r.maxCPU = cpu
	}
}

// commit hands out a pending loss of ev's CPU before ev itself.
func (r *Reader) commit(ev *timeline.Event) {
	held := *ev
	if r.lost.Take(int(ev.CPU), ev.Time, ev) {
		r.held, r.hasHeld = held, true
	}
}

// finish completes Meta once the input is exhausted.
func (r *Reader) finish() {
	r.eof = true
	r.coverage()
	seen := r.maxCPU + 1
	switch {
	case r.ncpuAvail > 0 || r.ncpuOnline > 0:
		n := r.ncpuAvail
		if n == 0 {
			n = r.ncpuOnline
		}
		r.meta.NCPU = n
		if seen > n {
			r.meta.NCPU = seen
			r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf(
				"the perf header says %d CPUs but records name CPU %d; NCPU set to %d", n, r.maxCPU, seen))
		}
	case seen > 0:
		r.meta.NCPU = seen
		r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf(
			"perf script does not state the CPU count: NCPU=%d inferred from the highest CPU seen", seen))
	default:
		r.meta.Warnings = append(r.meta.Warnings,
			"perf script does not state the CPU count and no record named a CPU: NCPU unknown")
	}
}

// flush hands out the losses still pending at the end of the input, one per
// call, then io.EOF.
func (r *Reader) flush(ev *timeline.Event) error {
	if r.lost.Flush(ev) {
		return nil
	}
	ev.Reset()
	return io.EOF
}

// headerLine reads the facts Meta wants from the --header line of number
// lineNo.
func (r *Reader) headerLine(line []byte, lineNo int) {
	key, val, ok := bytes.Cut(line[1:], []byte(" : "))
	if !ok {
		return
	}
	key = bytes.TrimSpace(key)
	val = bytes.TrimSpace(val)
	r.header = true
	switch string(key) {
	case "event":
		// "# event : name = sched:sched_switch, , id = { ... }, ...,
		// write_backward = 1" (print_event_desc in tools/perf/util/header.c,
		// attribute fields from perf_event_attr__fprintf).
		if bytes.Contains(val, []byte("write_backward = 1")) {
			r.backward = true
		}
	case "os release":
		r.meta.Kernel = string(val)
	case "nrcpus avail", "nrcpus online":
		n, err := strconv.Atoi(string(val))
		if err != nil || n <= 0 || n > maxCPU+1 {
			r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf("line %d: ignoring %q", lineNo, clip(line)))
			return
		}
		if string(key) == "nrcpus avail" {
			r.ncpuAvail = n
		} else {
			r.ncpuOnline = n
		}
	}
}

// countUnknown counts an event the Reader does not interpret.
func (r *Reader) countUnknown(name []byte) {
	k, ok := r.names[string(name)]
	if !ok {
		k = string(name)
		r.names[k] = k
	}
	r.meta.Unknown[k]++
}

// recordName returns the PERF_RECORD_* word at the start of b.
func recordName(b []byte) []byte {
	i := bytes.IndexAny(b, " :(")
	if i < 0 {
		return b
	}
	return b[:i]
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// clip shortens b for an error message.
func clip(b []byte) []byte {
	const n = 48
	if len(b) > n {
		return b[:n]
	}
	return b
}

func fmtTime(t timeline.Time) string {
	if t < 0 {
		return strconv.FormatInt(int64(t), 10)
	}
	return fmt.Sprintf("%d.%09d", int64(t)/1e9, int64(t)%1e9)
}
