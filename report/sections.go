package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// writer writes the text and markdown forms.
type writer struct {
	d  *doc
	in *Input
	a  *metrics.Analysis
}

func (r *writer) render(section Section) {
	switch section {
	case Full:
		r.header("schedlens report")
		r.traceSection()
		r.topTasks()
		r.latency(false)
		r.idle(false)
		r.ownQueue(false)
		r.misplaced(false)
	case LatencySection:
		r.header("schedlens latency")
		r.traceBrief()
		r.latency(true)
	case IdleSection:
		r.header("schedlens idle")
		r.traceBrief()
		r.idle(true)
		r.ownQueue(true)
	case MisplacedSection:
		r.header("schedlens misplaced")
		r.traceBrief()
		r.misplaced(true)
	}
	r.warnings()
	r.footer()
}

var formatNames = map[string]string{
	"ftrace":      "ftrace text (tracefs trace file)",
	"trace_pipe":  "ftrace trace_pipe stream",
	"trace-cmd":   "trace-cmd report text",
	"perf-script": "perf script text",
	"perfetto":    "Perfetto protobuf",
}

func formatName(f string) string {
	if n, ok := formatNames[f]; ok {
		return n
	}
	return f
}

func (r *writer) header(cmd string) {
	t := &r.in.Trace
	name := t.Path
	if t.Embedded {
		name = "built-in trace"
	}
	r.d.heading(cmd + ": " + name)
	if t.Embedded {
		r.d.para("No TRACE was given, so this is the real trace built into schedlens: " + t.EmbeddedAbout +
			" Run `" + cmd + " TRACE` on your own capture.")
	}
}

func (r *writer) window() string {
	w := r.a.Window
	return fmt.Sprintf("%s .. %s s (%s ms)", w.Start.Seconds(), w.End.Seconds(), msf(int64(w.End-w.Start)))
}

// traceBrief is the one-paragraph trace summary of the section commands.
func (r *writer) traceBrief() {
	t := &r.in.Trace
	s := fmt.Sprintf("%s, %d CPUs (%s), window %s", formatName(t.Format), t.CPUs, TopologySource(r.a.Topology), r.window())
	if t.LostEvents > 0 || t.LostGaps > 0 {
		s += fmt.Sprintf("; %d events lost in %d gaps", t.LostEvents, t.LostGaps)
	}
	if t.Inconsistencies > 0 {
		s += fmt.Sprintf("; %d inconsistencies", t.Inconsistencies)
	}
	if r.in.Filter != "" {
		s += "; only " + r.in.Filter
	}
	r.d.para("Trace: " + s + ".")
}

