package ingest

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/schedlens/schedlens/timeline"
)

// rawAndPlain returns the file at path and its bytes decompressed.
func rawAndPlain(t *testing.T, path string) (raw, plain []byte) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := decompressTo(&b, raw); err != nil {
		t.Fatal(err)
	}
	return raw, b.Bytes()
}

// TestPresizedBuildIsTheSame loads real text captures twice: from a
// bytes.Reader, whose size pre-sizes the Builder's columns, and from a
// plain io.Reader, which gives no size; the Timelines must be equal, and the
// pre-sized columns clipped to their length.
func TestPresizedBuildIsTheSame(t *testing.T) {
	for _, f := range []string{
		"ftrace-hackbench-cyclictest/trace.txt.gz",
		"ftrace-pipe-lost/trace.txt.gz",
		"perf-hackbench-cyclictest/perf-script.txt.gz",
	} {
		_, plain := rawAndPlain(t, real+f)
		sized, err := LoadReader(bytes.NewReader(plain), f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewStream(bytes.NewReader(plain), Options{Name: f})
		if err != nil {
			t.Fatal(err)
		}
		if s.events < sized.Timeline.Len() {
			t.Errorf("%s: estimate %d events, the trace has %d: the estimate should not be low on real captures", f, s.events, sized.Timeline.Len())
		}
		unsized, err := LoadReader(struct{ io.Reader }{bytes.NewReader(plain)}, f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Strings are interned per load; compare them by content.
		if sized.Timeline.Strings.Len() != unsized.Timeline.Strings.Len() {
			t.Fatalf("%s: string tables differ", f)
		}
		a, b := *sized.Timeline, *unsized.Timeline
		a.Strings, b.Strings = nil, nil
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the pre-sized build differs from the unsized one", f)
		}
		if c, n := cap(sized.Timeline.Times), len(sized.Timeline.Times); c != n {
			t.Errorf("%s: Times has cap %d, len %d: the columns must be clipped", f, c, n)
		}
	}
}

// TestPresizedBinary: a perf.data's and a trace.dat's reader estimate
// their events from the data they hold (perfdata.Reader.EventEstimate,
// tracedat.Reader.EventEstimate), the estimate reaches the Builder, is not
// below the count nor far above it, and the Timeline is the one an unsized
// build gives.
func TestPresizedBinary(t *testing.T) {
	for _, tc := range []struct {
		path string
		most int // times the events the estimate may reach
	}{
		// Half of this capture's samples are sched_stat_runtime, which are
		// not events: 2.25 times the events.
		{real + "perf-hackbench-cyclictest/perf.data.zst", 3},
		// Compressed CPU buffers, taken at 12 times their size.
		{real + "ftrace-oracle-busy/trace.dat.zst", 8},
		{"tracedat/testdata/real-lost.dat.zst", 8},
		{"tracedat/testdata/v6-lost.dat.zst", 8},
	} {
		_, plain := rawAndPlain(t, tc.path)
		open := func() *Stream {
			s, err := NewStream(bytes.NewReader(plain), Options{Name: tc.path})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		s := open()
		est := s.events
		sized, err := load(s, tc.path, 0, nil, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		s = open()
		s.events = 0
		unsized, err := load(s, tc.path, 0, nil, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Capacity never written costs address space, not resident memory.
		if n := sized.Timeline.Len(); est < n || est > tc.most*n {
			t.Errorf("%s: estimate %d events, the trace has %d: want at least that, at most %d times that", tc.path, est, n, tc.most)
		}
		if sized.Timeline.Strings.Len() != unsized.Timeline.Strings.Len() {
			t.Fatalf("%s: string tables differ", tc.path)
		}
		a, b := *sized.Timeline, *unsized.Timeline
		a.Strings, b.Strings = nil, nil
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the pre-sized build differs from the unsized one", tc.path)
		}
		if c, n := cap(sized.Timeline.Times), len(sized.Timeline.Times); c != n {
			t.Errorf("%s: Times has cap %d, len %d: the columns must be clipped", tc.path, c, n)
		}
	}
}

// TestContentSize: a gzip or zstd file read at offsets states the size it
// decompresses to (the oracle: its decompressed bytes); a stream that
// cannot be read at offsets, or a zstd frame written without its size,
// states none; a gzip file of two members states its last member's.
func TestContentSize(t *testing.T) {
	for _, f := range []string{
		"ftrace-hackbench-cyclictest/trace.txt.gz",
		"ftrace-pipe-lost/trace.txt.gz",
		"qemu-smt8-hackbench/trace.txt.zst",
		"ftrace-oracle-busy/trace.dat.zst",
	} {
		raw, plain := rawAndPlain(t, real+f)
		kind := compressionOf(raw)
		if got := contentSize(bytes.NewReader(raw), kind, int64(len(raw))); got != int64(len(plain)) {
			t.Errorf("%s: content size %d, want %d", f, got, len(plain))
		}
		if got := contentSize(struct{ io.Reader }{bytes.NewReader(raw)}, kind, int64(len(raw))); got != 0 {
			t.Errorf("%s: a stream states %d, want none", f, got)
		}
		// A gzip file cut short ends in compressed bytes, not a trailer.
		if kind == "gzip" {
			cut := raw[:len(raw)/2]
			if got := contentSize(bytes.NewReader(cut), kind, int64(len(cut))); got > 64*int64(len(cut)) {
				t.Errorf("%s cut short: content size %d, more than 64 times its %d bytes", f, got, len(cut))
			}
		}
		// The same text compressed as a stream of unknown length.
		var z bytes.Buffer
		enc, _ := zstd.NewWriter(&z)
		io.Copy(enc, struct{ io.Reader }{bytes.NewReader(plain)})
		enc.Close()
		if got := contentSize(bytes.NewReader(z.Bytes()), "zstd", int64(z.Len())); got != 0 {
			t.Errorf("%s: a zstd frame without its size states %d, want none", f, got)
		}
		// Two gzip members: the trailer is the second's.
		var g bytes.Buffer
		for _, part := range [][]byte{plain, plain[:len(plain)/3]} {
			w := gzip.NewWriter(&g)
			w.Write(part)
			w.Close()
		}
		if got, want := contentSize(bytes.NewReader(g.Bytes()), "gzip", int64(g.Len())), int64(len(plain)/3); got != want && got != 0 {
			t.Errorf("%s: two gzip members state %d, want the last's %d (or none)", f, got, want)
		}
	}
}

// TestPresizedCompressed: a compressed text file read at offsets sizes
// the Builder from the content size it states, and builds the Timeline an
// unsized load builds.
func TestPresizedCompressed(t *testing.T) {
	for _, f := range []string{"ftrace-hackbench-cyclictest/trace.txt.gz", "qemu-smt8-hackbench/trace.txt.zst"} {
		raw, err := os.ReadFile(real + f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewStream(bytes.NewReader(raw), Options{Name: f})
		if err != nil {
			t.Fatal(err)
		}
		est := s.events
		sized, err := load(s, f, 0, nil, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		unsized, err := LoadReader(struct{ io.Reader }{bytes.NewReader(raw)}, f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if n := sized.Timeline.Len(); est < n || est > 2*n {
			t.Errorf("%s: estimate %d events, the trace has %d: want at least that, at most twice", f, est, n)
		}
		a, b := *sized.Timeline, *unsized.Timeline
		a.Strings, b.Strings = nil, nil
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the pre-sized build differs from the unsized one", f)
		}
	}
}

// TestSizeFromRate: columns about to fill grow to the events the bytes
// read so far extrapolate to, and a quarter more; with room left, or
// nothing to extrapolate from, they do not.
func TestSizeFromRate(t *testing.T) {
	b := timeline.NewBuilder(nil, 0)
	s := &Stream{total: 1000, read: &countingReader{}}
	s.read.n.Store(100)
	sizeFromRate(s, b, 1<<16, 0) // 65,536 events from a tenth of the input
	if got, want := b.Room(), 655360*5/4-1<<16; got < want {
		t.Errorf("room %d after the first tenth of 65,536 events, want at least %d", got, want)
	}
	room := b.Room()
	sizeFromRate(s, b, 1<<16, 0)
	if b.Room() != room {
		t.Errorf("room %d with room left, want it unchanged (%d)", b.Room(), room)
	}
	// no further than the read may go
	b = timeline.NewBuilder(nil, 0)
	sizeFromRate(s, b, 1<<16, 200000)
	if got, want := b.Room(), 200000-1<<16; got < want || got > want+1<<10 {
		t.Errorf("room %d under a limit of 200,000 events, want %d", got, want)
	}
	for _, s := range []*Stream{{total: 0, read: &countingReader{}}, {total: 1000}} {
		b := timeline.NewBuilder(nil, 0)
		sizeFromRate(s, b, 1<<16, 0)
		if b.Room() != 0 {
			t.Errorf("total %d, counted %v: room %d, want none", s.total, s.read != nil, b.Room())
		}
	}
}
