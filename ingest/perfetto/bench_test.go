package perfetto

import (
	"bytes"
	"errors"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// countEvents decodes data and returns the number of events.
func countEvents(b *testing.B, data []byte, strs *timeline.Strings) int {
	r, err := NewReader(bytes.NewReader(data), parse.Options{Strings: strs})
	if err != nil {
		b.Fatal(err)
	}
	var ev timeline.Event
	n := 0
	for {
		if err := r.Next(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return n
			}
			b.Fatal(err)
		}
		n++
	}
}

func benchDecode(b *testing.B, path string) {
	data := readFixture(b, path)
	strs := timeline.NewStrings()
	countEvents(b, data, strs) // intern the comms once, as a long trace would
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	total := 0
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		total += countEvents(b, data, strs)
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "events/s")
	// On a shared machine wall time undercounts a core's throughput: also
	// report events per second of this process's CPU time.
	if d := cpuTime() - cpu0; d > 0 {
		b.ReportMetric(float64(total)/d.Seconds(), "events/cpu-s")
	}
}

// cpuTime returns the user+system CPU time of this process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCompactSched decodes compact_sched traces: the tracebox
// recording (switch and waking columns, a few plain events) and the
// compact encoding of the text twin.
func BenchmarkCompactSched(b *testing.B) {
	b.Run("tracebox-hackbench", func(b *testing.B) {
		benchDecode(b, "../../fixtures/real/perfetto-tracebox-hackbench-compact/trace.pftrace.zst")
	})
	b.Run("twin", func(b *testing.B) { benchDecode(b, twinDir+"trace-compact.pftrace.zst") })
}

// BenchmarkPlain decodes traces of plain FtraceEvents.
func BenchmarkPlain(b *testing.B) {
	b.Run("tracebox-hackbench", func(b *testing.B) {
		benchDecode(b, "../../fixtures/real/perfetto-tracebox-hackbench-plain/trace.pftrace.zst")
	})
	b.Run("twin", func(b *testing.B) { benchDecode(b, twinDir+"trace.pftrace.zst") })
}

// BenchmarkWriter encodes the twin's events, plain and compact.
func BenchmarkWriter(b *testing.B) {
	strs := timeline.NewStrings()
	data := readFixture(b, twinDir+"trace.pftrace.zst")
	evs, r := mustDecode(b, data, parse.Options{Strings: strs})
	for _, compact := range []bool{false, true} {
		name := "plain"
		if compact {
			name = "compact"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				w, _ := NewWriter(&out, WriterOptions{CompactSched: compact, Strings: strs, Kernel: r.Meta().Kernel})
				for i := range evs {
					if err := w.Add(&evs[i]); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(out.Len()))
			b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// TestSteadyStateAllocs checks that decoding allocates nothing per event
// once the buffers have grown and the comms are interned: read in the
// goroutine that calls Next, and in parallel (whose blocks and per-packet
// buffers grow over the first blocks, so it reads a longer trace).
func TestSteadyStateAllocs(t *testing.T) {
	for _, p := range []string{"../../fixtures/real/perfetto-tracebox-hackbench-compact/trace.pftrace.zst", twinDir + "trace.pftrace.zst", "long"} {
		var data []byte
		if p == "long" {
			data = longCompact(t)
		} else {
			data = readFixture(t, p)
		}
		for _, workers := range []int{1, 2} {
			if p != "long" && workers > 1 {
				continue
			}
			strs := timeline.NewStrings()
			evs, _ := mustDecode(t, data, parse.Options{Strings: strs})
			r, _ := NewReader(bytes.NewReader(data), parse.Options{Strings: strs, Workers: workers})
			var ev timeline.Event
			// Warm up on the first half, then measure the second.
			for i := 0; i < len(evs)/2; i++ {
				if err := r.Next(&ev); err != nil {
					t.Fatal(err)
				}
			}
			n := len(evs)/4 - 1000 // AllocsPerRun runs f twice (once to warm up)
			allocs := testing.AllocsPerRun(1, func() {
				for i := 0; i < n; i++ {
					if err := r.Next(&ev); err != nil {
						t.Fatal(err)
					}
				}
			})
			if perEvent := allocs / float64(n); perEvent > 0.001 {
				t.Errorf("%s, %d workers: %.0f allocations for %d events (%.4f per event), want ~0", p, workers, allocs, n, perEvent)
			}
			r.Close()
		}
	}
}

// BenchmarkCompactSchedLong decodes a long compact_sched trace, so that the
// per-trace setup (buffers, the process tree) is amortised as in a
// multi-GB recording: the tracebox recording's events written 20 times in a
// row, each copy shifted past the previous one, through the Writer.
func BenchmarkCompactSchedLong(b *testing.B) {
	benchDecodeBytes(b, longCompact(b))
}

// longCompact returns the tracebox compact_sched recording's events
// written 20 times in a row, each copy shifted past the previous one.
func longCompact(b testing.TB) []byte {
	data := readFixture(b, "../../fixtures/real/perfetto-tracebox-hackbench-compact/trace.pftrace.zst")
	evs, rd, err := decodeAll(data, parse.Options{})
	if err != nil {
		b.Fatal(err)
	}
	first, last := evs[0].Time, evs[len(evs)-1].Time
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{CompactSched: true, Strings: rd.Strings(), NCPU: rd.Meta().NCPU, Kernel: rd.Meta().Kernel})
	if err != nil {
		b.Fatal(err)
	}
	const copies = 20
	for c := 0; c < copies; c++ {
		shift := timeline.Time(c) * (last - first + 1_000_000)
		for i := range evs {
			ev := evs[i]
			ev.Time += shift
			if ev.Start != timeline.NoTime {
				ev.Start += shift
			}
			if err := w.Add(&ev); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func benchDecodeBytes(b *testing.B, data []byte) {
	strs := timeline.NewStrings()
	countEvents(b, data, strs)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	total := 0
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		total += countEvents(b, data, strs)
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "events/s")
	if d := cpuTime() - cpu0; d > 0 {
		b.ReportMetric(float64(total)/d.Seconds(), "events/cpu-s")
	}
}
