package replay

import (
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/topology"
)

// TestSpeedJunoGuest pins the CPU speed of the emulated Juno-like guest
// (fixtures/real/qemu-juno-asym: capacities 1024 and 383, every vCPU at
// the host's speed) against its workload.out, the guest's own schedstat
// run time of each of seed 001's six tasks (7000 equal chunks each).
// Speed equal: the demand is the recorded run time; auto: the sibling fit
// finds the little CPUs as fast as the big ones, so the demand stays
// within 2% of schedstat's figure. Capacity (the old rule) shrinks the
// tasks that ran on little CPUs to well under half.
func TestSpeedJunoGuest(t *testing.T) {
	const path = "../fixtures/real/qemu-juno-asym/trace.txt.zst"
	ld, err := ingest.Load(path, ingest.Options{Name: path})
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Resolve(ld.Meta.Topology, path, "", ld.Timeline.NCPU)
	if err != nil {
		t.Fatal(err)
	}
	// workload.out: "task N (pid P, ...): ... schedstat run S s".
	schedstat := map[string]float64{"asym-0": 10.275, "asym-1": 9.910, "asym-2": 10.120, "asym-3": 10.329, "asym-4": 10.241, "asym-5": 10.412}
	demands := func(spec SpeedSpec) (map[string]float64, *Workload) {
		w, err := ExtractWith(ld.Timeline, topo, ExtractOptions{Speed: spec})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, tk := range w.Tasks {
			if _, ok := schedstat[tk.Comm]; ok {
				out[tk.Comm] = float64(tk.Demand()) / 1e9
			}
		}
		if len(out) != len(schedstat) {
			t.Fatalf("found %d of the 6 asym tasks", len(out))
		}
		return out, w
	}
	eq, _ := demands(SpeedSpec{Mode: SpeedEqual})
	auto, w := demands(SpeedSpec{})
	capd, _ := demands(SpeedSpec{Mode: SpeedCapacity})
	for comm, want := range schedstat {
		if d := eq[comm]; d < want*0.98 || d > want*1.02 {
			t.Errorf("%s: demand at equal speed %.3f s, want schedstat's %.3f s within 2%%", comm, d, want)
		}
		if d := auto[comm]; d < want*0.98 || d > want*1.02 {
			t.Errorf("%s: demand at calibrated speed %.3f s, want schedstat's %.3f s within 2%%", comm, d, want)
		}
	}
	if w.Speed[0] < 980 || w.Speed[0] > 1024 || w.Speed[1] != 1024 {
		t.Errorf("calibrated speeds %v, want the little CPUs (0, 3-5) at 980..1024", w.Speed)
	}
	// asym-0 ran almost all its time on little CPU 0.
	if d := capd["asym-0"]; d > 0.5*schedstat["asym-0"] {
		t.Errorf("asym-0 at capacity speed: demand %.3f s, want under half of %.3f s", d, schedstat["asym-0"])
	}
}
