package metrics

import (
	"math"
	"testing"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

func TestPELT(t *testing.T) {
	var p PELT
	h := DefaultHalfLife
	tests := []struct {
		name      string
		got, want float64
	}{
		{"decays by half per half-life", p.Decay(512, h), 256},
		{"two half-lives", p.Decay(1000, 2*h), 250},
		{"no time, no change", p.Run(300, 0, 1024), 300},
		{"running one half-life from 0 on a big CPU", p.Run(0, h, 1024), 512},
		{"running on a little CPU converges to its capacity", p.Run(0, 40*h, 383), 383},
		{"a big task moved to a little CPU decays to its capacity", p.Run(1000, 40*h, 383), 383},
		{"custom half-life", PELT{HalfLife: 8e6}.Decay(100, 8e6), 50},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if math.Abs(tc.got-tc.want) > 1e-6 {
				t.Errorf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}

func TestRunUntil(t *testing.T) {
	var p PELT
	tests := []struct {
		name     string
		u, th    float64
		capacity int
		ok       bool
	}{
		{"from 0 to the little CPU's fit limit", 0, fitThreshold(383), 383, true},
		{"from 0 on a big CPU", 0, fitThreshold(383), 1024, true},
		{"already above", 400, 300, 383, true},
		{"never above the capacity", 0, 383, 383, false},
		{"target above capacity", 100, 500, 383, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := p.RunUntil(tc.u, tc.th, tc.capacity)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			// d is the first ns at which the utilization exceeds th.
			if after := p.Run(tc.u, d, tc.capacity); !(after > tc.th) {
				t.Errorf("after %d ns: %v, want above %v", d, after, tc.th)
			}
			if d > 0 {
				if before := p.Run(tc.u, d-1, tc.capacity); before > tc.th+1e-9 {
					t.Errorf("after %d ns: %v already above %v", d-1, before, tc.th)
				}
			}
		})
	}
	// The juno-r2 scenario's figure: ln(5)/ln(2) half-lives.
	if d, _ := p.RunUntil(0, fitThreshold(383), 383); d != 76084940 {
		t.Errorf("misfit onset on a 383 CPU from 0 = %d ns, want 76084940", d)
	}
}

func TestFits(t *testing.T) {
	tests := []struct {
		util     float64
		capacity int
		fits     bool
		misfit   bool
	}{
		{800, 1024, true, false},    // 800*1280 = 1024000 < 1048576
		{820, 1024, false, true},    // 1049600 > 1048576
		{306, 383, true, false},     // 391680 < 392192
		{307, 383, false, true},     // 392960 > 392192
		{819.2, 1024, false, false}, // exactly at the margin: neither
	}
	for _, tc := range tests {
		if got := Fits(tc.util, tc.capacity); got != tc.fits {
			t.Errorf("Fits(%v, %d) = %v, want %v", tc.util, tc.capacity, got, tc.fits)
		}
		if got := Misfit(tc.util, tc.capacity); got != tc.misfit {
			t.Errorf("Misfit(%v, %d) = %v, want %v", tc.util, tc.capacity, got, tc.misfit)
		}
	}
}

// TestAnalyzeDegenerate: an empty trace, a one-event trace and a topology
// smaller than the trace.
func TestAnalyzeDegenerate(t *testing.T) {
	strs := timeline.NewStrings()
	empty, err := timeline.NewBuilder(strs, 2).Finish()
	if err != nil {
		t.Fatal(err)
	}
	if a, err := Analyze(empty, Options{}); err != nil || len(a.Latency.Samples) != 0 || len(a.Idle.Windows) != 0 {
		t.Errorf("empty trace: %v, %+v", err, a)
	}
	tl, _, err := buildScenario("0 c3 switch 0 R 1\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Analyze(tl, Options{}); err != nil {
		t.Errorf("one event: %v", err)
	}
	if _, err := Analyze(tl, Options{Topology: topology.Symmetric(2)}); err == nil {
		t.Error("a 2-CPU topology for a 4-CPU trace: no error")
	}
}

func topologySym(n int) *topology.Topology { return topology.Symmetric(n) }
