package policies

import (
	"slices"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
)

// Each seed patch's scenario must reproduce the direction and rough size
// of the e-mail's headline result. The tests run with the default IPI
// model (2 us + up to 2 us jitter) and a fixed seed.

func scenario(t *testing.T, name string) *replay.Spec {
	t.Helper()
	sp, err := Scenario(name)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func completion(r *replay.Result) timeline.Time {
	var end timeline.Time
	for _, tr := range r.Tasks {
		if tr.Exit != timeline.NoTime && tr.Exit > end {
			end = tr.Exit
		}
	}
	return end
}

func TestSeed000EligibleFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("long scenario")
	}
	// Headline: hackbench 1-3% faster under heavy overload, no large
	// swings. Model: tasks moved by the balancer wait less on their new
	// CPU (eligible ones go first), completion moves by less than 3%.
	sp := scenario(t, "000")
	base, _, _ := runSpec(t, sp, "6.12", -1)
	patched, _, _ := runSpec(t, sp, "6.12,+lb-eligible-first", -1)
	wait := func(r *replay.Result) float64 {
		return float64(r.Counters["migrate.queued.wait-ns"]) / float64(max(r.Counters["migrate.queued"], 1))
	}
	wb, wp := wait(base), wait(patched)
	t.Logf("post-migration wait: %.0f us -> %.0f us; skipped %d ineligible candidates", wb/1000, wp/1000, patched.Counters["patch.lb-eligible-first.skipped"])
	if patched.Counters["patch.lb-eligible-first.skipped"] == 0 {
		t.Fatalf("the patch never applied")
	}
	// The knob counts the refusals the rest of can_migrate_task would
	// have allowed (a subset of the skips), and without the patch the
	// candidates it would refuse.
	kp, kb := knobOf(t, patched, "lb-eligible-first"), knobOf(t, base, "lb-eligible-first")
	t.Logf("%s; %s", kp.Line(), kb.Line())
	if kp.Count == 0 || kp.Count > patched.Counters["patch.lb-eligible-first.skipped"] || kb.Count == 0 {
		t.Errorf("knob counts %d (on, %d skips) and %d (off): want both above 0, on at most the skips", kp.Count, patched.Counters["patch.lb-eligible-first.skipped"], kb.Count)
	}
	// The e-mail's gain (1-3%) is small, and so is the model's: over
	// several seeds the post-migration wait with the patch overlaps the
	// one without, and the completion stays within 3% on every seed. The
	// real kernels agree (docs/seeds.md: no change beyond the run-to-run
	// spread). The scenario is checked for that, not for a single seed's
	// lower wait, which is inside the seed-to-seed noise.
	wb4, wp4 := headlineOverSeeds(t, sp, "6.12", "6.12,+lb-eligible-first", wait)
	t.Logf("post-migration wait over seeds %v: %.0f..%.0f us without, %.0f..%.0f us with the patch", noiseSeeds,
		slices.Min(wb4)/1000, slices.Max(wb4)/1000, slices.Min(wp4)/1000, slices.Max(wp4)/1000)
	if slices.Min(wp4) > slices.Max(wb4) {
		t.Errorf("post-migration wait rises beyond the seed spread with the patch")
	}
	cb4, cp4 := headlineOverSeeds(t, sp, "6.12", "6.12,+lb-eligible-first", func(r *replay.Result) float64 { return float64(completion(r)) })
	for i := range cb4 {
		if d := (cp4[i] - cb4[i]) / cb4[i]; d > 0.03 || d < -0.03 {
			t.Errorf("seed %d: completion changed by %.1f%%, want within 3%%", noiseSeeds[i], 100*d)
		}
	}
}

