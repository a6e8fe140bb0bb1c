package compare

import (
	"bytes"
	"encoding/json"
	"html"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/internal/golden"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/report"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// goldenCases are rendered in every format and kept as
// testdata/<name>.replay.<format>.golden.
var goldenCases = []struct {
	name string
	make func(t *testing.T) *Replay
}{
	{"hand", func(t *testing.T) *Replay { return handReplay(t, metrics.Filter{}, "") }},
	{"hand-restricted", func(t *testing.T) *Replay {
		return handReplay(t, metrics.Filter{Comms: []string{"irqd"}}, "comm irqd")
	}},
	{"qemu-juno-asym", juno},
	{"hand-seeds", handSeeds},
}

// handSeeds is the hand-made replay judged under three seeds: the first
// is the report's own run, the others as if the model had reproduced the
// recording exactly, so the verdict depends on the seed.
func handSeeds(t *testing.T) *Replay {
	r := handReplay(t, metrics.Filter{}, "")
	rec := measureHand(t, handRec, metrics.Filter{})
	exact := Judge(Compare(rec, rec, "recorded", "modeled"))
	r.Seeds = []SeedVerdict{{Seed: 1, Verdict: Judge(r.Comparison)}, {Seed: 2, Verdict: exact}, {Seed: 3, Verdict: exact}}
	r.Command = "schedlens replay --check-seeds 3 --patch lb-util-shr-bound,resched-ineligible hand-made"
	return r
}

// handReplay is the hand-made pair of build_test.go with three knobs, one
// of them toggled and never fired.
func handReplay(t *testing.T, flt metrics.Filter, filter string) *Replay {
	rec := measureHand(t, handRec, flt)
	mod := measureHand(t, handMod, flt)
	tr := report.NewTrace(build(t, 2, handNames, handPrios, handRec...), "hand-made")
	tr.Format = "ftrace"
	return &Replay{
		Trace:  tr,
		Policy: "6.18,+lb-util-shr-bound,+resched-ineligible", Seed: 1, HZ: 250, Topology: "sym-2",
		Window: rec.Window, Comparison: Compare(rec, mod, "recorded", "modeled"), ModeledEvents: 21, Filter: filter,
		Knobs: []Knob{
			{Name: "lb-util-shr-bound", On: true, Toggled: true, Count: 187, What: "migrations allowed that mainline refused"},
			{Name: "resched-ineligible", On: true, Toggled: true, Count: 0, What: "preemptions of an ineligible current"},
			{Name: "newidle-bailout", On: true, Count: 12, What: "newidle balances stopped for a waiting task"},
			{Name: "PROTECT_VPROT", Toggled: true, NotCounted: true, What: "the other protection rule keeps state this run does not"},
		},
		Notes:   []string{"assumed flat-cgroups: no cgroup hierarchy in the trace: every task weighs by its own nice"},
		Command: "schedlens replay --patch lb-util-shr-bound,resched-ineligible hand-made", Version: "test",
	}
}

// juno is the real qemu-juno-asym capture against a modeled replay of it
// kept in testdata (see testdata/README.md): the goldens do not move when
// the model does.
func juno(t *testing.T) *Replay {
	const trace = "../fixtures/real/qemu-juno-asym/trace.txt.zst"
	ld, err := ingest.Load(trace, ingest.Options{Name: trace})
	if err != nil {
		t.Fatal(err)
	}
	tl := ld.Timeline
	topo, err := topology.Resolve(ld.Meta.Topology, trace, "", tl.NCPU)
	if err != nil {
		t.Fatal(err)
	}
	topo.Source = strings.Replace(topo.Source, "file:../", "file:", 1)
	mld, err := ingest.Load("testdata/qemu-juno-asym.modeled.pftrace.zst", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	win := metrics.DefaultWindow(tl)
	rec, err := Measure(tl, Options{Window: win, Topology: topo})
	if err != nil {
		t.Fatal(err)
	}
	sim := mld.Timeline
	mod, err := Measure(sim, Options{Window: metrics.Window{Start: max(win.Start, sim.ValidStart), End: min(win.End, sim.End)}, Topology: topo})
	if err != nil {
		t.Fatal(err)
	}
	path := strings.TrimPrefix(trace, "../")
	r := &Replay{Trace: report.NewTrace(tl, path), Policy: "6.18", Seed: 1, HZ: 250, Topology: topo.Source, Window: win,
		Comparison: Compare(rec, mod, "recorded", "modeled"), ModeledEvents: sim.Len(),
		Command: "schedlens replay " + path, Version: "test"}
	r.Trace.Format, r.Trace.Compression, r.Trace.Clock, r.Trace.Kernel = ld.Meta.Format, ld.Compression, ld.Meta.Clock, ld.Meta.Kernel
	return r
}

func TestGoldens(t *testing.T) {
	for _, tc := range goldenCases {
		r := tc.make(t)
		for _, format := range goldenFormats {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				if err := WriteReplay(&buf, r, format); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", tc.name+".replay."+format+".golden")
				golden.Check(t, path, buf.Bytes())
			})
		}
	}
	matches, _ := filepath.Glob("testdata/*.replay.*.golden")
	if len(matches) < len(goldenCases)*len(goldenFormats) {
		t.Errorf("found %d goldens under testdata, want %d", len(matches), len(goldenCases)*len(goldenFormats))
	}
}

