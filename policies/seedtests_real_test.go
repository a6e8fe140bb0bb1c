package policies

import (
	"os"
	"testing"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/compare"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// seedCapture is a real capture of a seed patch's own test (6.12 guests,
// where the patch is merged), with the masks the workload set.
type seedCapture struct {
	dir  string // under fixtures/real
	comm []string
}

// replaySeedCapture replays a capture as `schedlens replay --kernel 6.12
// [--affinity FILE]` does and measures both sides with compare.Measure.
func replaySeedCapture(t *testing.T, dir, policy string, withFile bool) (rec, mod *compare.Side) {
	t.Helper()
	path := "../fixtures/real/" + dir + "/trace.txt.zst"
	tl, topo := loadReal(t, path)
	var rules []affinity.Rule
	if withFile {
		fh, err := os.Open("../fixtures/real/" + dir + "/affinity.txt")
		if err != nil {
			t.Fatal(err)
		}
		rules, err = affinity.ParseRules(fh, "affinity.txt")
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	am, err := affinity.Build(tl, affinity.BuildOptions{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	w, err := replay.ExtractWith(tl, topo, replay.ExtractOptions{Affinity: am})
	if err != nil {
		t.Fatal(err)
	}
	opts := replay.CalibratedOptions(w)
	opts.Seed = 1
	res, err := replay.Simulate(w, topo, MustParse(policy), opts)
	if err != nil {
		t.Fatal(err)
	}
	return measureSides(t, tl, res.Timeline, topo, am)
}

func measureSides(t *testing.T, tl, sim *timeline.Timeline, topo *topology.Topology, am *affinity.Map) (rec, mod *compare.Side) {
	t.Helper()
	win := metrics.DefaultWindow(tl)
	rec, err := compare.Measure(tl, compare.Options{Window: win, Topology: topo, Affinity: am})
	if err != nil {
		t.Fatal(err)
	}
	simWin := metrics.Window{Start: max(win.Start, sim.ValidStart), End: min(win.End, sim.End)}
	mod, err = compare.Measure(sim, compare.Options{Window: simWin, Topology: topo})
	if err != nil {
		t.Fatal(err)
	}
	return rec, mod
}

func ratio(m, r int64) float64 {
	if r == 0 {
		return 0
	}
	return float64(m) / float64(r)
}

// TestReplayHonoursAffinity: on the captures of seed 001's and seed 003's
// own tests, whose tasks were pinned, the mainline 6.12 replay has runnable
// time and migrations within 25% of the recording, with the masks inferred
// (no flags) and with the workload's own masks (--affinity FILE).
func TestReplayHonoursAffinity(t *testing.T) {
	if testing.Short() {
		t.Skip("replays whole real traces")
	}
	for _, dir := range []string{"qemu-juno-asym", "qemu-smt8-pingpong"} {
		for _, file := range []bool{false, true} {
			name := dir + "/inferred"
			if file {
				name = dir + "/file"
			}
			t.Run(name, func(t *testing.T) {
				rec, mod := replaySeedCapture(t, dir, "6.12", file)
				rr := ratio(mod.Overall.RunnableNs, rec.Overall.RunnableNs)
				mr := ratio(mod.Overall.Migrations, rec.Overall.Migrations)
				t.Logf("runnable %d/%d = %.3f, migrations %d/%d = %.3f", mod.Overall.RunnableNs, rec.Overall.RunnableNs, rr, mod.Overall.Migrations, rec.Overall.Migrations, mr)
				if rr < 0.75 || rr > 1.25 {
					t.Errorf("runnable time ratio %.3f, want within 25%%", rr)
				}
				if mr < 0.75 || mr > 1.25 {
					t.Errorf("migrations ratio %.3f, want within 25%%", mr)
				}
			})
		}
	}
}