func (r *writer) traceSection() {
	t := &r.in.Trace
	r.d.title("Trace")
	format := formatName(t.Format)
	if t.Compression != "" {
		format += ", " + t.Compression
	}
	if t.Clock != "" {
		format += ", clock " + t.Clock
	}
	if t.Kernel != "" {
		format += ", kernel " + t.Kernel
	}
	rows := [][2]string{}
	if !t.Embedded {
		rows = append(rows, [2]string{"file", t.Path})
	}
	rows = append(rows, [2]string{"format", format})
	rows = append(rows, [2]string{"CPUs", fmt.Sprintf("%d; topology %s: %s", t.CPUs, TopologySource(r.a.Topology), TopologySummary(r.a.Topology))})
	rows = append(rows, [2]string{"domains", DomainsSummary(r.a.Topology)})
	win := r.window()
	if r.a.Window.Start == t.ValidStart && t.ValidStart > t.Start {
		win += fmt.Sprintf("; the trace starts at %s but not every CPU had recorded by then", t.Start.Seconds())
	}
	rows = append(rows, [2]string{"window", win})
	ev := strconv.Itoa(t.Events)
	switch {
	case t.HasWaking && t.HasWakeup:
		ev += " (sched_waking and sched_wakeup present)"
	case t.HasWaking:
		ev += " (sched_waking, no sched_wakeup: runqueues inferred)"
	case t.HasWakeup:
		ev += " (no sched_waking: latency starts at sched_wakeup)"
	default:
		ev += " (no wakeup events: wakeup latency cannot be measured)"
	}
	if t.UnknownEvents > 0 {
		ev += fmt.Sprintf("; %d events of other kinds ignored", t.UnknownEvents)
	}
	rows = append(rows, [2]string{"events", ev})
	lost := "none"
	if t.LostGaps > 0 {
		lost = fmt.Sprintf("%d in %d gaps; nothing is measured across a gap", t.LostEvents, t.LostGaps)
	}
	rows = append(rows, [2]string{"lost events", lost})
	late := "none"
	switch n := len(t.Late); {
	case n > 0 && n <= 2:
		var cs []string
		for _, c := range t.Late {
			cs = append(cs, fmt.Sprintf("CPU %d starts %s ms late", c.CPU, msf(c.LateNs)))
		}
		late = strings.Join(cs, ", ")
	case n > 2:
		last := t.Late[0]
		for _, c := range t.Late {
			if c.LateNs > last.LateNs {
				last = c
			}
		}
		late = fmt.Sprintf("%d CPUs start late, by up to %s ms (CPU %d)", n, msf(last.LateNs), last.CPU)
	}
	if len(t.Late) > 0 {
		if t.ValidStartWhy != "" {
			late += "; " + t.ValidStartWhy
		}
		if t.ValidStartRule == timeline.StartLatestCPU {
			late += fmt.Sprintf("; nothing before %s s is measured", t.ValidStart.Seconds())
		}
	}
	rows = append(rows, [2]string{"late CPUs", late})
	inc := "none"
	if t.Inconsistencies > 0 {
		inc = fmt.Sprintf("%d sched_switch events missing from the trace; the time they touch counts as unknown, not as anyone's", t.Inconsistencies)
	}
	rows = append(rows, [2]string{"inconsistent", inc})
	unobs := "under 1% of the window on every CPU"
	if u := r.unobserved(); u != "" {
		unobs = u
	}
	rows = append(rows, [2]string{"unobserved", unobs})
	if t.SkippedRecords > 0 {
		rows = append(rows, [2]string{"skipped", fmt.Sprintf("%d malformed records (--lenient)", t.SkippedRecords)})
	}
	if r.in.Filter != "" {
		rows = append(rows, [2]string{"tasks", "only " + r.in.Filter})
	}
	r.d.fields(rows)
}

func truncComm(s string, n int) string {
	if len([]rune(s)) > n {
		return string([]rune(s)[:n])
	}
	return s
}

// taskName is "comm" cut to fit a text column; markdown keeps it whole.
func (r *writer) comm(s string) string {
	if r.d.md {
		return s
	}
	return truncComm(s, 15)
}

func (r *writer) topTasks() {
	n := r.in.top()
	r.d.title(fmt.Sprintf("Top %d tasks by runnable time", n))
	rows := topByRunnable(r.in.Tasks, n)
	maxLat := map[timeline.TaskID]int64{}
	for _, g := range r.a.Latency.Wakeup.ByTask {
		maxLat[g.Task] = g.Dist.MaxNs
	}
	t := &Table{Header: []string{"pid", "comm", "run ms", "wait ms", "wake ms", "prmt ms", "wakeups", "max us"}, Left: []bool{false, true}}
	for _, tt := range rows {
		mx := "-"
		if v, ok := maxLat[tt.ID]; ok {
			mx = usf(v)
		}
		comm := r.comm(tt.Comm)
		if tt.Censored {
			comm += "*"
		}
		t.Add(strconv.Itoa(int(tt.PID)), comm, msf(tt.RunNs), msf(tt.RunnableNs), msf(tt.WakeupLatencyNs), msf(tt.PreemptWaitNs),
			strconv.FormatInt(tt.Wakeups, 10), mx)
	}
	if len(t.Rows) == 0 {
		r.d.para("No task was runnable in the window.")
		return
	}
	r.d.table(t)
	r.d.defs("wait = wake + prmt: wakeup latency + preemption wait (exact); run: on CPU",
		"max us: longest wakeup latency; * = an interval cut by a gap or an edge")
}

