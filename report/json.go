package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"slices"

	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// JSON shapes. Keys are stable; times are nanoseconds on the trace clock
// (_ns), utilization and capacity on the kernel's 0..1024 scale. Scripts
// rely on the keys docs/report.md lists.

// DistJSON is a distribution.
type DistJSON struct {
	Count     int64        `json:"count"`
	SumNs     int64        `json:"sum_ns"`
	MeanNs    int64        `json:"mean_ns"`
	P50Ns     int64        `json:"p50_ns"`
	P90Ns     int64        `json:"p90_ns"`
	P99Ns     int64        `json:"p99_ns"`
	P999Ns    int64        `json:"p999_ns"`
	MaxNs     int64        `json:"max_ns"`
	Histogram []BucketJSON `json:"histogram_us"`
	// Estimated names the percentiles estimated from a sketch
	// (metrics.DefEstimated), not exact.
	Estimated []string `json:"estimated,omitempty"`
}

// BucketJSON is one log2 histogram bucket: values from LoUs to HiUs
// microseconds, both included.
type BucketJSON struct {
	LoUs  int64 `json:"lo_us"`
	HiUs  int64 `json:"hi_us"`
	Count int64 `json:"count"`
}

func distJSON(d metrics.Dist) DistJSON {
	out := DistJSON{Count: d.Count, SumNs: d.SumNs, MeanNs: d.MeanNs, P50Ns: d.P50Ns, P90Ns: d.P90Ns, P99Ns: d.P99Ns, P999Ns: d.P999Ns,
		MaxNs: d.MaxNs, Histogram: []BucketJSON{}, Estimated: estimatedJSON(&d, 4)}
	for i, n := range d.Hist {
		if n > 0 {
			lo, hi := metrics.HistRange(i)
			out.Histogram = append(out.Histogram, BucketJSON{lo, hi, n})
		}
	}
	return out
}

// estimatedJSON names the estimated percentiles of d among its first n
// (a task's distribution has no p99.9).
func estimatedJSON(d *metrics.Dist, n int) []string {
	var out []string
	for i, key := range []string{"p50_ns", "p90_ns", "p99_ns", "p999_ns"}[:n] {
		if d.EstimatedAt(i) {
			out = append(out, key)
		}
	}
	return out
}

// TaskDistJSON is a task's distribution.
type TaskDistJSON struct {
	PID        timeline.TID `json:"pid"`
	Comm       string       `json:"comm"`
	Count      int64        `json:"count"`
	SumNs      int64        `json:"sum_ns"`
	MeanNs     int64        `json:"mean_ns"`
	P50Ns      int64        `json:"p50_ns"`
	P90Ns      int64        `json:"p90_ns"`
	P99Ns      int64        `json:"p99_ns"`
	MaxNs      int64        `json:"max_ns"`
	Censored   int64        `json:"censored"`
	CensoredNs int64        `json:"censored_ns"`
	Estimated  []string     `json:"estimated,omitempty"`
}

// GroupDistJSON is the distribution of a comm, class or CPU.
type GroupDistJSON struct {
	Key string `json:"key"`
	DistJSON
}

// CensoredJSON counts censored samples by cause.
type CensoredJSON struct {
	Count    int64 `json:"count"`
	Ns       int64 `json:"ns"`
	TraceEnd int64 `json:"trace_end"`
	Gap      int64 `json:"gap"`
	Window   int64 `json:"window"`
}

// WaitStatsJSON is the summary of one kind of wait.
type WaitStatsJSON struct {
	Definition string `json:"definition"`
	// Exactness: "exact", or "estimated" when some distribution's
	// percentiles are (EstimatedDef says how).
	Exactness    string          `json:"exactness"`
	EstimatedDef string          `json:"estimated_definition,omitempty"`
	Overall      DistJSON        `json:"overall"`
	Censored     int64           `json:"censored"`
	CensoredBy   CensoredJSON    `json:"censored_by"`
	ByTask       []TaskDistJSON  `json:"by_task"`
	ByComm       []GroupDistJSON `json:"by_comm"`
	ByClass      []GroupDistJSON `json:"by_class"`
	ByCPU        []GroupDistJSON `json:"by_cpu"`
}

