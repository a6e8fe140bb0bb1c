package ftrace

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

const (
	bufSize = parse.LineBufSize // lines up to this size are parsed in place
	// MaxLine is the longest line the Reader accepts, in bytes. The kernel
	// caps a trace_marker write at a few KiB, so a longer line is not a
	// record.
	MaxLine = 16 << 20
	// MaxCPU bounds the CPU numbers the Reader accepts (exclusive): the
	// one limit, topology.MaxCPUs.
	MaxCPU = topology.MaxCPUs
	// commCacheBits sizes the reader's comm cache (1<<bits slots).
	commCacheBits = 9
)

// Format names reported in Meta.Format.
const (
	FormatTrace    = "ftrace"     // tracefs "trace" file: has the "# tracer:" header
	FormatPipe     = "trace_pipe" // no header
	FormatTraceCmd = "trace-cmd"  // "trace-cmd report" text
)

// cpuState is what the Reader remembers about one CPU's buffer.
type cpuState struct {
	last      timeline.Time // time of the CPU's last record, NoTime if none
	lostCount int64         // pending lost count, -1 if unknown
	lost      bool          // a lost-events line waits for the CPU's next record
	start     bool          // a buffer-started line waits for the CPU's next record
}

// Reader reads ftrace text (trace, trace_pipe) and trace-cmd report text. It
// implements parse.Reader. It is not safe for concurrent use.
//
// A line is parsed by a recParser, which needs nothing from the lines
// before it, and then applied in order by the Reader (apply): per-CPU
// checks, lost-event and buffer-start records, header lines, Meta. With
// more than one worker (parse.Options.Workers) the parsing runs on several
// goroutines, block by block, and the Reader applies the results in input
// order, so the events, the interned strings and every error are the same
// as with one (see parallel.go).
type Reader struct {
	recParser // the current line's parser and position
	lr        parse.LineReader
	lenient   bool
	meta      *parse.Meta
	unknown   map[string]*int64
	res       lineRes // the current line's parse, serial mode
	pipe      *parse.Blocks[lineRes, deferred]

	done     bool // pending records were flushed after EOF
	cpus     []cpuState
	lastTime timeline.Time // latest record time in the trace, NoTime if none
	q        []timeline.Event
	qi       int

	lostLines int    // lost-event lines seen
	firstLost string // the first of them, for Meta.CoverageNote
	bufStarts int    // "##### CPU N buffer started ####" lines seen

	// what the header states ahead of the records: the CPUs
	// (DeclaredCPUs), the coverage (DeclaredCoverage)
	declared    int
	declaredCov timeline.Coverage
	declaredWhy string
}

var (
	_ parse.Reader           = (*Reader)(nil)
	_ parse.CPUDeclarer      = (*Reader)(nil)
	_ parse.CoverageDeclarer = (*Reader)(nil)
)

// NewReader returns a Reader of r. The Reader buffers r itself.
func NewReader(r io.Reader, opts parse.Options) (*Reader, error) {
	if r == nil {
		return nil, fmt.Errorf("ftrace: nil input")
	}
	strs := opts.Strings
	if strs == nil {
		strs = timeline.NewStrings()
	}
	rd := &Reader{
		recParser: recParser{name: opts.Name, strs: strs, comms: new([1 << commCacheBits]commSlot), summary: opts.Summary},
		lenient:   opts.Lenient,
		meta:      parse.NewMeta(FormatPipe),
		unknown:   map[string]*int64{},
		lastTime:  timeline.NoTime,
		q:         make([]timeline.Event, 0, 8),
	}
	rd.lr.Init(r, opts.Name, MaxLine, opts.Lenient, readErr)
	rd.declareHeader(rd.lr.Head())
	if w := parse.WorkersFor(opts.Workers); w > 1 {
		rd.pipe = parse.StartBlocks(&rd.lr, w, blockLines, rd.newParser)
	}
	return rd, nil
}

// DeclaredCPUs returns the CPU count the input states before its first
// record: the "#P:N" of a trace file's entries line (the CPUs online when
// it was read), or trace-cmd report's "cpus=N"; 0 when its first read
// holds neither (trace_pipe text states none).
func (r *Reader) DeclaredCPUs() int { return r.declared }

// DeclaredCoverage returns the coverage that a trace file's entries line,
// before its first record, gives Meta unless the lines after it revise it
// (a lost-event or buffer-start line); CoverageUnknown without the line.
func (r *Reader) DeclaredCoverage() (timeline.Coverage, string) {
	return r.declaredCov, r.declaredWhy
}