// distRow formats a distribution as table cells: count, mean, p50, p90,
// p99, p99.9, max (usecs).
func distRow(name string, d metrics.Dist) []string {
	return []string{name, strconv.FormatInt(d.Count, 10), usf(d.MeanNs), pctl(&d, 0), pctl(&d, 1), pctl(&d, 2), pctl(&d, 3), usf(d.MaxNs)}
}

// pctl formats percentile i of d (0 P50, 1 P90, 2 P99, 3 P999), "~"
// before it when it is estimated.
func pctl(d *metrics.Dist, i int) string {
	v := [4]int64{d.P50Ns, d.P90Ns, d.P99Ns, d.P999Ns}[i]
	if d.EstimatedAt(i) {
		return "~" + usf(v)
	}
	return usf(v)
}

var distHeader = []string{"", "count", "mean", "p50", "p90", "p99", "p99.9", "max"}

func (r *writer) latency(detail bool) {
	l := r.a.Latency
	r.d.title("Wakeup latency (usecs)")
	if l.Wakeup.Overall.Count == 0 && l.Preempt.Overall.Count == 0 {
		r.d.para("No complete wait in the window.")
		r.latencyNotes()
		return
	}
	t := &Table{Header: slices.Clone(distHeader), Left: []bool{true}}
	t.Add(distRow("all wakeups", l.Wakeup.Overall)...)
	if len(l.Wakeup.ByClass) > 1 || detail {
		for _, g := range l.Wakeup.ByClass {
			t.Add(distRow("  "+g.Key, g.Dist)...)
		}
	}
	if len(l.Wakeup.ByCPU) > 1 || detail {
		for _, g := range l.Wakeup.ByCPU {
			t.Add(distRow("  on "+g.Key, g.Dist)...)
		}
	}
	if l.Wakeup.Placement.Count > 0 {
		t.Add(distRow("  placement", l.Wakeup.Placement)...)
		t.Add(distRow("  queue", l.Wakeup.Queue)...)
	}
	t.Add(distRow("preemption wait", l.Preempt.Overall)...)
	if detail {
		for _, g := range l.Preempt.ByClass {
			t.Add(distRow("  "+g.Key, g.Dist)...)
		}
		for _, g := range l.Preempt.ByCPU {
			t.Add(distRow("  on "+g.Key, g.Dist)...)
		}
	}
	r.d.table(t)
	r.d.defs("wakeup latency: sched_waking (sched_wakeup if none; wakeup_new) to switch-in",
		"preemption wait: switch-out in R/R+ (or woken going to sleep) to switch-in",
		"placement: sched_waking to sched_wakeup; queue: sched_wakeup to switch-in",
		"nearest-rank percentiles of complete samples; on cpu N: where the task ran")

	n := r.in.top()
	tasks := l.Wakeup.ByTask
	title := fmt.Sprintf("Tasks with the longest wakeup latency (top %d)", n)
	if detail {
		title = "Wakeup latency by task (usecs, longest first)"
	}
	r.d.title(title)
	tt := &Table{Header: []string{"pid", "comm", "count", "mean", "p50", "p99", "max", "cut"}, Left: []bool{false, true}}
	for i, g := range tasks {
		if i == n && (!detail || r.in.Top > 0) {
			break
		}
		if g.Dist.Count == 0 && g.Censored == 0 {
			continue
		}
		tt.Add(strconv.Itoa(int(g.PID)), r.comm(g.Comm), strconv.FormatInt(g.Dist.Count, 10), usf(g.Dist.MeanNs), pctl(&g.Dist, 0),
			pctl(&g.Dist, 2), usf(g.Dist.MaxNs), strconv.FormatInt(g.Censored, 10))
	}
	r.d.table(tt)
	r.d.defs("cut: censored samples (trace end, gap, window edge), not in the figures")
	if detail {
		r.d.title("Wakeup latency by comm (usecs)")
		ct := &Table{Header: []string{"comm", "count", "mean", "p50", "p90", "p99", "max"}, Left: []bool{true}}
		for i, g := range l.Wakeup.ByComm {
			if i == n && r.in.Top > 0 {
				break
			}
			ct.Add(r.comm(g.Comm), strconv.FormatInt(g.Dist.Count, 10), usf(g.Dist.MeanNs), pctl(&g.Dist, 0), pctl(&g.Dist, 1),
				pctl(&g.Dist, 2), usf(g.Dist.MaxNs))
		}
		r.d.table(ct)
		r.d.title("Preemption wait by task (usecs, longest first)")
		pt := &Table{Header: []string{"pid", "comm", "count", "mean", "p50", "p99", "max", "cut"}, Left: []bool{false, true}}
		for i, g := range l.Preempt.ByTask {
			if i == n && r.in.Top > 0 {
				break
			}
			if g.Dist.Count == 0 && g.Censored == 0 {
				continue
			}
			pt.Add(strconv.Itoa(int(g.PID)), r.comm(g.Comm), strconv.FormatInt(g.Dist.Count, 10), usf(g.Dist.MeanNs), pctl(&g.Dist, 0),
				pctl(&g.Dist, 2), usf(g.Dist.MaxNs), strconv.FormatInt(g.Censored, 10))
		}
		r.d.table(pt)
	}
	r.d.title("Wakeup latency histogram (all tasks)")
	r.d.pre(histLines("usecs", l.Wakeup.Overall.Hist))
	if detail && l.Preempt.Overall.Count > 0 {
		r.d.title("Preemption wait histogram (all tasks)")
		r.d.pre(histLines("usecs", l.Preempt.Overall.Hist))
	}
	r.latencyNotes()
}

