// Package ingest opens a trace file whatever its format and compression:
// Open sniffs the content (never the file name), decompresses gzip and zstd
// transparently (klauspost/compress), and returns the streaming reader of the
// format. Load runs a reader into a timeline.Builder.
//
// Formats: ftrace text (`trace`, `trace_pipe`, `trace-cmd report`) in
// ingest/ftrace, `perf script` text in ingest/perf, perf.data in
// ingest/perfdata, trace-cmd trace.dat in ingest/tracedat, Perfetto protobuf
// in ingest/perfetto. The shared Reader interface, Options, Meta and
// ParseError live in ingest/parse (so that the format packages can use them
// without importing this package) and are re-exported here.
//
// It imports timeline, topology and the format packages.
package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/schedlens/schedlens/ingest/ftrace"
	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/ingest/perf"
	"github.com/schedlens/schedlens/ingest/perfdata"
	"github.com/schedlens/schedlens/ingest/perfetto"
	"github.com/schedlens/schedlens/ingest/tracedat"
	"github.com/schedlens/schedlens/timeline"
)

// Re-exports of package parse.
type (
	ParseError = parse.ParseError
	Options    = parse.Options
	Meta       = parse.Meta
	Reader     = parse.Reader
)

// Sentinel errors, re-exported from package parse.
var (
	ErrTruncated    = parse.ErrTruncated
	ErrBadField     = parse.ErrBadField
	ErrUnknownEvent = parse.ErrUnknownEvent
	ErrBackwards    = parse.ErrBackwards
	ErrUnrecognized = parse.ErrUnrecognized
)

// sniffLen is how much decompressed input the format sniffers see.
const sniffLen = 64 << 10

type format struct {
	name  string
	sniff func(head []byte) bool
	open  func(r io.Reader, opts parse.Options) (parse.Reader, error)
	// eventBytes is a low estimate of the input bytes per event of a text
	// format, which sizes the Builder's columns from an uncompressed
	// input's size (0: no estimate). Measured on the real fixtures: ftrace
	// and trace_pipe text 139-155 bytes per event, perf script 250-261.
	eventBytes int64
}

// ftraceEventBytes is the low estimate of the bytes of ftrace text an
// event takes, the smallest of the text formats' eventBytes.
const ftraceEventBytes = 100

// randomAccess names the formats whose reader reads at random (perf.data
// keeps its event formats after the data): they are given the file itself
// when the input is an uncompressed regular file.
var randomAccess = map[string]bool{"perf.data": true, "trace.dat": true}

// formats are tried in order; binary formats first.
var formats = []format{
	{"trace.dat", tracedat.Sniff, func(r io.Reader, o parse.Options) (parse.Reader, error) { return tracedat.NewReader(r, o) }, 0},
	{"perf.data", perfdata.Sniff, func(r io.Reader, o parse.Options) (parse.Reader, error) { return perfdata.NewReader(r, o) }, 0},
	{"perfetto", perfetto.Sniff, func(r io.Reader, o parse.Options) (parse.Reader, error) { return perfetto.NewReader(r, o) }, 0},
	{"perf-script", perf.Sniff, func(r io.Reader, o parse.Options) (parse.Reader, error) { return perf.NewReader(r, o) }, 160},
	{"ftrace", ftrace.Sniff, func(r io.Reader, o parse.Options) (parse.Reader, error) { return ftrace.NewReader(r, o) }, ftraceEventBytes},
}

// Stream is an opened trace: its reader and what must be closed after.
type Stream struct {
	parse.Reader
	Compression string // "", "gzip", "zstd"
	// family is the format's entry in formats ("ftrace" for every ftrace
	// text variant).
	family  string
	closers []io.Closer
	// events estimates the event count from the input's size (0 if
	// unknown), to pre-size the Builder's columns.
	events int
	dec    *decompressErr
	// read counts the input's bytes (nil when neither Options.Progress
	// nor the input's size asks for it); total is the input's size, 0 if
	// unknown.
	read  *countingReader
	total int64
}

// BytesRead returns how many bytes of the input the stream has read (0
// when it counts none: neither Options.Progress nor the input's size asked
// for it) and the input's size (0 if unknown), for a caller that streams
// the events itself.
func (s *Stream) BytesRead() (read, total int64) {
	if s.read == nil {
		return 0, s.total
	}
	return s.read.n.Load(), s.total
}

// countingReader counts the bytes read through it. The count may be read
// while another goroutine reads (a reader that parses in parallel).
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// maxEventHint caps the pre-sizing estimate (about 11 GiB of columns).
const maxEventHint = 1 << 28

