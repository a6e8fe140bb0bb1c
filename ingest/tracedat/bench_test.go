package tracedat_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/schedlens/schedlens/ingest/ftrace"
	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/ingest/tracedat"
	"github.com/schedlens/schedlens/timeline"
)

// BenchmarkTraceDat reads ftrace-oracle-busy's trace.dat (v7, zstd
// chunks); BenchmarkReportText its `trace-cmd report` twin with the ftrace
// reader. MB/s is of the file as stored (uncompressed outer layer).
func BenchmarkTraceDat(b *testing.B) {
	data := fixture(b, "trace.dat.zst")
	bench(b, data, func(r io.Reader, o parse.Options) (parse.Reader, error) { return tracedat.NewReader(r, o) })
}

func BenchmarkReportText(b *testing.B) {
	data := fixture(b, "report.txt.zst")
	bench(b, data, func(r io.Reader, o parse.Options) (parse.Reader, error) { return ftrace.NewReader(r, o) })
}

func bench(b *testing.B, data []byte, open func(io.Reader, parse.Options) (parse.Reader, error)) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	n := 0
	for i := 0; i < b.N; i++ {
		rd, err := open(bytes.NewReader(data), parse.Options{})
		if err != nil {
			b.Fatal(err)
		}
		var ev timeline.Event
		n = 0
		for {
			err := rd.Next(&ev)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
}