func (r *writer) latencyNotes() {
	l := r.a.Latency
	var ls []string
	c := l.Wakeup.Censored
	if c.Count > 0 || l.Preempt.Censored.Count > 0 {
		ls = append(ls, fmt.Sprintf("%d wakeup and %d preemption samples are censored (%d by the trace end, %d by a gap, %d by the window): they are lower bounds, left out of the figures above",
			c.Count, l.Preempt.Censored.Count, c.TraceEnd+l.Preempt.Censored.TraceEnd, c.Gap+l.Preempt.Censored.Gap, c.Window+l.Preempt.Censored.Window))
	}
	if l.WakeupsOfRunning > 0 || l.WakeupsOfQueued > 0 {
		ls = append(ls, fmt.Sprintf("%d wakeups of running tasks and %d of already queued tasks are not samples", l.WakeupsOfRunning, l.WakeupsOfQueued))
	}
	if l.Wakeup.FromWakeup > 0 && l.HasWaking {
		ls = append(ls, fmt.Sprintf("%d wakeup samples start at sched_wakeup: no sched_waking was traced for them", l.Wakeup.FromWakeup))
	}
	if !l.HasWaking && l.HasWakeup {
		ls = append(ls, "the trace has no sched_waking: wakeup latency starts at sched_wakeup (enqueue) and misses the placement delay")
	}
	if n := len(l.Wakeup.ByContext); n > 0 {
		var parts []string
		for _, k := range []string{"task", "softirq", "hardirq", "nmi", "unknown"} {
			if v := l.Wakeup.ByContext[k]; v > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", k, v))
			}
		}
		if len(parts) > 1 || l.Wakeup.ByContext["unknown"] == 0 {
			ls = append(ls, "wakers' context: "+strings.Join(parts, ", "))
		}
	}
	if l.Wakeup.Estimated() || l.Preempt.Estimated() {
		ls = append(ls, "~: a percentile estimated from logarithmic buckets (a streamed read keeps them, not every sample, "+
			"for a group over 64 samples): within 0.5% of the exact value; counts, means and maxima are exact; --exact keeps every sample")
	}
	if len(ls) > 0 {
		r.d.note(strings.Join(ls, ". ") + ".")
	}
}

// histLines draws a log2 histogram the way runqlat does: one row per
// bucket from the first to the last non-empty one, a bar of up to 40 stars.
func histLines(unit string, h metrics.Histogram) []string {
	first, last := -1, -1
	var peak int64
	for i, n := range h {
		if n > 0 {
			if first < 0 {
				first = i
			}
			last = i
			peak = max(peak, n)
		}
	}
	if first < 0 {
		return []string{"(no samples)"}
	}
	out := []string{fmt.Sprintf("%24s : %-8s %s", unit, "count", "distribution")}
	for i := first; i <= last; i++ {
		lo, hi := metrics.HistRange(i)
		stars := int((h[i]*40 + peak - 1) / peak)
		if h[i] == 0 {
			stars = 0
		}
		out = append(out, fmt.Sprintf("%10d -> %-10d : %-8d |%-40s|", lo, hi, h[i], strings.Repeat("*", stars)))
	}
	return out
}

