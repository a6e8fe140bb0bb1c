package ingest

import (
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/metrics"
)

// TestLoadWalking: a load that accounts while it reads gives the Timeline
// Load gives and the accounting metrics.Account gives over it, on every
// perf.data at hand (file and pipe mode, lost records, perf record -z) and
// on text, which declares no CPUs and is walked after its load. The walk
// runs along the read where the header states the CPUs and nothing the
// walk started from changes later.
func TestLoadWalking(t *testing.T) {
	for _, tc := range []struct {
		path   string
		walked bool
	}{
		{real + "perf-hackbench-cyclictest/perf.data.zst", true},
		{"perfdata/testdata/z.data.zst", true},
		{"perfdata/testdata/sched-only.data.zst", true},
		{"perfdata/testdata/lost.data.zst", true},          // gaps that begin ahead of the walk
		{"perfdata/testdata/pipe.data.zst", false},         // the CPU count comes last
		{real + "ftrace-oracle-busy/trace.dat.zst", false}, // a figure the walk started from changed later (Along.Finish)
		{"tracedat/testdata/real-lost.dat.zst", true},
		{"tracedat/testdata/v6-lost.dat.zst", true},
		{"tracedat/testdata/v7-none-lost.dat.zst", true},
		{real + "ftrace-pipe-lost/trace.txt.gz", false},
	} {
		{
			var along metrics.AccountAlong
			ld, ws, walked, err := LoadWalking(tc.path, Options{}, along.Start)
			if err != nil {
				t.Fatal(err)
			}
			if walked != tc.walked {
				t.Errorf("%s: walked along %v, want %v", tc.path, walked, tc.walked)
			}
			want, err := Load(tc.path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !sameTimeline(ld.Timeline, want.Timeline) || !reflect.DeepEqual(ld.Meta, want.Meta) {
				t.Errorf("%s: the Timeline differs from Load's", tc.path)
			}
			wantAcc := metrics.Account(want.Timeline, metrics.DefaultWindow(want.Timeline))
			var acc *metrics.Accounting
			if walked {
				acc = along.Result(ws)
			} else {
				acc = metrics.Account(ld.Timeline, metrics.DefaultWindow(ld.Timeline))
			}
			if !reflect.DeepEqual(acc, wantAcc) {
				t.Errorf("%s (walked along %v): the accounting differs from Account's", tc.path, walked)
			}
		}
	}
}
