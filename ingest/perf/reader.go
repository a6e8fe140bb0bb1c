package perf

import (
	"bufio"
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
	// bufSize is the bufio buffer; lines up to this size are parsed in place.
	bufSize = 64 << 10
)

// Reader reads `perf script` text. It implements parse.Reader.
type Reader struct {
	br   *bufio.Reader
	name string
	opts parse.Options
	strs *timeline.Strings
	meta *parse.Meta

	line    int   // 1-based number of the line being parsed
	off     int64 // offset of the line being parsed
	nextOff int64 // offset of the next line
	long    []byte

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
// until Next.
func NewReader(r io.Reader, opts parse.Options) (*Reader, error) {
	if r == nil {
		return nil, errors.New("perf: nil input")
	}
	strs := opts.Strings
	if strs == nil {
		strs = timeline.NewStrings()
	}
	return &Reader{
		br:     bufio.NewReaderSize(r, bufSize),
		name:   opts.Name,
		opts:   opts,
		strs:   strs,
		meta:   parse.NewMeta("perf-script"),
		maxCPU: -1,
		names:  map[string]string{},
	}, nil
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
		line, eof, tooLong, err := r.readLine()
		if err != nil {
			ev.Reset()
			r.err = err
			return err
		}
		if eof && len(line) == 0 && !tooLong {
			r.finish()
			break
		}
		var ok bool
		var perr *parse.ParseError
		if tooLong {
			perr = r.errorf("perf script line", parse.ErrBadField, "line longer than %d bytes", maxLine)
		} else {
			ok, perr = r.parseLine(line, ev, eof)
		}
		if perr != nil {
			ev.Reset()
			if r.opts.Lenient {
				r.meta.Skip(perr)
				continue
			}
			r.err = perr
			return perr
		}
		if ok {
			r.commit(ev)
			return nil
		}
	}
	return r.flush(ev)
}

// readLine returns the next line with its newline, advancing the position.
// eof is true for the last line when it has no newline (or is empty).
// tooLong is true, with no bytes, for a line over maxLine.
func (r *Reader) readLine() (line []byte, eof, tooLong bool, err error) {
	r.line++
	r.off = r.nextOff
	line, err = r.br.ReadSlice('\n')
	n := int64(len(line))
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], line...)
		for err == bufio.ErrBufferFull {
			if tooLong && !r.opts.Lenient {
				// The error ends the reading: do not read a line of
				// gigabytes to its end to say so.
				r.eof = true
				return nil, true, true, nil
			}
			line, err = r.br.ReadSlice('\n')
			n += int64(len(line))
			if !tooLong && len(r.long)+len(line) <= maxLine {
				r.long = append(r.long, line...)
			} else {
				tooLong = true
			}
		}
		line = r.long
	}
	r.nextOff += n
	switch {
	case err == io.EOF:
		eof = true
	case err != nil:
		return nil, false, false, r.readErr(err)
	}
	if tooLong {
		return nil, eof, true, nil
	}
	return line, eof, false, nil
}

func (r *Reader) readErr(err error) error {
	return &parse.ParseError{File: r.name, Line: r.line, Offset: r.off, Record: "perf script line",
		Msg: "reading input: " + err.Error(), Err: err}
}

