package policies

import (
	"strings"
	"testing"

	"github.com/schedlens/schedlens/replay"
)

// benchScenario replays spec src under policy b.N times and reports the
// simulated (timeline) events per second of wall time. With timeline false
// the run discards the record (the simulation alone); with true it builds
// the timeline too.
func benchScenario(b *testing.B, src, policy string, timeline bool) {
	sp, err := replay.ParseSpec(strings.NewReader(src), "bench.spec")
	if err != nil {
		b.Fatal(err)
	}
	opts := sp.Options()
	opts.Discard = !timeline
	once := func() *replay.Result {
		r, err := replay.Simulate(sp.Workload, sp.Topology, MustParse(policy), opts)
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	r := once()
	b.SetBytes(r.Emitted * 35) // bytes of timeline columns per event (timeline.Timeline.BytesPerEvent)
	b.ReportAllocs()
	var events, steps int64
	for b.Loop() {
		r := once()
		events += r.Emitted
		steps += r.Steps
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
}

// hackbenchBench is scenario 002 shortened to run to completion.
func hackbenchBench(b *testing.B) string {
	src, err := ScenarioSource("002")
	if err != nil {
		b.Fatal(err)
	}
	src = strings.Replace(src, "end 3s", "", 1)
	src = strings.ReplaceAll(src, "repeat 10000 {", "repeat 100 {")
	return strings.ReplaceAll(src, "repeat 3000 {", "repeat 1500 {")
}

func BenchmarkReplayHackbench(b *testing.B) { benchScenario(b, hackbenchBench(b), "6.12", false) }

func BenchmarkReplayHackbenchTimeline(b *testing.B) {
	benchScenario(b, hackbenchBench(b), "6.12", true)
}

func BenchmarkReplayJuno(b *testing.B) { benchScenario(b, junoTopo+mixedWorkload, "6.12", false) }

func BenchmarkReplayJunoTimeline(b *testing.B) {
	benchScenario(b, junoTopo+mixedWorkload, "6.12", true)
}

// BenchmarkReplayJunoGroups is BenchmarkReplayJuno with the tasks in three
// task groups and the root group.
func BenchmarkReplayJunoGroups(b *testing.B) {
	benchScenario(b, junoTopo+groupedMixed(), "6.12", false)
}

// BenchmarkReplayRealTrace is what `schedlens replay` does after loading
// the largest real fixture (ftrace-oracle-busy, 259k events): extract the
// workload, simulate it under mainline 6.18 with the timeline built.
// Reports recorded events and simulated events per second.
func BenchmarkReplayRealTrace(b *testing.B) {
	tl, topo := loadReal(b, "../fixtures/real/ftrace-oracle-busy/trace.txt.zst")
	b.ReportAllocs()
	var emitted int64
	for b.Loop() {
		w, err := replay.Extract(tl, topo)
		if err != nil {
			b.Fatal(err)
		}
		r, err := replay.Simulate(w, topo, MustParse("6.18"), replay.CalibratedOptions(w))
		if err != nil {
			b.Fatal(err)
		}
		emitted += r.Emitted
	}
	b.ReportMetric(float64(int64(tl.Len())*int64(b.N))/b.Elapsed().Seconds(), "recorded-events/s")
	b.ReportMetric(float64(emitted)/b.Elapsed().Seconds(), "events/s")
}
