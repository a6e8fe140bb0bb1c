package replay

import (
	"encoding/json"
	"errors"
	"github.com/schedlens/schedlens/topology"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

func TestParseSpecCompiles(t *testing.T) {
	sp := mustSpec(t, `
name demo   # a comment
hz 1000
end 2s
seed 9
topology smt 2 2
task a{i} x2 nice -5 cpus {i} on {i}
  repeat 2 {
    run {100+i*50}us
    wake b{i} sync
    wait b{i}
  }
  block
task b{i} x2
  repeat 2 {
    wait a{i}
    run 1ms
    wake a{i}
  }
task r rt 10 tid 77
  periodic 1ms
  run 5us
  until 5ms
  run 1us
  irq 20us cpu 3
  run 2us
  forever
task parent
  run 1ms
  fork kid
task kid start fork policy batch
  run 2ms
  affinity 3ms 0-1
  sleep 1.5ms
  run 1ms
`)
	w := sp.Workload
	if sp.Name != "demo" || sp.HZ != 1000 || sp.End != 2_000_000_000 || sp.Seed != 9 {
		t.Errorf("header = %q %d %d %d, want demo 1000 2s 9", sp.Name, sp.HZ, sp.End, sp.Seed)
	}
	if got := len(sp.Topology.CPUs); got != 4 {
		t.Fatalf("CPUs = %d, want 4", got)
	}
	if sp.Topology.CPUs[0].Core != sp.Topology.CPUs[2].Core {
		t.Errorf("smt 2 2: CPUs 0 and 2 should be siblings, got cores %d %d", sp.Topology.CPUs[0].Core, sp.Topology.CPUs[2].Core)
	}
	byName := map[string]*Task{}
	for i := range w.Tasks {
		byName[w.Tasks[i].Comm] = &w.Tasks[i]
	}
	a1 := byName["a1"]
	if a1 == nil || a1.Prio != 115 || a1.CPU != 1 || !a1.CPUs.Has(1) || a1.CPUs.Count() != 1 || a1.End != EndSleep {
		t.Fatalf("a1 = %+v, want prio 115 pinned to CPU 1, ending asleep", a1)
	}
	// a1: seg0 start + 150us, seg1 woken by b1 + 150us, seg2 woken by b1 (0 work).
	if len(a1.Segments) != 3 || a1.Segments[0].Work != 150_000 || a1.Segments[1].Work != 150_000 {
		t.Errorf("a1 segments = %+v", a1.Segments)
	}
	if wk := a1.Segments[1].Wake; wk.Kind != WakeTask || w.Tasks[wk.Waker].Comm != "b1" || wk.Work != 1_000_000 {
		t.Errorf("a1 second wake = %+v, want b1 at 1 ms of its work", wk)
	}
	b1 := byName["b1"]
	if wk := b1.Segments[0].Wake; wk.Kind != WakeTask || wk.Work != 150_000 || !wk.Sync {
		t.Errorf("b1 first wake = %+v, want a sync wake by a1 at 150 us", wk)
	}
	r := byName["r"]
	if r.TID != 77 || r.Prio != 89 || r.EffectivePolicy() != PolicyFIFO || r.End != EndRun {
		t.Errorf("r = tid %d prio %d policy %v end %v, want 77 89 fifo run", r.TID, r.Prio, r.EffectivePolicy(), r.End)
	}
	if wk := r.Segments[0].Wake; wk.Kind != WakeTimer || wk.Period != 1_000_000 || wk.Delay != 1_000_000 {
		t.Errorf("r first wake = %+v, want a 1 ms periodic timer", wk)
	}
	if wk := r.Segments[1].Wake; wk.Kind != WakeAt || wk.At != 5_000_000 {
		t.Errorf("r second wake = %+v, want an outside wake at 5 ms", wk)
	}
	if wk := r.Segments[2].Wake; wk.Kind != WakeIRQ || wk.Delay != 20_000 || wk.CPU != 3 {
		t.Errorf("r third wake = %+v, want an irq 20 us later on CPU 3", wk)
	}
	kid := byName["kid"]
	if wk := kid.Segments[0].Wake; wk.Kind != WakeFork || w.Tasks[wk.Waker].Comm != "parent" || wk.Work != 1_000_000 {
		t.Errorf("kid first wake = %+v, want a fork by parent at 1 ms", wk)
	}
	if kid.Policy != PolicyBatch || len(kid.Affinity) != 1 || kid.Affinity[0].At != 3_000_000 || kid.Affinity[0].CPUs.String() != "0-1" {
		t.Errorf("kid policy %v affinity %+v, want batch and 0-1 at 3 ms", kid.Policy, kid.Affinity)
	}
}

func TestParseSpecErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown-keyword", "frobnicate 3\n", `test.spec:1: frobnicate: unknown top-level keyword`},
		{"statement-outside", "run 1ms\n", `test.spec:1: run: unknown top-level keyword, or a task statement outside a task`},
		{"bad-duration", "task a\n  run 3 parsecs\n", `test.spec:2: run: want one duration like 10us, got "3 parsecs"`},
		{"bad-duration-unit", "task a\n  run 3yr\n", `test.spec:2: run: want a duration like 10us, got "3yr"`},
		{"unknown-target", "task a\n  wake b\n", `test.spec:2: wake: no task named "b"`},
		{"self-wake", "task a\n  wake a\n", `test.spec:2: wake: a task cannot wake itself`},
		{"unbalanced", "task a\n  wait b\ntask b\n  run 1ms\n", `test.spec:1: task a: waits for b 1 time\(s\) but b wakes it 0 time\(s\)`},
		{"surplus-wake", "task a\n  run 1ms\ntask b\n  wake a\n", `test.spec:4: wake a: b wakes a 1 time\(s\) but a never waits for it`},
		{"unclosed", "task a\n  repeat 2 {\n    run 1ms\n", `test.spec:2: repeat: block not closed at end of file`},
		{"stray-brace", "task a\n  }\n", `test.spec:2: }: no repeat block to close`},
		{"bad-repeat", "task a\n  repeat x {\n  }\n", `test.spec:2: repeat: count "x"`},
		{"nice-range", "task a nice 40\n  run 1ms\n", `test.spec:1: task a: option "nice": want -20..19, got "40"`},
		{"unknown-option", "task a fast\n  run 1ms\n", `test.spec:1: task a: unknown option "fast"`},
		{"fork-nobody", "task a start fork\n  run 1ms\n", `test.spec:1: task a: declared "start fork" but no task forks it`},
		{"after-end", "task a\n  exit\n  run 1ms\n", `test.spec:3: run: statement after the task's end`},
		{"dup-task", "task a\n  run 1ms\ntask a\n  run 1ms\n", `test.spec:3: task a: declared twice`},
		{"bad-cpu-line", "cpu 1 cap=1024\n", `test.spec:1: cpu: want CPU 0 next, got "1"`},
		{"bad-topology", "cpu 0 cap=512\n", `test.spec:1: topology: invalid topology: highest capacity is 512`},
		{"cpu-out-of-range", "topology symmetric 2\ntask a cpus 5\n  run 1ms\n", `test.spec:1: workload: task 0 \(a\): cpus 5 names CPU 5, the machine has 2`},
		{"bad-template", "task a{i x2\n  run 1ms\n", `test.spec:1: task a\{i: unclosed \{`},
		{"too-big", "task a\n  repeat 100000000 {\n    repeat 100000000 {\n      run 1ns\n    }\n  }\n", `spec too large`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec(strings.NewReader(tc.src), "test.spec")
			if err == nil {
				t.Fatalf("ParseSpec succeeded, want error matching %q", tc.want)
			}
			if !regexp.MustCompile(tc.want).MatchString(err.Error()) {
				t.Errorf("error = %q, want match for %q", err, tc.want)
			}
			var se *SpecError
			if !errors.As(err, &se) || se.Line < 1 {
				t.Errorf("error %v is not a positioned *SpecError", err)
			}
		})
	}
}

