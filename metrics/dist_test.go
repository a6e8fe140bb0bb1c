package metrics

import (
	"math/rand"
	"slices"
	"testing"
)

// TestDistOfMatchesSorted: the bucketed percentile selection gives exactly
// the nearest-rank percentiles of a sorted copy, on small and large inputs
// with repeats, spreads from nanoseconds to seconds, and edge values.
func TestDistOfMatchesSorted(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	gens := []struct {
		name string
		gen  func() int64
	}{
		{"uniform-us", func() int64 { return r.Int63n(1_000_000) }},
		{"lognormal", func() int64 { return int64(1000 * r.ExpFloat64() * r.ExpFloat64() * 1000) }},
		{"few-values", func() int64 { return int64(r.Intn(4)) * 1000 }},
		{"tiny", func() int64 { return r.Int63n(40) }},
		{"huge", func() int64 { return r.Int63() }},
	}
	for _, g := range gens {
		for _, n := range []int{1, 2, 10, 63, 64, 65, 100, 999, 1000, 1001, 12345} {
			vals := make([]int64, n)
			for i := range vals {
				vals[i] = g.gen()
			}
			sorted := slices.Clone(vals)
			slices.Sort(sorted)
			want := NewDist(sorted)
			got := distOf(vals, true)
			if got.Count != want.Count || got.SumNs != want.SumNs || got.MeanNs != want.MeanNs || got.P50Ns != want.P50Ns ||
				got.P90Ns != want.P90Ns || got.P99Ns != want.P99Ns || got.P999Ns != want.P999Ns || got.MaxNs != want.MaxNs ||
				!slices.Equal(got.Hist, want.Hist) {
				t.Errorf("%s n=%d: distOf = %+v, sorted gives %+v", g.name, n, got, want)
			}
		}
	}
}

// TestLogBucketOrdered: buckets never decrease as values grow.
func TestLogBucketOrdered(t *testing.T) {
	prev := 0
	for _, v := range []int64{0, 1, 31, 32, 33, 63, 64, 65, 1000, 1 << 20, 1<<20 + 1, 1<<62 - 1, 1 << 62, 1<<63 - 1} {
		b := logBucket(v)
		if b < prev || b >= logBuckets {
			t.Errorf("logBucket(%d) = %d after %d (limit %d)", v, b, prev, logBuckets)
		}
		prev = b
	}
}
