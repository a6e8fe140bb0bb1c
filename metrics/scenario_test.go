package metrics

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Scenarios are txtar files under testdata/scenarios, one behaviour each:
//
//	-- trace --    the events, in the line format below
//	-- want --     the lines Analyze must produce, grouped by their first
//	               word: for every kind of line the want section lists
//	               (sample, window, misplaced, idle, walk, dist, class),
//	               the got lines of that kind must be exactly these, in
//	               order; kinds it does not list are not checked.
//
// Trace lines (times in µs unless suffixed "ms"; "#" starts a comment):
//
//	topology PRESET              juno-r2, smt2-2, sym-4, ... (default sym-N)
//	cpu N core=C llc=L node=D cap=K   an explicit topology, one line per CPU
//	comm PID NAME                a task's name (default tPID)
//	affinity PID CPULIST         as --affinity
//	window START END             the analysis window
//	min-window DUR               Options.MinWindow
//	own-queue-list DUR|all       Options.OwnQueueList (all: every window)
//	pinned-min-waits N           Options.PinnedMinWaits
//	filter PID                   Options.Filter
//	T CPU switch PREV STATE NEXT [prio=P]
//	T CPU waking PID [by=W] [target=C] [ctx=task|softirq|hardirq] [prio=P]
//	T CPU wakeup PID [by=W] [target=C] [prio=P]
//	T CPU wakeup_new PID [by=W] [target=C]
//	T CPU migrate PID from=C to=C
//	T CPU lost N since=T         N events lost on CPU since T
//	T CPU fork CHILD parent=P
//	T CPU exit PID
//	T CPU marker PID TEXT...     a trace marker written by PID
var updateScenarios = flag.Bool("update-scenarios", false, "rewrite the want sections of the scenarios (review the diff)")

type scenario struct {
	name    string
	trace   string
	want    string
	opts    Options
	topo    *topology.Topology
	cpuDefs []topology.CPU
}

func parseTxtar(data []byte) map[string]string {
	out := map[string]string{}
	var name string
	var b strings.Builder
	flush := func() {
		if name != "" {
			out[name] = b.String()
		}
		b.Reset()
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			flush()
			name = strings.TrimSpace(t[3 : len(t)-3])
			continue
		}
		if name != "" {
			b.WriteString(line)
		}
	}
	flush()
	return out
}

// parseUs parses "10", "10.5", "3ms" into ns.
func parseUs(s string) (timeline.Time, error) {
	mul := 1000.0
	if v, ok := strings.CutSuffix(s, "ms"); ok {
		s, mul = v, 1e6
	} else if v, ok := strings.CutSuffix(s, "us"); ok {
		s = v
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("bad time %q", s)
	}
	return timeline.Time(f*mul + 0.5), nil
}

func kv(fields []string) map[string]string {
	m := map[string]string{}
	for _, f := range fields {
		if k, v, ok := strings.Cut(f, "="); ok {
			m[k] = v
		}
	}
	return m
}

