package ingest

import (
	"testing"

	"github.com/schedlens/schedlens/internal/readertest"
	"github.com/schedlens/schedlens/metrics"
)

// BenchmarkTasksPerfData times the `tasks` path (read, build, account) on
// the perf.data named by SCHEDLENS_PERFDATA, loaded and accounted as
// `schedlens tasks` does (the accounting walks along the load): the figure
// to set beside `perf sched latency` on the same file. It reports input
// MB/s, events/s and allocations.
func BenchmarkTasksPerfData(b *testing.B) {
	path := readertest.BenchFile(b, "SCHEDLENS_PERFDATA")
	events := 0
	for b.Loop() {
		var along metrics.AccountAlong
		ld, ws, walked, err := LoadWalking(path, Options{}, along.Start)
		if err != nil {
			b.Fatal(err)
		}
		if walked {
			along.Result(ws)
		} else {
			metrics.Account(ld.Timeline, metrics.DefaultWindow(ld.Timeline))
		}
		events += ld.Timeline.Len()
	}
	b.StopTimer()
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