// sizeOf returns the byte size of r when it knows it (a regular file, a
// bytes or strings reader), else -1.
func sizeOf(r io.Reader) int64 {
	switch v := r.(type) {
	case interface{ Stat() (os.FileInfo, error) }:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.Size()
		}
	case interface{ Size() int64 }:
		return v.Size()
	}
	return -1
}

// Truncated returns the decompression failure that ended a compressed
// input early under Lenient (what decompressed before it was read), or nil.
func (s *Stream) Truncated() error {
	if s.dec == nil || s.dec.failed == nil {
		return nil
	}
	return s.dec.failed
}

// RecordError is a Load error met while reading records: a malformed record
// that Options.Lenient would skip. Errors opening the input (a missing
// file, a directory, an empty or unrecognized file, a damaged header) are
// not RecordErrors.
type RecordError struct{ Err error }

func (e *RecordError) Error() string { return e.Err.Error() }
func (e *RecordError) Unwrap() error { return e.Err }

// Close releases the file and decompressors.
func (s *Stream) Close() error {
	var first error
	for i := len(s.closers) - 1; i >= 0; i-- {
		if err := s.closers[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

type closeFunc func() error

func (f closeFunc) Close() error { return f() }

// Open opens the trace at path. "-" reads standard input.
func Open(path string, opts parse.Options) (*Stream, error) {
	var f io.ReadCloser
	if path == "-" {
		f = io.NopCloser(os.Stdin)
		if opts.Name == "" {
			opts.Name = "<stdin>"
		}
	} else {
		fh, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		f = fh
	}
	if opts.Name == "" {
		opts.Name = path
	}
	s, err := NewStream(f, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	s.closers = append([]io.Closer{f}, s.closers...)
	return s, nil
}

// NewStream sniffs compression and format of r and returns its reader.
func NewStream(r io.Reader, opts parse.Options) (*Stream, error) {
	s := &Stream{total: max(sizeOf(r), 0)}
	var src io.Reader = r
	if opts.Progress != nil || s.total > 0 {
		// for the progress, and for the Builder's size (feed)
		s.read = &countingReader{r: r}
		src = s.read
	}
	in, closers, err := decompressorNamed(src, opts.Name)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, closers...)
	if d, ok := in.(*decompressErr); ok {
		s.Compression, s.dec = d.kind, d
		d.lenient = opts.Lenient
	}
	hb := bufio.NewReaderSize(in, sniffLen)
	head, err := hb.Peek(sniffLen)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		if len(head) == 0 {
			return nil, err
		}
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return nil, &parse.ParseError{File: opts.Name, Line: 1, Record: "trace", Msg: "want a trace, got an empty file", Err: parse.ErrTruncated}
	}
	for _, f := range formats {
		if f.sniff(head) {
			var src io.Reader = hb
			if st, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok && randomAccess[f.name] && s.Compression == "" {
				if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() {
					src = r
					// Read in place at offsets: what the sniffing read
					// says nothing of the progress.
					s.read, s.total = &countingReader{}, 0
				}
			}
			rd, err := f.open(src, opts)
			if err != nil {
				return nil, err
			}
			s.Reader, s.family = rd, f.name
			if c, ok := rd.(io.Closer); ok {
				// Closed first: a reader that parses in parallel stops
				// reading before the decompressors and the file close.
				s.closers = append(s.closers, c)
			}
			if size := sizeOf(r); size > 0 && f.eventBytes > 0 {
				if s.Compression != "" {
					size = contentSize(r, s.Compression, size)
				}
				s.events = int(min(size/f.eventBytes, maxEventHint))
			}
			// A binary reader that knows its data's size (perf.data) estimates.
			if e, ok := rd.(interface{ EventEstimate() int }); ok {
				s.events = min(e.EventEstimate(), maxEventHint)
			}
			return s, nil
		}
	}
	line := head
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	if len(line) > 60 {
		line = line[:60]
	}
	return nil, &parse.ParseError{File: opts.Name, Line: 1, Record: "trace", Err: parse.ErrUnrecognized,
		Msg: fmt.Sprintf("want ftrace text, trace-cmd report, perf script, trace.dat, perf.data or a Perfetto trace; got %q", line)}
}

// decompressor returns r decompressed if it starts with a gzip or zstd
// magic number, and what must be closed after.
func decompressor(r io.Reader) (io.Reader, []io.Closer, error) {
	return decompressorNamed(r, "")
}

func decompressorNamed(r io.Reader, name string) (io.Reader, []io.Closer, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	magic, _ := br.Peek(4)
	switch compressionOf(magic) {
	case "gzip":
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, &parse.ParseError{File: name, Record: "gzip header", Msg: "want a gzip stream, got " + err.Error(), Err: parse.ErrTruncated}
		}
		zr.Multistream(true)
		return &decompressErr{r: zr, name: name, kind: "gzip"}, []io.Closer{zr}, nil
	case "zstd":
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, &parse.ParseError{File: name, Record: "zstd header", Msg: err.Error(), Err: parse.ErrTruncated}
		}
		return &decompressErr{r: zr, name: name, kind: "zstd"}, []io.Closer{closeFunc(func() error { zr.Close(); return nil })}, nil
	}
	return br, nil, nil
}

