package policies

import (
	"path/filepath"
	"testing"

	"github.com/schedlens/schedlens/replay"
)

// knobOf returns the knob called name of a run, failing when the run does
// not report it.
func knobOf(t *testing.T, r *replay.Result, name string) replay.Knob {
	t.Helper()
	for _, k := range r.Knobs {
		if k.Name == name {
			return k
		}
	}
	t.Fatalf("%s: no knob %q in %+v", r.Policy, name, r.Knobs)
	return replay.Knob{}
}

func TestKnobTables(t *testing.T) {
	if len(Patches) != nPatches || len(featureNames) != nFeatures || Feature(1)<<nFeatures != featEnd {
		t.Fatalf("nPatches %d / nFeatures %d do not match %d patches, %d features", nPatches, nFeatures, len(Patches), len(featureNames))
	}
	for _, p := range Patches {
		if w, ok := knobWhat[p.Name]; !ok || w[0] == "" || w[1] == "" {
			t.Errorf("patch %s: no on/off description", p.Name)
		}
	}
	for _, n := range featureNames {
		_, counted := knobWhat[n.name]
		_, not := knobNotCounted[n.name]
		if counted == not {
			t.Errorf("feature %s: want exactly one of a description or a reason it is not counted", n.name)
		}
	}
}

// The patch decisions, evaluated on a model whose state is known: CPU 0
// runs a hog, CPU 1 is idle with nothing pending. Each call adds exactly
// the count the comment gives.
func TestKnobPatchDecisions(t *testing.T) {
	const src = `
topology symmetric 2
hz 250
end 1ms
task hog on 0
  forever
`
	for _, policy := range []string{"6.12", "6.12,-lb-util-shr-bound,-newidle-bailout"} {
		t.Run(policy, func(t *testing.T) {
			_, _, m := run(t, src, policy, 0)
			count := func(p Patch) int64 { return *m.k.patch[patchIndex(p)] }
			on := m.cfg.With(PatchLBUtilShrBound)

			// seed 001: util 512 against an imbalance of 383 (a little
			// CPU's spare capacity). Before a failure both tests refuse;
			// after one, 512 >> 1 = 256 fits with the patch only.
			before := count(PatchLBUtilShrBound)
			env := &lbEnv{sd: &schedDomain{}, imbalance: 383}
			if !m.utilTooBig(512, env) || count(PatchLBUtilShrBound) != before {
				t.Errorf("no failure: want refused and no count")
			}
			env.sd.nrBalanceFailed = 1
			if m.utilTooBig(512, env) != !on || count(PatchLBUtilShrBound) != before+1 {
				t.Errorf("one failure: refused %v (patch %v), count +%d, want +1", m.utilTooBig(512, env), on, count(PatchLBUtilShrBound)-before)
			}
			if m.utilTooBig(300, env) || count(PatchLBUtilShrBound) != before+1 {
				t.Errorf("util 300 fits either way: want no count")
			}

			// seed 003: CPU 0 has a task, CPU 1 none and no wakeup pending.
			before = count(PatchNewidleBailout)
			if got := m.newidleBailout(0); got != on || count(PatchNewidleBailout) != before+1 {
				t.Errorf("CPU 0 (busy): bail %v, count +%d; want bail %v, +1", got, count(PatchNewidleBailout)-before, on)
			}
			if m.newidleBailout(1) || count(PatchNewidleBailout) != before+1 {
				t.Errorf("CPU 1 (idle): want no bail and no count")
			}
		})
	}
}

// TestKnobCountsByHand runs TestRunToParity's case: h (picked at 0 with a
// half slice, protected) and w (nice -10) waking at 0.2 ms with the
// earlier deadline, on one CPU at HZ 100.
func TestKnobCountsByHand(t *testing.T) {
	const src = `
topology symmetric 1
hz 100
end 30ms
task h
  forever
task w nice -10
  sleep 200us
  run 100us
`
	tests := []struct {
		policy, knob string
		on           bool
		want         int64
		why          string
	}{
		// NO_RUN_TO_PARITY: at w's wakeup the check's pick and then the
		// schedule's pick choose w where the protection would keep h.
		{"6.12,NO_RUN_TO_PARITY", "RUN_TO_PARITY", false, 2, "two picks switch away from the protected h"},
		{"6.6,NO_RUN_TO_PARITY", "RUN_TO_PARITY", false, 2, "as 6.12"},
		// 6.18 at one CPU: the vprot horizon is the deadline under both
		// settings (the slice is the base slice), so nothing differs.
		{"6.18,NO_RUN_TO_PARITY", "RUN_TO_PARITY", false, 0, "the horizon is the deadline either way"},
		// h is the one new task (w starts asleep and wakes).
		{"6.12,NO_PLACE_DEADLINE_INITIAL", "PLACE_DEADLINE_INITIAL", false, 1, "h's first deadline"},
		// RUN_TO_PARITY keeps h against w: the check says no either way.
		{"6.12,NO_WAKEUP_PREEMPTION", "WAKEUP_PREEMPTION", false, 0, "the protected h is kept either way"},
		// Without the protection, w's wakeup preempts h: one wakeup.
		{"6.12,NO_RUN_TO_PARITY,NO_WAKEUP_PREEMPTION", "WAKEUP_PREEMPTION", false, 1, "w's wakeup would preempt"},
		{"6.12,NO_RUN_TO_PARITY", "newidle-bailout", true, 0, "one CPU: no balancing"},
	}
	for _, tc := range tests {
		t.Run(tc.policy+"/"+tc.knob, func(t *testing.T) {
			r, _, _ := run(t, src, tc.policy, 0)
			k := knobOf(t, r, tc.knob)
			if k.Count != tc.want || k.On != tc.on {
				t.Errorf("%s: %s, want on=%v count %d (%s)", tc.policy, k.Line(), tc.on, tc.want, tc.why)
			}
			if k.NeverFired() != (k.Toggled && tc.want == 0) {
				t.Errorf("%s: never fired %v", k.Name, k.NeverFired())
			}
		})
	}
}

