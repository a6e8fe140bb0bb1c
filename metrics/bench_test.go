package metrics_test

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/schedlens/schedlens/ingest/ftrace"
	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/ingest/perf"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
)

func readAll(b testing.TB, path string) []byte {
	data, err := io.ReadAll(decompress(b, path))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func buildFrom(b testing.TB, r parse.Reader) *timeline.Timeline {
	bl := timeline.NewBuilder(r.Strings(), 0)
	var ev timeline.Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		bl.Add(ev)
	}
	tl, err := bl.Finish()
	if err != nil {
		b.Fatal(err)
	}
	return tl
}

// BenchmarkTasksPath times what `schedlens tasks` does on decompressed
// text: parse, build the timeline, account every task and CPU.
func BenchmarkTasksPath(b *testing.B) {
	cases := []struct {
		name, path string
		perf       bool
	}{
		{"ftrace-oracle-busy", real + "ftrace-oracle-busy/trace.txt.zst", false},
		{"trace-cmd-oracle-busy", real + "ftrace-oracle-busy/report.txt.zst", false},
		{"ftrace-hackbench", real + "ftrace-hackbench-cyclictest/trace.txt.gz", false},
		{"perf-script", real + "perf-hackbench-cyclictest/perf-script.txt.gz", true},
	}
	for _, c := range cases {
		data := readAll(b, c.path)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			events := 0
			for b.Loop() {
				var r parse.Reader
				var err error
				if c.perf {
					r, err = perf.NewReader(bytes.NewReader(data), parse.Options{})
				} else {
					r, err = ftrace.NewReader(bytes.NewReader(data), parse.Options{})
				}
				if err != nil {
					b.Fatal(err)
				}
				tl := buildFrom(b, r)
				metrics.Account(tl, metrics.DefaultWindow(tl))
				events += tl.Len()
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// TestTimelineResidentBytes checks the timeline stays compact: under 40
// bytes per event resident, measured on the heap.
func TestTimelineResidentBytes(t *testing.T) {
	data := readAll(t, real+"ftrace-oracle-busy/trace.txt.zst")
	r, err := ftrace.NewReader(bytes.NewReader(data), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bl := timeline.NewBuilder(r.Strings(), 0)
	var ev timeline.Event
	for {
		if err := r.Next(&ev); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		bl.Add(ev)
	}
	data, r = nil, nil
	tl, err := bl.Finish()
	if err != nil {
		t.Fatal(err)
	}
	bl = nil
	var with, without runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&with)
	n := tl.Len()
	tl = nil
	runtime.GC()
	runtime.ReadMemStats(&without)
	// What the timeline alone holds: the heap with it minus without it.
	perEvent := float64(int64(with.HeapAlloc)-int64(without.HeapAlloc)) / float64(n)
	t.Logf("%d events: the timeline holds %.1f bytes/event resident", n, perEvent)
	if perEvent > 40 {
		t.Errorf("timeline holds %.1f bytes per event, want under 40", perEvent)
	}
}
