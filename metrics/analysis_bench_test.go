package metrics

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/schedlens/schedlens/ingest"
)

// The acceptance budget: the three metrics together (Analyze) add at most
// half of what ingest alone costs. BenchmarkIngestText is ingest from the
// decompressed text (the cheaper, stricter baseline); BenchmarkIngestFile
// from the compressed file bytes, as `schedlens report FILE` reads them.
// Compare BenchmarkAnalyze's ns/op with either.

var benchTraces = []struct{ name, rel string }{
	{"hackbench-cyclictest", "ftrace-hackbench-cyclictest/trace.txt.gz"},
	{"qemu-smt8", "qemu-smt8-hackbench/trace.txt.zst"},
	{"oracle-busy", "ftrace-oracle-busy/trace.txt.zst"},
}

func benchRaw(b *testing.B, rel string) (compressed, plain []byte) {
	b.Helper()
	compressed, err := os.ReadFile(fixtureDir + rel)
	if err != nil {
		b.Fatal(err)
	}
	var r io.Reader
	switch {
	case bytes.HasPrefix(compressed, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(bytes.NewReader(compressed))
		if err != nil {
			b.Fatal(err)
		}
		r = zr
	default:
		zr, err := zstd.NewReader(bytes.NewReader(compressed))
		if err != nil {
			b.Fatal(err)
		}
		defer zr.Close()
		r = zr
	}
	plain, err = io.ReadAll(r)
	if err != nil {
		b.Fatal(err)
	}
	return compressed, plain
}

func benchIngest(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		ld, err := ingest.LoadReader(bytes.NewReader(data), "bench", ingest.Options{})
		if err != nil {
			b.Fatal(err)
		}
		events += ld.Timeline.Len()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkIngestText(b *testing.B) {
	for _, tc := range benchTraces {
		b.Run(tc.name, func(b *testing.B) {
			_, plain := benchRaw(b, tc.rel)
			benchIngest(b, plain)
		})
	}
}

func BenchmarkIngestFile(b *testing.B) {
	for _, tc := range benchTraces {
		b.Run(tc.name, func(b *testing.B) {
			compressed, _ := benchRaw(b, tc.rel)
			benchIngest(b, compressed)
		})
	}
}

func BenchmarkAnalyze(b *testing.B) {
	for _, tc := range benchTraces {
		b.Run(tc.name, func(b *testing.B) {
			_, plain := benchRaw(b, tc.rel)
			ld, err := ingest.LoadReader(bytes.NewReader(plain), "bench", ingest.Options{})
			if err != nil {
				b.Fatal(err)
			}
			topo := fixtureTopology(b, &ingest.Loaded{Timeline: ld.Timeline, Meta: ld.Meta, Path: fixtureDir + tc.rel})
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			events := 0
			for b.Loop() {
				if _, err := Analyze(ld.Timeline, Options{Topology: topo}); err != nil {
					b.Fatal(err)
				}
				events += ld.Timeline.Len()
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
