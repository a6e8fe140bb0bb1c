package metrics

import "testing"

// TestNoSamplesSameAnalysis: an analysis that keeps no Sample, only the
// records of what it reads of them, gives the analysis of one that keeps
// them, but for Latency.Samples, which it leaves nil.
func TestNoSamplesSameAnalysis(t *testing.T) {
	for _, rel := range []string{
		"qemu-smt8-hackbench/trace.txt.zst",
		"qemu-juno-asym/trace.txt.zst",
		"ftrace-pipe-lost/trace.txt.gz",
		"ftrace-hackbench-cyclictest/trace.txt.gz",
		"perf-hackbench-cyclictest/perf-script.txt.gz",
		"../seeds/004/before/run-2/trace.txt.zst",
	} {
		ld := loadFixture(t, rel)
		topo := fixtureTopology(t, ld)
		for _, opts := range []Options{
			{Topology: topo},
			{Topology: topo, Filter: Filter{Comms: []string{"hackbench", "sched-messaging"}}, MinWindow: 20_000},
		} {
			want, wacc := mustAnalyzeAccount(t, ld.Timeline, opts)
			opts.NoSamples = true
			got, gacc := mustAnalyzeAccount(t, ld.Timeline, opts)
			if got.Latency.Samples != nil {
				t.Errorf("%s: %d samples kept", rel, len(got.Latency.Samples))
			}
			if d := analysisDiffs(withoutSamples(want), wacc, got, gacc); d != nil {
				t.Errorf("%s, filter %v: %v differ", rel, opts.Filter, d)
			}
		}
	}
}

// withoutSamples returns a with no Latency.Samples.
func withoutSamples(a *Analysis) *Analysis {
	b, l := *a, *a.Latency
	l.Samples = nil
	b.Latency = &l
	return &b
}
