package metrics

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// TestFoldSameAsSketch: folding each record into the sketches as soon as
// the walk decides that no sweep reads it gives the analysis of sketching
// every record after the walk, deciding after every run and wait or every
// 64, on real traces with SMT siblings, asymmetric capacities, lost events,
// perf script text; with a pid filter, a comm filter and a minimum window
// too. On the busy traces nearly every record is folded.
func TestFoldSameAsSketch(t *testing.T) {
	for _, tc := range []struct {
		rel  string
		busy bool
	}{
		{"qemu-smt8-hackbench/trace.txt.zst", false},
		{"qemu-juno-asym/trace.txt.zst", false},
		{"ftrace-pipe-lost/trace.txt.gz", false},
		{"ftrace-oracle-busy/trace.txt.zst", true},
		{"ftrace-hackbench-cyclictest/trace.txt.gz", true},
		{"perf-hackbench-cyclictest/perf-script.txt.gz", false},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			ld := loadFixture(t, tc.rel)
			topo := fixtureTopology(t, ld)
			pids := someBusyPIDs(ld.Timeline, 3)
			for _, opts := range []Options{
				{Topology: topo},
				{Topology: topo, Filter: Filter{Comms: []string{"hackbench", "sched-messaging"}}, MinWindow: 20_000},
				{Topology: topo, Filter: Filter{PIDs: pids}},
			} {
				opts.NoSamples, opts.Sketch = true, true
				sameDecidingEvery(t, ld.Timeline, opts)
			}
			folded, total := foldedShare(t, ld.Timeline, topo)
			t.Logf("folded %d of %d records", folded, total)
			if tc.busy && (total == 0 || folded*10 < total*9) {
				t.Errorf("%d of %d records folded: want over nine tenths on a busy trace", folded, total)
			}
		})
	}
}

// someBusyPIDs returns the pids of up to n tasks with the most events.
func someBusyPIDs(tl *timeline.Timeline, n int) []timeline.TID {
	count := map[timeline.TID]int{}
	for _, id := range tl.TaskOf {
		if id != timeline.NoTask && !tl.Tasks[id].Idle {
			count[tl.Tasks[id].PID]++
		}
	}
	var out []timeline.TID
	for len(out) < n {
		best, bn := timeline.TID(-1), 0
		for p, c := range count {
			if c > bn || c == bn && p < best {
				best, bn = p, c
			}
		}
		if best < 0 {
			break
		}
		out = append(out, best)
		delete(count, best)
	}
	return out
}

// foldedShare walks tl into a sketching collector and returns how many
// records it folded during the walk, and how many there were.
func foldedShare(t *testing.T, tl *timeline.Timeline, topo *topology.Topology) (folded, total int64) {
	withPruneEvery(1024, func() {
		_, c, err := prepare(tl, Options{Topology: topo, NoSamples: true, Sketch: true})
		if err != nil {
			t.Fatal(err)
		}
		Feed(tl, c)
		folded, total = c.fold.folded, c.fold.folded+int64(len(c.recs))
	})
	return folded, total
}