// goldenFormats are the formats kept as goldens. The HTML page holds the
// text report whole, and its plots are checked by TestReplayHTML and in a
// browser (cmd/schedlens TestHTMLInChromium).
var goldenFormats = []string{"text", "markdown", "json"}

// TestReplayHTML: the page holds the text report escaped whole, and one
// CDF plot, with a recorded and a modeled curve, per scope with samples
// on a side (overall, classes, at most 6 comms).
func TestReplayHTML(t *testing.T) {
	for _, tc := range goldenCases {
		r := tc.make(t)
		var text, page bytes.Buffer
		if err := WriteReplay(&text, r, "text"); err != nil {
			t.Fatal(err)
		}
		if err := WriteReplay(&page, r, "html"); err != nil {
			t.Fatal(err)
		}
		p := page.String()
		if !strings.Contains(p, "<pre>\n"+html.EscapeString(text.String())+"</pre>") {
			t.Errorf("%s: the page does not hold the text report", tc.name)
		}
		want, comms := 0, 0
		for _, sc := range r.Comparison.Scopes {
			if strings.HasPrefix(sc.Scope, "comm:") {
				if comms == min(r.top(), 6) {
					continue
				}
				comms++
			}
			if len(sc.Base.WakeupSamples)+len(sc.New.WakeupSamples) > 0 {
				want++
			}
		}
		if n := strings.Count(p, "<figure>"); n != want || want == 0 {
			t.Errorf("%s: %d plots, want %d", tc.name, n, want)
		}
		if b, m := strings.Count(p, `data-series="recorded"`), strings.Count(p, `data-series="modeled"`); b+m < want || b > want || m > want {
			t.Errorf("%s: %d recorded and %d modeled curves for %d plots", tc.name, b, m, want)
		}
	}
}

// TestTextFitsMail: every text line fits report.Width with no trailing
// blanks, and the text ends with the command line and the version.
func TestTextFitsMail(t *testing.T) {
	for _, tc := range goldenCases {
		var buf bytes.Buffer
		if err := WriteReplay(&buf, tc.make(t), "text"); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
		for i, l := range lines {
			if n := len([]rune(l)); n > report.Width {
				t.Errorf("%s line %d: %d columns: %q", tc.name, i+1, n, l)
			}
			if strings.TrimRight(l, " \t") != l {
				t.Errorf("%s line %d: trailing blanks: %q", tc.name, i+1, l)
			}
		}
		if n := len(lines); n < 2 || lines[n-1] != "schedlens test" || !strings.HasPrefix(lines[n-2], "command: schedlens replay") &&
			!strings.HasPrefix(lines[n-2], "    ") {
			t.Errorf("%s: does not end with the command and version: %q", tc.name, lines[max(0, len(lines)-2):])
		}
	}
}

// TestReplayContent: what the text must say, read from the hand-made
// case's figures worked by hand.
func TestReplayContent(t *testing.T) {
	var buf bytes.Buffer
	r := handReplay(t, metrics.Filter{}, "")
	if err := WriteReplay(&buf, r, "text"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Fidelity: ",
		"lb-util-shr-bound (on, toggled): 187 migrations allowed that mainline refused",
		"warning: resched-ineligible never fired: the change cannot show on this trace",
		"newidle-bailout (on): 12 newidle balances stopped for a waiting task",
		"PROTECT_VPROT (off, toggled): not counted: the other protection rule",
		"CPU time         within 5%",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	if strings.Contains(out, "restricted") {
		t.Errorf("an unrestricted report says restricted")
	}
	// Without knobs, no knob section at all.
	r.Knobs = nil
	buf.Reset()
	if err := WriteReplay(&buf, r, "text"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "Knobs") || strings.Contains(buf.String(), "never fired") {
		t.Errorf("empty knob list printed something")
	}
	// Restricted: said in the header and under the verdict.
	buf.Reset()
	if err := WriteReplay(&buf, handReplay(t, metrics.Filter{Comms: []string{"irqd"}}, "comm irqd"), "text"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"restricted to comm irqd", "over the selected tasks only"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("restricted text lacks %q", want)
		}
	}
}