// buildScenario turns the trace section into a timeline and options.
func buildScenario(text string) (*timeline.Timeline, Options, error) {
	var opts Options
	strs := timeline.NewStrings()
	names := map[timeline.TID]string{}
	var cpuDefs []topology.CPU
	var preset string
	var rules []affinity.Rule
	type raw struct {
		line   int
		fields []string
	}
	var evs []raw
	maxCPU := 0
	for i, line := range strings.Split(text, "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		bad := func(err error) error { return fmt.Errorf("trace line %d: %q: %v", i+1, line, err) }
		switch f[0] {
		case "topology":
			preset = f[1]
		case "cpu":
			m := kv(f[2:])
			id, _ := strconv.Atoi(f[1])
			c := topology.CPU{ID: id, Capacity: 1024}
			c.Core, _ = strconv.Atoi(m["core"])
			c.Cluster, _ = strconv.Atoi(m["llc"])
			c.Node, _ = strconv.Atoi(m["node"])
			c.Package = c.Node
			if v, ok := m["cap"]; ok {
				c.Capacity, _ = strconv.Atoi(v)
			}
			cpuDefs = append(cpuDefs, c)
		case "comm":
			pid, _ := strconv.Atoi(f[1])
			names[timeline.TID(pid)] = f[2]
		case "affinity":
			r, err := affinity.ParseRules(strings.NewReader(f[1]+" "+f[2]), fmt.Sprintf("line %d", i+1))
			if err != nil {
				return nil, opts, bad(err)
			}
			rules = append(rules, r...)
		case "window":
			s, err1 := parseUs(f[1])
			e, err2 := parseUs(f[2])
			if err1 != nil || err2 != nil {
				return nil, opts, bad(fmt.Errorf("window"))
			}
			opts.Window = Window{Start: s, End: e}
		case "min-window":
			d, err := parseUs(f[1])
			if err != nil {
				return nil, opts, bad(err)
			}
			opts.MinWindow = int64(d)
		case "own-queue-list":
			if f[1] == "all" {
				opts.OwnQueueList = -1
				break
			}
			d, err := parseUs(f[1])
			if err != nil {
				return nil, opts, bad(err)
			}
			opts.OwnQueueList = int64(d)
		case "pinned-min-waits":
			opts.PinnedMinWaits, _ = strconv.Atoi(f[1])
		case "filter":
			pid, _ := strconv.Atoi(f[1])
			opts.Filter.PIDs = append(opts.Filter.PIDs, timeline.TID(pid))
		default:
			if len(f) < 3 {
				return nil, opts, bad(fmt.Errorf("want TIME CPU EVENT ..."))
			}
			cpu, err := strconv.Atoi(strings.TrimPrefix(f[1], "c"))
			if err != nil {
				return nil, opts, bad(err)
			}
			maxCPU = max(maxCPU, cpu)
			evs = append(evs, raw{i + 1, f})
		}
	}
	comm := func(pid timeline.TID) timeline.CommID {
		if pid == 0 {
			return strs.IDString("<idle>")
		}
		if n, ok := names[pid]; ok {
			return strs.IDString(n)
		}
		return strs.IDString(fmt.Sprintf("t%d", pid))
	}
	tid := func(s string) timeline.TID {
		v, _ := strconv.Atoi(s)
		return timeline.TID(v)
	}
	b := timeline.NewBuilder(strs, maxCPU+1)
	for _, r := range evs {
		f := r.fields
		t, err := parseUs(f[0])
		if err != nil {
			return nil, opts, fmt.Errorf("trace line %d: %v", r.line, err)
		}
		cpu, _ := strconv.Atoi(strings.TrimPrefix(f[1], "c"))
		var e timeline.Event
		e.Reset()
		e.Time, e.CPU = t, timeline.CPU(cpu)
		m := kv(f[3:])
		if p, ok := m["prio"]; ok {
			v, _ := strconv.Atoi(p)
			e.Prio = int16(v)
		}
		switch f[2] {
		case "switch":
			if len(f) < 6 {
				return nil, opts, fmt.Errorf("trace line %d: want T CPU switch PREV STATE NEXT", r.line)
			}
			e.Kind = timeline.KindSwitch
			e.Other, e.Task = tid(f[3]), tid(f[5])
			st, ok := timeline.ParseState([]byte(f[4]))
			if !ok {
				return nil, opts, fmt.Errorf("trace line %d: bad state %q", r.line, f[4])
			}
			e.State = st
			e.OComm, e.Comm = comm(e.Other), comm(e.Task)
			if e.Prio < 0 {
				e.Prio = 120
			}
			e.OPrio = 120
		case "waking", "wakeup", "wakeup_new":
			e.Kind = map[string]timeline.Kind{"waking": timeline.KindWaking, "wakeup": timeline.KindWakeup, "wakeup_new": timeline.KindWakeupNew}[f[2]]
			e.Task = tid(f[3])
			e.Comm = comm(e.Task)
			e.Other = 0
			if w, ok := m["by"]; ok {
				e.Other = tid(w)
			}
			e.OComm = comm(e.Other)
			e.Arg = int64(cpu)
			if tg, ok := m["target"]; ok {
				v, _ := strconv.Atoi(tg)
				e.Arg = int64(v)
			}
			e.Ctx = timeline.CtxTask
			switch m["ctx"] {
			case "softirq":
				e.Ctx = timeline.CtxSoftirq
			case "hardirq":
				e.Ctx = timeline.CtxHardirq
			}
			if e.Prio < 0 {
				e.Prio = 120
			}
		case "migrate":
			e.Kind = timeline.KindMigrate
			e.Task = tid(f[3])
			e.Comm = comm(e.Task)
			from, _ := strconv.Atoi(m["from"])
			to, _ := strconv.Atoi(m["to"])
			e.Arg, e.Arg2 = int64(to), int64(from)
		case "lost":
			e.Kind = timeline.KindLost
			n, _ := strconv.Atoi(f[3])
			e.Arg = int64(n)
			s, err := parseUs(m["since"])
			if err != nil {
				return nil, opts, fmt.Errorf("trace line %d: lost needs since=T", r.line)
			}
			e.Start = s
		case "fork":
			e.Kind = timeline.KindFork
			e.Task = tid(f[3])
			e.Other = tid(m["parent"])
			e.Comm, e.OComm = comm(e.Other), comm(e.Other)
		case "marker":
			if len(f) < 5 {
				return nil, opts, fmt.Errorf("trace line %d: want T CPU marker PID TEXT", r.line)
			}
			e.Kind = timeline.KindMarker
			e.Task, e.Other = tid(f[3]), tid(f[3])
			e.Comm = comm(e.Task)
			e.Arg = int64(strs.IDString(strings.Join(f[4:], " ")))
		case "exit":
			e.Kind = timeline.KindExit
			e.Task = tid(f[3])
			e.Comm = comm(e.Task)
		default:
			return nil, opts, fmt.Errorf("trace line %d: unknown event %q", r.line, f[2])
		}
		b.Add(e)
	}
	tl, err := b.Finish()
	if err != nil {
		return nil, opts, err
	}
	if opts.Affinity, err = affinity.Build(tl, affinity.BuildOptions{Rules: rules, NoInfer: true}); err != nil {
		return nil, opts, err
	}
	switch {
	case len(cpuDefs) > 0:
		opts.Topology = &topology.Topology{CPUs: cpuDefs, Source: "scenario"}
		if err := opts.Topology.Validate(); err != nil {
			return nil, opts, err
		}
	case preset != "":
		opts.Topology, err = topology.Preset(preset)
		if err != nil {
			return nil, opts, err
		}
	default:
		opts.Topology = topology.Symmetric(tl.NCPU)
	}
	return tl, opts, nil
}

