package timeline_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/timeline"
)

// streamFixtures are the real text traces a streamed walk is checked on:
// every text reader, a clipped buffer (ftrace-overflow), lost-event gaps
// (ftrace-pipe-lost), trace-cmd report text, and the markers of a guest
// capture.
var streamFixtures = []string{
	"ftrace-hackbench-cyclictest/trace.txt.gz",
	"ftrace-overflow/trace.txt.gz",
	"ftrace-pipe-lost/trace.txt.gz",
	"ftrace-oracle-busy/report.txt.zst",
	"ftrace-hackbench-quiet/trace.txt.zst",
	"perf-hackbench-cyclictest/perf-script.txt.gz",
	"qemu-smt8-hackbench/trace.txt.zst",
	"qemu-juno-asym/trace.txt.zst",
}

// walked is what one walk hands out.
type walked struct {
	spans []timeline.Span
	stats timeline.WalkStats
}

// sameWalk fails t where got's spans or counts are not want's.
func sameWalk(t *testing.T, got, want walked) {
	t.Helper()
	if len(got.spans) != len(want.spans) {
		t.Fatalf("%d spans, want %d", len(got.spans), len(want.spans))
	}
	for i := range got.spans {
		if got.spans[i] != want.spans[i] {
			t.Fatalf("span %d: %+v, want %+v", i, got.spans[i], want.spans[i])
		}
	}
	if !reflect.DeepEqual(got.stats, want.stats) {
		t.Errorf("walk stats differ: %d/%d wakeups of running/queued, want %d/%d",
			got.stats.WakeupsOfRunning, got.stats.WakeupsOfQueued, want.stats.WakeupsOfRunning, want.stats.WakeupsOfQueued)
	}
}