func relName(rel topology.Relation) string {
	switch rel {
	case topology.SMT:
		return "SMT sibling"
	case topology.LLC:
		return "same LLC"
	case topology.CrossLLC:
		return "other LLC"
	case topology.CrossNUMA:
		return "other node"
	}
	return rel.String()
}

func (r *writer) idle(detail bool) {
	id := r.a.Idle
	r.d.title("Idle CPUs while tasks waited")
	cpuNs := int64(r.in.Trace.CPUs) * int64(r.a.Window.End-r.a.Window.Start)
	rows := [][2]string{
		{"idle time", fmt.Sprintf("%s ms of %s ms CPU time in the window (%s)", msf(id.TotalIdleNs), msf(cpuNs), pct(id.TotalIdleNs, cpuNs))},
	}
	min := "no minimum window"
	if id.MinWindowNs > 0 {
		min = fmt.Sprintf("windows under %s us not counted (%d, %s ms)", usf(id.MinWindowNs), id.ShortWindows, msf(id.ShortNs))
	}
	rows = append(rows, [2]string{"with runnable", fmt.Sprintf("%s ms (%s of idle) in %d window%s; %s", msf(id.IdleWithRunnableNs),
		pct(id.IdleWithRunnableNs, id.TotalIdleNs), len(id.Windows), plural(len(id.Windows)), min)})
	rel := id.ByRelation
	rows = append(rows, [2]string{"by distance", fmt.Sprintf("SMT sibling %s, same LLC %s, other LLC %s, other NUMA node %s ms",
		msf(rel.SMT), msf(rel.LLC), msf(rel.CrossLLC), msf(rel.CrossNUMA))})
	rows = append(rows, [2]string{"affinity", r.affinityLine()})
	if id.InferredQueueNs > 0 {
		rows = append(rows, [2]string{"runqueue", fmt.Sprintf("inferred for %s ms (no sched_wakeup or migration: taken from the CPU the task ran on next)", msf(id.InferredQueueNs))})
	}
	if id.CensoredNs > 0 {
		rows = append(rows, [2]string{"censored", fmt.Sprintf("%s ms in windows cut by the window edge, the trace end or a gap", msf(id.CensoredNs))})
	}
	r.d.fields(rows)
	r.d.defs("idle with runnable: a CPU idles while a task allowed on it waits on a busy CPU")
	if len(id.Windows) == 0 {
		return
	}
	n := r.in.top()
	ws := slices.Clone(id.Windows)
	if detail {
		r.d.title("Idle-with-runnable windows (in time order)")
		if r.in.Top > 0 && len(ws) > n {
			slices.SortStableFunc(ws, func(a, b metrics.IdleWindow) int { return cmp.Compare(b.DurNs, a.DurNs) })
			ws = ws[:n]
			slices.SortStableFunc(ws, func(a, b metrics.IdleWindow) int { return cmp.Compare(a.Start, b.Start) })
			r.d.para(fmt.Sprintf("The %d longest of %d windows.", n, len(id.Windows)))
		}
	} else {
		slices.SortStableFunc(ws, func(a, b metrics.IdleWindow) int { return cmp.Compare(b.DurNs, a.DurNs) })
		if len(ws) > n {
			ws = ws[:n]
		}
		r.d.title(fmt.Sprintf("Longest idle-with-runnable windows (top %d)", n))
	}
	asym := r.a.Topology != nil && r.a.Topology.Asymmetric()
	hdr := []string{"start s", "us", "cpus", "pid", "comm", "distance", "how"}
	if asym {
		hdr = []string{"start s", "us", "cpus", "pid", "comm", "distance", "capacity", "how"}
	}
	t := &Table{Header: hdr, Left: []bool{false, false, false, false, true, true, true, true}}
	for _, w := range ws {
		comm := w.Comm
		if !r.d.md {
			comm = truncComm(comm, 15)
		}
		row := []string{w.Start.Seconds(), usf(w.DurNs), fmt.Sprintf("%d<-%d", w.CPU, w.WaitCPU), strconv.Itoa(int(w.PID)), comm, shortRelation(w.Relation)}
		if asym {
			row = append(row, fmt.Sprintf("%d<-%d", w.Capacity, w.WaitCapacity))
		}
		row = append(row, windowHow(&w))
		t.Add(row...)
	}
	r.d.table(t)
	legend := []string{"us: window length; cpus: idle CPU <- busy CPU the task (pid, comm) waited on",
		"distance: smt (SMT sibling), llc, xllc (other LLC), xnuma (other NUMA node)",
		"how: exact, infer(red) or cut (censored) / affinity: free (assumed), file",
		"  (--affinity), kthr (per-CPU kthread), pin? (ran on one CPU only)"}
	if asym {
		legend = append(legend, "capacity: of the idle CPU <- of the busy CPU")
	}
	r.d.defs(legend...)
	if detail {
		r.d.title("Window lengths")
		r.d.pre(histLines("usecs", id.Durations.Hist))
		r.d.title("Idle with runnable by CPU")
		ct := &Table{Header: []string{"cpu", "capacity", "idle ms", "with runnable ms", "share", "windows"}}
		for _, c := range id.ByCPU {
			ct.Add(strconv.Itoa(int(c.CPU)), strconv.Itoa(c.Capacity), msf(c.IdleNs), msf(c.IdleWithRunnableNs), pct(c.IdleWithRunnableNs, c.IdleNs),
				strconv.FormatInt(c.Windows, 10))
		}
		r.d.table(ct)
	}
	if len(id.ByTask) > 0 {
		title := fmt.Sprintf("Tasks that could have run on an idle CPU (top %d)", n)
		if detail {
			title = "Tasks that could have run on an idle CPU"
		}
		r.d.title(title)
		tt := &Table{Header: []string{"pid", "comm", "could run ms", "waits", "of wait ms", "ran on", "affinity"}, Left: []bool{false, true, false, false, false, false, true}}
		for i, c := range id.ByTask {
			if i == n && (!detail || r.in.Top > 0) {
				break
			}
			ranOn := "several"
			if c.RanOn >= 0 {
				ranOn = "CPU " + strconv.Itoa(c.RanOn)
			}
			tt.Add(strconv.Itoa(int(c.PID)), r.comm(c.Comm), msf(c.CouldRunNs), strconv.FormatInt(c.Waits, 10), msf(c.RunnableNs), ranOn, affinityBasis[c.Affinity])
		}
		r.d.table(tt)
		r.d.defs("could run: waiting on a busy CPU while a CPU it may use idled (misplaced (a))",
			"waits: its waits with some of that; of wait: all its runnable time",
			"affinity: as in how above (rec: recorded mask, pin~: inferred pinned)")
	}
}

