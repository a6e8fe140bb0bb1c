package replay

import "testing"

const benchRing = `
topology symmetric 4
hz 1000
task a{i} x16
  repeat 3000 {
    run {20+5*(i%4)}us
    wake b{i}
    wait b{i}
  }
task b{i} x16
  repeat 3000 {
    wait a{i}
    run {15+5*(i%3)}us
    wake a{i}
  }
`

// benchEngine measures the engine under the minimal FIFO policy: sixteen
// ping-pong pairs on four CPUs. timeline says whether the timeline is built.
func benchEngine(b *testing.B, timeline bool) {
	sp := mustSpec(b, benchRing)
	opts := Options{HZ: 1000, Discard: !timeline}
	once := func() *Result {
		r, err := Simulate(sp.Workload, sp.Topology, newFIFO(0), opts)
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	r := once()
	b.SetBytes(r.Emitted * 35) // timeline bytes per event
	b.ReportAllocs()
	var events int64
	for b.Loop() {
		events += once().Emitted
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkEngine(b *testing.B)         { benchEngine(b, false) }
func BenchmarkEngineTimeline(b *testing.B) { benchEngine(b, true) }
