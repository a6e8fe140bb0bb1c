package metrics

// Tests of the latency, idle and misplaced metrics on the real captures
// under fixtures/real. Expected figures come from the workloads' own output
// and from the invariants the definitions imply, never from schedlens.

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

const fixtureDir = "../fixtures/real/"

// realTraces are every real capture, in each of its encodings.
var realTraces = []string{
	"ftrace-oracle-busy/trace.txt.zst",
	"ftrace-oracle-busy/report.txt.zst",
	"ftrace-hackbench-cyclictest/trace.txt.gz",
	"ftrace-overflow/trace.txt.gz",
	"ftrace-pipe-lost/trace.txt.gz",
	"perf-hackbench-cyclictest/perf-script.txt.gz",
	"perf-hackbench-cyclictest/perf-script-fields.txt.gz",
	"qemu-smt8-hackbench/trace.txt.zst",
	"perfetto-from-ftrace-hackbench-cyclictest/trace.pftrace.zst",
	"perfetto-from-ftrace-hackbench-cyclictest/trace-compact.pftrace.zst",
	"perfetto-tracebox-hackbench-compact/trace.pftrace.zst",
	"perfetto-tracebox-hackbench-plain/trace.pftrace.zst",
	"perfetto-tracebox-oracle-busy/trace.pftrace.zst",
}

var loaded = map[string]*ingest.Loaded{}

func loadFixture(t testing.TB, rel string) *ingest.Loaded {
	t.Helper()
	if ld, ok := loaded[rel]; ok {
		return ld
	}
	path := fixtureDir + rel
	ld, err := ingest.Load(path, ingest.Options{Name: path})
	if err != nil {
		t.Fatalf("loading %s: %v", rel, err)
	}
	loaded[rel] = ld
	return ld
}

// loadFresh loads the fixture rel anew (not loadFixture's shared copy),
// for a test that changes the Timeline (DropEvents).
func loadFresh(t testing.TB, rel string) *ingest.Loaded {
	t.Helper()
	ld, err := ingest.Load(fixtureDir+rel, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ld
}

// analyzeInferring is AnalyzeAccount with the affinity inference fed by its
// walk and the map made after it (Options.AffinityAfter), as report does;
// it returns the map too.
func analyzeInferring(t testing.TB, tl *timeline.Timeline, opts Options) (*Analysis, *Accounting, *affinity.Map) {
	t.Helper()
	inf := affinity.NewInferrer(tl, affinity.InferOptions{})
	var m *affinity.Map
	opts.Also = append(opts.Also, inf)
	opts.AffinityAfter = func() (*affinity.Map, error) {
		var err error
		m, err = affinity.Build(tl, affinity.BuildOptions{Inferred: inf})
		return m, err
	}
	a, acc, err := AnalyzeAccount(tl, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a, acc, m
}

// loadTwin loads rel, another encoding of the capture base was read from,
// with base's coverage: the facts that prove (or not) that every CPU was
// recorded from the start belong to the capture, and an encoding may not
// carry them (trace-cmd report text has no entry counts; the protoc-made
// Perfetto twin has no ftrace stats).
func loadTwin(t testing.TB, rel string, base *ingest.Loaded) *timeline.Timeline {
	t.Helper()
	path := fixtureDir + rel
	s, err := ingest.Open(path, ingest.Options{Name: path})
	if err != nil {
		t.Fatalf("opening %s: %v", rel, err)
	}
	defer s.Close()
	b := timeline.NewBuilder(s.Strings(), 0)
	var ev timeline.Event
	for {
		err := s.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading %s: %v", rel, err)
		}
		b.Add(ev)
	}
	s.Meta().Apply(b)
	b.SetCoverage(base.Meta.Coverage, base.Meta.CoverageNote)
	tl, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// fixtureTopology resolves the topology as the commands do: the trace's
// own, else topology.txt next to it, else identical CPUs.
func fixtureTopology(t testing.TB, ld *ingest.Loaded) *topology.Topology {
	t.Helper()
	topo, err := topology.Resolve(ld.Meta.Topology, ld.Path, "", ld.Timeline.NCPU)
	if err != nil {
		t.Fatalf("topology of %s: %v", ld.Path, err)
	}
	return topo
}

// TestRealInvariants: on every real capture, per task the wakeup-latency
// samples plus the preemption waits add up exactly to Account's
// runnable_ns, idle-with-runnable time never exceeds idle time, and the
// windows add up by relation and by CPU.
func TestRealInvariants(t *testing.T) {
	for _, rel := range realTraces {
		t.Run(rel, func(t *testing.T) {
			ld := loadFixture(t, rel)
			a, err := Analyze(ld.Timeline, Options{Topology: fixtureTopology(t, ld)})
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, ld.Timeline, a)
			if a.Latency.Wakeup.Overall.Count == 0 && ld.Timeline.HasWaking {
				t.Errorf("no complete wakeup sample in a trace with sched_waking")
			}
			t.Logf("%d wakeup samples (max %s us, %d censored), %d preemption waits; idle %s ms, idle with runnable %s ms in %d windows",
				a.Latency.Wakeup.Overall.Count, us(a.Latency.Wakeup.Overall.MaxNs), a.Latency.Wakeup.Censored.Count,
				a.Latency.Preempt.Overall.Count, msStr(a.Idle.TotalIdleNs), msStr(a.Idle.IdleWithRunnableNs), len(a.Idle.Windows))
		})
	}
}

func msStr(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 3, 64) }

