package replay

import (
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// TestExtractWorkIsRunTime: Extract walks the events itself (it needs the
// waker's work at each wake, which spans do not carry), so this pins that
// its per-task demand is the run time `schedlens tasks` reports
// (metrics.Account over the valid window), to the nanosecond, on real
// recordings of identical CPUs (capacity 1024: work = run time). Tasks an
// inconsistency touches (a switch missing from the trace) are left out:
// the accounting calls the interval unknown, Extract charges it to the task
// up to the CPU's last event (the unseen-switch assumption).
func TestExtractWorkIsRunTime(t *testing.T) {
	for _, rel := range []string{
		"ftrace-hackbench-quiet/trace.txt.zst",
		"ftrace-oracle-busy/trace.txt.zst",
		"qemu-smt8-pingpong/trace.txt.zst",
		"qemu-smt8-hackbench/trace.txt.zst",
	} {
		t.Run(rel, func(t *testing.T) {
			path := "../fixtures/real/" + rel
			ld, err := ingest.Load(path, ingest.Options{Name: path})
			if err != nil {
				t.Fatal(err)
			}
			tl := ld.Timeline
			w, err := Extract(tl, topology.Symmetric(tl.NCPU))
			if err != nil {
				t.Fatal(err)
			}
			acc := metrics.Account(tl, metrics.Window{Start: tl.ValidStart, End: tl.End})
			touched := map[timeline.TID]bool{}
			for _, in := range tl.Inconsistencies() {
				for _, id := range []timeline.TaskID{in.Expected, in.Got} {
					if id != timeline.NoTask {
						touched[tl.Tasks[id].PID] = true
					}
				}
			}
			run := map[timeline.TID]int64{}
			for _, tk := range acc.Tasks {
				if touched[tk.PID] {
					continue
				}
				run[tk.PID] += tk.RunNs
			}
			work := map[timeline.TID]int64{}
			for _, tk := range w.Tasks {
				work[tk.TID] += tk.Demand()
			}
			bad := 0
			if len(run) < 10 {
				t.Fatalf("only %d tasks to compare", len(run))
			}
			for pid, r := range run {
				if work[pid] != r {
					bad++
					if bad <= 5 {
						t.Errorf("pid %d: extracted demand %d ns, tasks run time %d ns", pid, work[pid], r)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d tasks differ", bad, len(run))
			}
		})
	}
}

// TestExtractDropEvents: a workload extracted with DropEvents, which
// drops the timeline's events once read and before the workload is built,
// is the workload extracted without it, on real recordings (lost events,
// SMT, asymmetric capacities), and the timeline keeps its figures but not
// its events.
func TestExtractDropEvents(t *testing.T) {
	for _, rel := range []string{
		"ftrace-hackbench-cyclictest/trace.txt.gz",
		"ftrace-overflow/trace.txt.gz",
		"qemu-smt8-hackbench/trace.txt.zst",
		"qemu-juno-asym/trace.txt.zst",
	} {
		path := "../fixtures/real/" + rel
		var ws [2]*Workload
		for i, drop := range []bool{false, true} {
			ld, err := ingest.Load(path, ingest.Options{Name: path})
			if err != nil {
				t.Fatal(err)
			}
			tl := ld.Timeline
			n := tl.Len()
			if ws[i], err = ExtractWith(tl, nil, ExtractOptions{DropEvents: drop}); err != nil {
				t.Fatal(err)
			}
			if got := tl.Times != nil; got == drop || tl.Len() != n {
				t.Errorf("%s, DropEvents %v: events kept %v, Len %d of %d", rel, drop, got, tl.Len(), n)
			}
		}
		if !reflect.DeepEqual(ws[0], ws[1]) {
			t.Errorf("%s: the workload differs when the events are dropped", rel)
		}
	}
}