func TestKnobsReport(t *testing.T) {
	r, _, _ := run(t, "topology symmetric 1\nend 1ms\ntask a\n  forever\n", "6.12,+lb-eligible-first,-newidle-bailout,NO_RUN_TO_PARITY,PROTECT_VPROT", 0)
	want := []struct {
		name        string
		on, toggled bool
	}{
		{"lb-eligible-first", true, true}, {"lb-util-shr-bound", true, false}, {"resched-ineligible", false, false},
		{"newidle-bailout", false, true}, {"coresched-idle-ipi", false, false},
		{"RUN_TO_PARITY", false, true}, {"PROTECT_VPROT", true, true},
	}
	if len(r.Knobs) != len(want) {
		t.Fatalf("knobs %+v, want %d", r.Knobs, len(want))
	}
	for i, w := range want {
		k := r.Knobs[i]
		if k.Name != w.name || k.On != w.on || k.Toggled != w.toggled || k.What == "" {
			t.Errorf("knob %d = %+v, want %+v", i, k, w)
		}
	}
	if k := r.Knobs[6]; !k.NotCounted || k.NeverFired() {
		t.Errorf("PROTECT_VPROT: %+v, want not counted and no never-fired warning", k)
	}
	if w := r.Knobs[0].Warning(); w == "" {
		t.Errorf("lb-eligible-first toggled on one CPU: want a never-fired warning")
	}
}

// TestKnobCountingLeavesRunAlone: evaluating a feature's other setting
// must not change the run (an extra PELT update at a point the run does
// not make one moves floating-point sums). Each toggled feature replays a
// real capture (the 2-CPU oracle-busy run: wake_affine, idle scans,
// balancing) with and without its alternative evaluated; the timelines
// must be the same.
func TestKnobCountingLeavesRunAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a real capture 2 x 8 times")
	}
	path := filepath.Join("..", "fixtures", "real", "ftrace-oracle-busy", "trace.txt.zst")
	tl, topo := loadReal(t, path)
	w, err := replay.Extract(tl, topo)
	if err != nil {
		t.Fatal(err)
	}
	for _, policy := range []string{"6.12,NO_WA_WEIGHT", "6.12,NO_WA_BIAS", "6.12,NO_UTIL_EST", "6.12,NO_SIS_UTIL",
		"6.18,NO_RUN_TO_PARITY", "6.12,LB_MIN,NO_DELAY_DEQUEUE", "6.12,WAKEUP_PICK,NO_WAKEUP_PREEMPTION", "6.6,NO_CORE_SYNC,NO_NONTASK_CAPACITY"} {
		cfg, err := Parse(policy)
		if err != nil {
			t.Fatal(err)
		}
		var runs [2]*replay.Result
		for i, noWatch := range []bool{false, true} {
			m, _ := New(cfg)
			m.k.noWatch = noWatch
			if runs[i], err = replay.Simulate(w, topo, m, replay.CalibratedOptions(w)); err != nil {
				t.Fatal(err)
			}
		}
		a, b := runs[0].Timeline, runs[1].Timeline
		same := a.Len() == b.Len()
		for i := 0; same && i < a.Len(); i++ {
			same = a.Event(i) == b.Event(i)
		}
		if !same {
			t.Errorf("%s: counting changed the run (%d vs %d events)", policy, a.Len(), b.Len())
		}
		if len(runs[0].Knobs) <= len(runs[1].Knobs) {
			t.Errorf("%s: no feature knob reported with counting on", policy)
		}
	}
}