// cyclictestMax reads "T: 0 (12922) P: 0 I:1000 C: 1094 Min: 65 Act: 112
// Avg: 2035 Max: 187021" from workload.out: the thread id and its Max (us).
func cyclictestMax(t *testing.T, path string) (timeline.TID, int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`T:\s*\d+\s*\((\d+)\).*Max:\s*(\d+)`).FindStringSubmatch(string(data))
	if m == nil {
		t.Fatalf("%s: no cyclictest thread line", path)
	}
	pid, _ := strconv.Atoi(m[1])
	mx, _ := strconv.ParseInt(m[2], 10, 64)
	return timeline.TID(pid), mx
}

// TestCyclictestMax: cyclictest measures from its timer's expiry to its
// return to user space; the trace sees from the timer irq's sched_waking to
// the switch-in, a subset of that path. So the traced maximum is at most
// cyclictest's Max and, when the worst case is scheduling delay (here a
// SCHED_OTHER thread beside hackbench), within 20% of it.
func TestCyclictestMax(t *testing.T) {
	dir := "ftrace-hackbench-cyclictest"
	pid, maxUs := cyclictestMax(t, fixtureDir+dir+"/workload.out")
	ld := loadFixture(t, dir+"/trace.txt.gz")
	a, err := Analyze(ld.Timeline, Options{Filter: Filter{PIDs: []timeline.TID{pid}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Latency.Wakeup.ByTask) != 1 {
		t.Fatalf("by task = %d groups, want only cyclictest thread %d", len(a.Latency.Wakeup.ByTask), pid)
	}
	g := a.Latency.Wakeup.ByTask[0]
	traced := g.Dist.MaxNs
	t.Logf("cyclictest thread %d: %d wakeups traced, max %s us; cyclictest printed Max %d us (traced/printed %.4f)",
		pid, g.Dist.Count, us(traced), maxUs, float64(traced)/float64(maxUs*1000))
	if traced > maxUs*1000 {
		t.Errorf("traced max %d ns above cyclictest's Max %d us", traced, maxUs)
	}
	if traced < maxUs*1000*8/10 {
		t.Errorf("traced max %d ns not within 20%% of cyclictest's Max %d us", traced, maxUs)
	}
}

// digest summarises an analysis for comparing encodings of one capture:
// per pid the wakeup and preemption counts and sums, the idle totals and
// the windows.
func digest(a *Analysis) []string {
	type agg struct{ wn, wsum, wmax, pn, psum, cens int64 }
	per := map[timeline.TID]*agg{}
	for _, s := range a.Latency.Samples {
		g := per[s.PID]
		if g == nil {
			g = &agg{}
			per[s.PID] = g
		}
		switch {
		case s.Censored != CensoredNone:
			g.cens++
		case s.Kind == SamplePreempt:
			g.pn++
			g.psum += s.DurNs
		default:
			g.wn++
			g.wsum += s.DurNs
			g.wmax = max(g.wmax, s.DurNs)
		}
	}
	var out []string
	for pid, g := range per {
		out = append(out, fmt.Sprintf("pid %d wakeups %d sum %d max %d preempt %d sum %d censored %d", pid, g.wn, g.wsum, g.wmax, g.pn, g.psum, g.cens))
	}
	slices.Sort(out)
	out = append(out, fmt.Sprintf("idle %d iwr %d windows %d relation %+v", a.Idle.TotalIdleNs, a.Idle.IdleWithRunnableNs, len(a.Idle.Windows), a.Idle.ByRelation))
	for _, w := range a.Idle.Windows {
		out = append(out, fmt.Sprintf("window cpu %d start %d dur %d pid %d waitcpu %d", w.CPU, w.Start, w.DurNs, w.PID, w.WaitCPU))
	}
	for _, m := range a.Misplaced.Tasks {
		out = append(out, fmt.Sprintf("misplaced pid %d %d %d %d", m.PID, m.WaitingWhileIdleNs, m.MisfitNs, m.SMTContendedNs))
	}
	return out
}

// TestEncodingsAgree: one capture in several encodings gives the same
// metrics, each encoding read with the coverage its text original proves
// (loadTwin).
//
//   - ftrace text and trace-cmd report of ftrace-oracle-busy: identical.
//   - The plain Perfetto encoding of ftrace-hackbench-cyclictest against its
//     text twin: identical too. (Where a sched_waking on one CPU and the
//     woken task's switch-out on another share a microsecond, the text
//     file's line order says which came first and the protobuf, encoded
//     from the microsecond text, does not; the timeline's causal tie-break
//     must resolve it the same way. The count of waits classed differently
//     is logged.)
//   - The compact_sched encoding loses what its README lists (the prev side
//     of each CPU's first switch, the switches that never reached the text
//     trace, skipped wakings): the percentiles agree and the total runnable
//     time within 0.5%.
func TestEncodingsAgree(t *testing.T) {
	t.Run("ftrace-oracle-busy", func(t *testing.T) {
		base := loadFixture(t, "ftrace-oracle-busy/trace.txt.zst")
		topo := fixtureTopology(t, base)
		want := digest(mustAnalyze(t, base.Timeline, topo))
		got := digest(mustAnalyze(t, loadTwin(t, "ftrace-oracle-busy/report.txt.zst", base), topo))
		if d := diffLines(got, want); d != "" {
			t.Errorf("trace-cmd report differs from the ftrace text:\n%s", d)
		}
		t.Logf("%d digest lines agree", len(want))
	})
	base := loadFixture(t, "ftrace-hackbench-cyclictest/trace.txt.gz")
	topo := fixtureTopology(t, base)
	text := mustAnalyze(t, base.Timeline, topo)
	t.Run("perfetto-plain", func(t *testing.T) {
		pf := mustAnalyze(t, loadTwin(t, "perfetto-from-ftrace-hackbench-cyclictest/trace.pftrace.zst", base), topo)
		if d := diffLines(digest(pf), digest(text)); d != "" {
			t.Errorf("Perfetto encoding differs from its text twin:\n%s", d)
		}
		if g, w := pf.Latency.Wakeup.Overall, text.Latency.Wakeup.Overall; g.P50Ns != w.P50Ns || g.P99Ns != w.P99Ns || g.MaxNs != w.MaxNs {
			t.Errorf("wakeup p50/p99/max = %d/%d/%d, text twin %d/%d/%d", g.P50Ns, g.P99Ns, g.MaxNs, w.P50Ns, w.P99Ns, w.MaxNs)
		}
		moved := reclassified(text, pf)
		t.Logf("%d of %d waits classed wakeup in one encoding and preemption in the other (same-microsecond waking and switch-out)", moved, len(text.Latency.Samples))
	})
	t.Run("perfetto-compact", func(t *testing.T) {
		pc := mustAnalyze(t, loadTwin(t, "perfetto-from-ftrace-hackbench-cyclictest/trace-compact.pftrace.zst", base), topo)
		if g, w := pc.Latency.Wakeup.Overall, text.Latency.Wakeup.Overall; g.P50Ns != w.P50Ns || g.P99Ns != w.P99Ns || g.MaxNs != w.MaxNs {
			t.Errorf("wakeup p50/p99/max = %d/%d/%d, text twin %d/%d/%d", g.P50Ns, g.P99Ns, g.MaxNs, w.P50Ns, w.P99Ns, w.MaxNs)
		}
		total := func(a *Analysis) (n, ns int64) {
			for _, s := range a.Latency.Samples {
				n++
				ns += s.DurNs
			}
			return
		}
		gn, gns := total(pc)
		wn, wns := total(text)
		t.Logf("compact: %d waits, %s ms runnable; text: %d waits, %s ms", gn, msStr(gns), wn, msStr(wns))
		if d := gns - wns; d*200 > wns || -d*200 > wns {
			t.Errorf("runnable time %d ns, text twin %d ns: more than 0.5%% apart", gns, wns)
		}
	})
}

// reclassified counts waits with the same task, start and end that are a
// wakeup in one analysis and a preemption in the other.
func reclassified(a, b *Analysis) int {
	type key struct {
		pid        timeline.TID
		start, end timeline.Time
	}
	kinds := map[key]bool{}
	for _, s := range a.Latency.Samples {
		kinds[key{s.PID, s.Start, s.End}] = s.Kind == SamplePreempt
	}
	n := 0
	for _, s := range b.Latency.Samples {
		if p, ok := kinds[key{s.PID, s.Start, s.End}]; ok && p != (s.Kind == SamplePreempt) {
			n++
		}
	}
	return n
}

func mustAnalyze(t *testing.T, tl *timeline.Timeline, topo *topology.Topology) *Analysis {
	t.Helper()
	a, err := Analyze(tl, Options{Topology: topo})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// diffLines lists the lines only in got (+) or only in want (-), at most 20.
func diffLines(got, want []string) string {
	in := func(list []string) map[string]int {
		m := map[string]int{}
		for _, l := range list {
			m[l]++
		}
		return m
	}
	g, w := in(got), in(want)
	var out []string
	for _, l := range got {
		if w[l] == 0 {
			out = append(out, "+ "+l)
		} else {
			w[l]--
		}
	}
	for _, l := range want {
		if g[l] == 0 {
			out = append(out, "- "+l)
		} else {
			g[l]--
		}
	}
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("... %d more", len(out)-20))
	}
	return strings.Join(out, "\n")
}