// declareHeader reads the header lines at the start of head, as the reader
// itself reads them (parseLine, control), up to the first record or the
// end of head, for the CPU count and coverage they state.
func (r *Reader) declareHeader(head []byte) {
	for len(head) > 0 {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			return // a line cut off by the end of the first read
		}
		line := bytes.TrimSuffix(head[:i], []byte("\r"))
		head = head[i+1:]
		switch {
		case len(line) == 0 || bytes.HasPrefix(line, []byte("version = ")):
		case bytes.HasPrefix(line, []byte(entriesPrefix)):
			in, written, n, ok := parseEntries(line)
			if !ok {
				return
			}
			r.declared = max(n, 0)
			r.declaredCov, r.declaredWhy = coverageOf(in, written, 0, "", 0, "")
			return
		case line[0] == '#':
		case bytes.HasPrefix(line, []byte("cpus=")):
			if n, ok := parseCPUs(line); ok {
				r.declared = n
				r.declaredCov, r.declaredWhy = coverageOf(-1, -1, 0, "", 0, FormatTraceCmd)
			}
			return
		default:
			return
		}
	}
}

// Meta returns what the Reader learned so far; it is complete after Next
// returned io.EOF.
func (r *Reader) Meta() *parse.Meta {
	r.syncUnknown()
	return r.meta
}

// Strings returns the interner that resolves the events' CommIDs and marker
// texts.
func (r *Reader) Strings() *timeline.Strings { return r.strs }

func (r *Reader) syncUnknown() {
	for name, n := range r.unknown {
		r.meta.Unknown[name] = *n
	}
}

// Next fills ev with the next event. It returns io.EOF at the end of the
// input and a *parse.ParseError for a malformed record (unless the Reader is
// lenient); ev is only written when Next returns nil.
func (r *Reader) Next(ev *timeline.Event) error {
	for {
		if r.qi < len(r.q) {
			*ev = r.q[r.qi]
			r.qi++
			if r.qi == len(r.q) {
				r.q = r.q[:0]
				r.qi = 0
			}
			return nil
		}
		if r.done {
			return io.EOF
		}
		res, b, err := r.nextLine()
		if err == io.EOF {
			r.finish()
			continue
		} else if err != nil {
			return err
		}
		if err := r.apply(res, b); err != nil {
			if r.lenient {
				r.meta.Skip(err)
				continue
			}
			return err
		}
	}
}

// nextLine returns the parse of the next line, from the workers (with the
// block it is in) or parsed here, and makes its position the current one.
func (r *Reader) nextLine() (*lineRes, *parse.Block[lineRes, deferred], error) {
	if r.pipe != nil {
		res, b, err := r.pipe.Next()
		if err != nil {
			return nil, nil, err
		}
		r.pos = res.pos
		return res, b, nil
	}
	line, err := r.lr.Next()
	if err != nil {
		return nil, nil, err
	}
	r.pos = *r.lr.Pos()
	r.classify(line, &r.res)
	return &r.res, nil, nil
}

// finish queues what is pending at the end of the input and completes Meta.
func (r *Reader) finish() {
	r.flush()
	r.syncUnknown()
	r.coverage()
	r.done = true
}

// readErr makes the error about the input name that failed while its line
// at pos was read.
func readErr(name string, pos parse.LinePos, err error) error {
	return &parse.ParseError{File: name, Line: pos.Line, Offset: pos.Off, Record: "input",
		Msg: "read error: " + err.Error(), Err: err}
}

// apply carries out a parsed line in input order: a record's per-CPU
// checks and its queueing, a header or lost-event line's effect on Meta and
// the CPU states. b is the block the line came from (nil in serial mode),
// whose deferred comms it interns first. r.pos must be the line's position.
func (r *Reader) apply(res *lineRes, b *parse.Block[lineRes, deferred]) error {
	if b != nil {
		r.resolve(res, &b.X)
	}
	if res.prefix {
		r.meta.Format = FormatTraceCmd
	}
	switch res.kind {
	case resNone:
		return nil
	case resErr:
		return res.err
	case resCtl:
		return r.control(res.line)
	}
	return r.commit(res)
}

// control handles a line that is not an event record: a '#' header line,
// a lost-event or "CPU N is empty" line, trace-cmd's cpus= and version
// lines.
func (r *Reader) control(line []byte) error {
	switch {
	case line[0] == '#':
		return r.comment(line)
	case bytes.HasPrefix(line, []byte("CPU")):
		return r.cpuLine(line)
	case bytes.HasPrefix(line, []byte("cpus=")):
		return r.cpusLine(line)
	}
	// "version = N"
	r.meta.Format = FormatTraceCmd
	return nil
}

