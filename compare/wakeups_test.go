package compare

import (
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
)

// TestSideFromTaskWakeups: a Side built from an analysis that keeps only
// the wakeups' tasks and durations (Measure's) equals one built from the
// Samples, on real traces, with and without a filter.
func TestSideFromTaskWakeups(t *testing.T) {
	for _, path := range []string{
		"../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz",
		"../fixtures/real/perf-hackbench-cyclictest/perf-script.txt.gz",
		"../fixtures/real/qemu-smt8-hackbench/trace.txt.zst",
	} {
		tl := loadReal(t, path)
		for _, flt := range realFilters {
			side := func(o metrics.Options) *Side {
				o.Filter = flt
				an, acc, err := metrics.AnalyzeAccount(tl, o)
				if err != nil {
					t.Fatal(err)
				}
				return FromMetrics(tl, acc, an, flt)
			}
			want := side(metrics.Options{})
			got := side(metrics.Options{NoSamples: true, TaskWakeups: true})
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, filter %v: the Sides differ", path, flt.Comms)
			}
			if len(want.Overall.WakeupSamples) == 0 {
				t.Errorf("%s, filter %v: no wakeup", path, flt.Comms)
			}
		}
	}
}

// TestNoWakeupSamples: a Side measured without its wakeup samples is the
// Side measured with them, its samples left out, on real traces, with and
// without a filter; the samples it leaves out are there otherwise.
func TestNoWakeupSamples(t *testing.T) {
	for _, path := range []string{
		"../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz",
		"../fixtures/real/qemu-smt8-hackbench/trace.txt.zst",
	} {
		tl := loadReal(t, path)
		for _, flt := range realFilters {
			want, err := Measure(tl, Options{Filter: flt})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Measure(tl, Options{Filter: flt, NoWakeupSamples: true})
			if err != nil {
				t.Fatal(err)
			}
			n := len(want.Overall.WakeupSamples)
			want.Overall.WakeupSamples = nil
			for _, l := range [][]ScopeFigures{want.Comms, want.Classes} {
				for i := range l {
					n += len(l[i].WakeupSamples)
					l[i].WakeupSamples = nil
				}
			}
			if n == 0 {
				t.Errorf("%s, filter %v: no samples measured", path, flt.Comms)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, filter %v: the Side without samples differs", path, flt.Comms)
			}
		}
	}
}

// loadReal returns the Timeline of a real trace.
func loadReal(t *testing.T, path string) *timeline.Timeline {
	t.Helper()
	ld, err := ingest.Load(path, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ld.Timeline
}

// realFilters are the filters the tests on real traces measure under:
// none, and two comms.
var realFilters = []metrics.Filter{{}, {Comms: []string{"cyclictest", "hackbench"}}}
