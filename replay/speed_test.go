package replay

import (
	"strings"
	"testing"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

func TestParseSpeedFile(t *testing.T) {
	got, err := ParseSpeedFile(strings.NewReader("# juno\n1-2 1024\n0,3-5 0.5 # little\n\n"), "speed.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []int{512, 1024, 1024, 512, 512, 512}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"0 1024\n1 2000\n", "speed.txt:2: speed \"2000\": want an integer 1..1024"},
		{"0 1024\n\n0-1 512\n", "speed.txt:3: CPU 0 already has a speed (line 1)"},
		{"0\n", "speed.txt:1: want \"CPULIST SPEED\""},
		{"x 12\n", "speed.txt:1: "},
		{"0 1.5\n", "speed.txt:1: speed \"1.5\": want a ratio in (0, 1]"},
		{"# nothing\n", "speed.txt: no \"CPULIST SPEED\" line"},
	} {
		_, err := ParseSpeedFile(strings.NewReader(tc.in), "speed.txt")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ParseSpeedFile(%q) error = %v, want prefix %q", tc.in, err, tc.want)
		}
	}
}

// TestCalibrateSpeedHandWorked checks both kinds of evidence on figures
// worked by hand.
func TestCalibrateSpeedHandWorked(t *testing.T) {
	perf := []int{1024, 512}
	var bursts []speedBurst
	// Task 7: 12 bursts of 1 ms on the fast class, 12 of 4 ms on the slow
	// one (one of them 1% elsewhere, still pure enough: 0.99 share).
	for i := 0; i < 12; i++ {
		bursts = append(bursts, speedBurst{task: 7, run: []int64{1_000_000, 0}}, speedBurst{task: 7, run: []int64{0, 4_000_000}})
	}
	// A mixed burst counts for neither side.
	bursts = append(bursts, speedBurst{task: 7, run: []int64{500_000, 500_000}})
	fits, _ := calibrateSpeed(perf, bursts, nil)
	if fits[1] == nil || fits[1].speed != 256 {
		t.Fatalf("burst fit = %+v, want speed 256 (1 ms / 4 ms)", fits[1])
	}
	if !strings.Contains(fits[1].evidence, "12 bursts on capacity 1024, 12 on capacity 512") {
		t.Errorf("evidence %q does not give the sample counts", fits[1].evidence)
	}
	// 9 bursts a side are too few: no fit from bursts, none from lives.
	fits, why := calibrateSpeed(perf, bursts[:18], nil)
	if fits[1] != nil || !strings.Contains(why[1], "no task ran 10 whole bursts") {
		t.Errorf("fit from 9 bursts = %+v (%s), want none", fits[1], why[1])
	}
	// Siblings of equal work W: t0 + 0.5 tk = 10 s.
	lives := []speedLife{
		{key: "3/w-", run: []int64{10e9, 0}},
		{key: "3/w-", run: []int64{8e9, 4e9}},
		{key: "3/w-", run: []int64{6e9, 8e9}},
		{key: "3/w-", run: []int64{4e9, 12e9}},
		{key: "4/w-", run: []int64{1e9, 1e9}}, // another parent: its own group, too small
	}
	fits, _ = calibrateSpeed(perf, nil, lives)
	if fits[1] == nil || fits[1].speed != 512 {
		t.Fatalf("sibling fit = %+v, want speed 512", fits[1])
	}
	// Equal times everywhere: no spread, no fit.
	flat := []speedLife{{key: "1/a", run: []int64{5e9, 5e9}}, {key: "1/a", run: []int64{5e9, 5e9}}, {key: "1/a", run: []int64{5e9, 5e9}}}
	if fits, why := calibrateSpeed(perf, nil, flat); fits[1] != nil || !strings.Contains(why[1], "too similar") {
		t.Errorf("flat siblings: fit %+v (%s), want none for lack of spread", fits[1], why[1])
	}
	// Siblings that did not do equal work: the residual rejects them.
	uneven := []speedLife{{key: "1/a", run: []int64{10e9, 0}}, {key: "1/a", run: []int64{1e9, 4e9}}, {key: "1/a", run: []int64{9e9, 8e9}}, {key: "1/a", run: []int64{2e9, 12e9}}}
	if fits, why := calibrateSpeed(perf, nil, uneven); fits[1] != nil || !strings.Contains(why[1], "do not fit equal work") {
		t.Errorf("uneven siblings: fit %+v (%s), want none", fits[1], why[1])
	}
}

