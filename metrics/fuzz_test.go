package metrics

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/schedlens/schedlens/internal/fuzzsched"
	"github.com/schedlens/schedlens/topology"
)

// seedScenarios seeds f with the scenarios' traces.
func seedScenarios(f *testing.F) {
	files, _ := filepath.Glob("testdata/scenarios/*.txtar")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		tl, _, err := buildScenario(parseTxtar(data)["trace"])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(fuzzsched.Encode(tl))
	}
}

// FuzzAnalyze: on any event stream the metrics hold their invariants
// (checkInvariants): samples add up to Account's runnable time per task,
// idle-with-runnable time stays within idle time, windows add up; on both
// an SMT and an asymmetric topology, with and without a minimum window.
// The runs and waits decided during the walk change nothing, and nor do
// the records folded into sketches during it.
func FuzzAnalyze(f *testing.F) {
	seedScenarios(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		tl := fuzzsched.Build(data)
		if tl == nil {
			return
		}
		for _, preset := range []string{"smt2-2", "juno-r2"} {
			topo, _ := topology.Preset(preset)
			for _, minWin := range []int64{0, 3000} {
				// Deciding which runs and waits the sweeps read after
				// every one (prune.go) gives the analysis of keeping all.
				opts := Options{Topology: topo, MinWindow: minWin}
				var a, kept *Analysis
				var acc, kacc *Accounting
				withPruneEvery(1, func() { a, acc = mustAnalyzeAccount(t, tl, opts) })
				withPruneEvery(0, func() { kept, kacc = mustAnalyzeAccount(t, tl, opts) })
				if d := analysisDiffs(kept, kacc, a, acc); d != nil {
					t.Fatalf("%s, min window %d: deciding during the walk: %v differ", preset, minWin, d)
				}
				// So does keeping no Sample, but for the samples.
				opts.NoSamples = true
				recs, racc := mustAnalyzeAccount(t, tl, opts)
				if d := analysisDiffs(withoutSamples(a), acc, recs, racc); d != nil {
					t.Fatalf("%s, min window %d: no samples: %v differ", preset, minWin, d)
				}
				// Folding records into the sketches during the walk gives
				// the analysis of sketching them after it, and that is the
				// exact one but for percentiles within their bound.
				opts.Sketch = true
				var sk, all *Analysis
				var sacc, aacc *Accounting
				withPruneEvery(1, func() { sk, sacc = mustAnalyzeAccount(t, tl, opts) })
				withPruneEvery(0, func() { all, aacc = mustAnalyzeAccount(t, tl, opts) })
				if d := analysisDiffs(all, aacc, sk, sacc); d != nil {
					t.Fatalf("%s, min window %d: folding: %v differ", preset, minWin, d)
				}
				if d := analysisDiffs(recs, racc, sk, sacc); len(d) > 1 || len(d) == 1 && d[0] != "Latency" {
					t.Fatalf("%s, min window %d: sketching: %v differ", preset, minWin, d)
				}
				for k, pair := range [2][2]*LatencyStats{{&recs.Latency.Wakeup, &sk.Latency.Wakeup}, {&recs.Latency.Preempt, &sk.Latency.Preempt}} {
					if err := withinBound(pair[0].Overall, pair[1].Overall); err != nil {
						t.Fatalf("%s, min window %d, kind %d: %v", preset, minWin, k, err)
					}
				}
				checkInvariants(t, tl, a)
				for _, s := range a.Latency.Samples {
					if s.DurNs < 0 || s.IdleCPUNs < 0 {
						t.Fatalf("sample %+v: negative time", s)
					}
				}
				for _, m := range a.Misplaced.Tasks {
					if m.MisfitNs > m.RunNs || m.SMTContendedNs > m.RunNs {
						t.Fatalf("pid %d: misfit %d or SMT %d above run time %d", m.PID, m.MisfitNs, m.SMTContendedNs, m.RunNs)
					}
				}
			}
		}
	})
}