// TestSketchWithinBound: the distributions of a sketching analysis are
// the exact analysis's, but for percentiles marked estimated, each within
// 0.5% of the exact one, on real traces (the ftrace ones print
// microseconds: their estimates below about 100 us are exact).
func TestSketchWithinBound(t *testing.T) {
	for _, rel := range []string{
		"ftrace-oracle-busy/trace.txt.zst",
		"ftrace-hackbench-cyclictest/trace.txt.gz",
		"perf-hackbench-cyclictest/perf-script.txt.gz",
		"qemu-smt8-hackbench/trace.txt.zst",
	} {
		ld := loadFixture(t, rel)
		opts := Options{Topology: fixtureTopology(t, ld), NoSamples: true}
		exact, _ := mustAnalyzeAccount(t, ld.Timeline, opts)
		opts.Sketch = true
		est, _ := mustAnalyzeAccount(t, ld.Timeline, opts)
		if d := analysisDiffs(exact, nil, est, nil); len(d) != 1 || d[0] != "Latency" {
			t.Errorf("%s: %v differ, want only Latency", rel, d)
		}
		var n, estimated int
		for k, pair := range [2][2]*LatencyStats{{&exact.Latency.Wakeup, &est.Latency.Wakeup}, {&exact.Latency.Preempt, &est.Latency.Preempt}} {
			x, e := pair[0], pair[1]
			check := func(what string, xd, ed Dist) {
				n++
				if ed.Estimated != 0 {
					estimated++
				}
				if err := withinBound(xd, ed); err != nil {
					t.Errorf("%s: kind %d %s: %v", rel, k, what, err)
				}
			}
			check("overall", x.Overall, e.Overall)
			check("placement", x.Placement, e.Placement)
			check("queue", x.Queue, e.Queue)
			for j, groups := range [][2][]GroupDist{{x.ByTask, e.ByTask}, {x.ByComm, e.ByComm}, {x.ByClass, e.ByClass}, {x.ByCPU, e.ByCPU}} {
				if len(groups[0]) != len(groups[1]) {
					t.Fatalf("%s: grouping %d: %d groups, want %d", rel, j, len(groups[1]), len(groups[0]))
				}
				for i := range groups[0] {
					xg, eg := groups[0][i], groups[1][i]
					xg.Dist, eg.Dist = Dist{}, Dist{}
					if fmt.Sprint(xg) != fmt.Sprint(eg) {
						t.Errorf("%s: grouping %d, group %d: %+v, want %+v", rel, j, i, eg, xg)
					}
					check(fmt.Sprintf("grouping %d %s", j, groups[0][i].Key), groups[0][i].Dist, groups[1][i].Dist)
				}
			}
			xs, es := *x, *e
			xs.Overall, xs.Placement, xs.Queue, xs.ByTask, xs.ByComm, xs.ByClass, xs.ByCPU = Dist{}, Dist{}, Dist{}, nil, nil, nil, nil
			es.Overall, es.Placement, es.Queue, es.ByTask, es.ByComm, es.ByClass, es.ByCPU = Dist{}, Dist{}, Dist{}, nil, nil, nil, nil
			if fmt.Sprint(xs) != fmt.Sprint(es) {
				t.Errorf("%s: kind %d: %+v, want %+v", rel, k, es, xs)
			}
		}
		t.Logf("%s: %d of %d distributions estimated", rel, estimated, n)
		if estimated == 0 {
			t.Errorf("%s: no distribution estimated", rel)
		}
	}
}

// withinBound checks estimated distribution e against exact x: the same
// but for the percentiles marked estimated, each within 0.5% of x's.
func withinBound(x, e Dist) error {
	xp := []int64{x.P50Ns, x.P90Ns, x.P99Ns, x.P999Ns}
	ep := []int64{e.P50Ns, e.P90Ns, e.P99Ns, e.P999Ns}
	for i := range xp {
		d := ep[i] - xp[i]
		if d < 0 {
			d = -d
		}
		if !e.EstimatedAt(i) && d != 0 || float64(d) > 0.005*float64(max(xp[i], -xp[i])) {
			return fmt.Errorf("percentile %d: %d, want %d (estimated %v)", i, ep[i], xp[i], e.EstimatedAt(i))
		}
	}
	x.P50Ns, x.P90Ns, x.P99Ns, x.P999Ns = 0, 0, 0, 0
	e.P50Ns, e.P90Ns, e.P99Ns, e.P999Ns = 0, 0, 0, 0
	e.Estimated = 0
	if fmt.Sprint(x) != fmt.Sprint(e) {
		return fmt.Errorf("%+v, want %+v", e, x)
	}
	return nil
}

