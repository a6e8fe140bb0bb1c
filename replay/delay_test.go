package replay

import (
	"fmt"
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

func TestNewDelayDist(t *testing.T) {
	var s []int64
	for v := int64(40); v >= 1; v-- {
		s = append(s, v)
	}
	// 40 samples: quantile i at rank (2i+1)·40/40 = 2i+1, the value 2i+2.
	d := NewDelayDist(s)
	if len(d) != 20 || d[0] != 2 || d[9] != 20 || d[19] != 40 || d.Median() != 22 {
		t.Errorf("NewDelayDist(1..40) = %v", d)
	}
	if d := NewDelayDist(s[:19]); d != nil {
		t.Errorf("19 samples gave %v, want nil (too few)", d)
	}
}

// TestCalibratedOptionsSeparate: the remote wakeups onto idle CPUs are
// drawn whole, so a remote median below the local one cannot turn the IPI
// into 0 (the old IPIDelay = remote - local - jitter/2 did); a delay with
// too few samples keeps its default.
func TestCalibratedOptionsSeparate(t *testing.T) {
	many := func(v int64, n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = v + int64(i)
		}
		return out
	}
	w := &Workload{WakeDelays: WakeDelays{LocalQ: NewDelayDist(many(137_000, 48)), RemoteQ: NewDelayDist(many(33_000, 500)), IRQPreemptQ: NewDelayDist(many(5_000, 10)), BusyIPIQ: NewDelayDist(many(8_000, 40))}}
	o := CalibratedOptions(w)
	if len(o.BusyIPIDist) != 20 || o.BusyIPIDist.Median() < 8_000 || o.BusyIPIDist.Median() > 8_040 {
		t.Errorf("BusyIPIDist %v, want the busy-target samples", o.BusyIPIDist)
	}
	if o.IPIDelay != 2000 || o.IPIJitter != 2000 {
		t.Errorf("IPI %d + %d, want the default 2000 + 2000 (for busy targets without BusyIPIDist)", o.IPIDelay, o.IPIJitter)
	}
	if len(o.IdleWakeDist) != 20 || o.IdleWakeDist.Median() < 33_000 || o.IdleWakeDist.Median() > 33_500 {
		t.Errorf("IdleWakeDist %v, want the remote samples", o.IdleWakeDist)
	}
	if len(o.IdleExitDist) != 20 || o.IdleExit < 137_000 {
		t.Errorf("IdleExit %d (%v), want the local samples", o.IdleExit, o.IdleExitDist)
	}
	if o.IRQResched != 0 || o.IRQReschedDist != nil {
		t.Errorf("IRQResched %d from too few samples, want the default 0", o.IRQResched)
	}
}

// TestIdleWakeDist: a wakes b on idle CPU 1 at 10 us of its run. With
// IdleExit 100 us and every remote idle wakeup drawn as 50 us, b runs 50 us
// after the wakeup, not 150; a's own timer wakeup on its idle CPU pays the
// 100 us exit. Without the distribution b pays the IPI (10 us) and the exit.
func TestIdleWakeDist(t *testing.T) {
	const src = `
topology symmetric 2
task a cpus 0 on 0
  run 10us
  wake b
  sleep 90us
  run 10us
task b cpus 1 on 1
  wait a
  run 10us
`
	fifty := make(DelayDist, 20)
	for i := range fifty {
		fifty[i] = 50_000
	}
	for _, tc := range []struct {
		dist  DelayDist
		wantB string
	}{
		{fifty, "[160µs]"}, // a starts at 100 (exit), wakes b at 110, + 50
		{nil, "[220µs]"},   // 110 + IPI 10 + exit 100
	} {
		sp := mustSpec(t, src)
		o := Options{HZ: 1000, IdleExit: 100_000, IPIDelay: 10_000, IdleWakeDist: tc.dist, Seed: 7}
		res, err := Simulate(sp.Workload, sp.Topology, newFIFO(0), o)
		if err != nil {
			t.Fatal(err)
		}
		var b []string
		for _, at := range eventTimes(res.Timeline, timeline.KindSwitch, "b", sp.Workload.Start) {
			b = append(b, fmt.Sprintf("%dµs", at/1000))
		}
		if got := fmt.Sprint(b); got != tc.wantB {
			t.Errorf("dist %v: b switched in at %s, want %s", tc.dist != nil, got, tc.wantB)
		}
		a := eventTimes(res.Timeline, timeline.KindSwitch, "a", sp.Workload.Start)
		if len(a) != 2 || a[1] != 100_000+10_000+90_000+100_000 {
			t.Errorf("a switched in at %v, want [100µs 300µs] (its timer wakeup pays the exit)", a)
		}
	}
}