// affinityBasis names an affinity source in a narrow column.
var affinityBasis = map[affinity.Source]string{affinity.Assumed: "free", affinity.File: "file",
	affinity.Kthread: "kthr", affinity.PossiblyPinned: "pin?", affinity.Recorded: "rec", affinity.Inferred: "pin~"}

// shortRelation names a topology relation in a narrow column: smt, llc,
// xllc (other LLC), xnuma (other NUMA node).
func shortRelation(rel topology.Relation) string {
	switch rel {
	case topology.CrossLLC:
		return "xllc"
	case topology.CrossNUMA:
		return "xnuma"
	}
	return rel.String()
}

func windowHow(w *metrics.IdleWindow) string {
	basis := affinityBasis[w.Affinity]
	ex := map[metrics.Exactness]string{metrics.Exact: "exact", metrics.Inferred: "infer", metrics.Censored: "cut"}[w.Exactness()]
	return ex + "/" + basis
}

func (r *writer) affinityLine() string {
	id := r.a.Idle
	var parts []string
	order := []affinity.Source{affinity.Assumed, affinity.PossiblyPinned, affinity.Inferred, affinity.File, affinity.Recorded, affinity.Kthread}
	names := map[affinity.Source]string{
		affinity.Assumed:        "assumed free",
		affinity.PossiblyPinned: "assumed free but possibly pinned",
		affinity.Inferred:       "inferred pinned",
		affinity.File:           "from --affinity",
		affinity.Recorded:       "recorded",
		affinity.Kthread:        "per-CPU kthread",
	}
	for _, s := range order {
		if v := id.ByAffinity[s]; v > 0 {
			parts = append(parts, fmt.Sprintf("%s %s ms", names[s], msf(v)))
		}
	}
	s := "no window"
	if len(parts) > 0 {
		s = strings.Join(parts, ", ")
	}
	s += "; per-CPU kthreads are pinned by name (ksoftirqd/N, kworker/N:M, ...)"
	if id.PossiblyPinnedTasks > 0 {
		s += fmt.Sprintf("; %d tasks ran on one CPU only across many waits with another CPU idle: possibly pinned", id.PossiblyPinnedTasks)
	}
	if id.ByAffinity[affinity.Assumed]+id.ByAffinity[affinity.PossiblyPinned]+id.ByAffinity[affinity.Inferred] > 0 {
		s += "; pass --affinity FILE to state masks"
	}
	return s
}