// LatencyJSON is `schedlens latency --format json` and the "latency"
// object of the report.
type LatencyJSON struct {
	WaitStatsJSON
	Placement        DistJSON         `json:"placement"`
	Queue            DistJSON         `json:"queue"`
	PlacementDef     string           `json:"placement_definition"`
	ByContext        map[string]int64 `json:"by_waker_context"`
	FromWakeup       int64            `json:"samples_from_sched_wakeup"`
	WakeupsOfRunning int64            `json:"wakeups_of_running"`
	WakeupsOfQueued  int64            `json:"wakeups_of_queued"`
	Preemption       WaitStatsJSON    `json:"preemption"`
}

func waitStats(st *metrics.LatencyStats, def string) WaitStatsJSON {
	out := WaitStatsJSON{Definition: def, Exactness: metrics.Exact.String(), Overall: distJSON(st.Overall), Censored: st.Censored.Count,
		CensoredBy: CensoredJSON{st.Censored.Count, st.Censored.Ns, st.Censored.TraceEnd, st.Censored.Gap, st.Censored.Window},
		ByTask:     []TaskDistJSON{}, ByComm: []GroupDistJSON{}, ByClass: []GroupDistJSON{}, ByCPU: []GroupDistJSON{}}
	for _, g := range st.ByTask {
		d := g.Dist
		out.ByTask = append(out.ByTask, TaskDistJSON{PID: g.PID, Comm: g.Comm, Count: d.Count, SumNs: d.SumNs, MeanNs: d.MeanNs,
			P50Ns: d.P50Ns, P90Ns: d.P90Ns, P99Ns: d.P99Ns, MaxNs: d.MaxNs, Censored: g.Censored, CensoredNs: g.CensoredNs, Estimated: estimatedJSON(&d, 3)})
	}
	for _, x := range []struct {
		in  []metrics.GroupDist
		out *[]GroupDistJSON
	}{{st.ByComm, &out.ByComm}, {st.ByClass, &out.ByClass}, {st.ByCPU, &out.ByCPU}} {
		for _, g := range x.in {
			*x.out = append(*x.out, GroupDistJSON{Key: g.Key, DistJSON: distJSON(g.Dist)})
		}
	}
	if st.Estimated() {
		out.Exactness, out.EstimatedDef = "estimated", metrics.DefEstimated
	}
	return out
}

// NewLatencyJSON builds the latency object.
func NewLatencyJSON(l *metrics.Latency) LatencyJSON {
	out := LatencyJSON{WaitStatsJSON: waitStats(&l.Wakeup, metrics.DefWakeupLatency), Placement: distJSON(l.Wakeup.Placement),
		Queue: distJSON(l.Wakeup.Queue), PlacementDef: metrics.DefPlacement, ByContext: l.Wakeup.ByContext, FromWakeup: l.Wakeup.FromWakeup,
		WakeupsOfRunning: l.WakeupsOfRunning, WakeupsOfQueued: l.WakeupsOfQueued, Preemption: waitStats(&l.Preempt, metrics.DefPreemptWait)}
	if out.ByContext == nil {
		out.ByContext = map[string]int64{}
	}
	return out
}

// RelationJSON splits a time by topology relation.
type RelationJSON struct {
	SMT       int64 `json:"smt"`
	LLC       int64 `json:"llc"`
	CrossLLC  int64 `json:"cross_llc"`
	CrossNUMA int64 `json:"cross_numa"`
	Unknown   int64 `json:"unknown,omitempty"`
}

