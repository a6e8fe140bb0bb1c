package timeline_test

import (
	"cmp"
	"encoding/binary"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/timeline"
)

// TestEventLogRoundTrip: every event of real traces of each format comes
// back from an EventLog as it went in, in order, in fewer bytes than a
// Builder's columns: kept as written (a small log), past two blocks
// compressed, and every block compressed, in fewer bytes still.
func TestEventLogRoundTrip(t *testing.T) {
	for _, rel := range []string{
		"ftrace-hackbench-cyclictest/trace.txt.gz",
		"ftrace-overflow/trace.txt.gz",
		"perf-hackbench-cyclictest/perf.data.zst",
		"qemu-smt8-hackbench/trace.txt.zst",
		"perfetto-tracebox-hackbench-compact/trace.pftrace.zst",
	} {
		for _, c := range []struct {
			raw int // rawLogBytes
			max float64
		}{{16 << 20, 24}, {128 << 10, 24}, {0, 12}} {
			restore := timeline.SetRawLogBytes(c.raw)
			var log timeline.EventLog
			var want []timeline.Event
			eachEvent(t, rel, nil, func(ev timeline.Event) {
				log.Add(ev)
				want = append(want, ev)
			})
			restore()
			checkLog(t, rel, &log, want)
			if per := float64(log.Bytes()) / float64(len(want)); per > c.max {
				t.Errorf("%s, %d bytes kept as written: %.1f bytes an event", rel, c.raw, per)
			}
		}
	}
}

func checkLog(t *testing.T, name string, log *timeline.EventLog, want []timeline.Event) {
	t.Helper()
	if log.Len() != len(want) {
		t.Fatalf("%s: Len %d, want %d", name, log.Len(), len(want))
	}
	i := 0
	for ev := range log.Events() {
		if i >= len(want) {
			t.Fatalf("%s: more events than went in", name)
		}
		if *ev != want[i] {
			t.Fatalf("%s: event %d: got %+v, want %+v", name, i, *ev, want[i])
		}
		i++
	}
	if i != len(want) {
		t.Fatalf("%s: %d events back, want %d", name, i, len(want))
	}
}

// FuzzEventLog: any events, extreme values included, come back as they
// went in.
func FuzzEventLog(f *testing.F) {
	f.Add([]byte{0, 0, 0x01, 0, 2, 1, 1, 0x12, 1, 0, 1, 0, 0x11, 2, 0, 1, 2, 0x02, 1, 0, 3})
	f.Add(binary.LittleEndian.AppendUint64(nil, math.MaxUint64))
	// Blocks past the first are compressed.
	defer timeline.SetRawLogBytes(64 << 10)()
	f.Fuzz(func(t *testing.T, data []byte) {
		var log timeline.EventLog
		var want []timeline.Event
		for len(data) >= 8 {
			v := int64(binary.LittleEndian.Uint64(data))
			data = data[8:]
			var e timeline.Event
			e.Reset()
			// Each of the low bits picks a field that takes v (or a
			// part of it); the rest keep their absent values.
			sel := byte(v)
			e.Time = timeline.Time(v ^ int64(len(want))<<40)
			if sel&1 != 0 {
				e.Start = timeline.Time(-v)
			}
			e.CPU, e.Kind = timeline.CPU(int32(v>>8)), timeline.Kind(v>>16)
			if sel&2 != 0 {
				e.Ctx, e.State = timeline.Context(v>>24), timeline.State(v>>32)
			}
			if sel&4 != 0 {
				e.Other, e.OComm, e.OPrio = timeline.TID(int32(v>>5)), timeline.CommID(uint32(v)), int16(v>>48)
			}
			e.Task, e.Comm, e.Prio = timeline.TID(int32(v>>3)), timeline.CommID(uint32(v>>7)), int16(v>>40)
			if sel&8 != 0 {
				e.Arg, e.Arg2 = v, -v
			}
			if sel&16 != 0 {
				e.TGID = int32(v >> 13)
			}
			if sel&32 != 0 {
				e.Time, e.Start = math.MinInt64+1, math.MaxInt64
			}
			log.Add(e)
			want = append(want, e)
		}
		// The events again until blocks fill (an event takes at least 7
		// bytes), so that full (compressed) blocks are read back too.
		for n := len(want); n > 0 && len(want) < 20_000; {
			for _, e := range want[:n] {
				log.Add(e)
				want = append(want, e)
			}
		}
		checkLog(t, "fuzz", &log, want)
	})
}

