package ftrace

import (
	"bytes"
	"io"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// countEvents reads data to the end and returns its event count.
func countEvents(b *testing.B, data []byte, strs *timeline.Strings) int {
	r, err := NewReader(bytes.NewReader(data), parse.Options{Name: "bench", Strings: strs})
	if err != nil {
		b.Fatal(err)
	}
	var ev timeline.Event
	n := 0
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}

func benchText(b *testing.B, files ...string) {
	var data [][]byte
	size := 0
	for _, f := range files {
		d := readFixture(b, f)
		data = append(data, d)
		size += len(d)
	}
	strs := timeline.NewStrings() // shared, as a long-lived tool would
	b.SetBytes(int64(size))
	b.ReportAllocs()
	total := 0
	for b.Loop() {
		for _, d := range data {
			total += countEvents(b, d, strs)
		}
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkFtraceText reads the kernel-text fixtures (trace files with and
// without the tgid and irq-info columns, a trace_pipe capture).
func BenchmarkFtraceText(b *testing.B) {
	files := []string{
		"ftrace-oracle-busy/trace.txt.zst",
		"ftrace-hackbench-cyclictest/trace.txt.gz",
		"ftrace-overflow/trace.txt.gz",
		"ftrace-pipe-lost/trace.txt.gz",
		"qemu-smt8-hackbench/trace.txt.zst",
	}
	for _, f := range files {
		b.Run(f[:bytes.IndexByte([]byte(f), '/')], func(b *testing.B) { benchText(b, f) })
	}
	b.Run("all", func(b *testing.B) { benchText(b, files...) })
}

// BenchmarkTraceCmdReport reads trace-cmd report text.
func BenchmarkTraceCmdReport(b *testing.B) {
	benchText(b, "ftrace-oracle-busy/report.txt.zst")
}