// WindowJSON is one idle-with-runnable window.
type WindowJSON struct {
	CPU             timeline.CPU `json:"cpu"`
	StartNs         int64        `json:"start_ns"`
	DurNs           int64        `json:"dur_ns"`
	WaitingPID      timeline.TID `json:"waiting_pid"`
	WaitingComm     string       `json:"waiting_comm"`
	WaitingCPU      timeline.CPU `json:"waiting_cpu"`
	Relation        string       `json:"relation"`
	Capacity        int          `json:"capacity"`
	WaitingCapacity int          `json:"waiting_capacity"`
	Waiting         int          `json:"tasks_waiting"`
	Affinity        string       `json:"affinity"`
	QueueInferred   bool         `json:"queue_inferred"`
	Censored        bool         `json:"censored"`
	Exactness       string       `json:"exactness"`
}

// CouldRunJSON is a task's waiting time with an idle CPU available.
type CouldRunJSON struct {
	PID        timeline.TID `json:"pid"`
	Comm       string       `json:"comm"`
	CouldRunNs int64        `json:"could_run_ns"`
	Waits      int64        `json:"waits"`
	RunnableNs int64        `json:"runnable_ns"`
	RanOnCPU   *int         `json:"ran_only_on_cpu"`
	Affinity   string       `json:"affinity"`
}

// IdleCPUJSON is the per-CPU view.
type IdleCPUJSON struct {
	CPU                timeline.CPU `json:"cpu"`
	Capacity           int          `json:"capacity"`
	IdleNs             int64        `json:"idle_ns"`
	IdleWithRunnableNs int64        `json:"idle_with_runnable_ns"`
	Windows            int64        `json:"windows"`
}

// IdleJSON is `schedlens idle --format json` and the "idle" object.
type IdleJSON struct {
	Definition         string           `json:"definition"`
	MinWindowNs        int64            `json:"min_window_ns"`
	TotalIdleNs        int64            `json:"total_idle_ns"`
	IdleWithRunnableNs int64            `json:"idle_with_runnable_ns"`
	ByRelation         RelationJSON     `json:"by_relation"`
	ByAffinity         map[string]int64 `json:"by_affinity_ns"`
	CensoredNs         int64            `json:"censored_ns"`
	InferredQueueNs    int64            `json:"inferred_queue_ns"`
	ShortWindows       int64            `json:"short_windows"`
	ShortNs            int64            `json:"short_ns"`
	PossiblyPinned     int              `json:"possibly_pinned_tasks"`
	Durations          DistJSON         `json:"durations"`
	ByCPU              []IdleCPUJSON    `json:"by_cpu"`
	ByTask             []CouldRunJSON   `json:"by_task"`
	Windows            []WindowJSON     `json:"windows"`
	OwnQueue           *OwnQueueJSON    `json:"own_queue,omitempty"`
}

// NewIdleJSON builds the idle object.
func NewIdleJSON(id *metrics.Idle) IdleJSON {
	r := id.ByRelation
	out := IdleJSON{Definition: metrics.DefIdleWithRunnable, MinWindowNs: id.MinWindowNs, TotalIdleNs: id.TotalIdleNs,
		IdleWithRunnableNs: id.IdleWithRunnableNs, ByRelation: RelationJSON{r.SMT, r.LLC, r.CrossLLC, r.CrossNUMA, r.Unknown},
		ByAffinity: map[string]int64{}, CensoredNs: id.CensoredNs, InferredQueueNs: id.InferredQueueNs, ShortWindows: id.ShortWindows,
		ShortNs: id.ShortNs, PossiblyPinned: id.PossiblyPinnedTasks, Durations: distJSON(id.Durations),
		ByCPU: []IdleCPUJSON{}, ByTask: []CouldRunJSON{}, Windows: []WindowJSON{}}
	for k, v := range id.ByAffinity {
		out.ByAffinity[k.String()] = v
	}
	for _, c := range id.ByCPU {
		out.ByCPU = append(out.ByCPU, IdleCPUJSON{c.CPU, c.Capacity, c.IdleNs, c.IdleWithRunnableNs, c.Windows})
	}
	for _, c := range id.ByTask {
		x := CouldRunJSON{PID: c.PID, Comm: c.Comm, CouldRunNs: c.CouldRunNs, Waits: c.Waits, RunnableNs: c.RunnableNs, Affinity: c.Affinity.String()}
		if c.RanOn >= 0 {
			v := c.RanOn
			x.RanOnCPU = &v
		}
		out.ByTask = append(out.ByTask, x)
	}
	if id.OwnQueue != nil {
		oq := NewOwnQueueJSON(id.OwnQueue)
		out.OwnQueue = &oq
	}
	for _, w := range id.Windows {
		out.Windows = append(out.Windows, WindowJSON{CPU: w.CPU, StartNs: int64(w.Start), DurNs: w.DurNs, WaitingPID: w.PID, WaitingComm: w.Comm,
			WaitingCPU: w.WaitCPU, Relation: w.Relation.String(), Capacity: w.Capacity, WaitingCapacity: w.WaitCapacity, Waiting: w.Waiting,
			Affinity: w.Affinity.String(), QueueInferred: w.QueueInferred, Censored: w.Censored, Exactness: w.Exactness().String()})
	}
	return out
}