// us formats ns as µs, with decimals only when needed.
func us(ns int64) string {
	if ns%1000 == 0 {
		return strconv.FormatInt(ns/1000, 10)
	}
	return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(float64(ns)/1000, 'f', 3, 64), "0"), ".")
}

func ts(t timeline.Time) string {
	if t == timeline.NoTime {
		return "-"
	}
	return us(int64(t))
}

// dumpAnalysis renders an analysis in the scenario want format.
func dumpAnalysis(tl *timeline.Timeline, a *Analysis) []string {
	var out []string
	for _, s := range a.Latency.Samples {
		l := fmt.Sprintf("sample %s pid=%d start=%s", s.Kind, s.PID, ts(s.Start))
		if s.Wakeup != timeline.NoTime {
			l += " wakeup=" + ts(s.Wakeup)
		}
		l += fmt.Sprintf(" end=%s dur=%s cpu=%d", ts(s.End), us(s.DurNs), s.CPU)
		if s.PlacementNs() >= 0 {
			l += fmt.Sprintf(" place=%s queue=%s", us(s.PlacementNs()), us(s.QueueNs()))
		}
		if s.Kind != SamplePreempt {
			l += fmt.Sprintf(" waker=%d ctx=%s target=%d", s.WakerPID, s.WakerCtx, s.TargetCPU)
		}
		if s.IdleCPUNs > 0 {
			l += " idlecpu=" + us(s.IdleCPUNs)
		}
		if s.Censored != CensoredNone {
			l += " censored=" + s.Censored.String()
		}
		if s.NoWaking {
			l += " no-waking"
		}
		if s.AfterRace {
			l += " after-race"
		}
		out = append(out, l)
	}
	for _, w := range a.Idle.Windows {
		l := fmt.Sprintf("window cpu=%d start=%s dur=%s pid=%d waitcpu=%d rel=%s waiting=%d aff=%s exact=%s",
			w.CPU, ts(w.Start), us(w.DurNs), w.PID, w.WaitCPU, w.Relation, w.Waiting, w.Affinity, w.Exactness())
		if w.Capacity != w.WaitCapacity {
			l += fmt.Sprintf(" cap=%d/%d", w.Capacity, w.WaitCapacity)
		}
		out = append(out, l)
	}
	oq := a.Idle.OwnQueue
	for _, w := range oq.Windows {
		l := fmt.Sprintf("ownq cpu=%d start=%s dur=%s pid=%d waiting=%d", w.CPU, ts(w.Start), us(w.DurNs), w.PID, w.Waiting)
		if w.Sibling >= 0 {
			sib := "idle"
			if !w.SiblingIdle {
				sib = "unknown"
			}
			if w.SiblingTask != timeline.NoTask {
				sib = fmt.Sprintf("pid%d", w.SiblingPID)
			}
			l += fmt.Sprintf(" sibling=%d:%s core-idle=%s cookie=%s", w.Sibling, sib, us(w.SiblingIdleNs), w.Cookie)
		}
		out = append(out, l+" exact="+w.Exactness().String())
	}
	d := oq.Durations
	out = append(out, fmt.Sprintf("ownqtotal count=%d total=%s p50=%s p99=%s max=%s censored=%d/%s inferred=%s markers=%d",
		oq.Count, us(oq.TotalNs), us(d.P50Ns), us(d.P99Ns), us(d.MaxNs), oq.CensoredWindows, us(oq.CensoredNs), us(oq.InferredNs), oq.CookieMarkers))
	for _, c := range oq.ByCPU {
		if c.Windows > 0 {
			out = append(out, fmt.Sprintf("ownqcpu cpu=%d windows=%d total=%s max=%s", c.CPU, c.Windows, us(c.Ns), us(c.MaxNs)))
		}
	}
	id := a.Idle
	r := id.ByRelation
	out = append(out, fmt.Sprintf("idle total=%s iwr=%s smt=%s llc=%s cross_llc=%s cross_numa=%s short=%d/%s pinned=%d",
		us(id.TotalIdleNs), us(id.IdleWithRunnableNs), us(r.SMT), us(r.LLC), us(r.CrossLLC), us(r.CrossNUMA), id.ShortWindows, us(id.ShortNs), id.PossiblyPinnedTasks))
	for _, t := range a.Misplaced.Tasks {
		out = append(out, fmt.Sprintf("misplaced pid=%d waiting=%s/%d misfit=%s/%d smt=%s/%d aff=%s",
			t.PID, us(t.WaitingWhileIdleNs), t.WaitingWhileIdleCount, us(t.MisfitNs), t.MisfitCount, us(t.SMTContendedNs), t.SMTContendedCount, t.Affinity))
	}
	for _, in := range tl.Inconsistencies() {
		out = append(out, fmt.Sprintf("inconsistency t=%s cpu=%d kind=%s pid=%d", ts(in.Time), in.CPU, in.Kind, tl.Tasks[in.Got].PID))
	}
	l := a.Latency
	out = append(out, fmt.Sprintf("walk wakeups_of_running=%d wakeups_of_queued=%d censored=%d/%d",
		l.WakeupsOfRunning, l.WakeupsOfQueued, l.Wakeup.Censored.Count, l.Preempt.Censored.Count))
	for _, st := range []struct {
		name string
		s    *LatencyStats
	}{{"wakeup", &l.Wakeup}, {"preempt", &l.Preempt}} {
		d := st.s.Overall
		if d.Count > 0 {
			out = append(out, fmt.Sprintf("dist %s count=%d mean=%s p50=%s p90=%s p99=%s p999=%s max=%s hist=%v",
				st.name, d.Count, us(d.MeanNs), us(d.P50Ns), us(d.P90Ns), us(d.P99Ns), us(d.P999Ns), us(d.MaxNs), []int64(d.Hist)))
		}
		for _, g := range st.s.ByClass {
			out = append(out, fmt.Sprintf("class %s %s count=%d max=%s", st.name, g.Key, g.Dist.Count, us(g.Dist.MaxNs)))
		}
	}
	return out
}

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 25 {
		t.Fatalf("found %d scenarios under testdata/scenarios, want at least 25", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sec := parseTxtar(data)
			tl, opts, err := buildScenario(sec["trace"])
			if err != nil {
				t.Fatal(err)
			}
			a, err := Analyze(tl, opts)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, tl, a)
			got := dumpAnalysis(tl, a)
			if *updateScenarios {
				writeWant(t, file, data, got, sec["want"])
				return
			}
			compareWant(t, got, sec["want"])
		})
	}
}