func TestDurations(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"100", 100}, {"100ns", 100}, {"2us", 2000}, {"2µs", 2000}, {"1.5ms", 1_500_000}, {"3s", 3_000_000_000}, {"0.25s", 250_000_000},
	}
	for _, tc := range tests {
		got, err := parseDuration(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseDuration(%q) = %d, %v, want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "ms", "-1ms", "1e30s", "NaNs", "1m"} {
		if _, err := parseDuration(bad); err == nil {
			t.Errorf("parseDuration(%q) succeeded, want an error", bad)
		}
	}
}

func TestTemplateExpressions(t *testing.T) {
	tests := []struct {
		in   string
		i    int
		want string
	}{
		{"w{i}", 3, "w3"}, {"w{(i+1)%4}", 3, "w0"}, {"{100+50*(i%3)}us", 5, "200us"}, {"{i/2}-{i*2}", 5, "2-10"}, {"plain", 1, "plain"},
	}
	for _, tc := range tests {
		if got, err := expand(tc.in, tc.i); err != nil || got != tc.want {
			t.Errorf("expand(%q, %d) = %q, %v, want %q", tc.in, tc.i, got, err, tc.want)
		}
	}
	for _, bad := range []string{"{i", "{}", "{i/0}", "{j}", "{(i}", "{i+}"} {
		if _, err := expand(bad, 1); err == nil {
			t.Errorf("expand(%q) succeeded, want an error", bad)
		}
	}
}

