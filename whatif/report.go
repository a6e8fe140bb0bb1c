package whatif

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/compare"
	"github.com/schedlens/schedlens/report"
)

// Report is everything a what-if report renders.
type Report struct {
	Prediction *Prediction
	// Trace is the recording.
	Trace report.Trace
	// Window says how the window was chosen.
	Window string
	// Filter describes a --pid/--comm selection, "" for none.
	Filter string
	// Top is how many comms get their own table (0: 5).
	Top     int
	Command string
	Version string
	// Warnings: what the command warned about on stderr, for the JSON header.
	Warnings []string
}

// Formats lists the formats of Write.
var Formats = []string{"text", "markdown", "json", "html"}

// Write renders a what-if report: "text" (80 columns), "markdown", "json"
// or "html" (the wakeup latency CDFs of the recording and both models
// over the text report).
func Write(w io.Writer, r *Report, format string) error {
	if r.Prediction == nil || r.Prediction.AB == nil {
		return fmt.Errorf("whatif report: no prediction")
	}
	switch format {
	case "text", "markdown":
		d := compare.NewDoc(w, format == "markdown")
		writeDoc(d, r)
		return d.Err()
	case "json":
		return writeJSON(w, r)
	case "html":
		var text bytes.Buffer
		d := compare.NewDoc(&text, false)
		writeDoc(d, r)
		if d.Err() != nil {
			return d.Err()
		}
		return htmlPage(r, text.String()).Write(w)
	}
	return fmt.Errorf("unknown format %q: want one of %s", format, strings.Join(Formats, ", "))
}

func (r *Report) top() int {
	if r.Top <= 0 {
		return 5
	}
	return r.Top
}

// rows are the table rows of the judged metrics.
func rows() []compare.TableRow {
	var out []compare.TableRow
	for _, row := range compare.TableRows() {
		if judged(row.Metric) {
			out = append(out, row)
		}
	}
	return out
}

func writeDoc(d *compare.Doc, r *Report) {
	p := r.Prediction
	d.Heading("schedlens whatif: " + strings.Join(p.Changes, " ") + " (" + strconv.Itoa(len(p.Seeds)) + " seeds a side)")
	cpus := fmt.Sprintf("%d CPUs", r.Trace.CPUs)
	if r.Trace.CPUs == 1 {
		cpus = "1 CPU"
	}
	fields := [][2]string{
		{"trace", fmt.Sprintf("%s (%s, %s, window %s .. %s s)", r.Trace.Path, r.Trace.Format, cpus,
			p.Recorded.Window.Start.Seconds(), p.Recorded.Window.End.Seconds())},
		{"baseline", p.Baseline + " (the recorded kernel's model)"},
		{"what-if", p.WhatIf + cpuText(p)},
		{"seeds", fmt.Sprintf("%d a side (%s), HZ %d", len(p.Seeds), seedList(p.Seeds), p.HZ)},
		{"window", r.Window},
	}
	if r.Filter != "" {
		fields = append(fields, [2]string{"tasks", "restricted to " + r.Filter + ": every figure counts these tasks only"})
	}
	fields = append(fields, [2]string{"method", "each seed replays the recording under both models; a figure is the mean over " +
		"the seeds of its side; Welch's t on the per-seed figures gives the 95% interval of the change (the model's " +
		"sensitivity to its seed, not the kernel's run-to-run noise); the verdict weighs that interval against the " +
		"baseline's own error on the figure (docs/whatif.md)"})
	d.Fields(fields)

	d.Title("Summary")
	d.Lines(summary(p))

	d.Title("Overall")
	table(d, p, compare.Overall, "metric", false)
	d.Defs("baseline, what-if: the mean over the seeds; (%): change from the baseline; *...*: the interval excludes 0; "+
		"95%: half-width of the 95% interval of the change, in % of the baseline",
		"verdict (lower is better for every figure): better/worse: the interval excludes 0 and clears the baseline's "+
			"error on the figure (see Fidelity); no change: no detectable change, the interval contains 0 and stays "+
			"within that error; inconclusive: the change is within that error, or the interval reaches beyond it")

	d.Title("Fidelity of the baseline")
	ft := &report.Table{Header: []string{"metric", "recorded", "baseline", "error %"}, Left: []bool{true}}
	for _, row := range rows() {
		c := p.Cell(compare.Overall, row.Metric)
		if c == nil {
			continue
		}
		rec, base, fid := "-", "-", "-"
		if c.HasRecorded {
			rec = compare.FormatValue(c.Recorded, row.Div)
		}
		if c.HasBaseline {
			base = compare.FormatValue(c.Baseline, row.Div)
		}
		if c.HasFidelity {
			fid = strconv.FormatFloat(c.FidelityPct, 'f', 1, 64)
		}
		ft.Add(row.Label, rec, base, fid)
	}
	d.Table(ft)
	d.Defs("error: |baseline / recorded - 1|, the baseline model's own error on the figure; a predicted change " +
		"must clear it to be called better or worse")

	n := 0
	for _, sc := range p.AB.Scopes {
		if strings.HasPrefix(sc, "class:") {
			if n == 0 {
				d.Title("By class")
			}
			n++
			table(d, p, sc, "class "+strings.TrimPrefix(sc, "class:"), true)
		}
	}
	n = 0
	comms := 0
	for _, sc := range p.AB.Scopes {
		if strings.HasPrefix(sc, "comm:") {
			comms++
		}
	}
	for _, sc := range p.AB.Scopes {
		if !strings.HasPrefix(sc, "comm:") || n == r.top() {
			continue
		}
		if n == 0 {
			d.Title(fmt.Sprintf("By comm (top %d by baseline run + runnable time)", min(r.top(), comms)))
		}
		n++
		table(d, p, sc, "comm "+d.Name(strings.TrimPrefix(sc, "comm:")), true)
	}
	if n > 0 {
		d.Defs("columns as in Overall; tasks are matched between runs by comm")
	}
	if len(p.Notes) > 0 {
		d.Title("Assumptions")
		for _, note := range p.Notes {
			d.Item("note: ", note)
		}
		d.Printf("\n")
	}
	d.Footer(r.Command, r.Version)
}

