package perfdata

import (
	"bytes"
	"io"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/ingest/perf"
	"github.com/schedlens/schedlens/timeline"
)

// count reads a whole trace and returns its number of events.
func count(tb testing.TB, r parse.Reader, err error) int {
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

// BenchmarkRead reads the perf-hackbench-cyclictest capture as perf.data
// and as its perf script text twin (-F comm,tid,pid,cpu,time,event,trace),
// both decompressed in memory; MB/s is of each one's own bytes, events/s
// compares them.
func BenchmarkRead(b *testing.B) {
	bin := readFixture(b)
	txt := readGz(b, fixtureFields)
	for _, bc := range []struct {
		name string
		data []byte
		open func(data []byte, strs *timeline.Strings) (parse.Reader, error)
	}{
		{"perf.data", bin, func(d []byte, s *timeline.Strings) (parse.Reader, error) {
			return NewReader(bytes.NewReader(d), parse.Options{Strings: s})
		}},
		{"perf-script", txt, func(d []byte, s *timeline.Strings) (parse.Reader, error) {
			return perf.NewReader(bytes.NewReader(d), parse.Options{Strings: s})
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			strs := timeline.NewStrings()
			r, err := bc.open(bc.data, strs)
			count(b, r, err) // intern the comms once
			b.SetBytes(int64(len(bc.data)))
			b.ReportAllocs()
			total := 0
			for b.Loop() {
				r, err := bc.open(bc.data, strs)
				total += count(b, r, err)
			}
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
