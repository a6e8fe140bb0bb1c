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

// TestWakeCost: a wakes b after 10 us of its 20 us run. The recorded wake
// cost a 1 us without a resched IPI; in the model b waits on idle CPU 1,
// so the wake sends an IPI and costs a the IPI kind's 9 us: a runs 28 us.
// With b on a's CPU and a recorded IPI wake of 9 us, the model's wake is
// plain and a saves 8 us. Without both distributions, or with the same
// kind on both sides, nothing moves.
func TestWakeCost(t *testing.T) {
	const src = `
topology symmetric 2
task a cpus 0 on 0
  run 10us
  wake b
  run 10us
  exit
task b cpus %d on %d
  wait a
  run 10us
  exit
`
	const10 := func(v int64) DelayDist {
		d := make(DelayDist, 20)
		for i := range d {
			d[i] = v
		}
		return d
	}
	for _, tc := range []struct {
		bCPU        int
		recordedIPI bool
		dists       bool
		wantCPU     int64
		wantCounter string
	}{
		{1, false, true, 28_000, "wake-cost.ipi-added"},
		{0, true, true, 12_000, "wake-cost.ipi-saved"},
		{1, false, false, 20_000, ""},
		{1, true, true, 20_000, ""}, // an IPI in both: the recorded cost stands
	} {
		sp := mustSpec(t, fmt.Sprintf(src, tc.bCPU, tc.bCPU))
		w := sp.Workload
		var a, b int
		for i, tk := range w.Tasks {
			if tk.Comm == "a" {
				a = i
			} else {
				b = i
			}
		}
		wk := &w.Tasks[b].Segments[0].Wake
		if wk.Kind != WakeTask {
			t.Fatalf("b's first wake %+v, want a task wake", wk)
		}
		wk.Cost, wk.CostIPI = 1_000, tc.recordedIPI
		if tc.recordedIPI {
			wk.Cost = 9_000
		}
		o := Options{HZ: 1000, IPIDelay: 1_000, Seed: 1}
		if tc.dists {
			o.WakeCostPlain, o.WakeCostIPI = const10(1_000), const10(9_000)
		}
		res, err := Simulate(w, sp.Topology, newFIFO(0), o)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("b on CPU %d, recorded IPI %v, distributions %v", tc.bCPU, tc.recordedIPI, tc.dists)
		if got := res.Tasks[a].CPUTime; got != tc.wantCPU {
			t.Errorf("%s: a ran %d ns, want %d", name, got, tc.wantCPU)
		}
		if got := res.Tasks[a].WakeCost; got != tc.wantCPU-20_000 {
			t.Errorf("%s: a's WakeCost %d, want %d", name, got, tc.wantCPU-20_000)
		}
		if tc.wantCounter != "" && res.Counters[tc.wantCounter] != 1 {
			t.Errorf("%s: counter %s = %d, want 1 (%v)", name, tc.wantCounter, res.Counters[tc.wantCounter], res.Counters)
		}
	}
}
