package ingest

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/ingest/tracedat"
	"github.com/schedlens/schedlens/timeline"
)

// ErrNotStreamable is what Summarize returns for an input a streamed
// analysis cannot take: standard input (it cannot be read twice), or a
// binary format whose per-CPU streams are merged after the whole file is
// read (Perfetto). The caller loads it whole instead.
var ErrNotStreamable = errors.New("input cannot be streamed")

// streamFormats are the formats a streamed analysis reads twice: those
// whose events arrive in time order as the file is read: the text
// formats, perf.data, whose reader orders its records as perf does,
// round by round, as it reads them, and trace.dat, whose reader merges
// the CPUs' pages by time as it reads them.
var streamFormats = map[string]bool{"ftrace": true, "perf-script": true, "perf.data": true, "trace.dat": true}

// orderedFormats are the formats whose readers hand out the events in
// time order: the text formats, perf.data and trace.dat.
var orderedFormats = map[string]bool{"ftrace": true, "perf-script": true, "perf.data": true, "trace.dat": true}

// Summarize is the first read of a streamed analysis of the trace file at
// path (see timeline.NewSummaryBuilder): a summary Timeline, which has every
// figure of the trace but not its events, and the reader's Meta so far
// (what a read that skips the events' fields learns: StreamWalk replaces
// it). A second read, StreamWalk, walks the events. Only an explicit Options.MaxEvents
// limits the events: memory does not grow with them.
//
// It returns an error wrapping ErrNotStreamable, or
// timeline.ErrNotTimeOrdered for text whose events are out of order, when
// the trace must be loaded whole (Load) instead.
func Summarize(path string, opts parse.Options) (*Loaded, error) {
	if path == "-" {
		return nil, fmt.Errorf("standard input: %w", ErrNotStreamable)
	}
	// The summary needs no event's fields, unless a malformed one is to
	// be skipped, as the second read will.
	opts.Summary = !opts.Lenient
	ld, err := summarize(path, opts)
	var rerr *RecordError
	if opts.Summary && errors.As(err, &rerr) {
		// A malformed line, whose fields were not parsed: a read that
		// parses them stops where, and as, a load would (at a bad field
		// rather than at the timestamp after it).
		opts.Summary = false
		return summarize(path, opts)
	}
	return ld, err
}

func summarize(path string, opts parse.Options) (*Loaded, error) {
	s, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if !streamFormats[s.family] {
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotStreamable, s.Meta().Format)
	}
	b := timeline.NewSummaryBuilder(s.Strings(), 0)
	limit, why := streamLimit(opts.MaxEvents)
	if err := feed(s, path, limit, why, opts.Progress, b.AddEvent, nil, nil); err != nil {
		return nil, err
	}
	meta := finishMeta(s, b)
	tl, err := b.Finish()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tl.Topology = meta.Topology
	return &Loaded{Timeline: tl, Meta: meta, Compression: s.Compression, Path: path}, nil
}

// streamLimit is the event limit of a streamed read: only the one the
// user set, since the memory available bounds nothing here.
func streamLimit(max int64) (int64, string) {
	if max > 0 {
		return eventLimit(max)
	}
	return 0, ""
}

// StreamWalk is the second read of a streamed analysis: it reads ld's
// trace again and walks its events (timeline.NewStreamWalk), handing each
// closed Span to emit and each chunk of events to onChunk (nil: none).
// ld.Timeline takes this read's comms before the walk, and on return has
// its task instances and inconsistencies, and ld.Meta is the reader's, as if loaded. It fails when the read
// does not give the events the first did.
func StreamWalk(ld *Loaded, opts parse.Options, emit func(*timeline.Span), onChunk func(*timeline.Timeline)) (timeline.WalkStats, error) {
	s, err := Open(ld.Path, opts)
	if err != nil {
		return timeline.WalkStats{}, err
	}
	defer s.Close()
	// The comms are this read's (the first did not intern them): the
	// chunks name their tasks from its table as it grows.
	ld.Timeline.Strings = s.Strings()
	w, err := ld.Timeline.NewStreamWalk(emit, onChunk)
	if err != nil {
		return timeline.WalkStats{}, err
	}
	limit, why := streamLimit(opts.MaxEvents)
	if err := feed(s, ld.Path, limit, why, opts.Progress, w.AddEvent, nil, nil); err != nil {
		return timeline.WalkStats{}, err
	}
	ws, err := w.Finish()
	if err != nil {
		return ws, fmt.Errorf("%s: %w", ld.Path, err)
	}
	ld.Meta = readMeta(s)
	completeTasks(ld.Timeline, ld.Meta)
	return ws, nil
}

// compressionRatio is a low estimate of how much gzip or zstd shrinks a
// text trace (the fixtures: 8-14x), to size a compressed file's text.
const compressionRatio = 8

// WorthStreaming reports whether the trace file at path is large enough
// for a streamed analysis to pay: when loading it whole would take more
// than a quarter of the memory available (at BytesPerEvent an event, the
// events estimated from the file's size), or, where the memory available
// is not known, from 512 MiB of text. It does not look at the format:
// Summarize refuses what cannot be streamed.
func WorthStreaming(path string) bool {
	size, compressed, dat, ok := fileSize(path)
	if !ok {
		return false
	}
	limit, _ := defaultMaxEvents() // half the memory available, in events
	per := int64(ftraceEventBytes)
	if dat {
		per = tracedat.MinRecordBytes
	}
	return worthStreaming(size, compressed, per, limit)
}

// worthStreaming is WorthStreaming for a file of size bytes (compressed or
// not) whose events take at least per bytes each, where the memory
// available holds 2*halfMem events (0: unknown).
func worthStreaming(size int64, compressed bool, per, halfMem int64) bool {
	if compressed {
		size *= compressionRatio
	}
	if halfMem <= 0 {
		return size >= 512<<20
	}
	// The events, estimated high: at the smallest bytes an event takes
	// (text, and perf.data's samples, about 100; a trace.dat record 20).
	return size/per > halfMem/2
}

// fileSize returns the size of the regular file at path, whether it
// starts with a gzip or zstd magic number, and whether it is an
// uncompressed trace.dat; false when it is not a regular file that can be
// read. A compressed file that states its content size (contentSize) is
// taken at that size, as not compressed.
func fileSize(path string) (size int64, compressed, dat, ok bool) {
	if path == "-" {
		return 0, false, false, false
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, false, false, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0, false, false, false
	}
	var magic [len(tracedat.Magic)]byte
	n, _ := io.ReadFull(f, magic[:])
	kind := compressionOf(magic[:n])
	if c := contentSize(f, kind, fi.Size()); c > 0 {
		// the size it states, not a typical ratio; trace.dat by its
		// decompressed first bytes
		in, closers, err := decompressor(io.NewSectionReader(f, 0, fi.Size()))
		if err != nil {
			return fi.Size(), true, false, true
		}
		n, _ = io.ReadFull(in, magic[:])
		for _, cl := range closers {
			cl.Close()
		}
		return c, false, tracedat.Sniff(magic[:n]), true
	}
	return fi.Size(), kind != "", tracedat.Sniff(magic[:n]), true
}
