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

// TestPresizedPerfData: a perf.data's reader estimates its events from the
// data section (perfdata.Reader.EventEstimate), the estimate reaches the
// Builder, and the Timeline is the one an unsized build gives.
func TestPresizedPerfData(t *testing.T) {
	f := "perf-hackbench-cyclictest/perf.data.zst"
	raw, err := os.ReadFile(real + f)
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	if err := decompressTo(&plain, raw); err != nil {
		t.Fatal(err)
	}
	open := func() *Stream {
		s, err := NewStream(bytes.NewReader(plain.Bytes()), Options{Name: f})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	est := s.events
	sized, err := load(s, f, 0, nil, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	s = open()
	s.events = 0
	unsized, err := load(s, f, 0, nil, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The estimate divides by the smallest event record, so samples that
	// are not events (half of this capture's are sched_stat_runtime) raise
	// it: 2.25 times the events here. Capacity never written costs address
	// space, not resident memory.
	if n := sized.Timeline.Len(); est < n || est > 3*n {
		t.Errorf("estimate %d events, the trace has %d: want at least that, at most 3 times that", est, n)
	}
	if sized.Timeline.Strings.Len() != unsized.Timeline.Strings.Len() {
		t.Fatalf("string tables differ")
	}
	a, b := *sized.Timeline, *unsized.Timeline
	a.Strings, b.Strings = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the pre-sized build differs from the unsized one")
	}
	if c, n := cap(sized.Timeline.Times), len(sized.Timeline.Times); c != n {
		t.Errorf("Times has cap %d, len %d: the columns must be clipped", c, n)
	}
}