func cpuText(p *Prediction) string {
	var s string
	for _, tc := range p.Tasks {
		s += ", " + tc.String()
	}
	if p.CPUs == nil {
		return s
	}
	return s + ", on recorded CPUs " + p.CPUs.String() + " only"
}

func seedList(s []uint64) string {
	contiguous := true
	for i, x := range s {
		contiguous = contiguous && x == s[0]+uint64(i)
	}
	if contiguous && len(s) > 2 {
		return fmt.Sprintf("seeds %d-%d", s[0], s[len(s)-1])
	}
	var parts []string
	for _, x := range s {
		parts = append(parts, strconv.FormatUint(x, 10))
	}
	return "seeds " + strings.Join(parts, ",")
}

// table writes one scope's table; scoped keeps the headline rows.
func table(d *compare.Doc, p *Prediction, scope, head string, scoped bool) {
	d.Table(scopeTable(p, scope, head, scoped))
}

// scopeTable is one scope's table: per metric the two means, the change,
// the half-width of its interval and the verdict.
func scopeTable(p *Prediction, scope, head string, scoped bool) *report.Table {
	t := &report.Table{Header: []string{head, "baseline", "", "what-if", "", "95%", "verdict"},
		Left: []bool{true, false, false, false, false, false, true}}
	for _, row := range rows() {
		if scoped && !row.Scoped {
			continue
		}
		c := p.Cell(scope, row.Metric)
		if c == nil {
			continue
		}
		bv, nv, bp := "-", "-", "(       -)"
		if c.HasBaseline {
			bv, bp = compare.FormatValue(c.Baseline, row.Div), "(   0.00%)"
		}
		if c.HasWhatIf {
			nv = compare.FormatValue(c.WhatIf, row.Div)
		}
		t.Add(row.Label, bv, bp, nv, pct(c), halfWidth(c), shortVerdict(c.Verdict))
	}
	return t
}

// pct is the change column: "(  +1.23%)", "*  +1.23%*" when the interval
// excludes 0.
func pct(c *Cell) string {
	if !c.HasChange {
		if c.HasBaseline && c.HasWhatIf && c.WhatIf == 0 {
			return "(   0.00%)"
		}
		return "(       -)"
	}
	v := c.ChangePct
	if math.Abs(v) < 0.005 {
		v = 0
	}
	s := fmt.Sprintf("%+7.2f%%", v)
	switch {
	case v == 0:
		s = "   0.00%"
	case math.Abs(v) >= 1000:
		s = fmt.Sprintf("%+7.0f%%", v)
	}
	if c.Tested && (c.CI95[0] > 0 || c.CI95[1] < 0) {
		return "*" + s + "*"
	}
	return "(" + s + ")"
}

// halfWidth is the interval's half-width in % ("±1.23"), blank untested.
// Welch's interval is symmetric about the change.
func halfWidth(c *Cell) string {
	if !c.Tested {
		return ""
	}
	h := (c.CI95[1] - c.CI95[0]) / 2
	switch {
	case h < 0.005:
		return "±0.00"
	case h < 10:
		return fmt.Sprintf("±%.2f", h)
	case h < 1000:
		return fmt.Sprintf("±%.1f", h)
	}
	return fmt.Sprintf("±%.0f", h)
}

func shortVerdict(v Verdict) string {
	if v == NoChange {
		return "no change"
	}
	return string(v)
}

// summary lists the overall verdicts: better and worse with their change,
// then the metrics of each other verdict.
func summary(p *Prediction) []string {
	var out, same, unsure []string
	for _, row := range rows() {
		c := p.Cell(compare.Overall, row.Metric)
		if c == nil {
			continue
		}
		switch c.Verdict {
		case Better, Worse:
			out = append(out, fmt.Sprintf("%s: %s, %s -> %s (%+.1f%%, 95%% CI %s)", row.Label, c.Verdict,
				compare.FormatValue(c.Baseline, row.Div), compare.FormatValue(c.WhatIf, row.Div), c.ChangePct, compare.FormatInterval(c.CI95)))
		case NoChange:
			same = append(same, row.Label)
		default:
			unsure = append(unsure, row.Label)
		}
	}
	if len(out) == 0 {
		out = append(out, "no overall figure is predicted better or worse")
	}
	if len(same) > 0 {
		out = append(out, "no detectable change: "+strings.Join(same, ", "))
	}
	if len(unsure) > 0 {
		out = append(out, "inconclusive: "+strings.Join(unsure, ", "))
	}
	return out
}
