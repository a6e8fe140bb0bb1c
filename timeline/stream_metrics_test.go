package timeline_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// TestStreamedAnalysisSameAsLoaded: the analysis, the accounting and the
// affinity inference fed by a streamed walk, chunk by chunk, equal those of
// the loaded Timeline, with chunks small enough that their boundaries fall
// inside waits: the placement events a wait's runqueue stretches come
// from, the task instances and their names (a task's first name holds
// from its start, which a streamed walk learns late), the filter applied
// at the end, the inference's logs.
func TestStreamedAnalysisSameAsLoaded(t *testing.T) {
	for _, rel := range []string{
		"real/ftrace-hackbench-cyclictest/trace.txt.gz",
		"real/perf-hackbench-cyclictest/perf-script.txt.gz",
		"real/qemu-smt8-hackbench/trace.txt.zst",
		"real/qemu-juno-asym/trace.txt.zst",
		"seeds/004/before/run-2/trace.txt.zst",
		"real/perf-hackbench-cyclictest/perf.data.zst",
		"../ingest/perfdata/testdata/lost.data.zst",
		"real/ftrace-oracle-busy/trace.dat.zst",
		"../ingest/tracedat/testdata/real-lost.dat.zst",
	} {
		path := "../fixtures/" + rel
		for _, flt := range []metrics.Filter{{}, {Comms: []string{"hackbench", "sched-messaging", "cyclictest"}}} {
			ld, err := ingest.Load(path, ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			topo, err := topology.Resolve(ld.Meta.Topology, path, "", ld.Timeline.NCPU)
			if err != nil {
				t.Fatal(err)
			}
			aff, err := affinity.Build(ld.Timeline, affinity.BuildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			opts := metrics.Options{Topology: topo, Filter: flt}
			lopts := opts
			lopts.Affinity = aff
			want, wantAcc, err := metrics.AnalyzeAccount(ld.Timeline, lopts)
			if err != nil {
				t.Fatal(err)
			}
			for _, chunk := range []int{1, 7, 1000} {
				t.Run(fmt.Sprintf("%s/%v/chunk=%d", rel, flt.Comms, chunk), func(t *testing.T) {
					defer timeline.SetStreamChunk(chunk)()
					sum, err := ingest.Summarize(path, ingest.Options{})
					if err != nil {
						t.Fatal(err)
					}
					// In chunks of 7 the analysis keeps no Sample; in chunks
					// of 1000 it sketches, as a loaded one that sketches.
					sopts, swant := opts, want
					switch chunk {
					case 7:
						sopts.NoSamples, swant = true, withoutSamples(want)
					case 1000:
						sopts.NoSamples, sopts.Sketch = true, true
						swant = sketched(t, ld.Timeline, lopts)
					}
					got, gotAcc, gotAff := streamedAnalysis(t, sum.Timeline, sopts, want.Window, func(sinks metrics.Sinks) (timeline.WalkStats, error) {
						return ingest.StreamWalk(sum, ingest.Options{}, sinks.Span, sinks.Events)
					})
					if what := analysisDiffers(got, swant, gotAcc, wantAcc, gotAff, aff); what != "" {
						t.Errorf("%s differs", what)
					}
					if len(flt.Comms) == 0 && len(want.Latency.Samples) == 0 {
						t.Error("no samples")
					}
				})
			}
		}
	}
}

// FuzzStreamedAnalysis: on any time-ordered event stream (fuzzEvents), the
// analysis, accounting and affinity map fed by a streamed walk in chunks
// of 1 and 3 events equal the loaded ones, with and without a filter.
func FuzzStreamedAnalysis(f *testing.F) {
	f.Add([]byte{0, 0, 0x01, 0, 2, 1, 1, 0x12, 1, 0, 1, 0, 0x11, 2, 0, 1, 2, 0x02, 1, 0, 3})
	f.Add([]byte{1, 7, 0x01, 0, 9, 2, 0, 0x11, 2, 0, 0, 8, 0x00, 0, 5, 4, 0, 0x11, 1, 0, 2})
	f.Add([]byte{2, 2, 0x11, 1, 1, 1, 3, 0x21, 2, 0, 2, 0, 0x21, 0, 0, 1, 0, 0x10, 2, 0, 4, 5, 0x12, 1, 4, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		cov, evs, ok := fuzzEvents(data)
		if !ok {
			return
		}
		topo := topology.Symmetric(3)
		for _, flt := range []metrics.Filter{{}, {PIDs: []timeline.TID{2, 3}}} {
			tl := buildEvents(t, timeline.NewBuilder(nil, 3), cov, evs)
			aff, err := affinity.Build(tl, affinity.BuildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			opts := metrics.Options{Topology: topo, Filter: flt}
			lopts := opts
			lopts.Affinity = aff
			want, wantAcc, err := metrics.AnalyzeAccount(tl, lopts)
			if err != nil {
				t.Fatal(err)
			}
			for _, chunk := range []int{1, 3} {
				restore := timeline.SetStreamChunk(chunk)
				sum := buildEvents(t, timeline.NewSummaryBuilder(nil, 3), cov, evs)
				// In chunks of 3 the analysis keeps no Sample, and
				// sketches with a pid filter.
				sopts, swant := opts, want
				if chunk == 3 {
					sopts.NoSamples, swant = true, withoutSamples(want)
					if len(flt.PIDs) > 0 {
						sopts.Sketch = true
						swant = sketched(t, tl, lopts)
					}
				}
				got, gotAcc, gotAff := streamedAnalysis(t, sum, sopts, want.Window, func(sinks metrics.Sinks) (timeline.WalkStats, error) {
					w, err := sum.NewStreamWalk(sinks.Span, sinks.Events)
					if err != nil {
						return timeline.WalkStats{}, err
					}
					for _, e := range evs {
						w.Add(e)
					}
					return w.Finish()
				})
				restore()
				if what := analysisDiffers(got, swant, gotAcc, wantAcc, gotAff, aff); what != "" {
					t.Fatalf("filter %v, chunks of %d: %s differs", flt.PIDs, chunk, what)
				}
			}
		}
	})
}

// sketched returns the loaded analysis of tl with opts, sketching.
func sketched(t *testing.T, tl *timeline.Timeline, opts metrics.Options) *metrics.Analysis {
	t.Helper()
	opts.NoSamples, opts.Sketch = true, true
	a, err := metrics.Analyze(tl, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// withoutSamples returns a with no Latency.Samples.
func withoutSamples(a *metrics.Analysis) *metrics.Analysis {
	b, l := *a, *a.Latency
	l.Samples = nil
	b.Latency = &l
	return &b
}

// streamedAnalysis runs the analysis, accounting and affinity inference of
// summary Timeline sum over the streamed walk that walk feeds to the
// sinks, as the analysis commands do.
func streamedAnalysis(t *testing.T, sum *timeline.Timeline, opts metrics.Options, win metrics.Window,
	walk func(metrics.Sinks) (timeline.WalkStats, error)) (*metrics.Analysis, *metrics.Accounting, *affinity.Map) {
	t.Helper()
	sa, err := metrics.NewStreamAnalysis(sum, opts)
	if err != nil {
		t.Fatal(err)
	}
	acc := metrics.NewAccountant(sum, win)
	inf := affinity.NewInferrer(sum, affinity.InferOptions{})
	ws, err := walk(metrics.Sinks{sa, acc, inf})
	if err != nil {
		t.Fatal(err)
	}
	aff, err := affinity.Build(sum, affinity.BuildOptions{Inferred: inf})
	if err != nil {
		t.Fatal(err)
	}
	return sa.Finish(ws, aff), acc.Result(ws), aff
}

// analysisDiffers names the first figure in which two analyses (with their
// accounting and affinity maps) differ, "" if none does.
func analysisDiffers(got, want *metrics.Analysis, gotAcc, wantAcc *metrics.Accounting, gotAff, wantAff *affinity.Map) string {
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"affinity", gotAff, wantAff}, {"Window", got.Window, want.Window}, {"Latency", got.Latency, want.Latency}, {"Idle", got.Idle, want.Idle},
		{"Misplaced", got.Misplaced, want.Misplaced}, {"Notes", got.Notes, want.Notes}, {"UnobservedNs", got.UnobservedNs, want.UnobservedNs},
		{"Walk", got.Walk, want.Walk}, {"CPUStrips", got.CPUStrips(), want.CPUStrips()}, {"Accounting", gotAcc, wantAcc},
	} {
		if !reflect.DeepEqual(f.got, f.want) {
			return f.name
		}
	}
	return ""
}