func TestSeed001UtilShrBound(t *testing.T) {
	// Headline: ~19.3 s -> ~18 s (-6.7%). Model: the idle little CPU 5
	// pulls a task within a couple of idle-balance periods after the
	// affinity is released at 100 ms with the patch, and stays idle for
	// seconds without it; completion drops by 3-15%.
	sp := scenario(t, "001")
	base, _, _ := runSpec(t, sp, "6.12,-lb-util-shr-bound", -1)
	patched, _, _ := runSpec(t, sp, "6.12", -1)
	firstOn5 := func(r *replay.Result) timeline.Time {
		for _, s := range switches(r.Timeline, 5) {
			if !strings.HasPrefix(s.next, "swapper") {
				return s.at
			}
		}
		return -1
	}
	fb, fp := firstOn5(base), firstOn5(patched)
	show := func(ts timeline.Time) string {
		if ts < 0 {
			return "never"
		}
		return ts.Seconds() + " s"
	}
	t.Logf("CPU 5 first runs a task: %s without the patch, %s with it", show(fb), show(fp))
	if fp < 100_000_000 || fp > 150_000_000 {
		t.Errorf("with the patch CPU 5 first runs a task at %s, want within 50 ms of the release at 0.1 s", fp.Seconds())
	}
	if fb >= 0 && fb < 5_000_000_000 {
		t.Errorf("without the patch CPU 5 first runs a task at %s, want it idle for seconds", fb.Seconds())
	}
	cb, cp := completion(base), completion(patched)
	d := float64(cp-cb) / float64(cb)
	t.Logf("completion: %s -> %s (%.1f%%)", cb.Seconds(), cp.Seconds(), 100*d)
	if d > -0.03 || d < -0.15 {
		t.Errorf("completion changed by %.1f%%, want -3%% .. -15%% (e-mail: -6.7%%)", 100*d)
	}
	cb4, cp4 := headlineOverSeeds(t, sp, "6.12,-lb-util-shr-bound", "6.12", func(r *replay.Result) float64 { return float64(completion(r)) })
	beyondSpread(t, "completion (ns)", cb4, cp4, -1)
	if patched.Counters["lb.util.skipped"] >= base.Counters["lb.util.skipped"] {
		t.Errorf("migrate_util skips %d with the patch, want fewer than %d", patched.Counters["lb.util.skipped"], base.Counters["lb.util.skipped"])
	}
	// With the patch exactly one migrate_util test comes out differently:
	// CPU 5's pass after the first failure, where 512 >> 1 fits the
	// imbalance of 383 and the task moves; every CPU then has one task.
	// Without it, that test fails on every idle balance for seconds.
	kp, kb := knobOf(t, patched, "lb-util-shr-bound"), knobOf(t, base, "lb-util-shr-bound")
	t.Logf("%s; %s", kp.Line(), kb.Line())
	if kp.Count != 1 || kb.Count < 100 || !kb.Toggled || kp.Toggled {
		t.Errorf("knob counts %d (on) and %d (off, toggled %v): want 1 and hundreds", kp.Count, kb.Count, kb.Toggled)
	}
}

func TestSeed002ReschedIneligible(t *testing.T) {
	if testing.Short() {
		t.Skip("long scenario")
	}
	// Headline (NO_RUN_TO_PARITY): the patch lowers the average and
	// roughly halves the maximum cyclictest latency at nice 0 and -19
	// (nice 0: 289/32665 -> 257/17710 us). Model: the average drops and the
	// maximum drops by 15% or more (a maximum is one sample: the model's
	// is less extreme than the e-mail's five-minute run).
	src, err := ScenarioSource("002")
	if err != nil {
		t.Fatal(err)
	}
	const warm = 300_000_000
	for _, nice := range []string{"0", "-19"} {
		t.Run("nice"+nice, func(t *testing.T) {
			s := strings.Replace(src, "\ntask cyclictest nice 0\n", "\ntask cyclictest nice "+nice+"\n", 1)
			sp, err := replay.ParseSpec(strings.NewReader(s), "002.spec")
			if err != nil {
				t.Fatal(err)
			}
			base, _, _ := runSpec(t, sp, "6.6,NO_RUN_TO_PARITY", -1)
			patched, _, _ := runSpec(t, sp, "6.6,NO_RUN_TO_PARITY,+resched-ineligible", -1)
			ab, mb := meanMax(wakeLatencies(base.Timeline, "cyclictest", warm))
			ap, mp := meanMax(wakeLatencies(patched.Timeline, "cyclictest", warm))
			t.Logf("avg %d -> %d us, max %d -> %d us", ab/1000, ap/1000, mb/1000, mp/1000)
			if ap > ab {
				t.Errorf("average latency %d us with the patch, want at most %d us", ap/1000, ab/1000)
			}
			avg := func(r *replay.Result) float64 {
				a, _ := meanMax(wakeLatencies(r.Timeline, "cyclictest", warm))
				return float64(a)
			}
			ab4, ap4 := headlineOverSeeds(t, sp, "6.6,NO_RUN_TO_PARITY", "6.6,NO_RUN_TO_PARITY,+resched-ineligible", avg)
			beyondSpread(t, "cyclictest average latency (ns)", ab4, ap4, -1)
			if float64(mp) > 0.85*float64(mb) {
				t.Errorf("max latency %d us with the patch, want at least 15%% below %d us", mp/1000, mb/1000)
			}
			if patched.Counters["patch.resched-ineligible.preempt"] == 0 {
				t.Errorf("the patch never preempted")
			}
			kp, kb := knobOf(t, patched, "resched-ineligible"), knobOf(t, base, "resched-ineligible")
			t.Logf("%s; %s", kp.Line(), kb.Line())
			if kp.Count == 0 || kb.Count == 0 {
				t.Errorf("knob counts %d (on) and %d (off): want both above 0", kp.Count, kb.Count)
			}
		})
	}
	t.Run("parity-vs-no-parity", func(t *testing.T) {
		// NO_RUN_TO_PARITY alone does not raise the average latency
		// (e-mail: it lowers it by ~40% at nice 0; the model's gain is
		// small at nice 0 and large at nice -19).
		sp := scenario(t, "002")
		parity, _, _ := runSpec(t, sp, "6.6", -1)
		noParity, _, _ := runSpec(t, sp, "6.6,NO_RUN_TO_PARITY", -1)
		a1, _ := meanMax(wakeLatencies(parity.Timeline, "cyclictest", warm))
		a2, _ := meanMax(wakeLatencies(noParity.Timeline, "cyclictest", warm))
		t.Logf("avg %d us (RUN_TO_PARITY) -> %d us (NO_RUN_TO_PARITY)", a1/1000, a2/1000)
		if a2 > a1 {
			t.Errorf("NO_RUN_TO_PARITY average %d us, want at most %d us", a2/1000, a1/1000)
		}
	})
}