// TestJSONContract: the keys scripts rely on, old and new.
func TestJSONContract(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteReplay(&buf, handReplay(t, metrics.Filter{}, ""), "json"); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	fid, _ := doc["fidelity"].(map[string]any)
	for _, k := range []string{"wakeup_latency_p50_ratio", "wakeup_latency_p90_ratio", "wakeup_latency_p99_ratio", "wakeup_latency_max_ratio",
		"runnable_ratio", "cpu_time_ratio", "migrations_ratio", "preemptions_ratio", "context_switches_ratio", "idle_with_runnable_ratio",
		"wakeup_latency_cdf_distance"} {
		if _, ok := fid[k].(float64); !ok {
			t.Errorf("fidelity.%s: %v, want a number", k, fid[k])
		}
	}
	if v, _ := fid["verdict"].(string); v != Faithful && v != PartlyFaithful && v != NotFaithful {
		t.Errorf("fidelity.verdict %q", v)
	}
	if cs, _ := fid["criteria"].([]any); len(cs) != 6 {
		t.Errorf("fidelity.criteria: %d entries, want 6", len(cs))
	}
	for _, side := range []string{"recorded", "modeled"} {
		f, _ := doc[side].(map[string]any)
		for _, k := range []string{"cpu_time_ns", "run_ns", "runnable_ns", "wakeup_latency_count", "wakeup_latency_p50_ns", "wakeup_latency_p90_ns",
			"wakeup_latency_p99_ns", "wakeup_latency_max_ns", "wakeup_latency_mean_ns", "preemptions", "migrations", "context_switches",
			"idle_with_runnable_ns", "completion_ns"} {
			if _, ok := f[k].(float64); !ok {
				t.Errorf("%s.%s: %v", side, k, f[k])
			}
		}
	}
	if rec, _ := doc["recorded"].(map[string]any); rec["run_ns"] != 975_000.0 || rec["cpu_time_ns"] != rec["run_ns"] {
		t.Errorf("recorded run_ns %v, cpu_time_ns %v, want 975000 both", rec["run_ns"], rec["cpu_time_ns"])
	}
	ks, _ := doc["knobs"].([]any)
	if len(ks) != 4 || ks[1].(map[string]any)["never_fired"] != true || ks[3].(map[string]any)["not_counted"] != true ||
		ks[1].(map[string]any)["warning"] != "resched-ineligible never fired: the change cannot show on this trace" || ks[0].(map[string]any)["on"] != true {
		t.Errorf("knobs %v", doc["knobs"])
	}
	cmp, _ := doc["comparison"].(map[string]any)
	scopes, _ := cmp["scopes"].([]any)
	if len(scopes) == 0 || scopes[0].(map[string]any)["scope"] != "overall" {
		t.Fatalf("comparison.scopes %v", cmp["scopes"])
	}
	if tasks, _ := doc["tasks"].([]any); len(tasks) != 3 {
		t.Errorf("tasks: %d, want 3", len(tasks))
	}
}