// TestAddGapsSummaryCopy: a summary with gaps that no event shows
// (AddGaps), walked over its events from an EventLog, hands out the spans
// of the loaded Timeline with the same gaps appended; a copy of the
// summary made before the walk (SummaryCopy) is walked again the same way.
func TestAddGapsSummaryCopy(t *testing.T) {
	path := "../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz"
	ld, err := ingest.Load(path, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := ld.Timeline
	b := timeline.NewBuilder(src.Strings, src.NCPU)
	sum := timeline.NewSummaryBuilder(src.Strings, src.NCPU)
	var log timeline.EventLog
	for i := range src.Len() {
		ev := src.Event(i)
		b.Add(ev)
		sum.Add(ev)
		log.Add(ev)
	}
	tl, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	s, err := sum.Finish()
	if err != nil {
		t.Fatal(err)
	}
	mid := tl.Start + (tl.End-tl.Start)/2
	gaps := []timeline.Gap{{CPU: 1, Start: mid, End: mid + 5e6, Lost: -1, Kind: timeline.GapClipped},
		{CPU: 0, Start: tl.Start + 1e6, End: mid + 5e6, Lost: -1, Kind: timeline.GapClipped}}
	tl.Inconsistencies()
	tl.Gaps = append(tl.Gaps, gaps...)
	slices.SortStableFunc(tl.Gaps, func(a, b timeline.Gap) int { return cmp.Compare(a.End, b.End) })
	var want []timeline.Span
	tl.Walk(func(sp *timeline.Span) { want = append(want, *sp) })
	if err := s.AddGaps(gaps); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Gaps, tl.Gaps) {
		t.Fatalf("gaps %v, want %v", s.Gaps, tl.Gaps)
	}
	again, err := s.SummaryCopy()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*timeline.Timeline{s, again} {
		var got []timeline.Span
		w, err := x.NewStreamWalk(func(sp *timeline.Span) { got = append(got, *sp) }, nil)
		if err != nil {
			t.Fatal(err)
		}
		for ev := range log.Events() {
			w.Add(*ev)
		}
		if _, err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(x.Tasks, tl.Tasks) {
			t.Fatalf("%d spans, want %d; or the tasks differ", len(got), len(want))
		}
	}
	if _, err := s.SummaryCopy(); err == nil {
		t.Error("a walked summary copied")
	}
	if err := s.AddGaps(gaps); err == nil {
		t.Error("gaps added to a walked summary")
	}
}

// BenchmarkEventLog adds the events of a real capture to an EventLog and
// reads them back, kept as written ("raw") and compressed: ns and bytes an
// event, both ways.
func BenchmarkEventLog(b *testing.B) {
	var evs []timeline.Event
	eachEvent(b, "ftrace-hackbench-cyclictest/trace.txt.gz", nil, func(ev timeline.Event) { evs = append(evs, ev) })
	for _, c := range []struct {
		name string
		raw  int
	}{{"raw", 1 << 30}, {"compressed", 0}} {
		defer timeline.SetRawLogBytes(c.raw)()
		b.Run("add-"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			var bytes int
			for b.Loop() {
				var log timeline.EventLog
				for _, ev := range evs {
					log.Add(ev)
				}
				bytes = log.Bytes()
			}
			b.ReportMetric(float64(bytes)/float64(len(evs)), "B/event")
			b.ReportMetric(float64(b.N*len(evs))/b.Elapsed().Seconds(), "events/s")
		})
		b.Run("read-"+c.name, func(b *testing.B) {
			var log timeline.EventLog
			for _, ev := range evs {
				log.Add(ev)
			}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				for ev := range log.Events() {
					n += int(ev.CPU)
				}
			}
			b.ReportMetric(float64(b.N*len(evs))/b.Elapsed().Seconds(), "events/s")
		})
	}
}
