package compare

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/report"
)

// Replay is everything the replay fidelity report renders: the recording
// (base) against its modeled replay (new).
type Replay struct {
	Trace    report.Trace // the recording
	Policy   string       // the model's description, "6.18,+resched-ineligible"
	Seed     uint64
	HZ       int
	Topology string // where the topology came from
	// Window is the recording's window; the modeled run is measured over
	// its part of it.
	Window        metrics.Window
	Comparison    *Comparison // Compare(recorded, modeled, "recorded", "modeled")
	ModeledEvents int
	// Filter describes the task selection (--pid/--comm), "" for none.
	Filter string
	// Seeds are the fidelity verdicts of replays of the same recording
	// and model under other seeds, Seed's first (nil: only Seed's run was
	// judged). A model whose figures move with its seed by more than the
	// thresholds gives different verdicts, and the report says so.
	Seeds []SeedVerdict
	// Knobs: how often each policy knob fired in the modeled run; none
	// prints nothing.
	Knobs []Knob
	// Notes: the workload's assumptions, for the reader.
	Notes []string
	// Top is how many rows the per-comm and per-task tables show (0: 10).
	Top     int
	Command string
	Version string
	// Warnings: what the command warned about on stderr, for the JSON header.
	Warnings []string
}

// Formats lists the formats of WriteReplay.
var Formats = []string{"text", "markdown", "json", "html"}

// ReplayReadsSamples reports whether WriteReplay in format reads the
// Sides' wakeup samples: the HTML page plots their CDFs, the other formats
// read their distributions only, so that a replay written in them measures
// its runs without samples (Options.NoWakeupSamples).
func ReplayReadsSamples(format string) bool { return format == "html" }

// WriteReplay renders the replay report in format: "text" (80 columns),
// "markdown", "json" or "html" (the recorded and modeled latency CDFs over
// the text report).
func WriteReplay(w io.Writer, r *Replay, format string) error {
	if r.Comparison == nil || r.Comparison.Scope(Overall) == nil {
		return fmt.Errorf("replay report: no comparison to render")
	}
	switch format {
	case "text", "markdown":
		d := &writer{w: w, md: format == "markdown"}
		d.replay(r)
		return d.err
	case "json":
		return writeReplayJSON(w, r)
	case "html":
		var text bytes.Buffer
		d := &writer{w: &text}
		d.replay(r)
		if d.err != nil {
			return d.err
		}
		return replayHTML(r, text.String()).Write(w)
	}
	return fmt.Errorf("unknown format %q: want one of %s", format, strings.Join(Formats, ", "))
}

func (r *Replay) top() int {
	if r.Top <= 0 {
		return 10
	}
	return r.Top
}

// figureRows are the rows of the main table: label, metric, unit.
var figureRows = []struct {
	label, metric string
	unit          func(int64) string
}{
	{"CPU time (ms)", RunNs, ms1},
	{"runnable time (ms)", RunnableNs, ms1},
	{"wakeups (samples)", WakeupCount, count},
	{"wakeup latency p50 (us)", WakeupP50Ns, us1},
	{"wakeup latency p90 (us)", WakeupP90Ns, us1},
	{"wakeup latency p99 (us)", WakeupP99Ns, us1},
	{"wakeup latency max (us)", WakeupMaxNs, us1},
	{"wakeup latency mean (us)", WakeupMeanNs, us1},
	{"preemptions", Preemptions, count},
	{"migrations", Migrations, count},
	{"context switches", ContextSwitches, count},
	{"idle with runnable (ms)", IdleWithRunnableNs, ms1},
	{"completion (ms)", CompletionNs, ms1},
}