// MisplacedTaskJSON is one task's misplaced time.
type MisplacedTaskJSON struct {
	PID                   timeline.TID `json:"pid"`
	Comm                  string       `json:"comm"`
	WaitingWhileIdleNs    int64        `json:"waiting_while_idle_ns"`
	WaitingWhileIdleCount int64        `json:"waiting_while_idle_count"`
	MisfitNs              int64        `json:"misfit_ns"`
	MisfitCount           int64        `json:"misfit_count"`
	SMTContendedNs        int64        `json:"smt_contended_ns"`
	SMTContendedCount     int64        `json:"smt_contended_count"`
	PeakUtil              int          `json:"peak_util"`
	RunNs                 int64        `json:"run_ns"`
	Affinity              string       `json:"affinity"`
}

// MisplacedCPUJSON is the per-CPU view.
type MisplacedCPUJSON struct {
	CPU                timeline.CPU `json:"cpu"`
	Capacity           int          `json:"capacity"`
	IdleWithRunnableNs int64        `json:"idle_with_runnable_ns"`
	WaitingWhileIdleNs int64        `json:"waiting_while_idle_ns"`
	MisfitNs           int64        `json:"misfit_ns"`
	SMTContendedNs     int64        `json:"smt_contended_ns"`
}

// MisplacedJSON is `schedlens misplaced --format json` and the
// "misplaced" object.
type MisplacedJSON struct {
	Definition         string              `json:"definition"`
	Exactness          map[string]string   `json:"exactness"`
	WaitingWhileIdleNs int64               `json:"waiting_while_idle_ns"`
	MisfitNs           int64               `json:"misfit_ns"`
	SMTContendedNs     int64               `json:"smt_contended_ns"`
	MisfitApplies      bool                `json:"misfit_applies"`
	SMTApplies         bool                `json:"smt_applies"`
	MinWindowNs        int64               `json:"min_window_ns"`
	Tasks              []MisplacedTaskJSON `json:"tasks"`
	CPUs               []MisplacedCPUJSON  `json:"cpus"`
}

// NewMisplacedJSON builds the misplaced object.
func NewMisplacedJSON(m *metrics.Misplaced) MisplacedJSON {
	out := MisplacedJSON{Definition: metrics.DefMisplaced,
		Exactness: map[string]string{
			"waiting_while_idle": metrics.Inferred.String() + " (affinity assumed unless from a file or a kthread name)",
			"misfit":             metrics.Inferred.String() + " (utilization estimated)",
			"smt_contended":      metrics.Exact.String() + " given the topology",
		},
		WaitingWhileIdleNs: m.WaitingWhileIdleNs, MisfitNs: m.MisfitNs, SMTContendedNs: m.SMTContendedNs, MisfitApplies: m.Asymmetric,
		SMTApplies: m.SMT, MinWindowNs: m.MinWindowNs, Tasks: []MisplacedTaskJSON{}, CPUs: []MisplacedCPUJSON{}}
	for _, t := range m.Tasks {
		out.Tasks = append(out.Tasks, MisplacedTaskJSON{t.PID, t.Comm, t.WaitingWhileIdleNs, t.WaitingWhileIdleCount, t.MisfitNs, t.MisfitCount,
			t.SMTContendedNs, t.SMTContendedCount, t.PeakUtil, t.RunNs, t.Affinity.String()})
	}
	for _, c := range m.CPUs {
		out.CPUs = append(out.CPUs, MisplacedCPUJSON{c.CPU, c.Capacity, c.IdleWithRunnableNs, c.WaitingWhileIdleNs, c.MisfitNs, c.SMTContendedNs})
	}
	return out
}

