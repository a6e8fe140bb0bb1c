package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/compare"
)

func TestReplayJSONAndOutput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "replayed.pftrace")
	stdout, stderr, code := execute(t, "replay", "--format", "json", "-o", out, fx+"ftrace-oracle-busy/trace.txt.zst")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Policy   string              `json:"policy"`
		Fidelity map[string]any      `json:"fidelity"`
		Recorded compare.FiguresJSON `json:"recorded"`
		Modeled  compare.FiguresJSON `json:"modeled"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"wakeup_latency_p50_ratio", "wakeup_latency_p99_ratio", "runnable_ratio", "cpu_time_ratio", "migrations_ratio"} {
		if _, ok := doc.Fidelity[k].(float64); !ok {
			t.Errorf("fidelity.%s missing or not a number: %v", k, doc.Fidelity[k])
		}
	}
	if v, _ := doc.Fidelity["verdict"].(string); v != compare.Faithful && v != compare.PartlyFaithful && v != compare.NotFaithful {
		t.Errorf("fidelity.verdict = %v", doc.Fidelity["verdict"])
	}
	if cs, _ := doc.Fidelity["criteria"].([]any); len(cs) != 6 {
		t.Errorf("fidelity.criteria = %v, want 6 criteria", doc.Fidelity["criteria"])
	}
	if doc.Modeled.CPUTimeNs == 0 || doc.Recorded.CPUTimeNs == 0 {
		t.Errorf("no CPU time: %+v / %+v", doc.Recorded, doc.Modeled)
	}
	// The modeled schedule reads back as a trace.
	if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
		t.Fatalf("replayed trace: %v", err)
	}
	back, stderr, code := execute(t, "tasks", "--format", "json", out)
	if code != 0 || !strings.Contains(back, `"format": "perfetto"`) {
		t.Errorf("reading the replayed trace: exit %d %s", code, stderr)
	}
}

func TestReplayDeterministic(t *testing.T) {
	a, _, _ := execute(t, "replay", "--format", "json", "--seed", "7", fx+"ftrace-pipe-lost/trace.txt.gz")
	b, _, _ := execute(t, "replay", "--format", "json", "--seed", "7", fx+"ftrace-pipe-lost/trace.txt.gz")
	if a != b || a == "" {
		t.Errorf("two replays with the same seed differ")
	}
}

func TestReplayBadPolicy(t *testing.T) {
	_, stderr, code := execute(t, "replay", "--kernel", "2.6", fx+"ftrace-pipe-lost/trace.txt.gz")
	if code != 2 || !strings.Contains(stderr, "policy") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestReplayRestricted: --comm restricts the figures, the task table and
// the verdict to those tasks, and the output says so.
func TestReplayRestricted(t *testing.T) {
	trace := fx + "ftrace-pipe-lost/trace.txt.gz"
	all, stderr, code := execute(t, "replay", "--format", "json", trace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	one, stderr, code := execute(t, "replay", "--format", "json", "--comm", "hackbench", trace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	type doc struct {
		Filter   string              `json:"filter"`
		Recorded compare.FiguresJSON `json:"recorded"`
		Fidelity struct {
			Scope string `json:"scope"`
		} `json:"fidelity"`
		Tasks []struct {
			Comm string `json:"comm"`
		} `json:"tasks"`
	}
	var a, b doc
	if err := json.Unmarshal([]byte(all), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(one), &b); err != nil {
		t.Fatal(err)
	}
	if b.Filter != "comm hackbench" || b.Fidelity.Scope != "restricted" || a.Filter != "" || a.Fidelity.Scope != "overall" {
		t.Errorf("filter %q scope %q; unrestricted %q %q", b.Filter, b.Fidelity.Scope, a.Filter, a.Fidelity.Scope)
	}
	if b.Recorded.RunNs == 0 || b.Recorded.RunNs >= a.Recorded.RunNs {
		t.Errorf("restricted run_ns %d, all %d", b.Recorded.RunNs, a.Recorded.RunNs)
	}
	if len(b.Tasks) == 0 {
		t.Errorf("no tasks in the restricted table")
	}
	for _, tk := range b.Tasks {
		if tk.Comm != "hackbench" {
			t.Errorf("task %q in a table restricted to hackbench", tk.Comm)
		}
	}
	text, _, _ := execute(t, "replay", "--comm", "hackbench", trace)
	if !strings.Contains(text, "restricted to comm hackbench") || !strings.Contains(text, "over the selected tasks only") {
		t.Errorf("the text does not say it is restricted:\n%s", text)
	}
}

// TestReplayCPUSpeed: --cpu-speed takes equal, capacity or a file, whose
// errors give the line; the notes (text and JSON) say which speeds the
// replay used and where they came from, and price the newidle walk.
func TestReplayCPUSpeed(t *testing.T) {
	juno := fx + "qemu-juno-asym/trace.txt.zst"
	dir := t.TempDir()
	bad := filepath.Join(dir, "speed.txt")
	if err := os.WriteFile(bad, []byte("0-5 1024\n3 400\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := execute(t, "replay", "--cpu-speed", bad, juno)
	if code != 2 || !strings.Contains(stderr, "speed.txt:2: CPU 3 already has a speed (line 1)") {
		t.Errorf("bad speed file: exit %d, stderr %q", code, stderr)
	}
	out, stderr, code := execute(t, "replay", "--format", "json", "--cpu-speed", "equal", juno)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(doc.Notes, "\n")
	for _, want := range []string{"cpu-speed: --cpu-speed equal", "newidle-cost: ", "wake-delays: "} {
		if !strings.Contains(joined, want) {
			t.Errorf("JSON notes lack %q:\n%s", want, joined)
		}
	}
	text, _, _ := execute(t, "replay", juno)
	if !strings.Contains(text, "calibrated to speed") {
		t.Errorf("text notes do not give the calibrated speed:\n%s", text)
	}
}

// replayJSON runs replay with --format json and decodes what these tests
// read.
func replayJSON(t *testing.T, args ...string) (doc struct {
	Policy string             `json:"policy"`
	Knobs  []compare.KnobJSON `json:"knobs"`
	Notes  []string           `json:"notes"`
}) {
	t.Helper()
	stdout, stderr, code := execute(t, append([]string{"replay", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("replay %v: exit %d: %s", args, code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestReplayKnobs: the model's firing counts reach the report: every
// patch knob is listed, the toggled one says so, and a toggled knob that
// cannot fire (no core-scheduling cookies are traced) carries the warning.
func TestReplayKnobs(t *testing.T) {
	trace := fx + "qemu-juno-asym/trace.txt.zst"
	doc := replayJSON(t, "--kernel", "6.12", "--patch", "-lb-util-shr-bound,+coresched-idle-ipi", trace)
	if len(doc.Knobs) != 5 {
		t.Fatalf("knobs %+v, want the 5 patches", doc.Knobs)
	}
	byName := map[string]compare.KnobJSON{}
	for _, k := range doc.Knobs {
		byName[k.Name] = k
	}
	if k := byName["lb-util-shr-bound"]; !k.Toggled || k.On || k.What == "" || k.Count == 0 || k.NeverFired {
		t.Errorf("lb-util-shr-bound: %+v, want toggled off with its refusals counted", k)
	}
	if k := byName["coresched-idle-ipi"]; !k.Toggled || !k.On || !k.NeverFired || !strings.Contains(k.Warning, "never fired") {
		t.Errorf("coresched-idle-ipi: %+v, want a never-fired warning", k)
	}
	if k := byName["newidle-bailout"]; k.Toggled || !k.On || k.NeverFired {
		t.Errorf("newidle-bailout: %+v, want on by default, no warning", k)
	}
	text, _, _ := execute(t, "replay", "--kernel", "6.12", "--patch", "+coresched-idle-ipi", trace)
	if !strings.Contains(text, "warning: coresched-idle-ipi never fired") || !strings.Contains(text, "coresched-idle-ipi (on, toggled): 0") {
		t.Errorf("text lacks the knob line or its warning:\n%s", text)
	}
}

// TestReplayPatchSign: asking for what the kernel already is is an error
// naming the other sign.
func TestReplayPatchSign(t *testing.T) {
	trace := fx + "ftrace-pipe-lost/trace.txt.gz"
	for _, tc := range []struct{ patch, want string }{
		{"+newidle-bailout", "6.12 already has it (upstream: in 6.6, 6.12 and 6.18 (since about v6.0)); to model 6.12 without it, write -newidle-bailout"},
		{"newidle-bailout", "write -newidle-bailout"},
		{"-lb-eligible-first", "6.12 does not have it"},
	} {
		_, stderr, code := execute(t, "replay", "--kernel", "6.12", "--patch", tc.patch, trace)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("--patch %s: exit %d, stderr %q, want 2 and %q", tc.patch, code, stderr, tc.want)
		}
	}
}

// TestReplayKernelFromTrace: without --kernel the version follows the
// trace's release (meta.txt next to the two 6.12 guest captures), and the
// report says which and why; a trace that does not say gets the default as
// an assumption; an explicit --kernel that differs gets a note.
func TestReplayKernelFromTrace(t *testing.T) {
	has := func(notes []string, s string) bool {
		for _, n := range notes {
			if strings.Contains(n, s) {
				return true
			}
		}
		return false
	}
	doc := replayJSON(t, "--patch", "-lb-util-shr-bound", fx+"qemu-juno-asym/trace.txt.zst")
	// The recording's kernel reported base_slice_ns 2100000 (meta.txt's
	// sched_state: 0.70 ms x 3 on 6 CPUs), which the baseline takes.
	if doc.Policy != "6.12,-lb-util-shr-bound,base_slice_ns=2100000" || !has(doc.Notes, "kernel 6.12: the trace's kernel is 6.12.95+deb12-arm64 (from ") {
		t.Errorf("juno: policy %q, notes %q", doc.Policy, doc.Notes)
	}
	doc = replayJSON(t, fx+"ftrace-pipe-lost/trace.txt.gz")
	if !strings.HasPrefix(doc.Policy, "6.18") || !has(doc.Notes, "assumed kernel 6.18: the trace does not carry the kernel release; pass --kernel") {
		t.Errorf("pipe-lost: policy %q, notes %q", doc.Policy, doc.Notes)
	}
	doc = replayJSON(t, "--kernel", "6.18", fx+"qemu-juno-asym/trace.txt.zst")
	if doc.Policy != "6.18,base_slice_ns=2100000" || !has(doc.Notes, "kernel 6.18 as given, but the trace's kernel is 6.12.95+deb12-arm64") {
		t.Errorf("juno --kernel 6.18: policy %q, notes %q", doc.Policy, doc.Notes)
	}
	doc = replayJSON(t, "--kernel", "6.12", fx+"qemu-juno-asym/trace.txt.zst")
	if has(doc.Notes, "kernel 6.") {
		t.Errorf("juno --kernel 6.12 (matching): notes %q, want no kernel note", doc.Notes)
	}
}

// TestReplaySeedCheck: on the host pipe pair (fixtures/ab/pipe-workers-host
// base-1) the pair shares a CPU for some seeds and is split for others
// (docs/whatif.md), so seeds 1-4 disagree on the p50 criterion and the
// verdict: the report must say the verdict depends on the seed, and list
// each seed's. --check-seeds 1 judges the one seed and prints no seeds.
func TestReplaySeedCheck(t *testing.T) {
	const tr = "../../fixtures/ab/pipe-workers-host/base-1/trace.pftrace.zst"
	out, errOut, code := execute(t, "replay", "--format", "json", tr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Seed     uint64 `json:"seed"`
		Fidelity struct {
			Verdict string `json:"verdict"`
			Seeds   []struct {
				Seed     uint64 `json:"seed"`
				Verdict  string `json:"verdict"`
				Criteria []struct {
					Name string `json:"name"`
					Pass bool   `json:"pass"`
				} `json:"criteria"`
			} `json:"seeds"`
			SeedDependent bool `json:"seed_dependent"`
		} `json:"fidelity"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	f := doc.Fidelity
	if len(f.Seeds) != 4 || f.Seeds[0].Seed != doc.Seed || f.Seeds[0].Verdict != f.Verdict {
		t.Fatalf("seeds %+v: want 4, the report's own seed %d first with its verdict %q", f.Seeds, doc.Seed, f.Verdict)
	}
	p50 := map[bool]int{}
	for i, s := range f.Seeds {
		if s.Seed != doc.Seed+uint64(i) {
			t.Errorf("seed %d at %d: want %d", s.Seed, i, doc.Seed+uint64(i))
		}
		for _, c := range s.Criteria {
			if c.Name == "wakeup_latency" {
				p50[c.Pass]++
			}
		}
	}
	if p50[true] == 0 || p50[false] == 0 || !f.SeedDependent {
		t.Errorf("latency criterion passes for %d seeds and fails for %d, seed_dependent %v: want both, and true",
			p50[true], p50[false], f.SeedDependent)
	}
	txt, errOut, code := execute(t, "replay", tr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(txt, "Fidelity across seeds") || !strings.Contains(txt, "The verdict depends on the seed") {
		t.Errorf("text report without the seed table and its conclusion:\n%s", txt)
	}
	one, errOut, code := execute(t, "replay", "--format", "json", "--check-seeds", "1", tr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(one, `"seeds"`) {
		t.Errorf("--check-seeds 1 printed seeds")
	}
}

// TestReplayCheckSeedsUsage: a count below 1 is a usage error (exit 2)
// that says what is wanted, before anything is read.
func TestReplayCheckSeedsUsage(t *testing.T) {
	for _, n := range []string{"0", "-3"} {
		_, errOut, code := execute(t, "replay", "--check-seeds", n, fx+"ftrace-hackbench-quiet/trace.txt.zst")
		if code != 2 || !strings.Contains(errOut, "--check-seeds "+n+": want 1") {
			t.Errorf("--check-seeds %s: exit %d, stderr %q; want exit 2 and the usage message", n, code, errOut)
		}
	}
}
