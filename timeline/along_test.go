package timeline_test

import (
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/timeline"
)

// alongWalk builds evs in a Builder that requires order, with a walk along
// it for ncpu CPUs (0: not declared, the walk takes the events' CPUs), and
// returns the Timeline, what the walk handed out and whether it ran to its
// end.
func alongWalk(t *testing.T, ncpu int, cov timeline.Coverage, evs []timeline.Event) (*timeline.Timeline, walked, bool) {
	t.Helper()
	b := timeline.NewBuilder(nil, 0)
	b.RequireOrder()
	var got walked
	started := false
	a := b.WalkAlong(ncpu, func(prov *timeline.Timeline) timeline.AlongSinks {
		started = true
		if prov.Len() != 0 || ncpu > 0 && prov.NCPU != ncpu || prov.NCPU <= 0 {
			t.Errorf("the walk started from %d events on %d CPUs, want none on %d", prov.Len(), prov.NCPU, ncpu)
		}
		return timeline.AlongSinks{Span: func(s *timeline.Span) { got.spans = append(got.spans, *s) }}
	})
	b.SetNCPU(ncpu)
	tl := buildEvents(t, b, cov, evs)
	var ok bool
	got.stats, ok = a.Finish(tl)
	if ok && !started {
		t.Fatal("the walk ended without starting")
	}
	return tl, got, ok
}

// plainBuild builds evs as alongWalk does, without a walk along.
func plainBuild(t *testing.T, ncpu int, cov timeline.Coverage, evs []timeline.Event) *timeline.Timeline {
	t.Helper()
	b := timeline.NewBuilder(nil, 0)
	b.RequireOrder()
	b.SetNCPU(ncpu)
	return buildEvents(t, b, cov, evs)
}

// readEvents reads the events of the trace file at path, and the CPUs its
// loaded Timeline has.
func readEvents(t *testing.T, path string) ([]timeline.Event, int) {
	t.Helper()
	s, err := ingest.Open(path, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var evs []timeline.Event
	for {
		var e timeline.Event
		err := s.Next(&e)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	ld, err := ingest.Load(path, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return evs, ld.Timeline.NCPU
}

// TestAlongSameAsWalk: a walk beside the Builder's Adds hands out the
// spans, counts and inconsistencies of a walk of the finished Timeline, on
// real traces (lost-event gaps, a clipped buffer, SMT and asymmetric
// guests, perf.data), with hand-overs of one event, a few, and the default
// size; where it cannot be sure of that, it says so. With hand-overs of a
// realistic size, it runs to its end on every trace whose figures its first
// thousand events settle (not on ftrace-overflow, whose buffer-start line
// moves a CPU's first event).
func TestAlongSameAsWalk(t *testing.T) {
	// the traces whose walk must run to its end
	mustRun := map[string]bool{
		"ftrace-hackbench-cyclictest/trace.txt.gz":     true,
		"perf-hackbench-cyclictest/perf-script.txt.gz": true,
		"perf-hackbench-cyclictest/perf.data.zst":      true,
		"qemu-smt8-hackbench/trace.txt.zst":            true,
	}
	for _, rel := range append(streamFixtures, "perf-hackbench-cyclictest/perf.data.zst") {
		evs, ncpu := readEvents(t, "../fixtures/real/"+rel)
		for _, every := range []int{1, 7, 1000, 1 << 14} {
			// the CPU count declared, and not (the walk takes the events')
			for _, declared := range []int{ncpu, 0} {
				t.Run(fmt.Sprintf("%s/every=%d/declared=%d", rel, every, declared), func(t *testing.T) {
					defer timeline.SetAlongEvery(every)()
					tl, got, ok := alongWalk(t, declared, timeline.CoverageUnknown, evs)
					if !ok {
						if mustRun[rel] && every >= 1000 {
							t.Fatal("the walk along did not run to its end")
						}
						t.Logf("walked anew")
						return
					}
					var want walked
					want.stats = tl.Walk(func(s *timeline.Span) { want.spans = append(want.spans, *s) })
					sameWalk(t, got, want)
					incs := tl.Inconsistencies()
					fresh := plainBuild(t, ncpu, timeline.CoverageUnknown, evs)
					if !reflect.DeepEqual(incs, fresh.Inconsistencies()) {
						t.Errorf("%d inconsistencies, want %d", len(incs), len(fresh.Inconsistencies()))
					}
				})
			}
		}
	}
}

// FuzzAlong: on any time-ordered events, a walk along the Builder either
// says it did not run to its end or hands out what Walk does.
func FuzzAlong(f *testing.F) {
	addEventSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		cov, evs, ok := fuzzEvents(data)
		if !ok {
			return
		}
		for _, every := range []int{1, 2, 5} {
			for _, ncpu := range []int{3, 0} {
				restore := timeline.SetAlongEvery(every)
				tl, got, ok := alongWalk(t, ncpu, cov, evs)
				restore()
				if !ok {
					continue
				}
				var want walked
				want.stats = tl.Walk(func(s *timeline.Span) { want.spans = append(want.spans, *s) })
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("hand-overs of %d, %d CPUs declared: %d spans, want %d", every, ncpu, len(got.spans), len(want.spans))
				}
			}
		}
	})
}