// TraceJSON is the "trace" object.
type TraceJSON struct {
	Path            string        `json:"path"`
	Embedded        bool          `json:"embedded"`
	Format          string        `json:"format"`
	Compression     string        `json:"compression,omitempty"`
	Clock           string        `json:"clock,omitempty"`
	Kernel          string        `json:"kernel,omitempty"`
	CPUs            int           `json:"cpus"`
	Events          int           `json:"events"`
	LostEvents      int64         `json:"lost_events"`
	Gaps            int           `json:"gaps"`
	ClippedBuffers  []LateCPUJSON `json:"clipped_buffers"`
	QuietCPUs       []LateCPUJSON `json:"quiet_cpus"`
	StartNs         int64         `json:"start_ns"`
	EndNs           int64         `json:"end_ns"`
	ValidStartNs    int64         `json:"valid_start_ns"`
	ValidStartRule  string        `json:"valid_start_rule"`
	ValidStartWhy   string        `json:"valid_start_reason"`
	Inconsistencies int           `json:"inconsistencies"`
	SkippedRecords  int64         `json:"skipped_records"`
	UnknownEvents   int64         `json:"unknown_events"`
	HasWaking       bool          `json:"has_sched_waking"`
	HasWakeup       bool          `json:"has_sched_wakeup"`
}

// LateCPUJSON is a CPU whose events start after the trace's first event:
// in clipped_buffers when the valid window starts after it
// (latest-cpu-start), in quiet_cpus when the trace proves the CPU was
// recorded from the start and simply had no event (first-event).
type LateCPUJSON struct {
	CPU     timeline.CPU `json:"cpu"`
	StartNs int64        `json:"start_ns"`
	LateNs  int64        `json:"late_ns"`
}

// NewTraceJSON builds the trace object.
func NewTraceJSON(t *Trace) TraceJSON {
	out := TraceJSON{Path: t.Path, Embedded: t.Embedded, Format: t.Format, Compression: t.Compression, Clock: t.Clock, Kernel: t.Kernel,
		CPUs: t.CPUs, Events: t.Events, LostEvents: t.LostEvents, Gaps: t.LostGaps, ClippedBuffers: []LateCPUJSON{}, QuietCPUs: []LateCPUJSON{},
		StartNs: int64(t.Start), EndNs: int64(t.End), ValidStartNs: int64(t.ValidStart),
		ValidStartRule: t.ValidStartRule.String(), ValidStartWhy: t.ValidStartWhy, Inconsistencies: t.Inconsistencies,
		SkippedRecords: t.SkippedRecords, UnknownEvents: t.UnknownEvents, HasWaking: t.HasWaking, HasWakeup: t.HasWakeup}
	for _, c := range t.Late {
		if t.ValidStartRule == timeline.StartFirstEvent {
			out.QuietCPUs = append(out.QuietCPUs, LateCPUJSON(c))
		} else {
			out.ClippedBuffers = append(out.ClippedBuffers, LateCPUJSON(c))
		}
	}
	return out
}

// TopologyJSON is the "topology" object: the topology.Topology JSON plus
// a summary and its sched domains, in words.
type TopologyJSON struct {
	*topology.Topology
	Summary string `json:"summary"`
	// Domains says which sched-domain levels the analysis assumes and
	// where they come from (DomainsSummary).
	Domains string `json:"domains"`
	// Kernel stays nil: it shadows the topology's raw kernel view (every
	// cache and domain of every CPU), which Domains summarizes and whose
	// file its source names; 'schedlens topology show' prints it.
	Kernel *struct{} `json:"kernel,omitempty"`
}

