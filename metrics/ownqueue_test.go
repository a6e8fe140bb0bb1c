package metrics

import (
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/internal/fuzzsched"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// TestByCPUSorted works a small case by hand: per CPU, the items in start
// order and equal starts in index order, whether a CPU's items came in
// order (CPU 0) or not (CPU 1), with items on no CPU or one out of range
// left out.
func TestByCPUSorted(t *testing.T) {
	type item struct {
		cpu   int32
		start timeline.Time
	}
	items := []item{
		{0, 10}, {1, 50}, {0, 20}, {1, 30}, {-1, 5}, {1, 30}, {0, 20}, {2, 1}, {1, 10}, {3, 0},
	}
	got := byCPUSorted(3, len(items), func(i int) int32 { return items[i].cpu }, func(i int) timeline.Time { return items[i].start })
	want := [][]int32{{0, 2, 6}, {8, 3, 5, 1}, {7}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestAppendMerged: spans merged as they come equal the merge of the
// whole list.
func TestAppendMerged(t *testing.T) {
	in := []oqSpan{{0, 10, false}, {5, 12, false}, {12, 15, false}, {20, 30, false}, {21, 22, false}, {40, 41, false}}
	var got []oqSpan
	for _, s := range in {
		got = appendMerged(got, s)
	}
	want := []oqSpan{{0, 15, false}, {20, 30, false}, {40, 41, false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if m := mergeSpans(in); !reflect.DeepEqual(m, want) {
		t.Errorf("mergeSpans %v, want %v", m, want)
	}
}

// TestOwnQueueInferredInWindow, worked by hand from a case the fuzzer
// found: CPU 0 idles from 672 to 720 us with task 3 queued on it since
// its switch-out in R at 624 us (a runqueue from an event). Task 3's wait
// from 528 to 576 us had an inferred runqueue (no sched_wakeup said where
// it queued), and task 1's wait from 576 to 624 us joins the two, but
// neither lies in the window: it is not inferred. (Taking the flag from
// every wait joined to the window's gave it, and a collector that dropped
// task 1's wait, which overlaps no idle time, did not.)
func TestOwnQueueInferredInWindow(t *testing.T) {
	tl := fuzzsched.Build([]byte("0000000000000000000000000000000000000000000000000000000200007020002021102012102000002201000"))
	topo, _ := topology.Preset("smt2-2")
	for _, every := range []int{0, 1} {
		var a *Analysis
		withPruneEvery(every, func() { a, _ = mustAnalyzeAccount(t, tl, Options{Topology: topo}) })
		oq := a.Idle.OwnQueue
		if oq.Count != 1 || oq.TotalNs != 48_000 || oq.InferredNs != 0 {
			t.Errorf("deciding every %d: %d windows, %d ns, %d ns inferred; want 1, 48000, 0", every, oq.Count, oq.TotalNs, oq.InferredNs)
		}
	}
}
