package metrics

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// fuzzEvents decodes bytes into scheduler events, 6 bytes each: kind,
// CPU, task, other, prev state, time step. Tasks are pids 0..7 on 4 CPUs,
// so a short input exercises many interleavings.
func fuzzEvents(data []byte, strs *timeline.Strings) []timeline.Event {
	kinds := []timeline.Kind{timeline.KindSwitch, timeline.KindSwitch, timeline.KindSwitch, timeline.KindWaking,
		timeline.KindWakeup, timeline.KindWakeupNew, timeline.KindMigrate, timeline.KindLost, timeline.KindFork, timeline.KindExit}
	states := []string{"R", "R+", "S", "D", "I", "X", "T"}
	var evs []timeline.Event
	var now timeline.Time
	for len(data) >= 6 {
		b := data[:6]
		data = data[6:]
		var e timeline.Event
		e.Reset()
		now += timeline.Time(b[5]) * 1000
		e.Time = now
		e.Kind = kinds[int(b[0])%len(kinds)]
		e.CPU = timeline.CPU(b[1] % 4)
		e.Task = timeline.TID(b[2] % 8)
		e.Other = timeline.TID(b[3] % 8)
		e.Comm = strs.IDString(fmt.Sprintf("t%d", e.Task))
		e.OComm = strs.IDString(fmt.Sprintf("t%d", e.Other))
		e.Prio = int16(100 + b[4]%40)
		switch e.Kind {
		case timeline.KindSwitch:
			st, _ := timeline.ParseState([]byte(states[int(b[4])%len(states)]))
			e.State = st
		case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew:
			e.Arg = int64(b[4] % 4)
			e.Ctx = timeline.Context(b[4] % 4)
		case timeline.KindMigrate:
			e.Arg, e.Arg2 = int64(b[4]%4), int64(e.CPU)
		case timeline.KindLost:
			e.Arg = int64(b[4])
			e.Start = now - timeline.Time(b[3])*1000
		}
		if e.Task == 0 && e.Kind != timeline.KindSwitch && e.Kind != timeline.KindLost {
			e.Task = 1
		}
		evs = append(evs, e)
	}
	return evs
}

// fuzzEncode is the inverse of fuzzEvents for the events it can express,
// to seed the fuzzer from the scenarios.
func fuzzEncode(tl *timeline.Timeline) []byte {
	idx := map[timeline.Kind]byte{timeline.KindSwitch: 0, timeline.KindWaking: 3, timeline.KindWakeup: 4,
		timeline.KindWakeupNew: 5, timeline.KindMigrate: 6, timeline.KindLost: 7, timeline.KindFork: 8, timeline.KindExit: 9}
	var out []byte
	var last timeline.Time
	for i := 0; i < tl.Len(); i++ {
		e := tl.Event(i)
		k, ok := idx[e.Kind]
		if !ok {
			continue
		}
		step := min(max(int64(e.Time-last)/1000, 0), 255)
		last = e.Time
		arg := byte(e.Arg)
		if e.Kind == timeline.KindSwitch {
			arg = map[string]byte{"R": 0, "R+": 1, "S": 2, "D": 3, "I": 4, "X": 5, "T": 6}[e.State.String()]
		}
		out = append(out, k, byte(e.CPU), byte(max(e.Task, 0)), byte(max(e.Other, 0)), arg, byte(step))
	}
	return out
}

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
		f.Add(fuzzEncode(tl))
	}
}

// buildFuzzed builds the timeline of fuzzed bytes (fuzzEvents), nil if
// it has no event or does not build.
func buildFuzzed(data []byte) *timeline.Timeline {
	strs := timeline.NewStrings()
	b := timeline.NewBuilder(strs, 4)
	for _, e := range fuzzEvents(data, strs) {
		b.Add(e)
	}
	tl, err := b.Finish()
	if err != nil || tl.Len() == 0 {
		return nil
	}
	return tl
}

// FuzzAnalyze: on any event stream the metrics hold their invariants
// (checkInvariants): samples add up to Account's runnable time per task,
// idle-with-runnable time stays within idle time, windows add up; on both
// an SMT and an asymmetric topology, with and without a minimum window.
// The runs and waits decided during the walk change nothing.
func FuzzAnalyze(f *testing.F) {
	seedScenarios(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		tl := buildFuzzed(data)
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
