package ingest

import (
	"bytes"
	"io"
	"os"
	"reflect"
	"testing"
)

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
		raw, err := os.ReadFile(real + f)
		if err != nil {
			t.Fatal(err)
		}
		var plain bytes.Buffer
		if err := decompressTo(&plain, raw); err != nil {
			t.Fatal(err)
		}
		sized, err := LoadReader(bytes.NewReader(plain.Bytes()), f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewStream(bytes.NewReader(plain.Bytes()), Options{Name: f})
		if err != nil {
			t.Fatal(err)
		}
		if s.events < sized.Timeline.Len() {
			t.Errorf("%s: estimate %d events, the trace has %d: the estimate should not be low on real captures", f, s.events, sized.Timeline.Len())
		}
		unsized, err := LoadReader(struct{ io.Reader }{bytes.NewReader(plain.Bytes())}, f, Options{})
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
		raw, err := os.ReadFile(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var plain bytes.Buffer
		if err := decompressTo(&plain, raw); err != nil {
			t.Fatal(err)
		}
		open := func() *Stream {
			s, err := NewStream(bytes.NewReader(plain.Bytes()), Options{Name: tc.path})
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
