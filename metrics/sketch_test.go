package metrics

import (
	"encoding/binary"
	"testing"
)

// TestSketchByHand: a sketch of 200 values, worked by hand.
func TestSketchByHand(t *testing.T) {
	var s durSketch
	// 0, 1000, ..., 199000 ns: a trace printing microseconds.
	for i := range int64(200) {
		s.add(&sketchVal{v: i * 1000})
	}
	d := s.dist(nil)
	// Nearest rank: p50 the 100th value (99 us), p90 the 180th (179 us),
	// p99 the 198th (197 us), p99.9 the 200th (199 us, the maximum). The
	// buckets there are 0.48% wide (under 1 us): each holds at most one
	// multiple of the values' common divisor, 1 us, which the estimate
	// rounds to. So they are exact, and not marked estimated.
	want := Dist{Count: 200, SumNs: 19900000, MeanNs: 99500, P50Ns: 99000, P90Ns: 179000, P99Ns: 197000, P999Ns: 199000, MaxNs: 199000}
	if d.Count != want.Count || d.SumNs != want.SumNs || d.MeanNs != want.MeanNs || d.MaxNs != want.MaxNs || d.Estimated != 0 ||
		d.P50Ns != want.P50Ns || d.P90Ns != want.P90Ns || d.P99Ns != want.P99Ns || d.P999Ns != want.P999Ns {
		t.Fatalf("%+v, want %+v", d, want)
	}
	if s.gcd != 1000 || s.vals != nil || s.zeros != 1 {
		t.Errorf("gcd %d, %d values kept, %d zeros; want 1000, none, 1", s.gcd, len(s.vals), s.zeros)
	}
	// At nanosecond resolution the bucket of 99000 holds others: p50 is
	// an estimate, within 0.5%.
	var ns durSketch
	for i := range int64(200) {
		ns.add(&sketchVal{v: i*1000 + 1})
	}
	if d := ns.dist(nil); !d.EstimatedAt(0) || d.P50Ns < 99001*995/1000 || d.P50Ns > 99001*1005/1000 || d.MaxNs != 199001 {
		t.Errorf("at 1 ns: %+v, want p50 estimated within 0.5%% of 99001", d)
	}
	// Up to 64 values the sketch keeps them: exact.
	var small durSketch
	for _, v := range []int64{5, 3, 9, 1} {
		small.add(&sketchVal{v: v})
	}
	if d := small.dist(nil); d.Estimated != 0 || d.P50Ns != 3 || d.P90Ns != 9 || d.MaxNs != 9 || d.MeanNs != 4 {
		t.Errorf("small: %+v, want exact p50 3, p90 9, mean 4", d)
	}
}

// FuzzSketch: on any values (negative, zero, a common divisor), the
// sketch's distribution is distOf's but for percentiles within 0.5%.
func FuzzSketch(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, uint16(1000))
	f.Add(make([]byte, 800), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, unit uint16) {
		var vals []int64
		for len(data) >= 4 {
			v := int64(int32(binary.LittleEndian.Uint32(data)))
			data = data[4:]
			vals = append(vals, v*int64(max(unit, 1)))
		}
		var s durSketch
		for _, v := range vals {
			s.add(&sketchVal{v: v})
		}
		if err := withinBound(distOf(vals, false), s.dist(nil)); err != nil {
			t.Fatalf("%d values: %v", len(vals), err)
		}
	})
}

// TestPagedCounts: indices counted into pages made at both ends (and
// below zero) come back by rank in ascending order.
func TestPagedCounts(t *testing.T) {
	var p pagedCounts
	for _, k := range []int{5, 200, -70, 5, -1, 200, 63, 64} {
		p.add(k)
	}
	want := []int{-70, -1, 5, 5, 63, 64, 200, 200}
	for r, k := range want {
		if got := p.keyAtRank(int64(r)); got != k {
			t.Errorf("rank %d: %d, want %d", r, got, k)
		}
	}
	if p.n != 8 || p.first != -2 || len(p.pages) != 6 {
		t.Errorf("n %d, first page %d, %d pages; want 8, -2, 6", p.n, p.first, len(p.pages))
	}
}

// BenchmarkSketchAdd adds wait-like durations (1 us to 100 ms, log-spread,
// at microsecond resolution) to a sketch beyond its exact values.
func BenchmarkSketchAdd(b *testing.B) {
	vals := make([]int64, 1<<16)
	x := uint64(1)
	for i := range vals {
		x = x*6364136223846793005 + 1442695040888963407
		vals[i] = int64(1000 << (x >> 59 % 17)) // 1 us .. 65 ms
		vals[i] += int64(x>>32%1000) * 1000
	}
	b.ReportAllocs()
	b.ResetTimer()
	var s durSketch
	for i := range b.N {
		s.add(&sketchVal{v: vals[i&(len(vals)-1)]})
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "values/s")
}