// TestStreamWalkSameAsWalk: the two reads of a streamed walk (a summary,
// then a walk of the events a chunk at a time) give the figures, spans,
// counts, tasks and inconsistencies of a walk of the loaded Timeline, on
// real traces, with chunks of one event, of a few, and of the default size.
func TestStreamWalkSameAsWalk(t *testing.T) {
	for _, rel := range streamFixtures {
		path := "../fixtures/real/" + rel
		ld, err := ingest.Load(path, ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var want walked
		want.stats = ld.Timeline.Walk(func(s *timeline.Span) { want.spans = append(want.spans, *s) })
		wantIncs := ld.Timeline.Inconsistencies()
		if len(want.spans) < 1000 {
			t.Fatalf("%s: only %d spans", rel, len(want.spans))
		}
		for _, chunk := range []int{1, 7, 1000, 1 << 14} {
			t.Run(fmt.Sprintf("%s/chunk=%d", rel, chunk), func(t *testing.T) {
				defer timeline.SetStreamChunk(chunk)()
				sum, err := ingest.Summarize(path, ingest.Options{})
				if err != nil {
					t.Fatal(err)
				}
				a, b := ld.Timeline, sum.Timeline
				if !b.Summary() || b.Times != nil {
					t.Fatal("Summarize kept events")
				}
				for _, f := range []struct {
					name      string
					got, want any
				}{
					{"NCPU", b.NCPU, a.NCPU}, {"Len", b.Len(), a.Len()}, {"Start", b.Start, a.Start}, {"End", b.End, a.End},
					{"ValidStart", b.ValidStart, a.ValidStart}, {"ValidStartRule", b.ValidStartRule, a.ValidStartRule},
					{"ValidStartReason", b.ValidStartReason, a.ValidStartReason}, {"CPUFirst", b.CPUFirst, a.CPUFirst},
					{"CPULast", b.CPULast, a.CPULast}, {"Gaps", b.Gaps, a.Gaps}, {"LostEvents", b.LostEvents, a.LostEvents},
					{"HasWaking", b.HasWaking, a.HasWaking}, {"HasWakeup", b.HasWakeup, a.HasWakeup},
					{"KindCounts", b.KindCounts, a.KindCounts}, {"Markers", b.Markers(), a.Markers()},
				} {
					if !reflect.DeepEqual(f.got, f.want) {
						t.Errorf("summary %s = %v, want %v", f.name, f.got, f.want)
					}
				}
				var got walked
				chunks := 0
				got.stats, err = ingest.StreamWalk(sum, ingest.Options{},
					func(s *timeline.Span) { got.spans = append(got.spans, *s) },
					func(c *timeline.Timeline) {
						chunks++
						if c.Len() > chunk || len(c.TaskOf) != c.Len() {
							t.Fatalf("chunk of %d events, %d task ids (size %d)", c.Len(), len(c.TaskOf), chunk)
						}
					})
				if err != nil {
					t.Fatal(err)
				}
				if want := (a.Len() + chunk - 1) / chunk; chunks != want {
					t.Errorf("%d chunks, want %d", chunks, want)
				}
				sameWalk(t, got, want)
				if !reflect.DeepEqual(b.Tasks, a.Tasks) {
					t.Errorf("tasks differ: %d, want %d", len(b.Tasks), len(a.Tasks))
				}
				for i := range min(len(a.Tasks), len(b.Tasks)) {
					if got, want := b.TaskName(timeline.TaskID(i)), a.TaskName(timeline.TaskID(i)); got != want {
						t.Fatalf("task %d named %q, want %q", i, got, want)
					}
				}
				if !reflect.DeepEqual(b.Inconsistencies(), wantIncs) {
					t.Errorf("%d inconsistencies, want %d", len(b.Inconsistencies()), len(wantIncs))
				}
				if _, err := b.NewStreamWalk(nil, nil); err == nil {
					t.Error("a summary walked twice")
				}
			})
		}
	}
}

// TestSummarizeRefuses: standard input, a binary format whose events come
// out of time order (Perfetto) and text out of time order are not
// streamed, with errors the caller can tell apart.
func TestSummarizeRefuses(t *testing.T) {
	if _, err := ingest.Summarize("-", ingest.Options{}); !errors.Is(err, ingest.ErrNotStreamable) {
		t.Errorf("stdin: %v", err)
	}
	if _, err := ingest.Summarize("../fixtures/real/perfetto-from-ftrace-hackbench-cyclictest/trace.pftrace.zst", ingest.Options{}); !errors.Is(err, ingest.ErrNotStreamable) {
		t.Errorf("Perfetto: %v", err)
	}
	b := timeline.NewSummaryBuilder(nil, 2)
	b.Add(timeline.Event{Time: 2000, CPU: 0, Kind: timeline.KindSwitch, Task: 1, Other: 0})
	b.Add(timeline.Event{Time: 1000, CPU: 1, Kind: timeline.KindSwitch, Task: 2, Other: 0})
	if _, err := b.Finish(); !errors.Is(err, timeline.ErrNotTimeOrdered) {
		t.Errorf("out of order: %v", err)
	}
}

// TestStreamWalkChecksSecondRead: a second read whose events differ from
// the first's (a file changed between them) is an error, not a walk of
// events the summary does not describe.
func TestStreamWalkChecksSecondRead(t *testing.T) {
	first := []timeline.Event{
		{Time: 1000, CPU: 0, Kind: timeline.KindSwitch, Task: 10, Other: 0},
		{Time: 2000, CPU: 1, Kind: timeline.KindWaking, Task: 11, Other: 10},
		{Time: 3000, CPU: 1, Kind: timeline.KindSwitch, Task: 11, Other: 0},
	}
	for _, tc := range []struct {
		name   string
		second func([]timeline.Event) []timeline.Event
		want   string
	}{
		{"same", func(e []timeline.Event) []timeline.Event { return e }, ""},
		{"kind", func(e []timeline.Event) []timeline.Event { e[1].Kind = timeline.KindWakeup; return e }, "count of each kind"},
		{"cpu", func(e []timeline.Event) []timeline.Event { e[1].CPU = 0; return e }, "first event of each CPU"},
		{"fewer", func(e []timeline.Event) []timeline.Event { return e[:2] }, "gave 2 events"},
		{"order", func(e []timeline.Event) []timeline.Event { e[0].Time = 2500; return e }, "not in time order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := timeline.NewSummaryBuilder(nil, 2)
			for _, ev := range first {
				b.Add(ev)
			}
			sum, err := b.Finish()
			if err != nil {
				t.Fatal(err)
			}
			w, err := sum.NewStreamWalk(func(*timeline.Span) {}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range tc.second(append([]timeline.Event(nil), first...)) {
				w.Add(ev)
			}
			_, err = w.Finish()
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// FuzzStreamWalk: on any time-ordered event stream (5 bytes an event:
// kind, CPU and task, other task, state or argument, time step; the first
// byte picks the coverage the reader proved), a streamed walk in chunks of
// 1, 2 and 3 events hands out the spans, counts, tasks and
// inconsistencies of a walk of the built Timeline.
func FuzzStreamWalk(f *testing.F) {
	addEventSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		cov, evs, ok := fuzzEvents(data)
		if !ok {
			return
		}
		tl := buildEvents(t, timeline.NewBuilder(nil, 3), cov, evs)
		var want []timeline.Span
		wantStats := tl.Walk(func(s *timeline.Span) { want = append(want, *s) })
		for _, chunk := range []int{1, 2, 3} {
			restore := timeline.SetStreamChunk(chunk)
			sum := buildEvents(t, timeline.NewSummaryBuilder(nil, 3), cov, evs)
			var got []timeline.Span
			w, err := sum.NewStreamWalk(func(s *timeline.Span) { got = append(got, *s) }, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				w.Add(e)
			}
			stats, err := w.Finish()
			restore()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("chunks of %d: %d spans, want %d", chunk, len(got), len(want))
			}
			if !reflect.DeepEqual(stats, wantStats) || !reflect.DeepEqual(sum.Tasks, tl.Tasks) ||
				!reflect.DeepEqual(sum.Inconsistencies(), tl.Inconsistencies()) || sum.ValidStart != tl.ValidStart ||
				!reflect.DeepEqual(sum.Gaps, tl.Gaps) {
				t.Fatalf("chunks of %d: stats, tasks, inconsistencies, window or gaps differ", chunk)
			}
		}
	})
}

// addEventSeeds gives a fuzz test of fuzzEvents the two short streams the
// event fuzzers start from.
func addEventSeeds(f *testing.F) {
	f.Add([]byte{0, 0, 0x01, 0, 2, 1, 1, 0x12, 1, 0, 1, 0, 0x11, 2, 0, 1, 2, 0x02, 1, 0, 3})
	f.Add([]byte{1, 7, 0x01, 0, 9, 2, 0, 0x11, 2, 0, 0, 8, 0x00, 0, 5, 4, 0, 0x11, 1, 0, 2})
}

// fuzzEvents decodes a fuzzed time-ordered event stream (5 bytes an event:
// kind, CPU and task, other task, state or argument, time step; the first
// byte picks the coverage the reader proved) on 3 CPUs.
func fuzzEvents(data []byte) (timeline.Coverage, []timeline.Event, bool) {
	if len(data) < 6 {
		return 0, nil, false
	}
	cov := timeline.Coverage(data[0] % 3)
	kinds := []timeline.Kind{timeline.KindSwitch, timeline.KindSwitch, timeline.KindWaking, timeline.KindWakeup,
		timeline.KindWakeupNew, timeline.KindMigrate, timeline.KindFork, timeline.KindExit, timeline.KindLost, timeline.KindBufferStart}
	states := []string{"R", "R+", "S", "D", "X", "T"}
	var evs []timeline.Event
	var now timeline.Time
	for d := data[1:]; len(d) >= 5; d = d[5:] {
		var e timeline.Event
		e.Reset()
		now += timeline.Time(d[4]) * 1000
		e.Time, e.Kind = now, kinds[int(d[0])%len(kinds)]
		e.CPU, e.Task, e.Other = timeline.CPU(d[1]%3), timeline.TID(d[1]>>4%6), timeline.TID(d[2]%6)
		switch e.Kind {
		case timeline.KindSwitch:
			e.State, _ = timeline.ParseState([]byte(states[int(d[3])%len(states)]))
		case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew, timeline.KindMigrate:
			e.Arg = int64(d[3] % 3)
		case timeline.KindLost, timeline.KindBufferStart:
			e.Arg, e.Start = int64(d[3]%4)-1, now-timeline.Time(d[3])*500
		}
		if e.Task == 0 && e.Kind != timeline.KindSwitch {
			e.Task = 1
		}
		evs = append(evs, e)
	}
	return cov, evs, true
}

// buildEvents builds evs with coverage cov in b, and finishes it.
func buildEvents(t *testing.T, b *timeline.Builder, cov timeline.Coverage, evs []timeline.Event) *timeline.Timeline {
	b.SetCoverage(cov, "test")
	for _, e := range evs {
		b.Add(e)
	}
	tl, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// TestDropEvents: a loaded Timeline whose events are dropped is a summary
// with the same figures, tasks, markers, cookies and inconsistencies
// (found first when no walk has run), and can no longer be walked.
func TestDropEvents(t *testing.T) {
	for _, rel := range []string{
		"ftrace-pipe-lost/trace.txt.gz",
		"qemu-smt8-hackbench/trace.txt.zst",
		"seeds/004/before/run-2/trace.txt.zst", // core_sched_cookie markers
	} {
		t.Run(rel, func(t *testing.T) {
			path := "../fixtures/real/" + rel
			if strings.HasPrefix(rel, "seeds/") {
				path = "../fixtures/" + rel
			}
			ld, err := ingest.Load(path, ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			tl := ld.Timeline
			n, markers, tasks := tl.Len(), tl.Markers(), slices.Clone(tl.Tasks)
			cookies, ncookie, cerr := tl.Cookies()
			// A twin, walked before: its inconsistencies are what a walk
			// finds; tl's must be found by DropEvents itself.
			twin, err := ingest.Load(path, ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			twin.Timeline.Walk(func(*timeline.Span) {})
			incs := twin.Timeline.Inconsistencies()
			tl.DropEvents()
			if !tl.Summary() || tl.Times != nil || tl.Kinds != nil || tl.TaskOf != nil || tl.Args2 != nil {
				t.Fatal("events kept")
			}
			if tl.Len() != n || n == 0 {
				t.Errorf("Len %d, want %d", tl.Len(), n)
			}
			if got := tl.Markers(); !reflect.DeepEqual(got, markers) {
				t.Errorf("markers %d, want %d", len(got), len(markers))
			}
			if !reflect.DeepEqual(tl.Tasks, tasks) {
				t.Error("tasks changed")
			}
			if got := tl.Inconsistencies(); !reflect.DeepEqual(got, incs) {
				t.Errorf("%d inconsistencies, want %d", len(got), len(incs))
			}
			c2, n2, err2 := tl.Cookies()
			if !reflect.DeepEqual(c2, cookies) || n2 != ncookie || fmt.Sprint(err2) != fmt.Sprint(cerr) {
				t.Errorf("cookies %v (%d, %v), want %v (%d, %v)", c2, n2, err2, cookies, ncookie, cerr)
			}
			if strings.HasPrefix(rel, "seeds/") && ncookie == 0 {
				t.Error("no cookie marker read")
			}
			tl.DropEvents() // again: nothing changes
			if tl.Len() != n {
				t.Error("a second DropEvents changed the count")
			}
			if _, err := tl.NewStreamWalk(func(*timeline.Span) {}, nil); err == nil {
				t.Error("NewStreamWalk of dropped events: no error")
			}
			defer func() {
				if recover() == nil {
					t.Error("Walk of dropped events did not panic")
				}
			}()
			tl.Walk(func(*timeline.Span) {})
		})
	}
}