// TestExtractSpeedEmulated builds the trace of a periodic task on a
// machine whose CPU 1 is labelled capacity 512 but runs as fast as CPU 0
// (an emulated guest): 12 bursts of 1 ms on each. Auto calibrates CPU 1 to
// 1024 and the demand is the run time; capacity halves CPU 1's share; a
// file and equal are taken as given.
func TestExtractSpeedEmulated(t *testing.T) {
	strs := timeline.NewStrings()
	b := timeline.NewBuilder(strs, 2)
	comm := func(s string) timeline.CommID { return strs.IDString(s) }
	for cpu := timeline.CPU(0); cpu < 2; cpu++ {
		b.Add(timeline.Event{Time: 0, CPU: cpu, Kind: timeline.KindBufferStart, Task: timeline.NoTID, Other: timeline.NoTID, Prio: -1, OPrio: -1, TGID: -1, Start: timeline.NoTime})
	}
	at := timeline.Time(1_000_000)
	for i := 0; i < 24; i++ {
		cpu := timeline.CPU(i / 12)
		idle := "swapper/" + string(rune('0'+cpu))
		b.Add(timeline.Event{Time: at, CPU: cpu, Kind: timeline.KindWaking, Task: 10, Comm: comm("tick"), Other: 0, OComm: comm(idle), Ctx: timeline.CtxHardirq, Prio: 120, OPrio: -1, Arg: int64(cpu), TGID: -1, Start: timeline.NoTime})
		b.Add(timeline.Event{Time: at + 10_000, CPU: cpu, Kind: timeline.KindSwitch, Other: 0, OComm: comm(idle), State: timeline.StateRunnable, Task: 10, Comm: comm("tick"), Prio: 120, OPrio: 120, TGID: -1, Start: timeline.NoTime})
		b.Add(timeline.Event{Time: at + 1_010_000, CPU: cpu, Kind: timeline.KindSwitch, Other: 10, OComm: comm("tick"), State: timeline.StateInterrupt, Task: 0, Comm: comm(idle), Prio: 120, OPrio: 120, TGID: -1, Start: timeline.NoTime})
		at += 4_000_000
	}
	tl, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	topo := topology.Symmetric(2)
	topo.CPUs[1].Capacity = 512
	demand := func(spec SpeedSpec) (int64, *Workload) {
		t.Helper()
		w, err := ExtractWith(tl, topo, ExtractOptions{Speed: spec})
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range w.Tasks {
			if tk.Comm == "tick" {
				return tk.Demand(), w
			}
		}
		t.Fatal("no task tick")
		return 0, nil
	}
	// Every burst begins with a recorded wakeup (the first one is the
	// task's first sight, an outside wakeup): 12 on each CPU.
	d, w := demand(SpeedSpec{})
	if d != 24_000_000 || w.Speed[1] != 1024 {
		t.Errorf("auto: demand %d, speeds %v; want 24 ms at speeds [1024 1024]", d, w.Speed)
	}
	note := speedNote(w)
	if !strings.Contains(note, "CPUs 1 (capacity 512) calibrated to speed 1024") || !strings.Contains(note, "12 bursts on capacity 1024, 12 on capacity 512") {
		t.Errorf("auto note %q lacks the evidence", note)
	}
	if d, w := demand(SpeedSpec{Mode: SpeedCapacity}); d != 18_000_000 || w.Speed[1] != 512 {
		t.Errorf("capacity: demand %d, speeds %v; want 12 + 12/2 = 18 ms", d, w.Speed)
	}
	if d, _ := demand(SpeedSpec{Mode: SpeedEqual}); d != 24_000_000 {
		t.Errorf("equal: demand %d, want 24 ms", d)
	}
	if d, _ := demand(SpeedSpec{Mode: SpeedTable, Table: []int{1024, 256}, Source: "f"}); d != 15_000_000 {
		t.Errorf("table: demand %d, want 12 + 12/4 = 15 ms", d)
	}
	if _, err := ExtractWith(tl, topo, ExtractOptions{Speed: SpeedSpec{Mode: SpeedTable, Table: []int{1024}, Source: "f"}}); err == nil || !strings.Contains(err.Error(), "CPU 1 has no speed") {
		t.Errorf("short table: error %v, want CPU 1 has no speed", err)
	}
	// The replay runs CPU 1 at the workload's speed: the task's CPU time
	// in the replay is its demand whichever CPU it runs on.
	_, w = demand(SpeedSpec{})
	res, err := Simulate(w, topo, newFIFO(0), Options{HZ: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for i, tk := range w.Tasks {
		if tk.Comm == "tick" && res.Tasks[i].CPUTime != 24_000_000 {
			t.Errorf("replayed CPU time %d, want 24 ms", res.Tasks[i].CPUTime)
		}
	}
}

func speedNote(w *Workload) string {
	for _, a := range w.Assumptions {
		if a.Name == AssumeCPUSpeed {
			return a.Detail
		}
	}
	return ""
}