// compareWant checks, for every kind of line in want, that got has exactly
// those lines of that kind.
func compareWant(t *testing.T, got []string, want string) {
	t.Helper()
	wantBy := map[string][]string{}
	var kinds []string
	for _, l := range strings.Split(want, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, _, _ := strings.Cut(l, " ")
		if _, ok := wantBy[k]; !ok {
			kinds = append(kinds, k)
		}
		wantBy[k] = append(wantBy[k], strings.Join(strings.Fields(l), " "))
	}
	if len(kinds) == 0 {
		t.Fatal("empty want section")
	}
	for _, k := range kinds {
		var g []string
		for _, l := range got {
			if strings.HasPrefix(l, k+" ") {
				g = append(g, l)
			}
		}
		w := wantBy[k]
		if len(w) == 1 && w[0] == k+" none" {
			w = nil
		}
		if strings.Join(g, "\n") != strings.Join(w, "\n") {
			t.Errorf("%s lines:\ngot:\n\t%s\nwant:\n\t%s", k, strings.Join(g, "\n\t"), strings.Join(w, "\n\t"))
		}
	}
}

// writeWant rewrites the want section with the got lines of the kinds it
// already lists (all kinds if it lists none), keeping comments.
func writeWant(t *testing.T, file string, data []byte, got []string, want string) {
	kinds := map[string]bool{}
	var comments []string
	for _, l := range strings.Split(want, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") {
			comments = append(comments, l)
			continue
		}
		if k, _, _ := strings.Cut(l, " "); k != "" {
			kinds[k] = true
		}
	}
	var b bytes.Buffer
	i := bytes.Index(data, []byte("-- want --"))
	if i < 0 {
		t.Fatalf("%s: no want section", file)
	}
	b.Write(data[:i])
	b.WriteString("-- want --\n")
	for _, c := range comments {
		b.WriteString(c + "\n")
	}
	seen := map[string]bool{}
	for _, l := range got {
		k, _, _ := strings.Cut(l, " ")
		if len(kinds) == 0 || kinds[k] {
			b.WriteString(l + "\n")
			seen[k] = true
		}
	}
	for k := range kinds {
		if !seen[k] {
			b.WriteString(k + " none\n")
		}
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkInvariants holds on every timeline: per task, the samples' clipped
// durations add up to Account's runnable time; idle-with-runnable time is
// within idle time; windows add up; (a) time is within runnable time.
func checkInvariants(t testing.TB, tl *timeline.Timeline, a *Analysis) {
	t.Helper()
	acc := Account(tl, a.Window)
	sum := map[timeline.TaskID]int64{}
	wake := map[timeline.TaskID]int64{}
	for _, s := range a.Latency.Samples {
		sum[s.Task] += s.DurNs
		if s.Kind != SamplePreempt {
			wake[s.Task] += s.DurNs
		}
		if s.IdleCPUNs > s.DurNs {
			t.Errorf("sample %+v: idle-CPU time %d above its duration", s, s.IdleCPUNs)
		}
	}
	filtered := false
	for _, tt := range acc.Tasks {
		if sum[tt.ID] != tt.RunnableNs || wake[tt.ID] != tt.WakeupLatencyNs {
			if _, ok := sum[tt.ID]; !ok && tt.RunnableNs > 0 {
				filtered = true // a task the filter left out
				continue
			}
			t.Errorf("pid %d %s: samples add to %d ns (wakeup %d), Account runnable_ns %d (wakeup %d)",
				tt.PID, tt.Comm, sum[tt.ID], wake[tt.ID], tt.RunnableNs, tt.WakeupLatencyNs)
		}
	}
	_ = filtered
	var idle int64
	for _, c := range acc.CPUs {
		idle += c.IdleNs
	}
	if idle != a.Idle.TotalIdleNs {
		t.Errorf("total idle %d ns, Account says %d", a.Idle.TotalIdleNs, idle)
	}
	if a.Idle.IdleWithRunnableNs > a.Idle.TotalIdleNs {
		t.Errorf("idle with runnable %d ns above total idle %d ns", a.Idle.IdleWithRunnableNs, a.Idle.TotalIdleNs)
	}
	var ws int64
	for _, w := range a.Idle.Windows {
		ws += w.DurNs
	}
	r := a.Idle.ByRelation
	if ws != a.Idle.IdleWithRunnableNs || r.SMT+r.LLC+r.CrossLLC+r.CrossNUMA+r.Unknown != ws {
		t.Errorf("windows add to %d ns, total %d, by relation %+v", ws, a.Idle.IdleWithRunnableNs, r)
	}
	for _, c := range a.Idle.ByCPU {
		if c.IdleWithRunnableNs > c.IdleNs {
			t.Errorf("CPU %d: idle with runnable %d above idle %d", c.CPU, c.IdleWithRunnableNs, c.IdleNs)
		}
	}
	// Own-queue idle: within each CPU's idle time, the CPUs add up to the
	// total, complete plus censored windows to the count.
	oq := a.Idle.OwnQueue
	var oqNs, oqN int64
	for i, c := range oq.ByCPU {
		oqNs += c.Ns
		oqN += c.Windows
		if i < len(a.Idle.ByCPU) && c.Ns > a.Idle.ByCPU[i].IdleNs {
			t.Errorf("CPU %d: own-queue idle %d ns above its idle time %d", c.CPU, c.Ns, a.Idle.ByCPU[i].IdleNs)
		}
	}
	if oqNs != oq.TotalNs || oqN != oq.Count || oq.Durations.Count+oq.CensoredWindows != oq.Count || oq.Durations.SumNs+oq.CensoredNs != oq.TotalNs {
		t.Errorf("own-queue idle: CPUs add to %d windows, %d ns; total %d windows, %d ns; %d complete (%d ns) + %d censored (%d ns)",
			oqN, oqNs, oq.Count, oq.TotalNs, oq.Durations.Count, oq.Durations.SumNs, oq.CensoredWindows, oq.CensoredNs)
	}
}