func (r *writer) misplaced(detail bool) {
	m := r.a.Misplaced
	r.d.title("Misplaced tasks")
	b := "n/a: every CPU has the same capacity"
	if m.Asymmetric {
		b = msf(m.MisfitNs) + " ms (inferred: utilization is estimated)"
	}
	c := "n/a: no SMT siblings in the topology"
	if m.SMT {
		c = msf(m.SMTContendedNs) + " ms"
	}
	r.d.fields([][2]string{
		{"(a) idle CPU", msf(m.WaitingWhileIdleNs) + " ms, summed over tasks (inferred: affinity assumed)"},
		{"(b) misfit", b},
		{"(c) SMT", c},
	})
	n := r.in.top()
	hdr := []string{"pid", "comm", "(a) ms", "n"}
	if m.Asymmetric {
		hdr = append(hdr, "(b) ms", "n")
	}
	if m.SMT {
		hdr = append(hdr, "(c) ms", "n")
	}
	if m.Asymmetric {
		hdr = append(hdr, "util")
	}
	t := &Table{Header: hdr, Left: []bool{false, true}}
	for i, x := range m.Tasks {
		if i == n && (!detail || r.in.Top > 0) {
			break
		}
		row := []string{strconv.Itoa(int(x.PID)), r.comm(x.Comm), msf(x.WaitingWhileIdleNs), strconv.FormatInt(x.WaitingWhileIdleCount, 10)}
		if m.Asymmetric {
			row = append(row, msf(x.MisfitNs), strconv.FormatInt(x.MisfitCount, 10))
		}
		if m.SMT {
			row = append(row, msf(x.SMTContendedNs), strconv.FormatInt(x.SMTContendedCount, 10))
		}
		if m.Asymmetric {
			row = append(row, strconv.Itoa(x.PeakUtil))
		}
		t.Add(row...)
	}
	if len(t.Rows) == 0 {
		r.d.para("No task was misplaced in the window.")
	} else {
		if !detail && len(m.Tasks) > n {
			r.d.para(fmt.Sprintf("The %d of %d misplaced tasks with the most misplaced time:", n, len(m.Tasks)))
		}
		r.d.table(t)
		if m.Asymmetric {
			r.d.defs("util: peak estimated utilization (0..1024)")
		}
	}
	if detail {
		r.d.title("Misplaced time by CPU (ms)")
		ct := &Table{Header: []string{"cpu", "capacity", "idle w/ runnable", "(a) queued here", "(b) misfit", "(c) SMT"}}
		for _, x := range m.CPUs {
			ct.Add(strconv.Itoa(int(x.CPU)), strconv.Itoa(x.Capacity), msf(x.IdleWithRunnableNs), msf(x.WaitingWhileIdleNs), msf(x.MisfitNs), msf(x.SMTContendedNs))
		}
		r.d.table(ct)
		r.d.defs("idle w/ runnable: this CPU idled while a task that may use it waited elsewhere",
			"(a) queued here: tasks waited on this CPU while another they may use idled")
	}
	defs := []string{"(a) waiting on a busy CPU while an allowed CPU idles; n: waits with some"}
	if m.Asymmetric {
		defs = append(defs, "(b) misfit: PELT util x 1280 > CPU capacity x 1024 while a bigger CPU idles",
			"    or runs a task that would fit; n: runs with some (32 ms half-life)")
	}
	if m.SMT {
		defs = append(defs, "(c) running beside a busy SMT sibling while a whole core idles; n: runs")
	}
	r.d.defs(defs...)
}