// TestSameTraceTwoEncodings: the hackbench-cyclictest capture and its
// Perfetto encoding (made with Perfetto's own schema and protoc, not by
// schedlens) are one recording: every cell must be equal, the CDF
// distance 0 and the verdict faithful.
func TestSameTraceTwoEncodings(t *testing.T) {
	load := func(p string) *timeline.Timeline {
		ld, err := ingest.Load(p, ingest.Options{Name: p})
		if err != nil {
			t.Fatal(err)
		}
		return ld.Timeline
	}
	a := load("../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz")
	b := load("../fixtures/real/perfetto-from-ftrace-hackbench-cyclictest/trace.pftrace.zst")
	topo := topology.Symmetric(2)
	// The text proves its buffers were never overwritten (the ftrace
	// header), so its window starts at its first event; the protoc twin
	// carries no such proof and starts at CPU 1's first event. Both are
	// measured over the twin's window.
	win := metrics.DefaultWindow(b)
	sa, err := Measure(a, Options{Topology: topo, Window: win})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := Measure(b, Options{Topology: topo, Window: win})
	if err != nil {
		t.Fatal(err)
	}
	c := Compare(sa, sb, "ftrace", "perfetto")
	for _, s := range c.Scopes {
		if !s.InBase || !s.InNew || s.CDFDistance != 0 {
			t.Errorf("%s: in %v/%v, CDF distance %v", s.Scope, s.InBase, s.InNew, s.CDFDistance)
		}
		for _, cell := range s.Cells {
			// A wait in progress at the window start: the text knows the
			// task's state from its earlier events (it was already
			// waiting), the twin learns it only at its next event. Such a
			// wait can differ by at most the stretch before the window.
			if cell.Metric == "runnable_ns" && cell.Base != cell.New {
				if d := cell.Base - cell.New; d > 0 && d <= int64(win.Start-a.Start) {
					continue
				}
			}
			if cell.Base != cell.New {
				t.Errorf("%s %s: %d vs %d", s.Scope, cell.Metric, cell.Base, cell.New)
			}
		}
	}
	if len(c.Scopes) < 10 || len(c.Tasks) != len(sa.Tasks) {
		t.Errorf("%d scopes, %d of %d tasks paired", len(c.Scopes), len(c.Tasks), len(sa.Tasks))
	}
	if v := Judge(c); v.Verdict != Faithful {
		t.Errorf("verdict %s", v.Verdict)
	}
}

// TestScopesAddUp: on real captures, the classes and the comms partition
// the tasks, so their run time, runnable time, wakeup samples, switch-ins,
// preemptions, migrations and idle-with-runnable time add up to the
// overall figures (context switches: to the switches into tasks).
func TestScopesAddUp(t *testing.T) {
	r := juno(t)
	for _, side := range []string{"recorded", "modeled"} {
		var all Figures
		sum := func(list []string) Figures {
			var f Figures
			for _, s := range r.Comparison.Scopes {
				if !slices.Contains(list, s.Scope[:strings.IndexByte(s.Scope+":", ':')]) {
					continue
				}
				x := &s.Base
				if side == "modeled" {
					x = &s.New
				}
				f.RunNs += x.RunNs
				f.RunnableNs += x.RunnableNs
				f.Wakeup.Count += x.Wakeup.Count
				f.Preemptions += x.Preemptions
				f.Migrations += x.Migrations
				f.ContextSwitches += x.ContextSwitches
				f.IdleWithRunnableNs += x.IdleWithRunnableNs
			}
			return f
		}
		ov := &r.Comparison.Scope(Overall).Base
		if side == "modeled" {
			ov = &r.Comparison.Scope(Overall).New
		}
		all = *ov
		for _, kind := range []string{"class", "comm"} {
			s := sum([]string{kind})
			if s.RunNs != all.RunNs || s.RunnableNs != all.RunnableNs || s.Wakeup.Count != all.Wakeup.Count || s.Preemptions != all.Preemptions ||
				s.Migrations != all.Migrations || s.IdleWithRunnableNs != all.IdleWithRunnableNs {
				t.Errorf("%s, by %s: %+v\ndo not add up to %+v", side, kind, s, all)
			}
			if s.ContextSwitches == 0 || s.ContextSwitches > all.ContextSwitches {
				t.Errorf("%s, by %s: %d switch-ins against %d switches", side, kind, s.ContextSwitches, all.ContextSwitches)
			}
		}
	}
}

// TestReplayReadsSamples: a replay report whose Sides have no wakeup
// samples is written as the whole one is in every format but those that
// ReplayReadsSamples names, and differently in those.
func TestReplayReadsSamples(t *testing.T) {
	for _, tc := range goldenCases {
		for _, format := range Formats {
			whole, stripped := tc.make(t), tc.make(t)
			had := 0
			for i := range stripped.Comparison.Scopes {
				sc := &stripped.Comparison.Scopes[i]
				had += len(sc.Base.WakeupSamples) + len(sc.New.WakeupSamples)
				sc.Base.WakeupSamples, sc.New.WakeupSamples = nil, nil
			}
			if had == 0 {
				t.Fatalf("%s: no samples", tc.name)
			}
			var a, b bytes.Buffer
			if err := WriteReplay(&a, whole, format); err != nil {
				t.Fatal(err)
			}
			if err := WriteReplay(&b, stripped, format); err != nil {
				t.Fatal(err)
			}
			if same := bytes.Equal(a.Bytes(), b.Bytes()); same == ReplayReadsSamples(format) {
				t.Errorf("%s, %s: the report without samples is the same: %v; the format reads samples: %v", tc.name, format, same, ReplayReadsSamples(format))
			}
		}
	}
}