func TestWorkloadJSONRoundTrip(t *testing.T) {
	sp := mustSpec(t, `
topology symmetric 2
task a cpus 0-1 cookie 3
  periodic 1ms
  run 10us
  wake b sync
  irq 5us cpu 1
  until 9ms
  affinity 2ms 1
task b start 1ms kthread prio 99
  wait a
  run 1ms
  forever
`)
	w := sp.Workload
	w.End = 10_000_000
	w.Assumptions = []Assumption{{Name: AssumeNoSync, Detail: "x", Tasks: 2}}
	b, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var back Workload
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("Unmarshal: %v\n%s", err, b)
	}
	if !reflect.DeepEqual(&back, w) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", back, *w)
	}
	if !strings.Contains(string(b), `"cpus": "0-1"`) || !strings.Contains(string(b), `"kind": "timer"`) {
		t.Errorf("JSON does not use the readable forms:\n%s", b)
	}
	// A wake without "cpu" means the task's CPU.
	var wk Wake
	if err := json.Unmarshal([]byte(`{"kind":"irq","delay":5}`), &wk); err != nil || wk.CPU != -1 {
		t.Errorf("Wake without cpu = %+v, %v, want CPU -1", wk, err)
	}
}

func TestWorkloadValidate(t *testing.T) {
	base := func() *Workload {
		return &Workload{Tasks: []Task{
			{TID: 1, Comm: "a", Prio: 120, CPU: -1, Segments: []Segment{{Wake: Wake{Kind: WakeStart, CPU: -1}, Work: 10}}},
			{TID: 2, Comm: "b", Prio: 120, CPU: -1, Segments: []Segment{{Wake: Wake{Kind: WakeTask, Waker: 0, Work: 5, CPU: -1}, Work: 10}}},
		}}
	}
	tests := []struct {
		name  string
		edit  func(w *Workload)
		error string
	}{
		{"ok", func(w *Workload) {}, ""},
		{"no-segments", func(w *Workload) { w.Tasks[0].Segments = nil }, "no segments"},
		{"bad-prio", func(w *Workload) { w.Tasks[0].Prio = 140 }, "prio 140"},
		{"negative-work", func(w *Workload) { w.Tasks[0].Segments[0].Work = -1 }, "negative work"},
		{"waker-range", func(w *Workload) { w.Tasks[1].Segments[0].Wake.Waker = 9 }, "waker 9 out of range"},
		{"self", func(w *Workload) { w.Tasks[1].Segments[0].Wake.Waker = 1 }, "cannot wake itself"},
		{"fork-later", func(w *Workload) {
			w.Tasks[1].Segments = append(w.Tasks[1].Segments, Segment{Wake: Wake{Kind: WakeFork, Waker: 0}})
		}, "only start the first segment"},
		{"fork-cycle", func(w *Workload) {
			w.Tasks[0].Segments[0].Wake = Wake{Kind: WakeFork, Waker: 1}
			w.Tasks[1].Segments[0].Wake = Wake{Kind: WakeFork, Waker: 0}
		}, "fork cycle"},
		{"cpu-range", func(w *Workload) { w.Tasks[0].CPUs = topology.NewCPUSet(7) }, "names CPU 7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := base()
			tc.edit(w)
			err := w.Validate(4)
			switch {
			case tc.error == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tc.error != "" && (err == nil || !strings.Contains(err.Error(), tc.error)):
				t.Errorf("Validate = %v, want an error containing %q", err, tc.error)
			}
		})
	}
}

