package compare

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/report"
)

// ABReport is everything the A/B report renders.
type ABReport struct {
	AB *AB
	// Window says how each trace's window was chosen ("the valid window
	// of each trace", "from the first marker containing ...").
	Window string
	// Filter describes a --comm selection, "" for none.
	Filter string
	// Top is how many comms get their own table and plot (0: 5).
	Top     int
	Command string
	Version string
	// Warnings: what the command warned about on stderr, for the JSON header.
	Warnings []string
}

// ABFormats lists the formats of WriteAB.
var ABFormats = []string{"text", "markdown", "json", "html"}

// WriteAB renders an A/B report: "text" (80 columns), "markdown", "json"
// or "html" (the latency CDFs of both sides over the text report).
func WriteAB(w io.Writer, r *ABReport, format string) error {
	if r.AB == nil || len(r.AB.Base) == 0 || len(r.AB.New) == 0 {
		return fmt.Errorf("compare report: a side has no runs")
	}
	switch format {
	case "text", "markdown":
		d := &writer{w: w, md: format == "markdown"}
		d.ab(r)
		return d.err
	case "json":
		return writeABJSON(w, r)
	case "html":
		var text bytes.Buffer
		d := &writer{w: &text}
		d.ab(r)
		if d.err != nil {
			return d.err
		}
		return abHTML(r, text.String()).Write(w)
	}
	return fmt.Errorf("unknown format %q: want one of %s", format, strings.Join(ABFormats, ", "))
}

func (r *ABReport) top() int {
	if r.Top <= 0 {
		return 5
	}
	return r.Top
}

// abRows are the rows of the A/B tables: label, metric, unit divisor, and
// whether the per-scope tables show it.
var abRows = []struct {
	label, metric string
	div           float64
	scoped        bool
}{
	{"CPU time ms", RunNs, 1e6, true},
	{"runnable ms", RunnableNs, 1e6, true},
	{"wakeups", WakeupCount, 1, true},
	{"wakeup p50 us", WakeupP50Ns, 1e3, true},
	{"wakeup p90 us", WakeupP90Ns, 1e3, false},
	{"wakeup p99 us", WakeupP99Ns, 1e3, true},
	{"wakeup max us", WakeupMaxNs, 1e3, false},
	{"wakeup mean us", WakeupMeanNs, 1e3, true},
	{"preemptions", Preemptions, 1, true},
	{"migrations", Migrations, 1, true},
	{"context switches", ContextSwitches, 1, false},
	{"idle w/ runnable ms", IdleWithRunnableNs, 1e6, false},
	{"completion ms", CompletionNs, 1e6, true},
}

// num formats a figure in its unit: integers as such, else two decimals
// below 1000, one below 100000, none above.
func num(v, div float64) string {
	x := v / div
	switch a := math.Abs(x); {
	case x == math.Trunc(x) && a < 1e9:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case a < 1000:
		return strconv.FormatFloat(x, 'f', 2, 64)
	case a < 100000:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 0, 64)
}

// pctCell is the change column: "(  +1.23%)", "*  +1.23%*" when
// significant, "(      -)" without a change.
func pctCell(r *Row) string {
	if !r.HasChange {
		if len(r.BaseRuns) > 0 && len(r.NewRuns) > 0 && r.New == 0 {
			return "(    0.00%)" // both 0
		}
		return "(        -)"
	}
	p := r.ChangePct
	if math.Abs(p) < 0.005 {
		p = 0
	}
	s := fmt.Sprintf("%+8.2f%%", p)
	switch {
	case p == 0:
		s = "    0.00%"
	case math.Abs(p) >= 10000:
		s = fmt.Sprintf("%+8.0f%%", p)
	}
	if r.Significant {
		return "*" + s + "*"
	}
	return "(" + s + ")"
}

// ciCell is the interval column, blank when untested.
func ciCell(r *Row) string {
	if !r.Tested {
		return ""
	}
	f := func(v float64) string {
		switch a := math.Abs(v); {
		case a < 0.005:
			return "0.00"
		case a < 10:
			return fmt.Sprintf("%+.2f", v)
		case a < 1000:
			return fmt.Sprintf("%+.1f", v)
		}
		return fmt.Sprintf("%+.0f", v)
	}
	return "[" + f(r.CI95[0]) + ", " + f(r.CI95[1]) + "]"
}

func (a *AB) runsText(side []Run) string {
	if len(side) == 1 {
		return "1 run"
	}
	return strconv.Itoa(len(side)) + " runs"
}