func ms1(ns int64) string  { return strconv.FormatFloat(float64(ns)/1e6, 'f', 1, 64) }
func us1(ns int64) string  { return strconv.FormatFloat(float64(ns)/1e3, 'f', 1, 64) }
func count(n int64) string { return strconv.FormatInt(n, 10) }
func fmtRatio(c Cell) string {
	r, ok := c.Ratio()
	if !ok {
		return "-"
	}
	return strconv.FormatFloat(r, 'f', 3, 64)
}
func fmtChange(c Cell) string {
	p, ok := c.ChangePct()
	if !ok {
		return "-"
	}
	if math.Abs(p) < 0.05 {
		return "0.0%"
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}

func (d *writer) replay(r *Replay) {
	c := r.Comparison
	if d.md {
		d.printf("# schedlens replay: %s\n\n", report.MarkdownEscape(r.Trace.Path))
	}
	fields := [][2]string{
		{"trace", r.Trace.Path},
		{"policy", fmt.Sprintf("%s (HZ %d, seed %d)", r.Policy, r.HZ, r.Seed)},
		{"topology", r.Topology},
		{"window", fmt.Sprintf("%s .. %s s", r.Window.Start.Seconds(), r.Window.End.Seconds())},
	}
	if r.Filter != "" {
		fields = append(fields, [2]string{"tasks", "restricted to " + r.Filter + ": every figure below counts these tasks only, " +
			"in both runs (the CPUs still ran every task)"})
	}
	d.fields(fields)

	ov := c.Scope(Overall)
	t := &report.Table{Header: []string{"figure", c.Base, c.New, "ratio", "change"}, Left: []bool{true}}
	for _, row := range figureRows {
		cell := ov.Cell(row.metric)
		t.Add(row.label, row.unit(cell.Base), row.unit(cell.New), fmtRatio(cell), fmtChange(cell))
	}
	d.title("Figures")
	d.table(t)
	d.defs(fmt.Sprintf("ratio: %s / %s; change: (%s - %s) / %s; - where %s is 0", c.New, c.Base, c.New, c.Base, c.Base, c.Base),
		fmt.Sprintf("wakeup latency CDF distance: %.3f (largest gap between the %s and %s shares of wakeups "+
			"under 2, 4, 8 ... us; 0 = the same distribution)", ov.CDFDistance, c.Base, c.New))

	v := Judge(c)
	d.title("Fidelity: " + v.Verdict)
	vt := &report.Table{Header: []string{"criterion", "threshold", "measured", "result"}, Left: []bool{true, true, true, true}}
	for _, cr := range v.Criteria {
		res := "fail"
		if cr.Pass {
			res = "pass"
		}
		m := cr.Measured()
		if cr.Detail != "" {
			m = cr.Detail
		}
		vt.Add(cr.Label, cr.Threshold, m, res)
	}
	d.table(vt)
	scope := "the whole trace"
	if c.Restricted {
		scope = "the selected tasks only"
	}
	d.defs(fmt.Sprintf("measured: %s / %s, over %s", c.New, c.Base, scope),
		"faithful: all pass; partly faithful: CPU time and at least half pass")
	d.para(v.Meaning())
	if len(r.Seeds) > 1 {
		d.seedTable(r.Seeds)
	}

	if len(r.Knobs) > 0 {
		d.title("Knobs")
		var ls, warns []string
		for _, k := range r.Knobs {
			ls = append(ls, k.Line())
			if s := k.Warning(); s != "" {
				warns = append(warns, "warning: "+s)
			}
		}
		d.lines(ls)
		if len(warns) > 0 {
			d.lines(warns)
		}
	}

	d.scopeTable(r, "By class", "class", "class:")
	d.scopeTable(r, "By comm", "comm", "comm:")
	d.taskTable(r)

	if len(r.Notes) > 0 {
		d.title("Assumptions")
		for _, n := range r.Notes {
			d.item("note: ", n)
		}
		d.printf("\n")
	}
	d.footer(r.Command, r.Version)
}

// scopeTable writes the classes or the top comms, recorded then modeled.
func (d *writer) scopeTable(r *Replay, title, col, prefix string) {
	c := r.Comparison
	t := &report.Table{Header: []string{col, "cpu ms", c.New[:min(5, len(c.New))], "wait ms", c.New[:min(5, len(c.New))], "p50 us",
		c.New[:min(5, len(c.New))], "CDF"}, Left: []bool{true}}
	n := 0
	for _, s := range c.Scopes {
		if !strings.HasPrefix(s.Scope, prefix) {
			continue
		}
		if prefix == "comm:" && n == r.top() {
			break
		}
		n++
		t.Add(d.name(strings.TrimPrefix(s.Scope, prefix)), ms1(s.Cell(RunNs).Base), ms1(s.Cell(RunNs).New),
			ms1(s.Cell(RunnableNs).Base), ms1(s.Cell(RunnableNs).New), us1(s.Cell(WakeupP50Ns).Base), us1(s.Cell(WakeupP50Ns).New),
			strconv.FormatFloat(s.CDFDistance, 'f', 3, 64))
	}
	if n == 0 {
		return
	}
	if prefix == "comm:" {
		title = fmt.Sprintf("%s (top %d by %s run + wait time)", title, n, c.Base)
	}
	d.title(title)
	d.table(t)
	d.defs(fmt.Sprintf("each pair: %s, then %s; wait: runnable time; p50: wakeup latency; CDF: distance "+
		"between the two wakeup latency distributions", c.Base, c.New))
}

// taskTable writes the top tasks present in both runs under one pid.
func (d *writer) taskTable(r *Replay) {
	c := r.Comparison
	if len(c.Tasks) == 0 {
		return
	}
	nw := c.New[:min(5, len(c.New))]
	t := &report.Table{Header: []string{"pid", "comm", "cpu ms", nw, "wait ms", nw, "p50 us", nw}, Left: []bool{false, true}}
	for i, x := range c.Tasks {
		if i == r.top() {
			break
		}
		t.Add(strconv.Itoa(int(x.PID)), d.name(x.Comm), ms1(x.Base.RunNs), ms1(x.New.RunNs), ms1(x.Base.RunnableNs),
			ms1(x.New.RunnableNs), us1(x.Base.Wakeup.P50Ns), us1(x.New.Wakeup.P50Ns))
	}
	d.title(fmt.Sprintf("Top tasks (by %s run + wait time)", c.Base))
	d.table(t)
}

// seedTable is the fidelity of each seed checked: the criteria's ratios
// and the verdict, and whether the verdict depends on the seed.
func (d *writer) seedTable(seeds []SeedVerdict) {
	if len(seeds) == 0 || len(seeds[0].Verdict.Criteria) == 0 {
		return
	}
	hdr := []string{"seed", "verdict"}
	short := map[string]string{criterionCPU: "cpu", criterionRunnable: "runnable", criterionLatency: "p50",
		Migrations: "migr", Preemptions: "preempt", ContextSwitches: "switches"}
	for _, cr := range seeds[0].Verdict.Criteria {
		hdr = append(hdr, short[cr.Name])
	}
	t := &report.Table{Header: hdr, Left: []bool{false, true}}
	for _, s := range seeds {
		row := []string{strconv.FormatUint(s.Seed, 10), s.Verdict.Verdict}
		for _, cr := range s.Verdict.Criteria {
			m := "-"
			if !math.IsInf(cr.Ratio, 0) {
				m = fmt.Sprintf("%.3f", cr.Ratio)
			}
			if !cr.Pass {
				m += "!"
			}
			row = append(row, m)
		}
		t.Add(row...)
	}
	d.title("Fidelity across seeds")
	d.table(t)
	d.defs("each seed replays the same recording under the same model; the figures are the criteria's " +
		"modeled / recorded ratios (p50: wakeup latency p50), ! where the criterion fails")
	same, detail := SeedSummary(seeds)
	if same {
		d.para(fmt.Sprintf("Every seed gives the same verdict (%s).", detail))
		return
	}
	d.para(fmt.Sprintf("The verdict depends on the seed: %s. The model's figures on this trace move with "+
		"its seed by more than the thresholds, so one replay is one draw among several; whatif compares "+
		"8 seeds a side and judges their mean.", detail))
}