// compressionOf names the compression whose magic number starts head:
// "gzip", "zstd", or "" for none.
func compressionOf(head []byte) string {
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return "gzip"
	case len(head) >= 4 && bytes.Equal(head[:4], []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "zstd"
	}
	return ""
}

// decompressErr turns decompression failures into positioned errors; when
// lenient, into the end of the input, the failure kept in failed.
type decompressErr struct {
	r       io.Reader
	name    string
	kind    string
	off     int64
	lenient bool
	failed  error
}

func (d *decompressErr) Read(p []byte) (int, error) {
	if d.failed != nil {
		return 0, io.EOF
	}
	n, err := d.r.Read(p)
	d.off += int64(n)
	if err != nil && err != io.EOF {
		cause := parse.ErrBadField
		if errors.Is(err, io.ErrUnexpectedEOF) {
			cause = parse.ErrTruncated
		}
		perr := &parse.ParseError{File: d.name, Offset: d.off, Record: d.kind + " stream",
			Msg: fmt.Sprintf("%s data corrupt or truncated after %d decompressed bytes: %v", d.kind, d.off, err), Err: cause}
		if d.lenient {
			d.failed = perr
			return n, io.EOF
		}
		return n, perr
	}
	return n, err
}

// Loaded is a trace read into a timeline.
type Loaded struct {
	Timeline    *timeline.Timeline
	Meta        *parse.Meta
	Compression string
	Path        string
}

// Load reads the whole trace at path into a Timeline. Under opts.Lenient
// malformed records are skipped and counted in Meta.Skipped.
func Load(path string, opts parse.Options) (*Loaded, error) {
	ld, err := loadFile(path, opts, true)
	if errors.Is(err, timeline.ErrNotTimeOrdered) {
		// Text out of time order, which a file of a text format seldom
		// is: read it again, keeping what the merge needs.
		ld, err = loadFile(path, opts, false)
	}
	return ld, err
}

// loadFile loads the trace file at path. With inOrder, a file of a format
// whose events come in time order (the text formats, and perf.data, whose
// reader orders them as perf does; not standard input, which cannot be
// read again) is read into a Builder that requires order
// (timeline.Builder.RequireOrder: 16 bytes an event less), and the first
// event out of order stops the read with timeline.ErrNotTimeOrdered.
func loadFile(path string, opts parse.Options, inOrder bool) (*Loaded, error) {
	return loadFileWalking(path, opts, inOrder, nil)
}

func loadFileWalking(path string, opts parse.Options, inOrder bool, walk *walkAlong) (*Loaded, error) {
	s, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return load(s, path, opts.MaxEvents, opts.Progress, inOrder && path != "-" && orderedFormats[s.family], walk)
}

// walkAlong is a walk asked of a load (LoadWalking), and how it ended.
type walkAlong struct {
	start  func(prov *timeline.Timeline) timeline.AlongSinks
	stats  timeline.WalkStats
	walked bool
}

// LoadWalking is Load for a caller that walks the Timeline once: where the
// trace's events come in time order (text, perf.data, trace.dat), it also
// walks them while they load, on a goroutine of its own
// (timeline.Builder.WalkAlong: from the CPUs and coverage the reader
// declares, or the CPUs the events name), and hands what it walks to the sinks
// start returns. walked says whether that walk ran to its end, with the
// stats it returns; when it did not (start may have been called), the
// caller drops what the sinks got and walks the Timeline itself. Without
// the walk, the Timeline loads as Load loads it.
func LoadWalking(path string, opts parse.Options, start func(prov *timeline.Timeline) timeline.AlongSinks) (ld *Loaded, stats timeline.WalkStats, walked bool, err error) {
	walk := &walkAlong{start: start}
	ld, err = loadFileWalking(path, opts, true, walk)
	if errors.Is(err, timeline.ErrNotTimeOrdered) {
		ld, err = loadFile(path, opts, false)
		return ld, timeline.WalkStats{}, false, err
	}
	return ld, walk.stats, walk.walked, err
}

