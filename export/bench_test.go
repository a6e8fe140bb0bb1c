package export

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/schedlens/schedlens/ingest"
)

// BenchmarkExport writes every table of a real capture (ftrace text,
// 258812 events) and reports rows written per second (load
// excluded; the analysis, as export runs it, included) and the dataset's
// bytes per event beside the zstd text's.
func BenchmarkExport(b *testing.B) {
	const tr = "../fixtures/real/ftrace-oracle-busy/trace.txt.zst"
	fi, err := os.Stat(tr)
	if err != nil {
		b.Fatal(err)
	}
	ld, err := ingest.Load(tr, ingest.Options{Name: tr})
	if err != nil {
		b.Fatal(err)
	}
	sha, err := HashFile(tr)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	var rows, bytes int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := write(ld, sha, filepath.Join(dir, "ds"), Options{Version: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		rows, bytes = 0, res.Bytes
		for _, n := range res.Rows {
			rows += n
		}
	}
	b.StopTimer()
	ev := float64(ld.Timeline.Len())
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(bytes)/ev, "parquet_B/event")
	b.ReportMetric(float64(fi.Size())/ev, "zstd_text_B/event")
}