func TestSeed003NewidleBailout(t *testing.T) {
	if testing.Short() {
		t.Skip("long scenario")
	}
	// Headline: the pair's wakeup latency ~120 us without the patch, ~6 us
	// with it.
	sp := scenario(t, "003")
	base, _, _ := runSpec(t, sp, "6.12,-newidle-bailout", -1)
	patched, _, _ := runSpec(t, sp, "6.12", -1)
	pair := func(r *replay.Result) (int64, int64) {
		v := append(wakeLatencies(r.Timeline, "ping", 0), wakeLatencies(r.Timeline, "pong", 0)...)
		return meanMax(v)
	}
	// the engine's own samples include the wakeups that need no switch
	// (the task was still the CPU's current one)
	engine := func(r *replay.Result, sp *replay.Spec, name string) int64 {
		tr := r.Tasks[taskIndex(t, sp, name)]
		return tr.LatencyMax
	}
	ab, mb := pair(base)
	ap, mp := pair(patched)
	t.Logf("pair latency avg/max: %d/%d us -> %d/%d us; engine max ping %d -> %d us", ab/1000, mb/1000, ap/1000, mp/1000, engine(base, sp, "ping")/1000, engine(patched, sp, "ping")/1000)
	if mb < 80_000 || mb > 250_000 {
		t.Errorf("max latency without the patch %d us, want about 120 us (80..250)", mb/1000)
	}
	if mp > 15_000 {
		t.Errorf("max latency with the patch %d us, want about 6 us (< 15)", mp/1000)
	}
	if ab < 5*ap {
		t.Errorf("average %d us without the patch vs %d us with it, want a factor of 5 or more", ab/1000, ap/1000)
	}
	pb4, pp4 := headlineOverSeeds(t, sp, "6.12,-newidle-bailout", "6.12", func(r *replay.Result) float64 { a, _ := pair(r); return float64(a) })
	beyondSpread(t, "pair average latency (ns)", pb4, pp4, -1)
	if patched.Counters["lb.newidle.bailouts"] == 0 {
		t.Errorf("no newidle bailout with the patch")
	}
	// Every bailout is a pass the code before the patch would have run.
	kp, kb := knobOf(t, patched, "newidle-bailout"), knobOf(t, base, "newidle-bailout")
	t.Logf("%s; %s", kp.Line(), kb.Line())
	if kp.Count != patched.Counters["lb.newidle.bailouts"] || kb.Count == 0 || base.Counters["lb.newidle.bailouts"] != 0 {
		t.Errorf("knob counts %d (on, %d bailouts) and %d (off): want on = bailouts, off above 0", kp.Count, patched.Counters["lb.newidle.bailouts"], kb.Count)
	}
}

