package whatif

import (
	"testing"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/compare"
	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/policies"
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// capture is a loaded real capture of a seed patch's own test (6.12
// guests, where the patch is merged).
type capture struct {
	tl    *timeline.Timeline
	topo  *topology.Topology
	rel   policies.Release
	rules []affinity.Rule // the masks the workload set (affinity.txt)
}

var captures = map[string]*capture{}

func loadCapture(t *testing.T, dir string) *capture {
	t.Helper()
	if c, ok := captures[dir]; ok {
		return c
	}
	base := "../fixtures/real/" + dir + "/"
	ld, err := ingest.Load(base+"trace.txt.zst", ingest.Options{Name: base + "trace.txt.zst"})
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Resolve(ld.Meta.Topology, base+"trace.txt.zst", "", ld.Timeline.NCPU)
	if err != nil {
		t.Fatal(err)
	}
	rel, file, err := ingest.ReleaseNextTo(base + "trace.txt.zst")
	if err != nil || rel == "" {
		t.Fatalf("kernel release next to %s: %q, %v", dir, rel, err)
	}
	rules, err := affinity.ReadRules(base + "affinity.txt")
	if err != nil {
		t.Fatal(err)
	}
	c := &capture{tl: ld.Timeline, topo: topo, rel: policies.Release{Release: rel, Source: file}, rules: rules}
	captures[dir] = c
	return c
}

// replayCapture replays a capture as `schedlens replay [--patch P]
// [--affinity FILE]` does: the kernel from the trace's release (6.12),
// the masks inferred, or the workload's own (withFile).
func replayCapture(t *testing.T, dir string, patches []string, withFile bool) *Run {
	return replayCaptureSeed(t, dir, patches, withFile, 1)
}

func replayCaptureSeed(t *testing.T, dir string, patches []string, withFile bool, seed uint64) *Run {
	t.Helper()
	c := loadCapture(t, dir)
	var rules []affinity.Rule
	if withFile {
		rules = c.rules
	}
	am, err := affinity.Build(c.tl, affinity.BuildOptions{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	desc, _, err := Policy{Release: c.rel, Patches: patches}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	run, err := Replay(c.tl, desc, Options{Topology: c.topo, Affinity: am, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func ratio(m, r int64) float64 {
	if r == 0 {
		return 0
	}
	return float64(m) / float64(r)
}

func mode(file bool) string {
	if file {
		return "file"
	}
	return "inferred"
}

// TestReplayHonoursAffinity: on the captures of seed 001's and seed 003's
// own tests, whose tasks were pinned, the mainline 6.12 replay has runnable
// time and migrations within 25% of the recording, with the masks inferred
// (no flags) and with the workload's own masks (--affinity FILE). The
// modeled figure is the mean over seeds 1-6: the recordings have 27
// migrations each, so one seed's placement of a fork or a timer's wakee
// moves the ratio by 4%.
func TestReplayHonoursAffinity(t *testing.T) {
	if testing.Short() {
		t.Skip("replays whole real traces")
	}
	const seeds = 6
	for _, dir := range []string{"qemu-juno-asym", "qemu-smt8-pingpong"} {
		for _, file := range []bool{false, true} {
			t.Run(dir+"/"+mode(file), func(t *testing.T) {
				var rec, runnable, migr float64
				var recMigr int64
				for seed := uint64(1); seed <= seeds; seed++ {
					run := replayCaptureSeed(t, dir, nil, file, seed)
					if run.Policy != "6.12" {
						t.Fatalf("policy %q, want 6.12 from the trace's release", run.Policy)
					}
					rec, recMigr = float64(run.Recorded.Overall.RunnableNs), run.Recorded.Overall.Migrations
					runnable += float64(run.Modeled.Overall.RunnableNs) / seeds
					migr += float64(run.Modeled.Overall.Migrations) / seeds
				}
				rr, mr := runnable/rec, migr/float64(recMigr)
				t.Logf("mean of %d seeds: runnable %.3f of recorded, migrations %.2f/%d = %.3f", seeds, rr, migr, recMigr, mr)
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

func knob(run *Run, name string) (replay.Knob, bool) {
	for _, k := range run.Result.Knobs {
		if k.Name == name {
			return k, true
		}
	}
	return replay.Knob{}, false
}

// commRunnable sums the modeled (or recorded) runnable time of comms.
func commRunnable(side *compare.Side, comms ...string) int64 {
	var n int64
	for _, c := range comms {
		if f := side.Scope(compare.CommScope(c)); f != nil {
			n += f.RunnableNs
		}
	}
	return n
}

// TestSeed001OffOnItsOwnTest: seed 001's test on a Juno-like 6.12 guest
// (six CPU-bound tasks, two of them on big CPU 1 for step 1, then every
// mask released). The mainline replay gives the two tasks sharing the big
// CPU the runnable time they had (within 25%); with the merged patch
// turned off they wait longer and the job finishes later, as the e-mail
// says, and the knob's counter shows the decisions it changed.
func TestSeed001OffOnItsOwnTest(t *testing.T) {
	if testing.Short() {
		t.Skip("replays whole real traces")
	}
	pair := []string{"asym-1", "asym-2"}
	for _, file := range []bool{false, true} {
		t.Run(mode(file), func(t *testing.T) {
			on := replayCapture(t, "qemu-juno-asym", nil, file)
			off := replayCapture(t, "qemu-juno-asym", []string{"-lb-util-shr-bound"}, file)
			rec := commRunnable(on.Recorded, pair...)
			wOn, wOff := commRunnable(on.Modeled, pair...), commRunnable(off.Modeled, pair...)
			cOn, cOff := on.Modeled.Overall.CompletionNs, off.Modeled.Overall.CompletionNs
			k, ok := knob(off, "lb-util-shr-bound")
			t.Logf("pair runnable: recorded %.0f ms, mainline %.0f ms, patch off %.0f ms; job completion %.3f -> %.3f s; knob %+v",
				float64(rec)/1e6, float64(wOn)/1e6, float64(wOff)/1e6, float64(cOn)/1e9, float64(cOff)/1e9, k)
			if r := ratio(wOn, rec); r < 0.75 || r > 1.25 {
				t.Errorf("mainline: the pair's runnable time is %.3f of the recording's, want within 25%%", r)
			}
			if wOff <= wOn {
				t.Errorf("patch off: the pair waits %d ns, mainline %d ns: want longer", wOff, wOn)
			}
			if cOff <= cOn {
				t.Errorf("patch off: the job completes at %d ns, mainline %d ns: want later", cOff, cOn)
			}
			if !ok || !k.Toggled || k.On || k.Count <= 0 {
				t.Errorf("knob lb-util-shr-bound = %+v (found %v), want toggled off with a count above 0", k, ok)
			}
		})
	}
}

// TestSeed003OffOnItsOwnTest: seed 003's test on an 8-CPU SMT 6.12 guest
// (a pipe ping-pong pair pinned to CPUs 0 and 2, two hogs pinned to each
// other CPU). The knob fires: with the merged patch newidle balancing bails
// out when a wakeup is pending, and turned off the model takes those
// decisions the other way. But the pair's wakeup latency does not rise
// (within 3%): in this guest the all-pinned newidle walk over 8 CPUs costs
// about 18 us, and the partner's reply reaches a CPU whose walk is still
// running in about 5% of the walks only, since the wakeup IPI onto an idle
// CPU takes 58 us here (the e-mail's 120 us walks ran on a far larger
// machine, with 6 us wakeups). The test pins that prediction; the e-mail's
// direction needs a walk longer than the partner's turnaround.
func TestSeed003OffOnItsOwnTest(t *testing.T) {
	if testing.Short() {
		t.Skip("replays whole real traces")
	}
	for _, file := range []bool{false, true} {
		t.Run(mode(file), func(t *testing.T) {
			on := replayCapture(t, "qemu-smt8-pingpong", nil, file)
			off := replayCapture(t, "qemu-smt8-pingpong", []string{"-newidle-bailout"}, file)
			lOn := on.Modeled.Scope(compare.CommScope("pingpong")).Wakeup
			lOff := off.Modeled.Scope(compare.CommScope("pingpong")).Wakeup
			rec := on.Recorded.Scope(compare.CommScope("pingpong")).Wakeup
			kOn, _ := knob(on, "newidle-bailout")
			kOff, _ := knob(off, "newidle-bailout")
			t.Logf("pair latency p50/mean: recorded %d/%d us, mainline %d/%d us, patch off %d/%d us; bailouts %d, walks the patch would end %d; newidle ns %d -> %d",
				rec.P50Ns/1000, rec.MeanNs/1000, lOn.P50Ns/1000, lOn.MeanNs/1000, lOff.P50Ns/1000, lOff.MeanNs/1000,
				kOn.Count, kOff.Count, on.Result.Counters["lb.newidle.ns"], off.Result.Counters["lb.newidle.ns"])
			if r := ratio(lOn.P50Ns, rec.P50Ns); r < 0.75 || r > 1.25 {
				t.Errorf("mainline: the pair's wakeup latency p50 is %.3f of the recording's, want within 25%%", r)
			}
			if kOn.Count <= 0 || kOff.Count <= 0 || !kOff.Toggled {
				t.Errorf("knob newidle-bailout: on %+v, off %+v: want it to fire both ways", kOn, kOff)
			}
			if off.Result.Counters["lb.newidle.ns"] <= on.Result.Counters["lb.newidle.ns"] {
				t.Errorf("patch off: newidle balancing takes %d ns, mainline %d: want more", off.Result.Counters["lb.newidle.ns"], on.Result.Counters["lb.newidle.ns"])
			}
			if r := ratio(lOff.MeanNs, lOn.MeanNs); r < 0.97 || r > 1.03 {
				t.Errorf("patch off: the pair's mean wakeup latency is %.3f of mainline's; the prediction pinned is no change within 3%%", r)
			}
		})
	}
}