// UnobservedLarge is the share of the window a CPU must spend unobserved
// for the report to name it in its summary and warnings.
const UnobservedLarge = 0.01

// unobserved names the CPUs unobserved for UnobservedLarge of the window
// or more (among the CPUs the trace has), largest first: "CPU 1 16.2% (806.7 ms), CPU 3 2.0% (99.6 ms)
// of the window", or "".
func (r *writer) unobserved() string {
	a := r.a
	span := float64(a.Window.End - a.Window.Start)
	if span <= 0 {
		return ""
	}
	var cpus []int
	for c, ns := range a.UnobservedNs {
		// CPUs the topology has and the trace never shows are warned about
		// apart (allWarnings).
		if c < r.in.Trace.CPUs && float64(ns) >= UnobservedLarge*span {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) == 0 {
		return ""
	}
	slices.SortStableFunc(cpus, func(x, y int) int { return cmp.Compare(a.UnobservedNs[y], a.UnobservedNs[x]) })
	var parts []string
	for _, c := range cpus {
		parts = append(parts, fmt.Sprintf("CPU %d %.1f%% (%s ms)", c, 100*float64(a.UnobservedNs[c])/span, msf(a.UnobservedNs[c])))
	}
	return strings.Join(parts, ", ") + " of the window: what ran there is unknown (lost events, missing switches, late buffers), counted neither busy nor idle"
}

// Warnings returns what the reader must know about the figures, beyond
// the load warnings in in.Warnings.
func (r *writer) allWarnings() []string {
	ws := slices.Clone(r.in.Warnings)
	if u := r.unobserved(); u != "" {
		ws = append(ws, "unobserved: "+u)
	}
	ws = append(ws, r.a.Notes...)
	if t := r.a.Topology; t != nil {
		ws = append(ws, t.Notes...)
		if n := r.in.Trace.CPUs; t.NCPU() > n {
			ws = append(ws, fmt.Sprintf("the topology (%s) describes %d CPUs, the trace has events on %d: CPUs %d-%d never appear",
				TopologySource(t), t.NCPU(), n, n, t.NCPU()-1))
		}
	}
	return ws
}

func (r *writer) warnings() {
	r.d.title("Warnings")
	ws := r.allWarnings()
	if len(ws) == 0 {
		r.d.para("None.")
		return
	}
	if r.d.md {
		r.d.lines(ws)
		return
	}
	for _, w := range ws {
		for i, l := range wrap(w, wrapWidth-2, "") {
			if i == 0 {
				r.d.printf("- %s\n", l)
			} else {
				r.d.printf("  %s\n", l)
			}
		}
	}
	r.d.printf("\n")
}

func (r *writer) footer() {
	if r.d.md {
		r.d.printf("---\n\n`%s`  \nschedlens %s\n", r.in.Command, r.in.Version)
		return
	}
	for _, l := range wrapCommand("command: "+r.in.Command, wrapWidth) {
		r.d.printf("%s\n", l)
	}
	r.d.printf("schedlens %s\n", r.in.Version)
}

// wrapCommand breaks a long command line at spaces with shell
// continuations, so it can be pasted back.
func wrapCommand(s string, width int) []string {
	words := strings.Fields(s)
	var out []string
	cur := ""
	for _, w := range words {
		switch {
		case cur == "":
			cur = w
		case len(cur)+1+len(w)+2 > width:
			out = append(out, cur+" \\")
			cur = "    " + w
		default:
			cur += " " + w
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}