func (d *writer) ab(r *ABReport) {
	a := r.AB
	title := fmt.Sprintf("schedlens compare: %s (%s) vs %s (%s)", a.BaseName, a.runsText(a.Base), a.NewName, a.runsText(a.New))
	if d.md {
		d.printf("# %s\n\n", report.MarkdownEscape(title))
	} else {
		d.printf("%s\n\n", title)
	}
	var fields [][2]string
	for _, side := range []struct {
		name string
		runs []Run
	}{{a.BaseName, a.Base}, {a.NewName, a.New}} {
		for i, run := range side.runs {
			key := side.name
			if len(side.runs) > 1 {
				key += " " + strconv.Itoa(i+1)
			}
			t := &run.Trace
			cpus := fmt.Sprintf("%d CPUs", t.CPUs)
			if t.CPUs == 1 {
				cpus = "1 CPU"
			}
			desc := fmt.Sprintf("%s (%s, %s, window %s .. %s s)", t.Path, t.Format, cpus,
				run.Side.Window.Start.Seconds(), run.Side.Window.End.Seconds())
			fields = append(fields, [2]string{key, desc})
		}
	}
	fields = append(fields, [2]string{"window", r.Window})
	if r.Filter != "" {
		fields = append(fields, [2]string{"tasks", "restricted to " + r.Filter + ": every figure counts these tasks only (the CPUs still ran every task)"})
	}
	fields = append(fields, [2]string{"method", a.methodText()})
	d.fields(fields)

	d.title("Summary")
	if sum := a.summary(); len(sum) > 1 {
		d.para(sum[0])
		d.lines(sum[1:])
	} else {
		d.para(sum[0])
	}

	d.title("Overall")
	d.abTable(a, Overall, "metric", false)
	d.defs(a.tableDefs()...)

	if a.Method == MethodWelch {
		d.title("Spread over runs")
		t := &report.Table{Header: []string{"metric", a.BaseName + " sd", "cv", a.NewName + " sd", "cv", "p"}, Left: []bool{true}}
		for _, row := range abRows {
			x := a.Row(Overall, row.metric)
			if x == nil || len(x.BaseRuns) == 0 || len(x.NewRuns) == 0 {
				continue
			}
			p := ""
			if x.Tested {
				p = strconv.FormatFloat(x.P, 'f', 3, 64)
			}
			t.Add(row.label, num(x.BaseSD, row.div), cv(x.BaseSD, x.Base), num(x.NewSD, row.div), cv(x.NewSD, x.New), p)
		}
		d.table(t)
		d.defs("sd: standard deviation of the per-run figures (n - 1); cv: sd / mean; p: two-sided p value of Welch's t-test "+
			"(significant below 0.05)", "each run's figure is in the JSON output (base_runs, new_runs)")
	}

	n := 0
	for _, sc := range a.Scopes {
		if strings.HasPrefix(sc, "class:") {
			if n == 0 {
				d.title("By class")
			}
			n++
			d.abTable(a, sc, "class "+strings.TrimPrefix(sc, "class:"), true)
		}
	}
	n = 0
	for _, sc := range a.Scopes {
		if !strings.HasPrefix(sc, "comm:") || n == r.top() {
			continue
		}
		if n == 0 {
			d.title(fmt.Sprintf("By comm (top %d by %s run + runnable time)", min(r.top(), a.countScopes("comm:")), a.BaseName))
		}
		n++
		d.abTable(a, sc, "comm "+d.name(strings.TrimPrefix(sc, "comm:")), true)
	}
	if n > 0 || a.countScopes("class:") > 0 {
		d.defs("columns as in Overall; tasks are matched between runs by comm (pids differ), classes by policy and priority")
	}

	if notes := a.notes(); len(notes) > 0 {
		d.title("Assumptions")
		for _, n := range notes {
			d.item("note: ", n)
		}
		d.printf("\n")
	}
	d.footer(r.Command, r.Version)
}

// abTable writes one scope's table; scoped keeps the headline rows only.
func (d *writer) abTable(a *AB, scope, head string, scoped bool) {
	t := &report.Table{Header: []string{head, a.BaseName, "", a.NewName, "", "95% CI %"}, Left: []bool{true}}
	for _, row := range abRows {
		if scoped && !row.scoped {
			continue
		}
		x := a.Row(scope, row.metric)
		if x == nil {
			continue
		}
		bv, nv, bp := "-", "-", "(        -)"
		if len(x.BaseRuns) > 0 {
			bv, bp = num(x.Base, row.div), "(    0.00%)"
		}
		if len(x.NewRuns) > 0 {
			nv = num(x.New, row.div)
		}
		t.Add(row.label, bv, bp, nv, pctCell(x), ciCell(x))
	}
	d.table(t)
}