// commit applies a parsed record: the layout it revealed, the per-CPU time
// order, the pending lost and buffer-start records of its CPU, and the
// event itself (or its count, for an event this package does not
// interpret).
func (r *Reader) commit(res *lineRes) error {
	if res.plugin && r.meta.Format == FormatPipe {
		r.meta.Format = FormatTraceCmd
	}
	ev := &res.ev
	st := r.cpuState(ev.CPU)
	if st.last != timeline.NoTime && ev.Time < st.last {
		return r.errf(recName(res.name), parse.ErrBackwards, "want a timestamp at or after %s (CPU %d's previous record), got %s",
			fmtTime(st.last, res.intTime), ev.CPU, fmtTime(ev.Time, res.intTime))
	}
	r.release(st, ev.CPU, ev.Time, st.last)
	st.last = ev.Time
	if r.lastTime == timeline.NoTime || ev.Time > r.lastTime {
		r.lastTime = ev.Time
	}
	if res.known {
		r.q = append(r.q, *ev)
	} else {
		r.countUnknown(res.name)
	}
	return nil
}

func (r *Reader) countUnknown(name []byte) {
	if n, ok := r.unknown[string(name)]; ok {
		*n++
		return
	}
	n := new(int64)
	*n = 1
	r.unknown[string(name)] = n
}

// cpuState returns the state of cpu, growing the table; cpu is in
// [0, MaxCPU).
func (r *Reader) cpuState(cpu timeline.CPU) *cpuState {
	for int(cpu) >= len(r.cpus) {
		r.cpus = append(r.cpus, cpuState{last: timeline.NoTime})
	}
	return &r.cpus[cpu]
}

// release queues the buffer-start and lost records pending on cpu, at time
// t; a lost record spans from start.
func (r *Reader) release(st *cpuState, cpu timeline.CPU, t, start timeline.Time) {
	if st.start {
		st.start = false
		r.q = append(r.q, timeline.Event{})
		e := &r.q[len(r.q)-1]
		e.Reset()
		e.Kind = timeline.KindBufferStart
		e.Time = t
		e.CPU = cpu
	}
	if st.lost {
		st.lost = false
		r.q = append(r.q, timeline.Event{})
		e := &r.q[len(r.q)-1]
		e.Reset()
		e.Kind = timeline.KindLost
		e.Time = t
		e.Start = start
		e.CPU = cpu
		e.Arg = st.lostCount
	}
}

// flush queues the lost and buffer-start records still pending at the end
// of the input, CPU by CPU, at the CPU's last record time (or the trace's
// when the CPU has none).
func (r *Reader) flush() {
	for c := range r.cpus {
		st := &r.cpus[c]
		t := st.last
		if t == timeline.NoTime {
			t = r.lastTime
		}
		r.release(st, timeline.CPU(c), t, t)
	}
}

// comment handles a line starting with '#'.
func (r *Reader) comment(line []byte) error {
	switch {
	case bytes.HasPrefix(line, []byte("#####")):
		// "##### CPU 1 buffer started ####" (kernel/trace/trace.c, print_trace_line)
		p := bytes.TrimLeft(line, "#")
		p = bytes.TrimLeft(p, " ")
		if !bytes.HasPrefix(p, []byte("CPU ")) {
			return nil
		}
		p = p[4:]
		cpu, n, ok := parseUint(p, MaxCPU-1)
		if !ok || !bytes.HasPrefix(p[n:], []byte(" buffer started")) {
			return r.errf("buffer start", parse.ErrBadField, "want ##### CPU N buffer started ####, got %q", clip(line))
		}
		r.cpuState(timeline.CPU(cpu)).start = true
		r.bufStarts++
	case bytes.HasPrefix(line, []byte("# tracer:")):
		r.meta.Format = FormatTrace
	case bytes.HasPrefix(line, []byte(entriesPrefix)):
		return r.entries(line)
	}
	return nil
}

// entries parses "# entries-in-buffer/entries-written: 40517/145878   #P:2".
func (r *Reader) entries(line []byte) error {
	in, written, ncpu, ok := parseEntries(line)
	if !ok {
		return r.errf("entries header", parse.ErrBadField, "want # entries-in-buffer/entries-written: N/M   #P:CPUS, got %q", clip(line))
	}
	if ncpu >= 0 {
		r.meta.NCPU = ncpu
	}
	r.meta.EntriesInBuffer = in
	r.meta.EntriesWritten = written
	r.coverage() // known from the header on; lost lines may revise it
	if written > in {
		r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf(
			"the ring buffer kept %d of %d entries written: each CPU's oldest events were overwritten", in, written))
	}
	return nil
}

const entriesPrefix = "# entries-in-buffer/entries-written:"

// parseEntries parses the entries line (its newline trimmed): the entries
// in the buffer, those written, and the CPU count after "#P:", -1 when
// the line has none.
func parseEntries(line []byte) (in, written int64, ncpu int, ok bool) {
	p := bytes.TrimLeft(line[len(entriesPrefix):], " ")
	in, n, ok := parseUint(p, 1<<62)
	if !ok || n >= len(p) || p[n] != '/' {
		return 0, 0, 0, false
	}
	p = p[n+1:]
	written, n, ok = parseUint(p, 1<<62)
	if !ok {
		return 0, 0, 0, false
	}
	p = bytes.TrimLeft(p[n:], " ")
	if len(p) == 0 {
		return in, written, -1, true
	}
	if !bytes.HasPrefix(p, []byte("#P:")) {
		return 0, 0, 0, false
	}
	c, n, ok := parseUint(p[3:], MaxCPU)
	if !ok || n != len(p)-3 {
		return 0, 0, 0, false
	}
	return in, written, int(c), true
}

