package blocks

import "testing"

// TestList: a List gives what a slice given the same items gives, at
// every length across the doubling blocks and beyond, and its blocks
// double from 16 to 4096.
func TestList(t *testing.T) {
	var l List[int]
	var want []int
	for i := range 3*grown + 100 {
		if l.Last() != nil && *l.Last() != want[len(want)-1] {
			t.Fatalf("len %d: last %d, want %d", l.Len(), *l.Last(), want[len(want)-1])
		}
		l.Add(i * 7)
		want = append(want, i*7)
	}
	if l.Len() != len(want) {
		t.Fatalf("len %d, want %d", l.Len(), len(want))
	}
	for i, v := range want {
		if got := *l.At(i); got != v {
			t.Fatalf("At(%d) = %d, want %d", i, got, v)
		}
	}
	*l.At(grown + 5) = -1
	want[grown+5] = -1
	got := l.AppendTo(nil)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("AppendTo: item %d is %d, want %d", i, got[i], want[i])
		}
	}
	n := 0
	for i, v := range l.All() {
		if i != n || v != want[i] {
			t.Fatalf("All: item %d is (%d, %d), want (%d, %d)", n, i, v, n, want[n])
		}
		n++
		if n == grown+10 {
			break // and stopping early is honoured
		}
	}
	sizes := []int{16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 4096}
	for k, n := range sizes {
		if c := cap(l.Blocks()[k]); c != n {
			t.Errorf("block %d holds %d, want %d", k, c, n)
		}
	}
	if (&List[int]{}).Last() != nil {
		t.Error("an empty list has a last item")
	}
}