func TestSimulateRejectsEndlessRun(t *testing.T) {
	sp := mustSpec(t, "topology symmetric 1\ntask a\n  forever\n")
	if _, err := Simulate(sp.Workload, sp.Topology, newFIFO(0), Options{}); err == nil || !strings.Contains(err.Error(), "no end") {
		t.Errorf("Simulate = %v, want an error about the missing end", err)
	}
}

// FuzzParseSpec checks the spec parser on arbitrary input: no panic; a
// parsed workload validates, survives a JSON round trip, and replays under
// the test policy without giving any task more work than its demand.
func FuzzParseSpec(f *testing.F) {
	// The scenarios, scaled down so that each run stays quick.
	small := regexp.MustCompile(`repeat [0-9]+`)
	files, _ := filepath.Glob("../policies/scenarios/*.spec")
	for _, fn := range files {
		if b, err := os.ReadFile(fn); err == nil {
			f.Add(small.ReplaceAllString(string(b), "repeat 3"))
		}
	}
	f.Add(small.ReplaceAllString(benchRing, "repeat 3"))
	f.Add("topology symmetric 2\ntask a\n  run 1ms\n  wake b\ntask b\n  wait a\n  sleep 1ms\n  periodic 2ms\n  run 1us\n")
	f.Add("topology symmetric 2\ngroup g weight 300\ngroup h nice -3\ntask a group g\n  run 1ms\n  wake b\ntask b group h\n  wait a\n  run 1us\n")
	f.Fuzz(func(t *testing.T, src string) {
		sp, err := ParseSpec(strings.NewReader(src), "fuzz.spec")
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *SpecError", err)
			}
			return
		}
		w := sp.Workload
		ncpu := 0
		if sp.Topology != nil {
			ncpu = len(sp.Topology.CPUs)
		}
		if err := w.Validate(ncpu); err != nil {
			t.Fatalf("parsed workload does not validate: %v", err)
		}
		nseg := 0
		for _, tk := range w.Tasks {
			nseg += len(tk.Segments)
		}
		if nseg > 5000 {
			return
		}
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		var back Workload
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("JSON round trip: %v", err)
		}
		if !reflect.DeepEqual(&back, w) {
			t.Fatalf("JSON round trip changed the workload")
		}
		if sp.Topology == nil || len(sp.Topology.CPUs) > 64 {
			return
		}
		r, err := Simulate(w, sp.Topology, newFIFO(1_000_000), Options{HZ: 1000, End: timeline.Time(w.Start + 200_000_000), MaxEvents: 2_000_000})
		if err != nil {
			if errors.Is(err, ErrTooManyEvents) {
				return
			}
			t.Fatalf("Simulate: %v", err)
		}
		for i, tr := range r.Tasks {
			if d := w.Tasks[i].Demand(); w.Tasks[i].End != EndRun && tr.Work > d {
				t.Errorf("task %d did %d of work, demand %d", i, tr.Work, d)
			}
		}
	})
}
