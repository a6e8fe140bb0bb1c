package policies

import (
	"path/filepath"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// realFixtures are every real recording under fixtures/real, one encoding
// of each capture at least.
var realFixtures = []string{
	"ftrace-hackbench-cyclictest/trace.txt.gz",
	"ftrace-hackbench-quiet/trace.txt.zst",
	"ftrace-oracle-busy/trace.txt.zst",
	"ftrace-oracle-busy/report.txt.zst",
	"ftrace-overflow/trace.txt.gz",
	"ftrace-pipe-lost/trace.txt.gz",
	"perf-hackbench-cyclictest/perf-script.txt.gz",
	"perfetto-from-ftrace-hackbench-cyclictest/trace.pftrace.zst",
	"perfetto-from-ftrace-hackbench-cyclictest/trace-compact.pftrace.zst",
	"perfetto-tracebox-hackbench-compact/trace.pftrace.zst",
	"perfetto-tracebox-hackbench-plain/trace.pftrace.zst",
	"perfetto-tracebox-oracle-busy/trace.pftrace.zst",
	"qemu-smt8-hackbench/trace.txt.zst",
	"qemu-juno-asym/trace.txt.zst", // asymmetric capacities, the kernel's MC/PKG domains
}

// loadReal loads a real fixture and the topology a replay of it uses.
func loadReal(tb testing.TB, path string) (*timeline.Timeline, *topology.Topology) {
	tb.Helper()
	ld, err := ingest.Load(path, ingest.Options{Name: path})
	if err != nil {
		tb.Fatal(err)
	}
	topo, err := topology.Resolve(ld.Meta.Topology, path, "", ld.Timeline.NCPU)
	if err != nil {
		tb.Fatal(err)
	}
	return ld.Timeline, topo
}

// TestWorkConservationReal replays every real fixture under mainline 6.18
// and checks that each task that finishes got exactly its recorded demand:
// the engine's count, and the modeled timeline's running time scaled by
// the CPU's speed (Workload.Speed), within 0.1%. A task cut by the end (it was running when the
// recording ended, or the replay ran out of time) may get less, never more.
// The recording's gaps are left out of the workload here, so that the
// modeled timeline shows every run.
func TestWorkConservationReal(t *testing.T) {
	if testing.Short() {
		t.Skip("replays every real fixture")
	}
	for k, rel := range realFixtures {
		// The wake rules take turns over the fixtures: recorded wakers,
		// any waker, the recorded one or any once overslept, wakes kept
		// after their wakee's block.
		rule := []string{"recorded", "any", "late-any", "ordered"}[k%4]
		t.Run(filepath.Dir(rel)+"/"+filepath.Base(rel)+"/"+rule, func(t *testing.T) {
			tl, topo := loadReal(t, filepath.Join("..", "fixtures", "real", rel))
			w, err := replay.Extract(tl, topo)
			if err != nil {
				t.Fatal(err)
			}
			w.Unobserved = nil
			if w.WakeRule, err = replay.ParseWakeRule(rule); err != nil {
				t.Fatal(err)
			}
			res, err := replay.Simulate(w, topo, MustParse("6.18"), replay.CalibratedOptions(w))
			if err != nil {
				t.Fatal(err)
			}
			sim := res.Timeline
			caps := make([]int64, sim.NCPU)
			for i := range topo.CPUs {
				caps[i] = int64(w.Speed[i]) // the rate the replay ran CPU i at
			}
			byTID := map[timeline.TID]int{}
			for i, tk := range w.Tasks {
				byTID[tk.TID] = i
			}
			work := make([]float64, len(w.Tasks))
			onCPU := make([]int64, len(w.Tasks))
			sim.Walk(func(s *timeline.Span) {
				if s.State != timeline.SpanRunning || s.Task == timeline.NoTask || sim.Tasks[s.Task].Idle {
					return
				}
				if i, ok := byTID[sim.Tasks[s.Task].PID]; ok {
					work[i] += float64(s.End-s.Start) * float64(caps[s.CPU]) / 1024
					onCPU[i] += int64(s.End - s.Start)
				}
			})
			// The timeline shows a CPU's newidle balancing as its previous
			// task's run, as a trace does; the engine does not count it as
			// work. So a finished task's timeline holds its CPU time and
			// some of that balancing, all of it at most.
			newidle := res.Counters["lb.newidle.ns"]
			var extra int64
			for i, tr := range res.Tasks {
				if tr.Finished {
					if d := onCPU[i] - tr.CPUTime; d < 0 {
						t.Errorf("%s (%d): timeline run %d ns, less than the engine's CPU time %d", w.Tasks[i].Comm, w.Tasks[i].TID, onCPU[i], tr.CPUTime)
					} else {
						extra += d
					}
				}
			}
			if extra > newidle {
				t.Errorf("finished tasks' timeline runs exceed their CPU time by %d ns, more than the newidle balancing time %d", extra, newidle)
			}
			finished, bad := 0, 0
			for i, tr := range res.Tasks {
				demand := w.Tasks[i].Demand()
				if !tr.Finished {
					if w.Tasks[i].End != replay.EndRun && tr.Work > demand {
						t.Errorf("%s (%d): cut short but got %d ns of work, more than its demand %d", w.Tasks[i].Comm, w.Tasks[i].TID, tr.Work, demand)
					}
					continue
				}
				finished++
				if tr.Work != demand {
					t.Errorf("%s (%d): engine work %d, want demand %d", w.Tasks[i].Comm, w.Tasks[i].TID, tr.Work, demand)
					bad++
				}
				// 0.1%, or 1 µs for tiny tasks: a run on a CPU of capacity
				// below 1024 lasts work*1024/capacity, rounded up to the ns,
				// once per run. Above that, newidle balancing after its runs.
				// The wakes' costs in the model move the work: demand plus
				// WakeCost (replay.Options.WakeCostPlain).
				if d := float64(demand + tr.WakeCost); d > 0 && (work[i] < d-max(0.001*d, 1000) || work[i] > d+max(0.001*d, 1000)+float64(newidle)) {
					t.Errorf("%s (%d): timeline work %.0f ns, want %d + wake cost %d within 0.1%% (or 1 us), plus at most the newidle time %d", w.Tasks[i].Comm, w.Tasks[i].TID, work[i], demand, tr.WakeCost, newidle)
					bad++
				}
				if bad > 10 {
					t.Fatal("too many")
				}
			}
			t.Logf("%d of %d tasks finished and got their demand", finished, len(res.Tasks))
			if finished < len(res.Tasks)/2 {
				t.Errorf("only %d of %d tasks finished", finished, len(res.Tasks))
			}
		})
	}
}
