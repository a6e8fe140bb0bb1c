package perfdata

import (
	"os"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/internal/readertest"
	"github.com/schedlens/schedlens/timeline"
)

// BenchmarkReadFile reads the perf.data named by SCHEDLENS_PERFDATA from
// the file, as `schedlens` does, to the end with Next and nothing else:
// time, allocation, and (run as `-benchtime 1x` in a process of its own,
// under /usr/bin/time) the reader's peak memory on large captures.
func BenchmarkReadFile(b *testing.B) {
	path := readertest.BenchFile(b, "SCHEDLENS_PERFDATA")
	strs := timeline.NewStrings()
	events := 0
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := NewReader(f, parse.Options{Name: path, Strings: strs})
		events += count(b, r, err)
		f.Close()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