// idleWithRunnable sums, over CPUs, the time each CPU ran the idle task
// while a task that was runnable (woken or preempted) later switched in on
// that CPU was waiting.
func idleWithRunnable(tl *timeline.Timeline) int64 {
	type iv struct{ a, b timeline.Time }
	idle := make([][]iv, tl.NCPU)
	var waits []struct {
		cpu  int
		a, b timeline.Time
	}
	tl.Walk(func(s *timeline.Span) {
		if s.Task == timeline.NoTask || s.CPU < 0 || int(s.CPU) >= tl.NCPU {
			return
		}
		switch {
		case tl.Tasks[s.Task].Idle && s.State == timeline.SpanRunning:
			idle[s.CPU] = append(idle[s.CPU], iv{s.Start, s.End})
		case s.State == timeline.SpanWoken || s.State == timeline.SpanPreempted:
			waits = append(waits, struct {
				cpu  int
				a, b timeline.Time
			}{int(s.CPU), s.Start, s.End})
		}
	})
	var sum int64
	for _, w := range waits {
		for _, x := range idle[w.cpu] {
			lo, hi := max(w.a, x.a), min(w.b, x.b)
			if hi > lo {
				sum += int64(hi - lo)
			}
		}
	}
	return sum
}

func TestSeed004CoreschedIdleIPI(t *testing.T) {
	// Headline: without the fix a forced-idle sibling stays idle with
	// runnable tasks ("major" regression); with it, core scheduling costs
	// ~5-10%. Model: idle-with-runnable time drops, the tagged tasks'
	// throughput rises, and the fixed RFC behaves like mainline
	// (CORE_SYNC).
	sp := scenario(t, "004")
	rfc, _, _ := runSpec(t, sp, "6.12,NO_CORE_SYNC", -1)
	fixed, _, _ := runSpec(t, sp, "6.12,NO_CORE_SYNC,+coresched-idle-ipi", -1)
	mainline, _, _ := runSpec(t, sp, "6.12", -1)
	dbWork := func(r *replay.Result) int64 {
		var w int64
		for i, tk := range sp.Workload.Tasks {
			if strings.HasPrefix(tk.Comm, "db") {
				w += r.Tasks[i].Work
			}
		}
		return w
	}
	wr, wf, wm := dbWork(rfc), dbWork(fixed), dbWork(mainline)
	ir, iF := idleWithRunnable(rfc.Timeline), idleWithRunnable(fixed.Timeline)
	t.Logf("db work: RFC %d ms, fixed %d ms, mainline %d ms; idle-with-runnable %d -> %d us; kicks %d",
		wr/1e6, wf/1e6, wm/1e6, ir/1000, iF/1000, fixed.Counters["patch.coresched-idle-ipi.kicks"])
	if float64(wf) < 1.02*float64(wr) {
		t.Errorf("tagged work %d ms with the fix, want at least 2%% above %d ms", wf/1e6, wr/1e6)
	}
	if d := float64(wf-wm) / float64(wm); d > 0.02 || d < -0.02 {
		t.Errorf("fixed RFC %d ms vs mainline %d ms, want within 2%%", wf/1e6, wm/1e6)
	}
	if iF >= ir {
		t.Errorf("idle-with-runnable %d us with the fix, want below %d us", iF/1000, ir/1000)
	}
	ir4, if4 := headlineOverSeeds(t, sp, "6.12,NO_CORE_SYNC", "6.12,NO_CORE_SYNC,+coresched-idle-ipi", func(r *replay.Result) float64 { return float64(idleWithRunnable(r.Timeline)) })
	beyondSpread(t, "idle-with-runnable (ns)", ir4, if4, -1)
	wr4, wf4 := headlineOverSeeds(t, sp, "6.12,NO_CORE_SYNC", "6.12,NO_CORE_SYNC,+coresched-idle-ipi", func(r *replay.Result) float64 { return float64(dbWork(r)) })
	beyondSpread(t, "tagged work (ns)", wr4, wf4, +1)
	if fixed.Counters["patch.coresched-idle-ipi.kicks"] == 0 {
		t.Errorf("the fix never kicked a sibling")
	}
	// Every kick is one the RFC code does not send; without the fix the
	// knob counts the idle siblings it would kick.
	kf, kr := knobOf(t, fixed, "coresched-idle-ipi"), knobOf(t, rfc, "coresched-idle-ipi")
	t.Logf("%s; %s", kf.Line(), kr.Line())
	if kf.Count != fixed.Counters["patch.coresched-idle-ipi.kicks"] || kr.Count == 0 {
		t.Errorf("knob counts %d (on, %d kicks) and %d (off): want on = kicks, off above 0", kf.Count, fixed.Counters["patch.coresched-idle-ipi.kicks"], kr.Count)
	}
}