// cpusLine parses trace-cmd's "cpus=2".
func (r *Reader) cpusLine(line []byte) error {
	n, ok := parseCPUs(line)
	if !ok {
		return r.errf("cpus header", parse.ErrBadField, "want cpus=N, got %q", clip(line))
	}
	r.meta.NCPU = n
	r.meta.Format = FormatTraceCmd
	return nil
}

// parseCPUs parses trace-cmd's "cpus=N" line.
func parseCPUs(line []byte) (int, bool) {
	p := line[len("cpus="):]
	n, k, ok := parseUint(p, MaxCPU)
	return int(n), ok && k == len(p)
}

// cpuLine parses the lines starting with "CPU": the kernel's
// "CPU:N [LOST M EVENTS]" (kernel/trace/trace.c, print_trace_line), and
// trace-cmd's "CPU:N [M EVENTS DROPPED]", "CPU:N [EVENTS DROPPED]",
// "CPU:N [SUBBUFFER START]" and "CPU N is empty" (tracecmd/trace-read.c,
// lib/trace-cmd/trace-input.c).
func (r *Reader) cpuLine(line []byte) error {
	bad := func() error {
		return r.errf("lost events", parse.ErrBadField, "want CPU:N [LOST M EVENTS] or CPU:N [M EVENTS DROPPED], got %q", clip(line))
	}
	if bytes.HasPrefix(line, []byte("CPU ")) {
		_, n, ok := parseUint(line[4:], MaxCPU-1)
		if ok && string(line[4+n:]) == " is empty" {
			return nil
		}
		return bad()
	}
	if !bytes.HasPrefix(line, []byte("CPU:")) {
		return bad()
	}
	p := line[4:]
	cpu, n, ok := parseUint(p, MaxCPU-1)
	if !ok {
		return bad()
	}
	p = p[n:]
	var count int64
	const lostPre, lostSuf, dropPre, dropSuf = " [LOST ", " EVENTS]", " [", " EVENTS DROPPED]"
	switch {
	case len(p) >= len(lostPre)+len(lostSuf) && bytes.HasPrefix(p, []byte(lostPre)) && bytes.HasSuffix(p, []byte(lostSuf)):
		m := p[len(lostPre) : len(p)-len(lostSuf)]
		c, k, ok := parseUint(m, 1<<62)
		if !ok || k != len(m) {
			return bad()
		}
		count = c
	case string(p) == " [EVENTS DROPPED]":
		count = -1
	case len(p) >= len(dropPre)+len(dropSuf) && bytes.HasPrefix(p, []byte(dropPre)) && bytes.HasSuffix(p, []byte(dropSuf)):
		m := p[len(dropPre) : len(p)-len(dropSuf)]
		c, k, ok := parseUint(m, 1<<62)
		if !ok || k != len(m) {
			return bad()
		}
		count = c
	case bytes.HasPrefix(p, []byte(" [SUBBUFFER START]")):
		return nil
	default:
		return bad()
	}
	if r.lostLines++; r.lostLines == 1 {
		r.firstLost = fmt.Sprintf("line %d, %q", r.pos.Line, clip(line))
	}
	st := r.cpuState(timeline.CPU(cpu))
	switch {
	case !st.lost:
		st.lost = true
		st.lostCount = count
	case count < 0 || st.lostCount < 0:
		st.lostCount = -1
	default:
		st.lostCount += count
	}
	return nil
}

// cutInstance returns what follows a trace-cmd instance prefix ("name: ").
func cutInstance(line []byte) ([]byte, bool) {
	p := bytes.TrimLeft(line, " ")
	i := bytes.Index(p, []byte(": "))
	if i <= 0 || bytes.IndexByte(p[:i], ' ') >= 0 {
		return nil, false
	}
	return p[i+2:], true
}

// recName is the record name used in errors about an event.
func recName(name []byte) string {
	if len(name) == 0 {
		return "record"
	}
	return string(name)
}

// clip returns b, shortened for an error message.
func clip(b []byte) string {
	const max = 80
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

// fmtTime formats t the way the trace printed it, for messages.
func fmtTime(t timeline.Time, integer bool) string {
	if integer || t < 0 {
		return strconv.FormatInt(int64(t), 10)
	}
	return strconv.FormatInt(int64(t)/1e9, 10) + "." + fmt.Sprintf("%09d", int64(t)%1e9)
}