// TestStreamedFoldSameAsLoaded: a streamed walk that folds records
// during it (deciding after every run and wait) gives the loaded analysis
// that sketches every record after its walk: the names a streamed walk
// learns chunk by chunk are final for what it folds, and so is a pid
// filter; a comm filter's tasks are folded once they match.
func TestStreamedFoldSameAsLoaded(t *testing.T) {
	for _, rel := range []string{
		"ftrace-hackbench-cyclictest/trace.txt.gz",
		"qemu-smt8-hackbench/trace.txt.zst",
		"perf-hackbench-cyclictest/perf-script.txt.gz",
	} {
		ld := loadFixture(t, rel)
		topo := fixtureTopology(t, ld)
		aff, err := affinity.Build(ld.Timeline, affinity.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, flt := range []Filter{{}, {Comms: []string{"hackbench", "sched-messaging", "cyclictest"}}, {PIDs: someBusyPIDs(ld.Timeline, 3)}} {
			opts := Options{Topology: topo, Filter: flt, NoSamples: true, Sketch: true, Affinity: aff}
			var want, got *Analysis
			withPruneEvery(0, func() { want, _ = mustAnalyzeAccount(t, ld.Timeline, opts) })
			withPruneEvery(1, func() {
				path := fixtureDir + rel
				sum, err := ingest.Summarize(path, ingest.Options{})
				if err != nil {
					t.Fatal(err)
				}
				sa, err := NewStreamAnalysis(sum.Timeline, opts)
				if err != nil {
					t.Fatal(err)
				}
				ws, err := ingest.StreamWalk(sum, ingest.Options{}, sa.Span, sa.Events)
				if err != nil {
					t.Fatal(err)
				}
				got = sa.Finish(ws, aff)
				if sa.c.fold.folded == 0 {
					t.Errorf("%s, filter %v: nothing folded", rel, flt)
				}
			})
			if d := analysisDiffs(want, nil, got, nil); d != nil {
				t.Errorf("%s, filter %v: %v differ", rel, flt, d)
			}
		}
	}
}

// TestTaskWakeupsFolded: with TaskWakeups, the complete wakeups folded as
// the walk decides them (after every run and wait, or every 64) are the
// wakeups of an analysis that decides nothing, and their overall
// distribution is the exact analysis's; the rest of the analysis is the
// same. On the busy traces nearly every record is folded.
func TestTaskWakeupsFolded(t *testing.T) {
	for _, tc := range []struct {
		rel  string
		busy bool
	}{
		{"qemu-smt8-hackbench/trace.txt.zst", false},
		{"ftrace-pipe-lost/trace.txt.gz", false},
		{"ftrace-hackbench-cyclictest/trace.txt.gz", true},
		{"perf-hackbench-cyclictest/perf-script.txt.gz", false},
	} {
		ld := loadFixture(t, tc.rel)
		topo := fixtureTopology(t, ld)
		for _, flt := range []Filter{{}, {Comms: []string{"hackbench", "sched-messaging"}}, {PIDs: someBusyPIDs(ld.Timeline, 3)}} {
			exact, _ := mustAnalyzeAccount(t, ld.Timeline, Options{Topology: topo, Filter: flt, NoSamples: true})
			opts := Options{Topology: topo, Filter: flt, NoSamples: true, TaskWakeups: true}
			var want *Analysis
			withPruneEvery(0, func() { want, _ = mustAnalyzeAccount(t, ld.Timeline, opts) })
			for _, every := range []int{1, 64} {
				var got *Analysis
				var folded int64
				withPruneEvery(every, func() {
					_, c, err := prepare(ld.Timeline, opts)
					if err != nil {
						t.Fatal(err)
					}
					Feed(ld.Timeline, c)
					folded = c.fold.folded
					got, _ = mustAnalyzeAccount(t, ld.Timeline, opts)
				})
				if tc.busy && flt.PIDs == nil && folded*10 < int64(len(got.Latency.Wakeups))*9 {
					t.Errorf("%s, every %d, filter %v: %d records folded of %d wakeups: want most", tc.rel, every, flt, folded, len(got.Latency.Wakeups))
				}
				if !reflect.DeepEqual(got.Latency.Wakeup.Overall, exact.Latency.Wakeup.Overall) {
					t.Errorf("%s, every %d, filter %v: overall %+v, want %+v", tc.rel, every, flt, got.Latency.Wakeup.Overall, exact.Latency.Wakeup.Overall)
				}
				byTaskDur := func(a, b TaskWait) int {
					if c := cmp.Compare(a.Task, b.Task); c != 0 {
						return c
					}
					return cmp.Compare(a.DurNs, b.DurNs)
				}
				w, g := slices.Clone(want.Latency.Wakeups), slices.Clone(got.Latency.Wakeups)
				slices.SortFunc(w, byTaskDur)
				slices.SortFunc(g, byTaskDur)
				if !slices.Equal(w, g) || len(w) == 0 {
					t.Errorf("%s, every %d, filter %v: %d wakeups, want the %d of deciding nothing", tc.rel, every, flt, len(g), len(w))
				}
				a, b := *want, *got
				a.Latency, b.Latency = nil, nil
				if d := analysisDiffs(&a, nil, &b, nil); d != nil {
					t.Errorf("%s, every %d, filter %v: %v differ", tc.rel, every, flt, d)
				}
			}
		}
	}
}