func load(s *Stream, path string, maxEvents int64, progress func(read, total int64, events int), inOrder bool, walk *walkAlong) (*Loaded, error) {
	b := timeline.NewBuilder(s.Strings(), 0)
	if inOrder {
		b.RequireOrder()
	}
	var along *timeline.Along
	if walk != nil && inOrder {
		ncpu := 0 // not declared: the walk takes the CPUs the events name
		if d, ok := s.Reader.(parse.CPUDeclarer); ok {
			ncpu = d.DeclaredCPUs()
		}
		if c, ok := s.Reader.(parse.CoverageDeclarer); ok {
			// what the walk starts from; the Meta's at the end (finishMeta)
			b.SetCoverage(c.DeclaredCoverage())
		}
		along = b.WalkAlong(ncpu, walk.start)
		defer along.Stop() // a read that fails ends the walk
	}
	limit, why := eventLimit(maxEvents)
	if n := s.events; limit <= 0 || int64(n) <= limit {
		b.Grow(n)
	} else {
		b.Grow(int(limit))
	}
	if err := feed(s, path, limit, why, progress, b.AddEvent, b.Err, b); err != nil {
		return nil, err
	}
	meta := finishMeta(s, b)
	tl, err := b.Finish()
	if err != nil {
		return nil, err
	}
	if along != nil {
		walk.stats, walk.walked = along.Finish(tl)
	}
	completeTasks(tl, meta)
	return &Loaded{Timeline: tl, Meta: meta, Compression: s.Compression, Path: path}, nil
}

// feed hands every event of s to add, in the reader's order, up to limit
// (0: none; why says where the limit comes from), reporting progress; it
// stops with failed's error once that is not nil (failed may be nil).
func feed(s *Stream, path string, limit int64, why string, progress func(read, total int64, events int), add func(*timeline.Event), failed func() error, cols *timeline.Builder) error {
	var own timeline.Event
	next := func() (*timeline.Event, error) { return &own, s.Next(&own) }
	if prefetchFormats[s.Meta().Format] {
		pf := newPrefetch(s.Reader)
		defer pf.stop()
		next = pf.next
	}
	n := 0
	for {
		ev, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var perr *parse.ParseError
			if errors.As(err, &perr) {
				return &RecordError{Err: err}
			}
			return err
		}
		if limit > 0 && int64(n) >= limit {
			// Say so before memory runs out, not after an OOM kill.
			return fmt.Errorf("%s: %w: more than %d events (the next at %s s on CPU %d), %s; cut the trace, or raise the limit with --max-events",
				path, ErrTooManyEvents, limit, ev.Time.Seconds(), ev.CPU, why)
		}
		add(ev)
		n++
		if n&(1<<16-1) == 0 {
			if cols != nil {
				sizeFromRate(s, cols, n, limit)
			}
			if progress != nil {
				progress(s.read.n.Load(), s.total, n)
			}
			if failed != nil {
				if err := failed(); err != nil {
					return err
				}
			}
		}
	}
	if progress != nil {
		progress(s.read.n.Load(), s.total, n)
	}
	return nil
}

// finishMeta is the reader's Meta once every event was read, with a
// truncated compressed input's warning, applied to b.
func finishMeta(s *Stream, b *timeline.Builder) *parse.Meta {
	meta := readMeta(s)
	meta.Apply(b)
	return meta
}

// readMeta is the reader's Meta once every event was read, with a
// truncated compressed input's warning.
func readMeta(s *Stream) *parse.Meta {
	meta := s.Meta()
	if err := s.Truncated(); err != nil {
		meta.Warnings = append(meta.Warnings, fmt.Sprintf("%v; what decompressed before it is analysed (--lenient)", err))
	}
	return meta
}

// completeTasks sets tl's topology, and the thread groups and names a trace
// states outside its events (Perfetto's process tree) where the events
// said nothing.
func completeTasks(tl *timeline.Timeline, meta *parse.Meta) {
	tl.Topology = meta.Topology
	for i := range tl.Tasks {
		tk := &tl.Tasks[i]
		ti, ok := meta.Tasks[tk.PID]
		if !ok || tk.Idle {
			continue
		}
		if tk.TGID < 0 && ti.TGID >= 0 {
			tk.TGID = ti.TGID
		}
		if tk.Comm == timeline.NoComm && ti.Comm != "" {
			tk.Comm = tl.Strings.IDString(ti.Comm)
		}
	}
}

// LoadReader reads a whole trace from r (any compression, any format) into a
// Timeline; name is used in errors and reports.
func LoadReader(r io.Reader, name string, opts parse.Options) (*Loaded, error) {
	if opts.Name == "" {
		opts.Name = name
	}
	s, err := NewStream(r, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return load(s, name, opts.MaxEvents, opts.Progress, false, nil)
}