func (a *AB) countScopes(prefix string) int {
	n := 0
	for _, s := range a.Scopes {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

func cv(sd, mean float64) string {
	if mean == 0 {
		return "-"
	}
	return strconv.FormatFloat(sd/math.Abs(mean)*100, 'f', 1, 64) + "%"
}

// methodText says how significance was decided, and what it cannot say.
func (a *AB) methodText() string {
	if a.Method == MethodWelch {
		return fmt.Sprintf("%d and %d runs: every figure is the mean over the runs of its side; Welch's t-test on the per-run "+
			"figures decides significance (95%% interval of the difference of the means, in %% of the %s mean)",
			len(a.Base), len(a.New), a.BaseName)
	}
	s := fmt.Sprintf("one run on a side: run-to-run noise is NOT measured, so no change below is shown to outlast a rerun; "+
		"only the wakeup latency p50, p90, p99 and mean are tested, by a bootstrap over their samples (%d resamples "+
		"of each side, seed %d; 95%% percentile interval of the resampled change; means of over %d samples from their "+
		"normal limit); the other figures are not tested; record 2 or more runs of each side (3+ advised) for a test of "+
		"every figure", Replicates, BootstrapSeed, ExactMeanLimit)
	if len(a.Base) > 1 || len(a.New) > 1 {
		s += "; the side with several runs has its figures averaged and its samples pooled"
	}
	return s
}

// tableDefs are the definitions under the Overall table.
func (a *AB) tableDefs() []string {
	test := "Welch's t-test on the per-run figures"
	if a.Method == MethodBootstrap {
		test = "bootstrap over the wakeup latency samples"
	}
	return []string{
		fmt.Sprintf("%s, %s: the figure (the mean over the runs of the side); (%%): change from %s, (%s - %s) / %s",
			a.BaseName, a.NewName, a.BaseName, a.NewName, a.BaseName, a.BaseName),
		fmt.Sprintf("*...*: significant, the 95%% interval of the change excludes 0 (%s); 95%% CI %%: that interval; "+
			"blank: not tested; a change without * is not shown to be real (inside the noise, or not tested): neither an "+
			"improvement nor a regression", test),
		"runnable: wakeup latency + preemption wait; wakeup: waking to switch-in of complete samples (nearest-rank " +
			"percentiles); preemptions: switch-outs in R/R+; idle w/ runnable: a CPU idle while a task allowed on it " +
			"waited; completion: window start to the end of the last run in the window (schedlens tasks, latency, idle)",
	}
}

// summary lists the significant overall changes.
func (a *AB) summary() []string {
	var out []string
	for _, row := range abRows {
		x := a.Row(Overall, row.metric)
		if x == nil || !x.Significant {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s -> %s (%+.1f%%, 95%% CI %s)", row.label, num(x.Base, row.div), num(x.New, row.div),
			x.ChangePct, ciCell(x)))
	}
	if len(out) == 0 {
		s := "no overall figure changed significantly"
		if a.Method == MethodBootstrap {
			s += " (only the wakeup latency figures were tested)"
		}
		return []string{s}
	}
	head := "significant overall changes:"
	if a.Method == MethodBootstrap {
		head = "significant overall changes (wakeup latency only; run-to-run noise not measured):"
	}
	return append([]string{head}, out...)
}

// notes are the runs' analysis assumptions, each once, with the runs it
// applies to when not all.
func (a *AB) notes() []string {
	type note struct {
		text string
		runs []string
	}
	var list []*note
	idx := map[string]*note{}
	total := 0
	for _, side := range []struct {
		name string
		runs []Run
	}{{a.BaseName, a.Base}, {a.NewName, a.New}} {
		for i, r := range side.runs {
			total++
			label := side.name
			if len(side.runs) > 1 {
				label += " " + strconv.Itoa(i+1)
			}
			for _, n := range r.Side.Notes {
				x, ok := idx[n]
				if !ok {
					x = &note{text: n}
					idx[n] = x
					list = append(list, x)
				}
				x.runs = append(x.runs, label)
			}
		}
	}
	var out []string
	for _, n := range list {
		s := n.text
		if len(n.runs) < total {
			s += " (" + strings.Join(n.runs, ", ") + ")"
		}
		out = append(out, s)
	}
	return out
}
