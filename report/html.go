package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
)

// writeHTML renders the page of a report or section command: the
// wakeup latency CDFs on a log axis (overall and by class, the top comms)
// for the report and latency, the per-CPU timeline with every
// idle-with-runnable window marked for the report, idle and misplaced,
// the per-task table, then the text report, which keeps every figure and
// definition.
func writeHTML(w io.Writer, in *Input, section Section) error {
	var text bytes.Buffer
	d := &doc{w: &text}
	r := &writer{d: d, in: in, a: in.Analysis}
	r.render(section)
	if d.err != nil {
		return d.err
	}
	name := in.Trace.Path
	if in.Trace.Embedded {
		name = "built-in trace (" + in.Trace.Path + ")"
	}
	title := map[Section]string{Full: "schedlens report", LatencySection: "schedlens latency", IdleSection: "schedlens idle",
		MisplacedSection: "schedlens misplaced"}[section] + ": " + name
	a := in.Analysis
	t := &in.Trace
	summary := fmt.Sprintf("%s, %d events, %s; window %s", formatName(t.Format), t.Events, TopologySummary(a.Topology), r.window())
	if in.Filter != "" {
		summary += "; only " + in.Filter
	}
	page := HTMLPage{Title: title, Summary: []string{summary + "."}, Warnings: r.allWarnings(), Text: text.String()}
	if section == Full || section == LatencySection {
		byClass, byComm := LatencyCDFs(a, min(in.top(), 6))
		page.Figures = append(page.Figures, HTMLFigure{
			SVG: CDFPlot{Label: "wakeup latency CDF, all tasks and by class", Series: byClass, Tail: true, Width: 580}.SVG(),
			Caption: "Wakeup latency of all tasks and of each scheduling class: the share of wakeups at or below each latency " +
				"(x: log scale; y: stretched towards 100% so that p90, p99 and p99.9 are equally far apart)."})
		if len(byComm) > 0 {
			page.Figures = append(page.Figures, HTMLFigure{
				SVG:     CDFPlot{Label: "wakeup latency CDF, top comms", Series: byComm, Tail: true, Width: 580}.SVG(),
				Caption: fmt.Sprintf("Wakeup latency of the %d comms with the most wakeup latency in all (axes as on the left).", len(byComm))})
		}
	}
	if section == Full || section == IdleSection || section == MisplacedSection {
		page.Figures = append(page.Figures, HTMLFigure{SVG: TimelineSVG(a, 1180),
			Caption: fmt.Sprintf("Per-CPU timeline, %s .. %s s: each of %d bins coloured by what filled most of it; "+
				"every idle-with-runnable window marked in red at least 1.5 px wide (hover for the task that waited).",
				a.Window.Start.Seconds(), a.Window.End.Seconds(), metrics.StripBins)})
	}
	if tt := taskTable(in); tt != nil {
		page.Tables = append(page.Tables, *tt)
	}
	return page.Write(w)
}

// LatencyCDFs returns the complete wakeup latency samples of a, ascending,
// as CDF series: "all wakeups" then each scheduling class (in the order
// of the latency table, when there is more than one), and the comms
// with the most wakeup latency in all (at most comms of them).
func LatencyCDFs(a *metrics.Analysis, comms int) (byClass, byComm []CDFSeries) {
	var all []int64
	class, comm := map[string][]int64{}, map[string][]int64{}
	for i := range a.Latency.Samples {
		s := &a.Latency.Samples[i]
		if s.Kind == metrics.SamplePreempt || s.Censored != metrics.CensoredNone {
			continue
		}
		all = append(all, s.DurNs)
		k := metrics.PrioClass(s.Prio)
		class[k] = append(class[k], s.DurNs)
		name := a.Latency.Comm(s)
		comm[name] = append(comm[name], s.DurNs)
	}
	slices.Sort(all)
	byClass = []CDFSeries{{Name: "all wakeups", Samples: all}}
	if len(a.Latency.Wakeup.ByClass) > 1 {
		for _, g := range a.Latency.Wakeup.ByClass {
			v := class[g.Key]
			slices.Sort(v)
			byClass = append(byClass, CDFSeries{Name: g.Key, Samples: v})
		}
	}
	groups := slices.Clone(a.Latency.Wakeup.ByComm)
	slices.SortStableFunc(groups, func(x, y metrics.GroupDist) int {
		if c := cmp.Compare(y.Dist.SumNs, x.Dist.SumNs); c != 0 {
			return c
		}
		return cmp.Compare(x.Comm, y.Comm)
	})
	for _, g := range groups {
		if len(byComm) == comms || g.Dist.Count == 0 {
			break
		}
		v := comm[g.Comm]
		slices.Sort(v)
		byComm = append(byComm, CDFSeries{Name: g.Comm, Samples: v})
	}
	return byClass, byComm
}

// maxTaskRows bounds the per-task table of a page.
const maxTaskRows = 2000