// WindowRangeJSON is the analysis window.
type WindowRangeJSON struct {
	StartNs int64 `json:"start_ns"`
	EndNs   int64 `json:"end_ns"`
}

// TopTaskJSON is a row of the top-tasks table.
type TopTaskJSON struct {
	PID             timeline.TID `json:"pid"`
	Comm            string       `json:"comm"`
	RunNs           int64        `json:"run_ns"`
	RunnableNs      int64        `json:"runnable_ns"`
	WakeupLatencyNs int64        `json:"wakeup_latency_ns"`
	PreemptWaitNs   int64        `json:"preempt_wait_ns"`
	Wakeups         int64        `json:"wakeups"`
	Censored        bool         `json:"censored"`
}

// ReportJSON is the body of `schedlens report --format json`, after the
// Header's keys (schema_version, command, version, trace, window, warnings).
type ReportJSON struct {
	Topology  TopologyJSON  `json:"topology"`
	Filter    string        `json:"filter,omitempty"`
	TopTasks  []TopTaskJSON `json:"top_tasks"`
	Latency   LatencyJSON   `json:"latency"`
	Idle      IdleJSON      `json:"idle"`
	Misplaced MisplacedJSON `json:"misplaced"`
}

func writeJSON(w io.Writer, in *Input, section Section) error {
	a := in.Analysis
	win := WindowRangeJSON{int64(a.Window.Start), int64(a.Window.End)}
	r := &writer{in: in, a: a}
	h := Header{Command: in.Command, Version: in.Version, Trace: NewTraceJSON(&in.Trace), Window: win, Warnings: r.allWarnings()}
	var v any
	switch section {
	case LatencySection:
		v = withFilter(NewLatencyJSON(a.Latency), in)
	case IdleSection:
		v = withFilter(NewIdleJSON(a.Idle), in)
	case MisplacedSection:
		v = withFilter(NewMisplacedJSON(a.Misplaced), in)
	default:
		rep := ReportJSON{Topology: TopologyJSON{Topology: a.Topology, Summary: TopologySummary(a.Topology), Domains: DomainsSummary(a.Topology)},
			Filter: in.Filter, TopTasks: []TopTaskJSON{}, Latency: NewLatencyJSON(a.Latency), Idle: NewIdleJSON(a.Idle),
			Misplaced: NewMisplacedJSON(a.Misplaced)}
		for _, t := range topByRunnable(in.Tasks, in.top()) {
			rep.TopTasks = append(rep.TopTasks, TopTaskJSON{t.PID, t.Comm, t.RunNs, t.RunnableNs, t.WakeupLatencyNs, t.PreemptWaitNs, t.Wakeups, t.Censored})
		}
		v = rep
	}
	return WriteDocument(w, h, v)
}

// withFilter is the metric object with the filter beside its keys (the
// header's keys come before them).
func withFilter(body any, in *Input) map[string]any {
	m := map[string]any{}
	if b, err := json.Marshal(body); err == nil {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber() // keep nanosecond counts exact
		_ = dec.Decode(&m)
	}
	if in.Filter != "" {
		m["filter"] = in.Filter
	}
	return m
}

// topByRunnable returns the n tasks with the most runnable time (ties by
// pid), leaving out tasks never runnable.
func topByRunnable(tasks []metrics.TaskTimes, n int) []metrics.TaskTimes {
	rows := slices.Clone(tasks)
	slices.SortStableFunc(rows, func(a, b metrics.TaskTimes) int {
		if c := cmp.Compare(b.RunnableNs, a.RunnableNs); c != 0 {
			return c
		}
		return cmp.Compare(a.PID, b.PID)
	})
	out := rows[:0]
	for _, t := range rows {
		if len(out) == n || t.RunnableNs == 0 {
			break
		}
		out = append(out, t)
	}
	return out
}
