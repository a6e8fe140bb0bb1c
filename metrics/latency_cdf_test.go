package metrics

import "testing"

// TestCDFDistance: hand-worked Kolmogorov-Smirnov distances between
// bucketed distributions.
func TestCDFDistance(t *testing.T) {
	tests := []struct {
		a, b Histogram
		want float64
	}{
		{Histogram{1, 1}, Histogram{2, 2}, 0},          // same shape, other counts
		{Histogram{4}, Histogram{0, 4}, 1},             // disjoint
		{Histogram{2, 2}, Histogram{1, 3}, 0.25},       // 50% vs 25% below the first bound
		{Histogram{1, 1, 2}, Histogram{0, 2, 2}, 0.25}, // the gap closes by the second bound
		{nil, nil, 0},          // nothing on both sides
		{Histogram{3}, nil, 1}, // nothing on one side
	}
	for _, tc := range tests {
		if got := CDFDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("CDFDistance(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
