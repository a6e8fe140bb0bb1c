package perf

import (
	"bytes"
	"io"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// countEvents reads data whole, parsing on the given number of goroutines
// (parse.Options.Workers), and returns its number of events.
func countEvents(tb testing.TB, data []byte, strs *timeline.Strings, workers int) int {
	r, err := NewReader(bytes.NewReader(data), parse.Options{Strings: strs, Workers: workers})
	if err != nil {
		tb.Fatal(err)
	}
	var ev timeline.Event
	n := 0
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			return n
		}
		if err != nil {
			tb.Fatal(err)
		}
		n++
	}
}

// BenchmarkPerfScript reads the decompressed fixtures; MB/s is of text.
// "serial" parses on the goroutine that calls Next, "parallel" on the
// default workers (one per CPU, at most 4).
func BenchmarkPerfScript(b *testing.B) {
	for _, bc := range []struct{ name, path string }{
		{"default", fixtureDefault},
		{"fields", fixtureFields},
	} {
		for _, w := range []struct {
			name    string
			workers int
		}{{"serial", 1}, {"parallel", 0}} {
			b.Run(bc.name+"/"+w.name, func(b *testing.B) {
				data := readGz(b, bc.path)
				strs := timeline.NewStrings()
				countEvents(b, data, strs, w.workers) // intern the comms once, as a long trace would
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				total := 0
				for b.Loop() {
					total += countEvents(b, data, strs, w.workers)
				}
				b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}

// TestSteadyStateAllocs checks that reading a whole fixture serially, once
// its comms are interned, allocates only the Reader's fixed setup, not per
// event.
func TestSteadyStateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a whole fixture")
	}
	data := readGz(t, fixtureFields)
	strs := timeline.NewStrings()
	n := countEvents(t, data, strs, 1)
	allocs := testing.AllocsPerRun(3, func() { countEvents(t, data, strs, 1) })
	// NewReader: the Reader, its bufio buffer, Meta and its maps; at EOF
	// the per-CPU slice, the NCPU warning and the Unknown key.
	// (TestParallelAllocs bounds the parallel read.)
	if allocs > 16 {
		t.Errorf("%.0f allocations for %d events, want at most 16 in all", allocs, n)
	}
}