// errorf builds a positioned error about the current line.
func (r *Reader) errorf(record string, sentinel error, format string, args ...any) *parse.ParseError {
	return &parse.ParseError{File: r.name, Line: r.line, Offset: r.off, Record: record,
		Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// parseLine parses one line into ev. It reports whether ev holds an event
// to hand out; lines that carry none (comments, counted records, lost
// records) give false and no error.
func (r *Reader) parseLine(line []byte, ev *timeline.Event, unterminated bool) (bool, *parse.ParseError) {
	line = trimEOL(line)
	if len(line) == 0 || line[0] == '\t' {
		return false, nil
	}
	if line[0] == '#' {
		r.headerLine(line)
		return false, nil
	}
	if bytes.HasPrefix(line, []byte("PERF_RECORD_")) {
		// Records printed without a sample header (--show-round-events).
		r.countUnknown(recordName(line))
		return false, nil
	}
	ev.Reset()
	var s sample
	if msg := s.parse(line); msg != "" {
		return false, r.lineError(&s, msg, unterminated)
	}
	if s.record {
		perr := r.record(&s, unterminated)
		if perr == nil {
			r.noteLayout(&s)
		}
		return false, perr
	}
	ev.Time = s.time
	ev.CPU = timeline.CPU(s.cpu)
	ev.TGID = s.tgid
	kind, msg := r.fill(&s, ev)
	if msg != "" {
		return false, r.lineError(&s, msg, unterminated)
	}
	if perr := r.checkTime(&s); perr != nil {
		return false, perr
	}
	r.see(&s)
	r.noteLayout(&s)
	if kind == timeline.KindUnknown {
		// Count by the bare name, as ftrace prints it, unless the bare name
		// is one this Reader interprets in another system
		// ("probe:sched_switch").
		name := s.event
		if knownName(s.event) {
			name = s.full
		}
		r.countUnknown(name)
		return false, nil
	}
	ev.Kind = kind
	return true, nil
}

// noteLayout warns, once, about a layout that loses information.
func (r *Reader) noteLayout(s *sample) {
	if s.latency && !r.latency {
		r.latency = true
		r.meta.Warnings = append(r.meta.Warnings,
			"perf script -L layout: the comm column is cut to 8 characters")
	}
}

// lineError wraps a parse failure of the current line: a bad last line
// without a newline is a cut-off line.
func (r *Reader) lineError(s *sample, msg string, unterminated bool) *parse.ParseError {
	sentinel := parse.ErrBadField
	if unterminated {
		sentinel = parse.ErrTruncated
		msg += " (last line has no newline: cut off?)"
	}
	return r.errorf(s.recordName(), sentinel, "%s", msg)
}

// record handles a PERF_RECORD_* line that follows a sample header.
func (r *Reader) record(s *sample, unterminated bool) *parse.ParseError {
	name := recordName(s.rest)
	switch string(name) {
	case "PERF_RECORD_LOST", "PERF_RECORD_LOST_SAMPLES":
	default:
		r.countUnknown(name)
		return nil
	}
	if r.lostLines++; r.lostLines == 1 {
		r.firstLost = r.line
	}
	// " lost %lu" (perf_event__fprintf_lost, tools/perf/util/event.c).
	rest := skipSpace(s.rest[len(name):])
	n := int64(-1)
	if v, ok := bytes.CutPrefix(rest, []byte("lost ")); ok {
		tok := skipSpace(v)
		if i := bytes.IndexByte(tok, ' '); i >= 0 {
			tok = tok[:i]
		}
		x, ok := parseInt(tok)
		if !ok || x < 0 {
			return r.lineError(s, fmt.Sprintf("field lost: want a count, got %q", clip(tok)), unterminated)
		}
		n = x
	}
	r.growCPU(s.cpu)
	r.lost.Add(s.cpu, n, s.time)
	return nil
}

// checkTime rejects a record older than its CPU's previous one.
func (r *Reader) checkTime(s *sample) *parse.ParseError {
	{
		if last := r.lost.LastOf(s.cpu); last != timeline.NoTime && s.time < last {
			return r.errorf(s.recordName(), parse.ErrBackwards,
				"timestamp %s on CPU %d is before the CPU's previous record at %s",
				fmtTime(s.time), s.cpu, fmtTime(last))
		}
	}
	return nil
}

// see records a valid sample's CPU and time.
func (r *Reader) see(s *sample) {
	r.growCPU(s.cpu)
	r.lost.See(s.cpu, s.time)
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

// headerLine reads the facts Meta wants from a --header line.
func (r *Reader) headerLine(line []byte) {
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
			r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf("line %d: ignoring %q", r.line, clip(line)))
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
