package affinity

import (
	"math"
	"runtime/debug"
	"slices"
	"sort"

	"github.com/schedlens/schedlens/internal/blocks"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// InferOptions tune Infer. Zero fields take the defaults below.
type InferOptions struct {
	// MinWait is the shortest wait that can count as evidence (1 ms): a
	// runnable task left waiting that long while a CPU it may use is idle
	// is what the kernel's wakeup placement and idle balancing exist to
	// prevent.
	MinWait timeline.Time
	// MinIdle is how long one idle stretch of the other CPU must overlap
	// the wait (50 us): shorter idle blips are too brief to pull a task.
	MinIdle timeline.Time
	// MinWaits is how many such waits a stretch needs (3), and they must
	// be at least half of the stretch's waits of MinWait or more.
	MinWaits int
}

func (o InferOptions) withDefaults() InferOptions {
	if o.MinWait <= 0 {
		o.MinWait = 1_000_000
	}
	if o.MinIdle <= 0 {
		o.MinIdle = 50_000
	}
	if o.MinWaits <= 0 {
		o.MinWaits = 3
	}
	return o
}

// Infer takes tasks as pinned from the trace's evidence. Each task's runs
// are cut into stretches: a stretch collects the CPUs the task ran on, and
// it is pinned to them when the task waited at least MinWait behind
// another task at least MinWaits times (and in at least half of its waits
// that long) while a CPU outside them was idle for at least MinIdle of the
// wait. A run outside a pinned stretch's CPUs starts a new stretch, so a
// mask that was changed mid-trace (taskset, sched_setaffinity, a cpuset)
// is followed: the change is put at the end of the last run before it. A
// run outside the CPUs of a stretch that has had no long wait also starts
// a new one, so that a task's first runs before it was pinned do not widen
// its mask.
//
// Tasks for which skip returns true are left out. The result gives, per
// task instance, its changes (nil: no evidence, free) and the inferences
// with their evidence.
func Infer(tl *timeline.Timeline, skip func(timeline.TaskID) bool, o InferOptions) ([][]Change, []Inference) {
	in := NewInferrer(tl, o)
	if len(tl.Tasks) > 0 && tl.NCPU > 1 {
		tl.Walk(in.Span)
	}
	return in.Result(tl, skip)
}

// Inferrer is Infer's walk as the state a walk it does not run feeds: a
// streamed walk (timeline.StreamWalk) hands it each chunk's task
// instances (Events) before the spans that chunk closes (Span); Result
// then infers, with the trace's final tasks. BuildOptions.Inferred takes
// it instead of a walk of Build's own.
type Inferrer struct {
	o     InferOptions
	ncpu  int
	tasks []timeline.Task // the task instances met so far
	// The idle stretches of every CPU, and per task its runs and its long
	// waits, in time order.
	idle []blocks.List[span]
	logs []taskLog
	// A long wait waits in pending, in the order the walk closed them,
	// until every CPU has ended a span at or after its end (front). Then
	// the idle stretches
	// through it are known: one with no CPU but the task's next idle for
	// MinIdle of it (a quiet wait, nearly all on a busy machine) can be no
	// evidence, so it is counted and not logged. due is how many pending
	// waits make decideWaits run.
	pending []pendingWait
	front   *timeline.Frontier
	due     int
}

type taskLog struct {
	runs  blocks.List[run]
	waits blocks.List[waitLog]
	total int32 // long waits so far, quiet ones included
}

type pendingWait struct {
	task timeline.TaskID
	w    waitLog
}

// decideEvery is how many pending long waits make the Inferrer decide
// which are quiet; after a decision it waits for as many again as it left
// pending, and at least this many. Tests set 0 to log every long wait.
var decideEvery = 1 << 16

// NewInferrer starts the inference over a walk of tl (a summary Timeline
// for a streamed walk).
func NewInferrer(tl *timeline.Timeline, o InferOptions) *Inferrer {
	in := &Inferrer{o: o.withDefaults(), ncpu: tl.NCPU, idle: make([]blocks.List[span], tl.NCPU),
		front: timeline.NewFrontier(tl), due: decideEvery}
	in.Events(tl)
	return in
}

// Events takes the task instances known so far (of a whole Timeline, or of
// a streamed walk's chunk). The same ones again, as metrics.Feed hands a
// loaded Timeline's beside the walk, change nothing and write nothing: the
// walk's Spans read them meanwhile.
func (in *Inferrer) Events(tl *timeline.Timeline) {
	if len(tl.Tasks) == len(in.tasks) && (len(tl.Tasks) == 0 || &tl.Tasks[0] == &in.tasks[0]) {
		return
	}
	in.tasks = tl.Tasks
	for len(in.logs) < len(tl.Tasks) {
		in.logs = append(in.logs, taskLog{})
	}
}

// Span logs one span of the walk.
func (in *Inferrer) Span(s *timeline.Span) {
	in.front.Span(s)
	if in.ncpu <= 1 || s.Task == timeline.NoTask || s.CPU < 0 || int(s.CPU) >= in.ncpu {
		return // unknown task, or a wait cut before its switch-in
	}
	tk := &in.tasks[s.Task]
	switch s.State {
	case timeline.SpanRunning:
		if tk.Idle {
			in.idle[s.CPU].Add(span{s.Start, s.End})
			return
		}
		lg := &in.logs[s.Task]
		if r := lg.runs.Last(); r != nil && r.cpu == int32(s.CPU) && lg.total == r.waits {
			r.end = s.End // the same CPU again, nothing between: one run
			return
		}
		lg.runs.Add(run{cpu: int32(s.CPU), end: s.End, waits: lg.total})
	case timeline.SpanWoken, timeline.SpanPreempted:
		if tk.Idle || s.Open() || s.End-s.Start < in.o.MinWait {
			return
		}
		lg := &in.logs[s.Task]
		w := waitLog{start: s.Start, end: s.End, cpu: int32(s.CPU), before: lg.total}
		lg.total++
		if decideEvery <= 0 {
			lg.waits.Add(w)
			return
		}
		in.pending = append(in.pending, pendingWait{task: s.Task, w: w})
		if len(in.pending) >= in.due {
			in.decideWaits(in.front.Time())
			in.due = max(decideEvery, len(in.pending))
		}
	}
}

// decideWaits logs the pending long waits that end at or before f and
// are not quiet, in order, and counts the quiet ones only (they were
// counted when they came).
func (in *Inferrer) decideWaits(f timeline.Time) {
	i := 0
	for ; i < len(in.pending) && in.pending[i].w.end <= f; i++ {
		p := &in.pending[i]
		if !in.quiet(&p.w) {
			in.logs[p.task].waits.Add(p.w)
		}
	}
	in.pending = in.pending[:copy(in.pending, in.pending[i:])]
}

// quiet reports whether no CPU but the one the task ran on next sat idle
// for MinIdle of wait w: it can then be no evidence of any stretch.
func (in *Inferrer) quiet(w *waitLog) bool {
	for cpu := range in.idle {
		if cpu != int(w.cpu) && logOverlap(&in.idle[cpu], w.start, w.end) >= in.o.MinIdle {
			return false
		}
	}
	return true
}

// Result infers from what the walk logged, for the task instances of tl
// (which the walk has ended), leaving out those for which skip returns
// true. The Inferrer's logs are let go.
func (in *Inferrer) Result(tl *timeline.Timeline, skip func(timeline.TaskID) bool) ([][]Change, []Inference) {
	o := in.o
	in.decideWaits(math.MaxInt64) // every idle stretch is known now
	idleLog, logs := in.idle, in.logs
	in.idle, in.logs, in.tasks, in.pending = nil, nil, nil, nil
	out := make([][]Change, len(tl.Tasks))
	if len(tl.Tasks) == 0 || tl.NCPU <= 1 {
		return out, nil
	}
	logged := 0
	idle := make([][]span, len(idleLog))
	for cpu := range idleLog {
		logged += idleLog[cpu].Bytes()
		idle[cpu] = idleLog[cpu].AppendTo(make([]span, 0, idleLog[cpu].Len()))
	}
	idleLog = nil
	for i := range logs {
		logged += logs[i].runs.Bytes() + logs[i].waits.Bytes()
	}
	// Pass 2: for every long wait, the CPUs that sat idle through enough
	// of it.
	var infs []Inference
	var waits []wait
	var runs []run // one task's at a time, in one array (copies per task came to the logs' size as garbage)
	for id := range logs {
		lg := &logs[id]
		if lg.waits.Len() < o.MinWaits || skip != nil && skip(timeline.TaskID(id)) {
			*lg = taskLog{}
			continue
		}
		waits = waits[:0]
		for _, b := range lg.waits.Blocks() {
			for _, wl := range b {
				wt := wait{start: wl.start, end: wl.end, cpu: int(wl.cpu), before: int(wl.before)}
				for cpu := range idle {
					if idleOverlap(idle[cpu], wt.start, wt.end) >= o.MinIdle {
						wt.idle = wt.idle.With(cpu)
					}
				}
				waits = append(waits, wt)
			}
		}
		// Pass 3: stretches.
		var ch []Change
		runs = lg.runs.AppendTo(runs[:0])
		for _, st := range stretches(runs, waits, int(lg.total), o) {
			if st.cpus.Empty() {
				if len(ch) > 0 {
					ch = append(ch, Change{At: st.from, Source: Assumed}) // free again
				}
				continue
			}
			ch = append(ch, Change{At: st.from, CPUs: st.cpus, Source: Inferred})
			tk := &tl.Tasks[id]
			infs = append(infs, Inference{Task: timeline.TaskID(id), PID: tk.PID, Comm: tl.TaskName(timeline.TaskID(id)),
				CPUs: st.cpus, From: st.from, To: st.to, Waits: st.ev})
		}
		out[id] = ch
		*lg = taskLog{}
	}
	slices.SortFunc(infs, func(a, b Inference) int {
		if a.From != b.From {
			if a.From < b.From {
				return -1
			}
			return 1
		}
		return int(a.Task) - int(b.Task)
	})
	if logged >= releaseLogs {
		// The logs are garbage now, spread over the heap where the large
		// arrays an analysis allocates next cannot reuse them: returned to
		// the system, they do not add to its peak (report on 1.26 GB of
		// text: 1297 -> 1091 MiB peak RSS).
		idle, logs, waits, runs = nil, nil, nil, nil
		debug.FreeOSMemory()
	}
	return out, infs
}

// releaseLogs is the size of Infer's logs from which it returns their
// memory to the system once it is done with them: the copies their growth
// left behind come to several times as much (the 1.26 GB text's logs end
// at 54 MiB after 200 MiB of copies). It costs a collection of the whole
// heap, some milliseconds at this size.
const releaseLogs = 16 << 20

type span struct{ start, end timeline.Time }

// run is a task's stretch on one CPU with no long wait in between (16
// bytes: a task logs one for every change of CPU).
type run struct {
	end   timeline.Time
	cpu   int32
	waits int32 // long waits before it, quiet ones included
}

// waitLog is a long wait as the walk logs it (not a quiet one); wait adds
// the CPUs idle through it for the stretches of one task at a time.
type waitLog struct {
	start, end timeline.Time
	cpu        int32 // where it then ran
	before     int32 // long waits of the task before it, quiet ones included
}

type wait struct {
	start, end timeline.Time
	cpu        int             // where it then ran
	before     int             // as waitLog's
	idle       topology.CPUSet // CPUs idle through enough of it
}

// stretch is a part of a task's life: pinned to cpus (with ev waits of
// evidence) or, when cpus is empty, free.
type stretch struct {
	from, to timeline.Time // to: NoTime for the last
	cpus     topology.CPUSet
	ev       int
}

// stretches cuts a task's runs into stretches (see Infer). runs and waits
// are in time order; the task had total long waits, runs[k].waits of them
// before run k; waits holds those that were not quiet (a quiet one is no
// evidence but counts among the waits a stretch's evidence must be half
// of), waits[i].before of them before waits[i].
func stretches(runs []run, waits []wait, total int, o InferOptions) []stretch {
	var out []stretch
	// at returns the index in waits of the first from the t-th long wait.
	at := func(t int) int {
		return sort.Search(len(waits), func(i int) bool { return waits[i].before >= t })
	}
	pinned := func(cpus topology.CPUSet, t0, t1 int) (int, bool) {
		ev := evidence(cpus, waits[at(t0):at(t1)])
		return ev, ev >= o.MinWaits && 2*ev >= t1-t0
	}
	add := func(st stretch) {
		if n := len(out); n > 0 && out[n-1].cpus.Empty() && st.cpus.Empty() {
			out[n-1].to = st.to // two free stretches are one
			return
		}
		out = append(out, st)
	}
	// emit closes the stretch of runs[a:b]: pinned to their CPUs when the
	// waits among them say so. A pinned stretch sheds its first runs on
	// CPUs it does not use after its first evidence (before the pin took
	// hold), which only adds evidence.
	emit := func(a, b int, from, to timeline.Time) {
		t0, t1 := int(runs[a].waits), total
		if b < len(runs) {
			t1 = int(runs[b].waits)
		}
		cpus := cpusOf(runs[a:b])
		ev, ok := pinned(cpus, t0, t1)
		if !ok {
			add(stretch{from: from, to: to})
			return
		}
		first, end := at(t0), at(t1)
		for first < end && evidence(cpus, waits[first:first+1]) == 0 {
			first++
		}
		k := a
		for k < b && runs[k].end <= waits[first].start {
			k++
		}
		core := cpusOf(runs[k:b])
		cut := -1
		for j := a; j < k; j++ {
			if !core.Has(int(runs[j].cpu)) {
				cut = j
			}
		}
		if cut >= 0 && cut+1 < b { // (no run after the first evidence: nothing to shed)
			if ev2, ok2 := pinned(core, int(runs[cut+1].waits), t1); ok2 {
				add(stretch{from: from, to: runs[cut].end})
				from, cpus, ev = runs[cut].end, cpusOf(runs[cut+1:b]), ev2
			}
		}
		add(stretch{from: from, to: to, cpus: cpus, ev: ev})
	}
	if len(runs) == 0 {
		return nil
	}
	a, from := 0, timeline.NoTime
	cpus := topology.NewCPUSet(int(runs[0].cpu))
	for k := 1; k < len(runs); k++ {
		if cpus.Has(int(runs[k].cpu)) {
			continue
		}
		// A new CPU ends a pinned stretch, and a stretch that has had no
		// long wait yet (a task's first runs, often on its parent's CPU
		// before the pin took hold, must not widen the mask it is then
		// held to).
		_, ok := pinned(cpus, int(runs[a].waits), int(runs[k].waits))
		if ok || int(runs[k].waits) == int(runs[a].waits) {
			emit(a, k, from, runs[k-1].end)
			a, from, cpus = k, runs[k-1].end, nil
		}
		cpus = cpus.With(int(runs[k].cpu))
	}
	emit(a, len(runs), from, timeline.NoTime)
	return out
}

func cpusOf(runs []run) topology.CPUSet {
	var s topology.CPUSet
	for _, r := range runs {
		s = s.With(int(r.cpu))
	}
	return s
}

// evidence counts the waits during which a CPU outside cpus (and not the
// one the task then ran on) was idle.
func evidence(cpus topology.CPUSet, waits []wait) int {
	ev := 0
	for _, w := range waits {
		for _, cpu := range w.idle.CPUs() {
			if !cpus.Has(cpu) && cpu != w.cpu {
				ev++
				break
			}
		}
	}
	return ev
}

// logOverlap is idleOverlap over a log of idle stretches, read from the
// latest back (a wait being decided is recent).
func logOverlap(l *blocks.List[span], from, to timeline.Time) timeline.Time {
	best := timeline.Time(0)
	bs := l.Blocks()
	for k := len(bs) - 1; k >= 0; k-- {
		b := bs[k]
		for j := len(b) - 1; j >= 0; j-- {
			if b[j].end <= from {
				return best
			}
			if b[j].start < to {
				best = max(best, min(b[j].end, to)-max(b[j].start, from))
			}
		}
	}
	return best
}

// idleOverlap returns the longest overlap of one idle stretch in spans
// (sorted, disjoint) with [from, to).
func idleOverlap(spans []span, from, to timeline.Time) timeline.Time {
	i, _ := slices.BinarySearchFunc(spans, from, func(s span, t timeline.Time) int {
		if s.end <= t {
			return -1
		}
		return 1
	})
	best := timeline.Time(0)
	for ; i < len(spans) && spans[i].start < to; i++ {
		best = max(best, min(spans[i].end, to)-max(spans[i].start, from))
	}
	return best
}
