package ingest

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/schedlens/schedlens/metrics"
)

// BenchmarkTasksPathByFormat times `schedlens tasks` end to end (sniff,
// decompress, parse, build, account) on the same capture in three
// encodings: ftrace text and its Perfetto twins (plain and compact_sched);
// and a perf.data with its perf script text.
// events/s counts the capture's events, so the three are comparable.
func BenchmarkTasksPathByFormat(b *testing.B) {
	for _, c := range []struct{ name, path string }{
		{"text", real + "ftrace-hackbench-cyclictest/trace.txt.gz"},
		{"perfetto-plain", real + "perfetto-from-ftrace-hackbench-cyclictest/trace.pftrace.zst"},
		{"perfetto-compact", real + "perfetto-from-ftrace-hackbench-cyclictest/trace-compact.pftrace.zst"},
		// perf.data and its perf script text: another capture, so compare
		// these two with each other only.
		{"perf-script", real + "perf-hackbench-cyclictest/perf-script-fields.txt.gz"},
		{"perf.data", real + "perf-hackbench-cyclictest/perf.data.zst"},
	} {
		raw, err := os.ReadFile(c.path)
		if err != nil {
			b.Fatal(err)
		}
		// Decompress once: the benchmark measures parsing, not gzip/zstd.
		var plain bytes.Buffer
		if err := decompressTo(&plain, raw); err != nil {
			b.Fatal(err)
		}
		data := plain.Bytes()
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			events := 0
			for b.Loop() {
				ld, err := LoadReader(bytes.NewReader(data), c.name, Options{})
				if err != nil {
					b.Fatal(err)
				}
				metrics.Account(ld.Timeline, metrics.DefaultWindow(ld.Timeline))
				events += ld.Timeline.Len()
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func decompressTo(w io.Writer, raw []byte) error {
	r, closers, err := decompressor(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	_, err = io.Copy(w, r)
	return err
}
