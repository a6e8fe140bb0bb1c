package affinity

import (
	"testing"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

const ms = timeline.Time(1_000_000)

// longWait is a wait of 2 ms ending at end, before a run on cpu, while the
// CPUs in idle sat idle.
func longWait(end timeline.Time, cpu int, idle ...int) wait {
	return wait{start: end - 2*ms, end: end, cpu: cpu, idle: topology.NewCPUSet(idle...)}
}

// quiet gives w the long waits before it, quiet ones included.
func quiet(w wait, before int) wait {
	w.before = before
	return w
}

// TestStretches works small cases by hand: which stretches a task's runs
// and long waits make.
func TestStretches(t *testing.T) {
	o := InferOptions{}.withDefaults()
	type want struct {
		from, to timeline.Time
		cpus     string // "" = free
		ev       int
	}
	// The runs are given by their ends (a task's stretches read nothing
	// else of them).
	cases := []struct {
		name  string
		runs  []run
		waits []wait
		total int // long waits, quiet ones included; 0: len(waits)
		want  []want
	}{{
		name: "no long waits: free",
		runs: []run{{cpu: 1, end: ms}, {cpu: 2, end: 3 * ms}},
		want: []want{{timeline.NoTime, timeline.NoTime, "", 0}},
	}, {
		// A hog first runs on its parent's CPU 0, then pins itself to 1
		// and waits there three times while CPU 2 idles.
		name: "first run elsewhere, then pinned",
		runs: []run{{cpu: 0, end: ms}, {cpu: 1, end: 3 * ms, waits: 0},
			{cpu: 1, end: 7 * ms, waits: 1}, {cpu: 1, end: 11 * ms, waits: 2}, {cpu: 1, end: 15 * ms, waits: 3}},
		waits: []wait{longWait(6*ms, 1, 2), longWait(10*ms, 1, 2), longWait(14*ms, 1, 2, 3)},
		want:  []want{{timeline.NoTime, ms, "", 0}, {ms, timeline.NoTime, "1", 3}},
	}, {
		// Pinned to 1, released: the first run on CPU 3 ends the stretch
		// at the end of the run before it; the rest has no evidence.
		name: "pinned, then released",
		runs: []run{{cpu: 1, end: ms}, {cpu: 1, end: 4 * ms, waits: 1},
			{cpu: 1, end: 7 * ms, waits: 2}, {cpu: 1, end: 10 * ms, waits: 3},
			{cpu: 3, end: 12 * ms, waits: 3}, {cpu: 4, end: 14 * ms, waits: 3}},
		waits: []wait{longWait(3*ms, 1, 0), longWait(6*ms, 1, 0), longWait(9*ms, 1, 5)},
		want:  []want{{timeline.NoTime, 10 * ms, "1", 3}, {10 * ms, timeline.NoTime, "", 0}},
	}, {
		// Two waits with an idle CPU elsewhere are not enough.
		name:  "too little evidence",
		runs:  []run{{cpu: 1, end: ms}, {cpu: 1, end: 4 * ms, waits: 1}, {cpu: 1, end: 7 * ms, waits: 2}},
		waits: []wait{longWait(3*ms, 1, 0), longWait(6*ms, 1, 0)},
		want:  []want{{timeline.NoTime, timeline.NoTime, "", 0}},
	}, {
		// Three of seven long waits had an idle CPU: under half, free.
		name: "evidence under half of the long waits",
		runs: []run{{cpu: 1, end: ms}, {cpu: 1, end: 101 * ms, waits: 7}},
		waits: []wait{longWait(10*ms, 1, 0), longWait(20*ms, 1, 0), longWait(30*ms, 1, 0),
			longWait(40*ms, 1), longWait(50*ms, 1), longWait(60*ms, 1), longWait(70*ms, 1)},
		want: []want{{timeline.NoTime, timeline.NoTime, "", 0}},
	}, {
		// The same, the quiet waits counted and not logged (as a walk
		// does): still under half.
		name:  "quiet waits counted, not logged",
		runs:  []run{{cpu: 1, end: ms}, {cpu: 1, end: 101 * ms, waits: 7}},
		waits: []wait{longWait(10*ms, 1, 0), longWait(20*ms, 1, 0), longWait(30*ms, 1, 0)},
		total: 7,
		want:  []want{{timeline.NoTime, timeline.NoTime, "", 0}},
	}, {
		// Pinned to 1 with three waits of evidence and three quiet ones
		// between them, then a run on CPU 3: half is enough.
		name: "pinned among quiet waits",
		runs: []run{{cpu: 1, end: ms}, {cpu: 1, end: 9 * ms, waits: 2},
			{cpu: 1, end: 17 * ms, waits: 4}, {cpu: 1, end: 25 * ms, waits: 6},
			{cpu: 3, end: 27 * ms, waits: 6}},
		waits: []wait{quiet(longWait(4*ms, 1, 0), 1), quiet(longWait(12*ms, 1, 0), 3), quiet(longWait(20*ms, 1, 2), 5)},
		total: 6,
		want:  []want{{timeline.NoTime, 25 * ms, "1", 3}, {25 * ms, timeline.NoTime, "", 0}},
	}, {
		// Its long waits all come after its last run (a run that was not
		// logged ends them): pinned to the CPU it ran on, nothing to shed.
		name:  "evidence after the last run",
		runs:  []run{{cpu: 0, end: ms}},
		waits: []wait{longWait(4*ms, 0, 1), longWait(8*ms, 0, 1), longWait(12*ms, 0, 1)},
		want:  []want{{timeline.NoTime, timeline.NoTime, "0", 3}},
	}, {
		// The only idle CPU is one the task itself ran on in the stretch:
		// no evidence.
		name: "idle CPU inside the set",
		runs: []run{{cpu: 1, end: ms}, {cpu: 2, end: 4 * ms, waits: 1}, {cpu: 1, end: 7 * ms, waits: 2},
			{cpu: 2, end: 10 * ms, waits: 3}},
		waits: []wait{longWait(3*ms, 2, 1), longWait(6*ms, 1, 2), longWait(9*ms, 2, 1)},
		want:  []want{{timeline.NoTime, timeline.NoTime, "", 0}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			total := tc.total
			if total == 0 {
				total = len(tc.waits)
				for i := range tc.waits {
					tc.waits[i].before = i
				}
			}
			got := stretches(tc.runs, tc.waits, total, o)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d stretches %+v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				cpus := ""
				if !g.cpus.Empty() {
					cpus = g.cpus.String()
				}
				if g.from != w.from || g.to != w.to || cpus != w.cpus || g.ev != w.ev {
					t.Errorf("stretch %d = {from %d to %d cpus %q ev %d}, want %+v", i, g.from, g.to, cpus, g.ev, w)
				}
			}
		})
	}
}

func TestIdleOverlap(t *testing.T) {
	spans := []span{{0, 10}, {20, 100}, {150, 160}}
	for _, tc := range []struct{ from, to, want timeline.Time }{
		{5, 25, 5}, {30, 40, 10}, {90, 155, 10}, {101, 149, 0}, {0, 200, 80},
	} {
		if got := idleOverlap(spans, tc.from, tc.to); got != tc.want {
			t.Errorf("idleOverlap(%d, %d) = %d, want %d", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestInferenceString(t *testing.T) {
	in := Inference{PID: 282, Comm: "hog-c1-0", CPUs: topology.NewCPUSet(1), From: 8_289_451_000, To: timeline.NoTime, Waits: 275}
	if got, want := in.String(), "hog-c1-0 (pid 282) on CPU 1 from 8.289451 s, 275 waits"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	in = Inference{PID: 7, Comm: "x", CPUs: topology.NewCPUSet(0, 2), From: timeline.NoTime, To: 2_000_000_000, Waits: 3}
	if got, want := in.String(), "x (pid 7) on CPUs 0,2 to 2.000000 s, 3 waits"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