// taskTable is the per-task table of the page: every selected task that
// ran or waited in the window (the most runnable first, at most
// maxTaskRows), with its wakeup latency figures and the time it could
// have run on an idle CPU; nil without tasks.
func taskTable(in *Input) *HTMLTable {
	a := in.Analysis
	lat := map[timeline.TaskID]metrics.Dist{}
	for _, g := range a.Latency.Wakeup.ByTask {
		lat[g.Task] = g.Dist
	}
	could := map[timeline.TaskID]int64{}
	for _, c := range a.Idle.ByTask {
		could[c.Task] = c.CouldRunNs
	}
	var rows []metrics.TaskTimes
	for _, t := range in.Tasks {
		if t.RunNs > 0 || t.RunnableNs > 0 {
			rows = append(rows, t)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	slices.SortStableFunc(rows, func(x, y metrics.TaskTimes) int {
		if c := cmp.Compare(y.RunnableNs, x.RunnableNs); c != 0 {
			return c
		}
		if c := cmp.Compare(y.RunNs, x.RunNs); c != 0 {
			return c
		}
		return cmp.Compare(x.PID, y.PID)
	})
	title := fmt.Sprintf("Tasks (%d; click a column to sort)", len(rows))
	if len(rows) > maxTaskRows {
		title = fmt.Sprintf("Tasks (the %d most runnable of %d; click a column to sort)", maxTaskRows, len(rows))
		rows = rows[:maxTaskRows]
	}
	t := &Table{Header: []string{"pid", "comm", "run ms", "wait ms", "wake ms", "prmt ms", "wakeups", "p50 us", "p99 us", "max us",
		"preempted", "migrations", "could run ms"}, Left: []bool{false, true}}
	for _, tt := range rows {
		p50, p99, mx := "-", "-", "-"
		if d, ok := lat[tt.ID]; ok && d.Count > 0 {
			p50, p99, mx = usf(d.P50Ns), usf(d.P99Ns), usf(d.MaxNs)
		}
		comm := tt.Comm
		if tt.Censored {
			comm += "*"
		}
		t.Add(strconv.Itoa(int(tt.PID)), comm, msf(tt.RunNs), msf(tt.RunnableNs), msf(tt.WakeupLatencyNs), msf(tt.PreemptWaitNs),
			strconv.FormatInt(tt.Wakeups, 10), p50, p99, mx, strconv.FormatInt(tt.Preemptions, 10), strconv.FormatInt(tt.Migrations, 10),
			msf(could[tt.ID]))
	}
	return &HTMLTable{Title: title, Table: t, Notes: []string{
		"run: on CPU; wait = wake + prmt: wakeup latency + preemption wait (exact); wakeups: samples of wakeup latency, " +
			"p50/p99/max us: their percentiles; preempted: switch-outs while runnable; could run: waiting on a busy CPU " +
			"while a CPU it may use idled (misplaced (a)); * = an interval cut by a gap or an edge.",
	}}
}

// HTMLPage is a self-contained page: a title, summary paragraphs,
// warnings, SVG figures with captions (side by side when they fit), tables
// that sort on a click, then a text report kept whole (every figure and
// definition) in a <pre>. Every HTML output of schedlens is one.
type HTMLPage struct {
	Title    string
	Summary  []string
	Warnings []string
	Figures  []HTMLFigure
	Tables   []HTMLTable
	Text     string
}

// HTMLFigure is an inline SVG and its caption (plain text).
type HTMLFigure struct {
	SVG     string
	Caption string
}

// pageStyle lays the page out for a 1280-pixel window: two 580-pixel
// plots side by side, a full-width timeline, text at 13 px.
const pageStyle = `<style>
body{font-family:sans-serif;margin:20px auto;padding:0 16px;max-width:1200px;color:#222}
h1{font-size:22px;word-break:break-all}h2{font-size:17px;margin:1.2em 0 .4em}
p.summary{font-size:14px}ul.warn{font-size:13px;color:#8a4b00}
.figs{display:flex;flex-wrap:wrap;gap:8px 24px}figure{margin:0 0 8px 0}
figcaption{font-size:13px;color:#444;width:0;min-width:100%}
svg{max-width:100%;height:auto}svg text{font-family:sans-serif;font-size:11px;fill:#222}
.scroll{max-height:36em;overflow:auto;border:1px solid #ccc}
table{border-collapse:collapse;font-size:13px}th,td{padding:2px 8px;text-align:right;white-space:nowrap}
th.l,td.l{text-align:left}th{position:sticky;top:0;background:#eef2f7;cursor:pointer;border-bottom:1px solid #aaa}
th[data-dir=asc]::after{content:" \25B2"}th[data-dir=desc]::after{content:" \25BC"}
tbody tr:nth-child(even){background:#f6f6f6}p.note{font-size:12px;color:#444;max-width:1000px}
pre{font-size:13px;line-height:1.3}
</style>
`

// Write renders the page.
func (p *HTMLPage) Write(w io.Writer) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n", html.EscapeString(p.Title))
	b.WriteString(pageStyle)
	if len(p.Tables) > 0 {
		b.WriteString(sortScript)
	}
	b.WriteString("</head>\n<body>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n", html.EscapeString(p.Title))
	for _, s := range p.Summary {
		fmt.Fprintf(&b, "<p class=\"summary\">%s</p>\n", html.EscapeString(s))
	}
	if len(p.Warnings) > 0 {
		b.WriteString("<ul class=\"warn\">\n")
		for _, s := range p.Warnings {
			fmt.Fprintf(&b, "<li>%s</li>\n", html.EscapeString(s))
		}
		b.WriteString("</ul>\n")
	}
	if len(p.Figures) > 0 {
		b.WriteString("<div class=\"figs\">\n")
		for _, f := range p.Figures {
			b.WriteString("<figure>\n")
			b.WriteString(f.SVG)
			fmt.Fprintf(&b, "<figcaption>%s</figcaption>\n</figure>\n", html.EscapeString(f.Caption))
		}
		b.WriteString("</div>\n")
	}
	for i := range p.Tables {
		p.Tables[i].html(&b)
	}
	if len(p.Figures)+len(p.Tables) > 0 {
		b.WriteString("<h2>Text report</h2>\n")
	}
	b.WriteString("<pre>\n")
	b.WriteString(html.EscapeString(p.Text))
	b.WriteString("</pre>\n</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
