package policies

import (
	"slices"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
)

// run parses src, replays it under policy with the spec's HZ and end, no
// IPI delay (so that schedules can be computed by hand) unless ipi > 0.
func run(t testing.TB, src, policy string, ipi int64) (*replay.Result, *replay.Spec, *Model) {
	t.Helper()
	sp, err := replay.ParseSpec(strings.NewReader(src), t.Name()+".spec")
	if err != nil {
		t.Fatalf("ParseSpec: %v", err)
	}
	return runSpec(t, sp, policy, ipi)
}

func runSpec(t testing.TB, sp *replay.Spec, policy string, ipi int64) (*replay.Result, *replay.Spec, *Model) {
	t.Helper()
	return runSpecSeed(t, sp, policy, ipi, 0)
}

// runSpecSeed is runSpec with another random seed (0: the spec's).
func runSpecSeed(t testing.TB, sp *replay.Spec, policy string, ipi int64, seed uint64) (*replay.Result, *replay.Spec, *Model) {
	t.Helper()
	cfg, err := Parse(policy)
	if err != nil {
		t.Fatalf("Parse(%q): %v", policy, err)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := sp.Options()
	if seed != 0 {
		opts.Seed = seed
	}
	opts.IPIDelay, opts.IPIJitter = ipi, 0
	if ipi < 0 {
		opts.IPIDelay, opts.IPIJitter = 2000, 2000
	}
	r, err := replay.Simulate(sp.Workload, sp.Topology, m, opts)
	if err != nil {
		t.Fatalf("Simulate(%s): %v", policy, err)
	}
	// A replayed timeline must be consistent: every switch-out names the
	// task the previous switch put there, no task runs on two CPUs, no
	// sleeping task is switched in without a wakeup.
	if n := len(r.Timeline.Inconsistencies()); n > 0 {
		inc := r.Timeline.Inconsistencies()[0]
		t.Errorf("%s: %d timeline inconsistencies, first %v at %s on CPU %d (task %s)", policy, n, inc.Kind, inc.Time.Seconds(), inc.CPU, r.Timeline.TaskName(inc.Got))
	}
	return r, sp, m
}

// taskIndex returns the index of the task called name.
func taskIndex(t testing.TB, sp *replay.Spec, name string) int {
	t.Helper()
	for i, tk := range sp.Workload.Tasks {
		if tk.Comm == name {
			return i
		}
	}
	t.Fatalf("no task %q", name)
	return -1
}

type switchEv struct {
	at         timeline.Time
	cpu        int
	prev, next string
	state      timeline.State
}

// switches lists the sched_switch events of the timeline (on cpu, or all
// CPUs when cpu < 0).
func switches(tl *timeline.Timeline, cpu int) []switchEv {
	var out []switchEv
	for i := 0; i < tl.Len(); i++ {
		if tl.Kinds[i] != timeline.KindSwitch || (cpu >= 0 && int(tl.CPUs[i]) != cpu) {
			continue
		}
		e := tl.Event(i)
		out = append(out, switchEv{at: e.Time, cpu: int(e.CPU), prev: tl.Strings.Get(e.OComm), next: tl.Strings.Get(e.Comm), state: e.State})
	}
	return out
}

type migrateEv struct {
	at       timeline.Time
	task     string
	from, to int
}

func migrations(tl *timeline.Timeline) []migrateEv {
	var out []migrateEv
	for i := 0; i < tl.Len(); i++ {
		if tl.Kinds[i] != timeline.KindMigrate {
			continue
		}
		e := tl.Event(i)
		out = append(out, migrateEv{at: e.Time, task: tl.Strings.Get(e.Comm), from: int(e.Arg2), to: int(e.Arg)})
	}
	return out
}

// firstSwitchIn returns the first time task name is switched in at or
// after from, and on which CPU; -1 if never.
func firstSwitchIn(tl *timeline.Timeline, name string, from timeline.Time) (timeline.Time, int) {
	for _, s := range switches(tl, -1) {
		if s.next == name && s.at >= from {
			return s.at, s.cpu
		}
	}
	return -1, -1
}

// wakeLatencies returns task name's wakeup latencies (waking to
// switch-in, ns) whose waking is at or after from.
func wakeLatencies(tl *timeline.Timeline, name string, from timeline.Time) []int64 {
	var out []int64
	var wakeAt timeline.Time = -1
	for i := 0; i < tl.Len(); i++ {
		if tl.Strings.Get(tl.Comms[i]) != name {
			continue
		}
		switch tl.Kinds[i] {
		case timeline.KindWaking:
			wakeAt = tl.Times[i]
		case timeline.KindSwitch:
			if wakeAt >= from {
				out = append(out, int64(tl.Times[i]-wakeAt))
			}
			wakeAt = -1
		}
	}
	return out
}

func meanMax(v []int64) (mean, mx int64) {
	if len(v) == 0 {
		return 0, 0
	}
	var s int64
	for _, x := range v {
		s += x
		mx = max(mx, x)
	}
	return s / int64(len(v)), mx
}

// noiseSeeds are the extra seeds a headline is checked over: a result is
// only the patch's when it holds beyond the model's seed-to-seed spread.
var noiseSeeds = []uint64{11, 12, 13, 14}

// headlineOverSeeds runs the spec under base and patched with each of
// noiseSeeds (IPI model as runSpec's ipi < 0) and returns the figure f of
// every run of each side.
func headlineOverSeeds(t *testing.T, sp *replay.Spec, base, patched string, f func(*replay.Result) float64) (b, p []float64) {
	t.Helper()
	for _, seed := range noiseSeeds {
		rb, _, _ := runSpecSeed(t, sp, base, -1, seed)
		rp, _, _ := runSpecSeed(t, sp, patched, -1, seed)
		b, p = append(b, f(rb)), append(p, f(rp))
	}
	return b, p
}

// beyondSpread checks that every patched figure lies on the want side
// (-1: below, +1: above) of every base figure: the change is outside the
// seed-to-seed spread of both sides.
func beyondSpread(t *testing.T, what string, b, p []float64, want int) {
	t.Helper()
	lo, hi := slices.Min(b), slices.Max(b)
	plo, phi := slices.Min(p), slices.Max(p)
	t.Logf("%s over seeds %v: base %.4g..%.4g, patched %.4g..%.4g", what, noiseSeeds, lo, hi, plo, phi)
	if (want < 0 && phi >= lo) || (want > 0 && plo <= hi) {
		t.Errorf("%s: patched %.4g..%.4g is not beyond the base's seed spread %.4g..%.4g (want it %s)", what, plo, phi, lo, hi, map[int]string{-1: "below", 1: "above"}[want])
	}
}
