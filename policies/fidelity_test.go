package policies

import (
	"testing"

	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// fidelityFigures are the whole-trace figures `schedlens replay` compares,
// measured by the same metrics code over the same window.
type fidelityFigures struct {
	cpuNs, runnableNs, wakeups, p50Ns, switches int64
	hist                                        metrics.Histogram
}

func measureFidelity(t *testing.T, tl *timeline.Timeline, win metrics.Window, topo *topology.Topology) fidelityFigures {
	t.Helper()
	var f fidelityFigures
	acc := metrics.Account(tl, win)
	for _, tk := range acc.Tasks {
		f.cpuNs += tk.RunNs
		f.runnableNs += tk.RunnableNs
	}
	for _, c := range acc.CPUs {
		f.switches += c.Switches
	}
	an, err := metrics.Analyze(tl, metrics.Options{Window: win, Topology: topo})
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	if an.Latency != nil {
		f.wakeups = an.Latency.Wakeup.Overall.Count
		f.p50Ns = an.Latency.Wakeup.Overall.P50Ns
		f.hist = an.Latency.Wakeup.Overall.Hist
	}
	return f
}

// TestReplayFidelity pins the fidelity the mainline 6.18 model reaches on
// real 2-CPU recordings (default options, seed 1, HZ 250: what
// `schedlens replay TRACE` runs). Each bound is the measured ratio
// (modeled / recorded) with some margin; the comment gives the figure
// before wake-after-block and sync-pair extraction, so that a regression
// towards it fails.
func TestReplayFidelity(t *testing.T) {
	if testing.Short() {
		t.Skip("replays whole real traces")
	}
	type bound struct{ lo, hi float64 }
	tests := []struct {
		name     string
		path     string
		cpu      bound   // CPU time
		runnable bound   // total runnable (queued) time
		wakeups  bound   // wakeup-latency samples
		p50      bound   // wakeup latency p50
		switches bound   // context switches
		ks       float64 // at most this CDF distance between the latency distributions
	}{
		{
			// measured: cpu 1.008, runnable 0.635 (was 0.553), samples
			// 1.004 (was 0.29), p50 3.08 (was 15.9; 2.47 with a 0.75 ms
			// base slice), CDF distance 0.113, switches 0.89 (was 0.315).
			// A compiler and scripts shared the CPUs with the workload.
			name: "ftrace-hackbench-cyclictest", path: "../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz",
			cpu: bound{0.99, 1.012}, runnable: bound{0.55, 1.25}, wakeups: bound{0.80, 1.10}, p50: bound{0.5, 4.0}, switches: bound{0.80, 1.10}, ks: 0.16,
		},
		{
			// The same workload on a quiet machine. measured: cpu 1.004,
			// runnable 0.68, samples 1.03, p50 1.67 (30 against 50 us: the
			// median falls where the distribution is thin; 1.10 with a
			// 0.75 ms base slice), CDF distance 0.065, switches 0.92.
			name: "ftrace-hackbench-quiet", path: "../fixtures/real/ftrace-hackbench-quiet/trace.txt.zst",
			cpu: bound{0.99, 1.01}, runnable: bound{0.60, 1.25}, wakeups: bound{0.95, 1.08}, p50: bound{0.75, 1.8}, switches: bound{0.88, 1.10}, ks: 0.08,
		},
		{
			// measured: cpu 1.008, runnable 0.98 (was 0.95), samples 0.39
			// (was 0.20), p50 0.67 (2 against 3 us; was 1.33), CDF
			// distance 0.135, switches 0.42 (was 0.155)
			name: "ftrace-oracle-busy", path: "../fixtures/real/ftrace-oracle-busy/trace.txt.zst",
			cpu: bound{0.99, 1.012}, runnable: bound{0.85, 1.15}, wakeups: bound{0.33, 1.10}, p50: bound{0.5, 1.34}, switches: bound{0.34, 1.10}, ks: 0.18,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl, topo := loadReal(t, tc.path)
			w, err := replay.Extract(tl, topo)
			if err != nil {
				t.Fatal(err)
			}
			opts := replay.CalibratedOptions(w)
			opts.Seed = 1
			opts.HZ = 250
			res, err := replay.Simulate(w, topo, MustParse("6.18"), opts)
			if err != nil {
				t.Fatal(err)
			}
			sim := res.Timeline
			if n := len(sim.Inconsistencies()); n != 0 {
				t.Errorf("modeled timeline has %d inconsistencies, want 0 (first: %+v)", n, sim.Inconsistencies()[0])
			}
			win := metrics.DefaultWindow(tl)
			simWin := win
			simWin.Start = max(simWin.Start, sim.ValidStart)
			simWin.End = min(simWin.End, sim.End)
			rec := measureFidelity(t, tl, win, topo)
			mod := measureFidelity(t, sim, simWin, topo)
			check := func(what string, m, r int64, b bound) {
				t.Helper()
				if r == 0 {
					t.Errorf("%s: recorded 0", what)
					return
				}
				got := float64(m) / float64(r)
				if got < b.lo || got > b.hi {
					t.Errorf("%s: modeled/recorded = %d/%d = %.3f, want within [%.2f, %.2f]", what, m, r, got, b.lo, b.hi)
				}
				t.Logf("%s ratio %.3f", what, got)
			}
			check("cpu time", mod.cpuNs, rec.cpuNs, tc.cpu)
			check("runnable time", mod.runnableNs, rec.runnableNs, tc.runnable)
			check("wakeup samples", mod.wakeups, rec.wakeups, tc.wakeups)
			check("wakeup latency p50", mod.p50Ns, rec.p50Ns, tc.p50)
			check("context switches", mod.switches, rec.switches, tc.switches)
			ks := metrics.CDFDistance(rec.hist, mod.hist)
			if ks > tc.ks {
				t.Errorf("wakeup latency CDF distance %.3f, want at most %.3f", ks, tc.ks)
			}
			t.Logf("wakeup latency CDF distance %.3f", ks)
		})
	}
}
