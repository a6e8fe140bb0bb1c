package ingest

import (
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/metrics"
)

// TestLoadWalking: a load that accounts while it reads gives the Timeline
// Load gives and the accounting metrics.Account gives over it, on every
// perf.data at hand (file and pipe mode, lost records, perf record -z), on
// trace.dat and on text. The walk runs along the read unless a figure it
// started from changes later: the CPUs a header states or, without one
// (pipe mode, perf script, trace_pipe), those the first events name; the
// coverage an ftrace header states.
func TestLoadWalking(t *testing.T) {
	for _, tc := range []struct {
		path   string
		walked bool
	}{
		{real + "perf-hackbench-cyclictest/perf.data.zst", true},
		{"perfdata/testdata/z.data.zst", true},
		{"perfdata/testdata/sched-only.data.zst", true},
		{"perfdata/testdata/lost.data.zst", true},          // gaps that begin ahead of the walk
		{"perfdata/testdata/pipe.data.zst", true},          // the CPU count comes last: the events'
		{real + "ftrace-oracle-busy/trace.dat.zst", false}, // a figure the walk started from changed later (Along.Finish)
		{"tracedat/testdata/real-lost.dat.zst", true},
		{"tracedat/testdata/v6-lost.dat.zst", true},
		{"tracedat/testdata/v7-none-lost.dat.zst", true},
		{real + "ftrace-pipe-lost/trace.txt.gz", true},                // no header: the events' CPUs
		{real + "ftrace-hackbench-cyclictest/trace.txt.gz", true},     // "#P:2", complete coverage
		{real + "ftrace-overflow/trace.txt.gz", false},                // buffer-start lines
		{real + "ftrace-oracle-busy/report.txt.zst", true},            // trace-cmd report's cpus=2
		{real + "qemu-smt8-hackbench/trace.txt.zst", true},            // 8 CPUs
		{real + "perf-hackbench-cyclictest/perf-script.txt.gz", true}, // no CPU count: the events'
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
