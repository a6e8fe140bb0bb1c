package compare

import (
	"cmp"
	"errors"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Metric names: the keys of cells and of the JSON figures. Times are
// nanoseconds on the run's clock.
const (
	RunNs              = "run_ns"                 // time on CPU
	RunnableNs         = "runnable_ns"            // wakeup latency + preemption wait
	WakeupCount        = "wakeup_latency_count"   // complete wakeup-latency samples
	WakeupP50Ns        = "wakeup_latency_p50_ns"  // nearest-rank percentiles of them
	WakeupP90Ns        = "wakeup_latency_p90_ns"  //
	WakeupP99Ns        = "wakeup_latency_p99_ns"  //
	WakeupMaxNs        = "wakeup_latency_max_ns"  //
	WakeupMeanNs       = "wakeup_latency_mean_ns" //
	Preemptions        = "preemptions"            // switch-outs in R/R+
	Migrations         = "migrations"             // sched_migrate_task
	ContextSwitches    = "context_switches"       // see Figures.ContextSwitches
	IdleWithRunnableNs = "idle_with_runnable_ns"  // idle CPU while an allowed task waited
	CompletionNs       = "completion_ns"          // window start to the scope's last run end
)

// Metrics lists the metric names in table order.
var Metrics = []string{RunNs, RunnableNs, WakeupCount, WakeupP50Ns, WakeupP90Ns, WakeupP99Ns, WakeupMaxNs, WakeupMeanNs,
	Preemptions, Migrations, ContextSwitches, IdleWithRunnableNs, CompletionNs}

// Scope names: the whole window, one comm, one scheduling class.
const Overall = "overall"

// CommScope names the scope of the tasks whose latest comm is name. Tasks
// are matched by comm, not pid, because pids differ between runs.
func CommScope(name string) string { return "comm:" + name }

// ClassScope names the scope of a scheduling class as metrics.PrioClass
// names it ("nice 0", "rt 50").
func ClassScope(name string) string { return "class:" + name }

// Figures is the metric set of one scope of one run.
type Figures struct {
	RunNs      int64
	RunnableNs int64
	// Wakeup is the distribution of the complete wakeup-latency samples
	// (wakeups and wakeups of new tasks; censored ones left out), with its
	// histogram for the CDF distance.
	Wakeup metrics.Dist
	// WakeupSamples are those samples in ascending order (what Wakeup
	// summarises), for the resampling and the CDF plots of an A/B: the
	// overall, comm and class scopes' (a task's are not kept; a what-if
	// keeps 16 runs' figures).
	WakeupSamples []int64
	Preemptions   int64
	Migrations    int64
	// ContextSwitches: for the unrestricted overall scope, every
	// sched_switch in the window (switches to and from idle included);
	// for any other scope, the switches into its tasks.
	ContextSwitches int64
	// IdleWithRunnableNs: the counted idle-with-runnable windows; a scope
	// gets the windows whose waiting task (the one metrics shows for the
	// window) is one of its tasks.
	IdleWithRunnableNs int64
	// CompletionNs: from the window start to the end of the scope's last
	// run in the window; the whole window when one of its tasks is still
	// running or runnable at the window end; 0 when none ran.
	CompletionNs int64
}

// Value returns the figure of a metric name.
func (f *Figures) Value(metric string) (int64, bool) {
	switch metric {
	case RunNs:
		return f.RunNs, true
	case RunnableNs:
		return f.RunnableNs, true
	case WakeupCount:
		return f.Wakeup.Count, true
	case WakeupP50Ns:
		return f.Wakeup.P50Ns, true
	case WakeupP90Ns:
		return f.Wakeup.P90Ns, true
	case WakeupP99Ns:
		return f.Wakeup.P99Ns, true
	case WakeupMaxNs:
		return f.Wakeup.MaxNs, true
	case WakeupMeanNs:
		return f.Wakeup.MeanNs, true
	case Preemptions:
		return f.Preemptions, true
	case Migrations:
		return f.Migrations, true
	case ContextSwitches:
		return f.ContextSwitches, true
	case IdleWithRunnableNs:
		return f.IdleWithRunnableNs, true
	case CompletionNs:
		return f.CompletionNs, true
	}
	return 0, false
}

// ScopeFigures is the figures of one comm or class.
type ScopeFigures struct {
	Scope string
	Figures
}

// TaskFigures is the figures of one task instance.
type TaskFigures struct {
	PID  timeline.TID
	Comm string // its latest comm
	Figures
}

// Side is one run measured: the whole window (or the selected tasks), per
// class, per comm and per task.
type Side struct {
	Window metrics.Window
	// Restricted: a filter selected the tasks; Overall then sums them
	// only.
	Restricted bool
	Overall    Figures
	// Classes and Comms are sorted by run + runnable time, then name.
	Classes []ScopeFigures
	Comms   []ScopeFigures
	// Tasks are sorted by run + runnable time, then pid.
	Tasks []TaskFigures
	// Notes are the analysis's assumptions (metrics.Analysis.Notes).
	Notes []string
}

// Scope returns the figures of a scope name, or nil.
func (s *Side) Scope(name string) *Figures {
	if name == Overall {
		return &s.Overall
	}
	list := s.Comms
	if strings.HasPrefix(name, "class:") {
		list = s.Classes
	}
	for i := range list {
		if list[i].Scope == name {
			return &list[i].Figures
		}
	}
	return nil
}

// Options configure Measure.
type Options struct {
	// Window clips every figure; the zero Window means the valid window.
	Window metrics.Window
	// Topology of the machine (nil: the timeline's own, else identical
	// CPUs, as metrics.Analyze decides).
	Topology *topology.Topology
	// Filter restricts every figure to the tasks it selects (the CPUs
	// still ran every task).
	Filter metrics.Filter
	// Affinity gives the tasks' allowed CPUs (nil: kthreads by name and
	// what the timeline recorded; no inference).
	Affinity *affinity.Map
	// DropEvents: the caller reads nothing of the timeline's events after
	// Measure, which then drops them once walked
	// (metrics.Options.DropEvents).
	DropEvents bool
	// AccountOnly measures the accounting's figures alone (run, runnable,
	// preemptions, migrations, switches, completion): the Side has no
	// wakeup latency or idle-with-runnable figures, and costs no analysis.
	// For a Side that gives only its completion (Side.TakeCompletion).
	AccountOnly bool
	// NoWakeupSamples: the Side keeps no WakeupSamples (every distribution
	// is computed all the same), for a caller that plots no CDF and pools
	// no runs (a replay written as text, markdown or JSON): 24 bytes a
	// wakeup less, held as long as the Side.
	NoWakeupSamples bool
}

// scope is the window o measures over tl (the valid window when o gives
// none) and the options of its analysis: the wakeups' tasks and
// durations are all FromMetrics reads of the samples, 16 bytes each
// instead of a Sample's 88.
func (o Options) scope(tl *timeline.Timeline) (metrics.Window, metrics.Options) {
	win := o.Window
	if win == (metrics.Window{}) {
		win = metrics.DefaultWindow(tl)
	}
	return win, metrics.Options{Window: win, Topology: o.Topology, Filter: o.Filter, Affinity: o.Affinity, DropEvents: o.DropEvents,
		NoSamples: true, TaskWakeups: true}
}

// Measure computes the figures of tl over the window: per-task times and
// counts from metrics.Account, wakeup latency and idle-with-runnable from
// metrics.Analyze, completion from the task state machine (timeline.Walk).
func Measure(tl *timeline.Timeline, o Options) (*Side, error) {
	win, mo := o.scope(tl)
	if o.AccountOnly {
		acc := metrics.Account(tl, win)
		if o.DropEvents {
			tl.DropEvents()
		}
		return fromMetrics(tl, acc, nil, o.Filter, false), nil
	}
	an, acc, err := metrics.AnalyzeAccount(tl, mo)
	if err != nil {
		return nil, err
	}
	return fromMetrics(tl, acc, an, o.Filter, !o.NoWakeupSamples), nil
}

// MeasureEvents is Measure over a summary Timeline (Timeline.Summary)
// whose events log holds (a modeled schedule), for each of scopes, in one
// walk of the log. At most one scope may have its analysis (the others
// are AccountOnly), so that the walk holds one analysis. After the walk,
// when a scope says DropEvents, the log is dropped and its memory given
// back to the system before the analysis proper allocates, as Measure
// does with a Timeline's events. sum gets the events' tasks.
func MeasureEvents(sum *timeline.Timeline, log *timeline.EventLog, scopes ...Options) ([]*Side, error) {
	sas := make([]*metrics.StreamAnalysis, len(scopes))
	accs := make([]*metrics.Accountant, len(scopes))
	var sinks metrics.Sinks
	drop, analyses := false, 0
	for i, o := range scopes {
		win, mo := o.scope(sum)
		if !o.AccountOnly {
			if analyses++; analyses > 1 {
				return nil, errors.New("compare: MeasureEvents: more than one scope with its analysis")
			}
			sa, err := metrics.NewStreamAnalysis(sum, mo)
			if err != nil {
				return nil, err
			}
			sas[i] = sa
			sinks = append(sinks, sa)
		}
		accs[i] = metrics.NewAccountant(sum, win)
		sinks = append(sinks, accs[i])
		drop = drop || o.DropEvents
	}
	w, err := sum.NewStreamWalk(sinks.Span, sinks.Events)
	if err != nil {
		return nil, err
	}
	for ev := range log.Events() {
		w.Add(*ev)
	}
	ws, err := w.Finish()
	if err != nil {
		return nil, err
	}
	if drop {
		log.Drop()
		debug.FreeOSMemory()
	}
	sides := make([]*Side, len(scopes))
	for i, o := range scopes {
		var an *metrics.Analysis
		if sas[i] != nil {
			an = sas[i].Finish(ws, o.Affinity)
		}
		sides[i] = fromMetrics(sum, accs[i].Result(ws), an, o.Filter, !o.NoWakeupSamples)
	}
	return sides, nil
}

// FromMetrics builds a Side from the accounting and the analysis of tl
// over one window, for a caller that has them already; an must have been
// made with flt as its filter. Without an analysis (an nil) the Side has
// the accounting's figures alone (Options.AccountOnly).
func FromMetrics(tl *timeline.Timeline, acc *metrics.Accounting, an *metrics.Analysis, flt metrics.Filter) *Side {
	return fromMetrics(tl, acc, an, flt, true)
}

// fromMetrics is FromMetrics; samples says whether the Side keeps its
// wakeup samples (Options.NoWakeupSamples).
func fromMetrics(tl *timeline.Timeline, acc *metrics.Accounting, an *metrics.Analysis, flt metrics.Filter, samples bool) *Side {
	win := acc.Window
	restricted := len(flt.PIDs) > 0 || len(flt.Comms) > 0
	s := &Side{Window: win, Restricted: restricted}
	if an != nil {
		s.Window, s.Notes = an.Window, an.Notes
	} else {
		an = &metrics.Analysis{}
	}

	// The selected tasks the accounting saw in the window, with their
	// scopes (index into comms and classes) and rows; nothing else can
	// have samples, idle-with-runnable windows or runs in the window.
	n := len(tl.Tasks)
	commOf, classOf, taskAt := make([]int32, n), make([]int32, n), make([]int32, n)
	for i := range n {
		commOf[i], classOf[i], taskAt[i] = -1, -1, -1
	}
	var comms, classes []ScopeFigures
	scope := func(list *[]ScopeFigures, idx map[string]int32, name string) int32 {
		i, ok := idx[name]
		if !ok {
			i = int32(len(*list))
			idx[name] = i
			*list = append(*list, ScopeFigures{Scope: name})
		}
		return i
	}
	commIdx, classIdx := map[string]int32{}, map[string]int32{}
	for _, t := range acc.Tasks {
		if !flt.Match(tl, t.ID) {
			continue
		}
		commOf[t.ID] = scope(&comms, commIdx, CommScope(t.Comm))
		classOf[t.ID] = scope(&classes, classIdx, ClassScope(metrics.PrioClass(tl.Tasks[t.ID].Prio)))
		f := Figures{RunNs: t.RunNs, RunnableNs: t.RunnableNs, Preemptions: t.Preemptions, Migrations: t.Migrations, ContextSwitches: t.SwitchesIn}
		taskAt[t.ID] = int32(len(s.Tasks))
		s.Tasks = append(s.Tasks, TaskFigures{PID: t.PID, Comm: t.Comm, Figures: f})
		for _, g := range []*Figures{&s.Overall, &comms[commOf[t.ID]].Figures, &classes[classOf[t.ID]].Figures} {
			g.RunNs += f.RunNs
			g.RunnableNs += f.RunnableNs
			g.Preemptions += f.Preemptions
			g.Migrations += f.Migrations
			g.ContextSwitches += f.ContextSwitches
		}
	}
	sel := func(id timeline.TaskID) bool { return id != timeline.NoTask && taskAt[id] >= 0 }
	if !restricted {
		s.Overall.ContextSwitches = 0
		for _, c := range acc.CPUs {
			s.Overall.ContextSwitches += c.Switches
		}
	}
	// Wakeup latency: the overall distribution is metrics'; the scopes'
	// come from the same complete samples, grouped by task.
	if l := an.Latency; l != nil {
		s.Overall.Wakeup = l.Wakeup.Overall
		// One pass counts each selected task's complete wakeups, then
		// their durations are dealt out to the groups (below).
		wakeups := l.Wakeups // with Options.TaskWakeups; else from the Samples
		if wakeups == nil {
			for i := range l.Samples {
				if sm := &l.Samples[i]; sm.Kind != metrics.SamplePreempt && sm.Censored == metrics.CensoredNone {
					wakeups = append(wakeups, metrics.TaskWait{Task: sm.Task, DurNs: sm.DurNs})
				}
			}
		}
		perTask := make([]int, n)
		total := 0
		for _, w := range wakeups {
			if sel(w.Task) {
				perTask[w.Task]++
				total++
			}
		}
		perComm, perClass := make([]int, len(comms)), make([]int, len(classes))
		for id, k := range perTask {
			if k > 0 {
				perComm[commOf[id]] += k
				perClass[classOf[id]] += k
			}
		}
		// One array of the selected wakeups' durations is dealt out to
		// the groups of one grouping at a time (task, then comm), each
		// group's distribution computed; the comms keep theirs as their
		// samples, and the classes and the overall scope get arrays of
		// their own. Without samples the classes reuse it too, and the
		// overall distribution is metrics'.
		back := make([]int64, total)
		deal := func(back []int64, counts []int, group []int32) [][]int64 {
			out := carveDurs(back, counts)
			for _, w := range wakeups {
				if sel(w.Task) {
					g := int32(w.Task)
					if group != nil {
						g = group[w.Task]
					}
					out[g] = append(out[g], w.DurNs)
				}
			}
			return out
		}
		for id, d := range deal(back, perTask, nil) {
			if len(d) > 0 {
				s.Tasks[taskAt[id]].Wakeup = dist(d)
			}
		}
		for i, d := range deal(back, perComm, commOf) {
			comms[i].Wakeup = dist(d)
			if samples {
				comms[i].WakeupSamples = d
			}
		}
		if samples {
			back = make([]int64, total)
		}
		for i, d := range deal(back, perClass, classOf) {
			classes[i].Wakeup = dist(d)
			if samples {
				classes[i].WakeupSamples = d
			}
		}
		if samples && total > 0 {
			all := make([]int64, 0, total)
			for _, w := range wakeups {
				if sel(w.Task) {
					all = append(all, w.DurNs)
				}
			}
			slices.Sort(all)
			s.Overall.WakeupSamples = all
		}
	}
	if id := an.Idle; id != nil {
		s.Overall.IdleWithRunnableNs = id.IdleWithRunnableNs
		for _, w := range id.Windows {
			if !sel(w.Task) {
				continue
			}
			comms[commOf[w.Task]].IdleWithRunnableNs += w.DurNs
			classes[classOf[w.Task]].IdleWithRunnableNs += w.DurNs
			s.Tasks[taskAt[w.Task]].IdleWithRunnableNs += w.DurNs
		}
	}
	// Completion: the end of each task's last run in the window.
	for i := range acc.Tasks {
		t := &acc.Tasks[i]
		end, ok := t.Completion()
		if !ok || !sel(t.ID) {
			continue
		}
		id := t.ID
		d := int64(end - win.Start)
		s.Overall.CompletionNs = max(s.Overall.CompletionNs, d)
		comms[commOf[id]].CompletionNs = max(comms[commOf[id]].CompletionNs, d)
		classes[classOf[id]].CompletionNs = max(classes[classOf[id]].CompletionNs, d)
		s.Tasks[taskAt[id]].CompletionNs = d
	}
	s.Comms, s.Classes = sortScopes(comms), sortScopes(classes)
	slices.SortStableFunc(s.Tasks, func(a, b TaskFigures) int {
		if c := cmp.Compare(b.RunNs+b.RunnableNs, a.RunNs+a.RunnableNs); c != 0 {
			return c
		}
		return cmp.Compare(a.PID, b.PID)
	})
	return s
}

// carveDurs returns one empty slice per group, of room counts[i], one
// after the other in back (nil for a group of none).
func carveDurs(back []int64, counts []int) [][]int64 {
	out := make([][]int64, len(counts))
	for i, k := range counts {
		if k > 0 { // a group with none stays nil
			out[i], back = back[:0:k], back[k:]
		}
	}
	return out
}

// dist summarises durations in any order.
func dist(d []int64) metrics.Dist {
	if len(d) == 0 {
		return metrics.Dist{}
	}
	slices.Sort(d)
	return metrics.NewDist(d)
}

func sortScopes(s []ScopeFigures) []ScopeFigures {
	slices.SortStableFunc(s, func(a, b ScopeFigures) int {
		if c := cmp.Compare(b.RunNs+b.RunnableNs, a.RunNs+a.RunnableNs); c != 0 {
			return c
		}
		return cmp.Compare(a.Scope, b.Scope)
	})
	return s
}

// TakeCompletion replaces the completion figures of s (overall, per class,
// comm and task) by those of o: the same run measured over a longer window.
// A modeled run that went on past the recording's end (replay.Options.
// Overrun) is measured over the recording's window for every figure but
// completion, which takes the whole run, so that a job that finishes later
// shows as finishing later instead of being cut at the window's end.
func (s *Side) TakeCompletion(o *Side) {
	s.Overall.CompletionNs = o.Overall.CompletionNs
	for i := range s.Classes {
		if f := o.Scope(s.Classes[i].Scope); f != nil {
			s.Classes[i].CompletionNs = f.CompletionNs
		}
	}
	for i := range s.Comms {
		if f := o.Scope(s.Comms[i].Scope); f != nil {
			s.Comms[i].CompletionNs = f.CompletionNs
		}
	}
	byPID := map[timeline.TID]int64{}
	for _, t := range o.Tasks {
		byPID[t.PID] = t.CompletionNs
	}
	for i := range s.Tasks {
		if c, ok := byPID[s.Tasks[i].PID]; ok {
			s.Tasks[i].CompletionNs = c
		}
	}
}
