package timeline_test

import (
	"errors"
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/timeline"
)

// TestOnlineResolver: task instances resolved, and the events summarized,
// as time-ordered events arrive are those Finish resolves and summarizes
// from the merged events, on real traces of each text format and
// perf.data (tasks, their names, pids and lifetimes, every event's two
// instances; the window, each CPU's first and last event, the counts, the
// gaps).
func TestOnlineResolver(t *testing.T) {
	for _, rel := range []string{
		"ftrace-hackbench-cyclictest/trace.txt.gz",
		"ftrace-overflow/trace.txt.gz",
		"ftrace-oracle-busy/report.txt.zst",
		"perf-hackbench-cyclictest/perf-script.txt.gz",
		"qemu-smt8-hackbench/trace.txt.zst",
		"perf-hackbench-cyclictest/perf.data.zst",
		"ftrace-pipe-lost/trace.txt.gz",
	} {
		strs := timeline.NewStrings()
		online := timeline.NewBuilder(strs, 0)
		batch := timeline.NewBuilder(strs, 0)
		ordered := timeline.NewBuilder(strs, 0)
		ordered.RequireOrder()
		timeline.ResolveInFinish(batch)
		eachEvent(t, rel, strs, func(ev timeline.Event) {
			online.Add(ev)
			batch.Add(ev)
			ordered.Add(ev)
		})
		a, err := online.Finish()
		if err != nil {
			t.Fatal(err)
		}
		b, err := batch.Finish()
		if err != nil {
			t.Fatal(err)
		}
		o, err := ordered.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(columns(o), columns(a)) || !reflect.DeepEqual(figures(o), figures(a)) {
			t.Errorf("%s: a Builder that requires order builds another timeline", rel)
		}
		if len(a.Tasks) < 50 {
			t.Fatalf("%s: only %d tasks", rel, len(a.Tasks))
		}
		if !reflect.DeepEqual(a.Tasks, b.Tasks) || !reflect.DeepEqual(a.TaskOf, b.TaskOf) || !reflect.DeepEqual(a.Other, b.Other) {
			t.Errorf("%s: online and batch resolution differ (%d and %d tasks)", rel, len(a.Tasks), len(b.Tasks))
		}
		if !reflect.DeepEqual(figures(a), figures(b)) {
			t.Errorf("%s: online and batch summaries differ:\n%+v\n%+v", rel, figures(a), figures(b))
		}
		if len(a.Gaps) == 0 && rel == "ftrace-overflow/trace.txt.gz" {
			t.Errorf("%s: no gaps", rel)
		}
	}
}

// figures are what Finish summarizes of a Timeline's events.
func figures(tl *timeline.Timeline) any {
	return struct {
		Start, End, ValidStart timeline.Time
		Rule                   timeline.StartRule
		Reason                 string
		First, Last            []timeline.Time
		Counts                 any
		Gaps                   []timeline.Gap
		Lost                   int64
		Waking, Wakeup         bool
		Markers                []timeline.Marker
	}{tl.Start, tl.End, tl.ValidStart, tl.ValidStartRule, tl.ValidStartReason, tl.CPUFirst, tl.CPULast, tl.KindCounts,
		tl.Gaps, tl.LostEvents, tl.HasWaking, tl.HasWakeup, tl.Markers()}
}

// columns are a Timeline's events and task instances.
func columns(tl *timeline.Timeline) any {
	return []any{tl.Times, tl.CPUs, tl.Kinds, tl.Ctxs, tl.States, tl.Prios, tl.Comms, tl.Args, tl.Args2, tl.Tasks, tl.TaskOf, tl.Other}
}

// TestRequireOrder: a Builder that requires order refuses an event before
// the one added before it, where another merges them.
func TestRequireOrder(t *testing.T) {
	evs := []timeline.Event{
		{Time: 2000, CPU: 0, Kind: timeline.KindSwitch, Task: 1, Other: 2, State: timeline.StateRunnable},
		{Time: 1000, CPU: 1, Kind: timeline.KindSwitch, Task: 3, Other: 4, State: timeline.StateRunnable},
	}
	b := timeline.NewBuilder(nil, 2)
	b.RequireOrder()
	m := timeline.NewBuilder(nil, 2)
	for _, ev := range evs {
		b.Add(ev)
		m.Add(ev)
	}
	if _, err := b.Finish(); !errors.Is(err, timeline.ErrNotTimeOrdered) {
		t.Errorf("Finish of events out of order: got %v, want ErrNotTimeOrdered", err)
	}
	tl, err := m.Finish()
	if err != nil || tl.Len() != 2 || tl.Times[0] != 1000 {
		t.Errorf("a Builder that merges: %v, %v", tl, err)
	}
}

// eachEvent hands every event of the fixture at rel (under
// fixtures/real) to f, in the reader's order, its comms interned in strs.
func eachEvent(t testing.TB, rel string, strs *timeline.Strings, f func(timeline.Event)) {
	t.Helper()
	file, err := os.Open("../fixtures/real/" + rel)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	s, err := ingest.NewStream(file, ingest.Options{Name: rel, Strings: strs})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ev timeline.Event
	for {
		err := s.Next(&ev)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		f(ev)
	}
}
