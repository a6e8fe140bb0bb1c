package metrics

import (
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/timeline"
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
// whole list; a merged span is inferred if any of its parts was.
func TestAppendMerged(t *testing.T) {
	in := []oqSpan{{0, 10, false}, {5, 12, true}, {12, 15, false}, {20, 30, false}, {21, 22, false}, {40, 41, false}}
	var got []oqSpan
	for _, s := range in {
		got = appendMerged(got, s)
	}
	want := []oqSpan{{0, 15, true}, {20, 30, false}, {40, 41, false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if m := mergeSpans(in); !reflect.DeepEqual(m, want) {
		t.Errorf("mergeSpans %v, want %v", m, want)
	}
}
