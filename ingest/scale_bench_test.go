package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/metrics"
)

// scaledFtrace returns about mb MB of ftrace text: the hackbench-cyclictest
// capture repeated, each copy shifted in time past the previous one, so the
// result is one long time-ordered trace with the capture's mix of events.
// Header lines are kept once; entries-in-buffer is dropped (the copies were
// not one buffer).
func scaledFtrace(tb testing.TB, mb int) []byte {
	raw, err := os.ReadFile(real + "ftrace-hackbench-cyclictest/trace.txt.gz")
	if err != nil {
		tb.Fatal(err)
	}
	var plain bytes.Buffer
	if err := decompressTo(&plain, raw); err != nil {
		tb.Fatal(err)
	}
	type rec struct {
		pre, post []byte
		us        int64
	}
	var hdr []byte
	var recs []rec
	for _, l := range bytes.Split(plain.Bytes(), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if l[0] == '#' {
			if !bytes.Contains(l, []byte("entries-in-buffer")) {
				hdr = append(append(hdr, l...), '\n')
			}
			continue
		}
		// "comm-pid [cpu] flags  secs.usecs: event: ..."
		j := bytes.IndexByte(l, ']') + 1
		for j < len(l) && l[j] == ' ' {
			j++
		}
		j += bytes.IndexByte(l[j:], ' ')
		for l[j] == ' ' {
			j++
		}
		k := j + bytes.IndexByte(l[j:], ':')
		dot := j + bytes.IndexByte(l[j:k], '.')
		s, err1 := strconv.ParseInt(string(l[j:dot]), 10, 64)
		u, err2 := strconv.ParseInt(string(l[dot+1:k]), 10, 64)
		if err1 != nil || err2 != nil || k-dot != 7 {
			tb.Fatalf("unexpected timestamp in %q", l)
		}
		recs = append(recs, rec{l[:j], l[k:], s*1e6 + u})
	}
	span := recs[len(recs)-1].us - recs[0].us + 1000
	out := bytes.NewBuffer(make([]byte, 0, mb<<20+plain.Len()))
	out.Write(hdr)
	for c := int64(0); out.Len() < mb<<20; c++ {
		for _, r := range recs {
			us := r.us + c*span
			out.Write(r.pre)
			fmt.Fprintf(out, "%d.%06d", us/1e6, us%1e6)
			out.Write(r.post)
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

// benchMB is the size of the scaled text: 50 MB, or SCHEDLENS_BENCH_MB.
func benchMB(b *testing.B) int {
	s := os.Getenv("SCHEDLENS_BENCH_MB")
	if s == "" {
		return 50
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		b.Fatalf("SCHEDLENS_BENCH_MB=%q: want a positive number of MB", s)
	}
	return v
}

// BenchmarkTasksScaled times the `tasks` path (parse, build, account) on a
// large ftrace text made by scaledFtrace: 50 MB, or SCHEDLENS_BENCH_MB
// (e.g. 1024 for the 1 GB figure of issue 17). It reports input MB/s,
// events/s, input bytes per event and allocations per event; B/op is what
// the path allocates for the whole input. "serial" parses on one
// goroutine, "parallel" on one per CPU (Options.Workers), "streamed" reads
// a file twice and holds no Timeline (Summarize, StreamWalk).
func BenchmarkTasksScaled(b *testing.B) {
	data := scaledFtrace(b, benchMB(b))
	for _, c := range []struct {
		name    string
		workers int
	}{{"serial", 1}, {"parallel", 0}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			events := 0
			for b.Loop() {
				ld, err := LoadReader(bytes.NewReader(data), "scaled", Options{Workers: c.workers})
				if err != nil {
					b.Fatal(err)
				}
				metrics.Account(ld.Timeline, metrics.DefaultWindow(ld.Timeline))
				events += ld.Timeline.Len()
			}
			b.StopTimer()
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(len(data))*float64(b.N)/float64(events), "in-B/event")
		})
	}
	// "streamed": the same accounting from two reads of a file (Summarize,
	// StreamWalk), holding no Timeline.
	path := filepath.Join(b.TempDir(), "scaled.txt")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("streamed", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		events := 0
		for b.Loop() {
			ld, err := Summarize(path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			a := metrics.NewAccountant(ld.Timeline, metrics.DefaultWindow(ld.Timeline))
			ws, err := StreamWalk(ld, Options{}, a.Span, a.Events)
			if err != nil {
				b.Fatal(err)
			}
			a.Result(ws)
			events += ld.Timeline.Len()
		}
		b.StopTimer()
		b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		b.ReportMetric(float64(len(data))*float64(b.N)/float64(events), "in-B/event")
	})
}

// BenchmarkReportScaled times the `report` path (read, analysis with the
// affinity inference, accounting) on the text of BenchmarkTasksScaled (50
// MB, or SCHEDLENS_BENCH_MB): "loaded" holds the Timeline and drops its
// events after the walk (metrics.Options.DropEvents), "streamed" reads the
// file twice and feeds one walk to the analysis, the accounting and the
// inference. It reports MB/s, events/s and allocations. What the paths
// hold is a whole-process figure (peak RSS; the heap in use counts the
// lists' reserved capacity, which is never touched): docs/architecture.md
// gives it, measured.
func BenchmarkReportScaled(b *testing.B) {
	data := scaledFtrace(b, benchMB(b))
	path := filepath.Join(b.TempDir(), "scaled.txt")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	size := int64(len(data))
	run := func(b *testing.B, one func() int) {
		b.SetBytes(size)
		b.ReportAllocs()
		events := 0
		for b.Loop() {
			events += one()
		}
		b.StopTimer()
		b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		b.ReportMetric(float64(size)*float64(b.N)/float64(events), "in-B/event")
	}
	b.Run("loaded", func(b *testing.B) {
		run(b, func() int {
			ld, err := Load(path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			tl := ld.Timeline
			n := tl.Len()
			aff, err := affinity.Build(tl, affinity.BuildOptions{})
			if err != nil {
				b.Fatal(err)
			}
			a, _, err := metrics.AnalyzeAccount(tl, metrics.Options{Affinity: aff, DropEvents: true})
			if err != nil {
				b.Fatal(err)
			}
			runtime.KeepAlive(a)
			return n
		})
	})
	b.Run("streamed", func(b *testing.B) {
		run(b, func() int {
			ld, err := Summarize(path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			tl := ld.Timeline
			sa, err := metrics.NewStreamAnalysis(tl, metrics.Options{})
			if err != nil {
				b.Fatal(err)
			}
			acc := metrics.NewAccountant(tl, metrics.DefaultWindow(tl))
			inf := affinity.NewInferrer(tl, affinity.InferOptions{})
			sinks := metrics.Sinks{sa, acc, inf}
			ws, err := StreamWalk(ld, Options{}, sinks.Span, sinks.Events)
			if err != nil {
				b.Fatal(err)
			}
			aff, err := affinity.Build(tl, affinity.BuildOptions{Inferred: inf})
			if err != nil {
				b.Fatal(err)
			}
			a := sa.Finish(ws, aff)
			acc.Result(ws)
			runtime.KeepAlive(a)
			return tl.Len()
		})
	})
}
