package metrics

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strconv"

	"github.com/schedlens/schedlens/timeline"
)

// Definitions printed under every table that shows the figure, and in the
// JSON outputs. docs/metrics.md gives the long form.
const (
	DefWakeupLatency = "wakeup latency: sched_waking of a task (sched_wakeup if no waking was " +
		"traced for it, sched_wakeup_new for a new task) to the sched_switch that runs it; " +
		"wakeups of running or queued tasks are not samples; samples cut by the trace end, " +
		"a lost-event gap or the window are censored and left out of the percentiles"
	DefPreemptWait = "preemption wait: sched_switch out in R or R+ (or woken while going to " +
		"sleep) to the next sched_switch in"
	DefPlacement = "placement delay: sched_waking to sched_wakeup (both traced); queue delay: " +
		"sched_wakeup to switch-in"
)

// SampleKind says what started a runnable wait.
type SampleKind uint8

// Sample kinds.
const (
	SampleWakeup    SampleKind = iota // sched_waking (or sched_wakeup) of a sleeping task
	SampleWakeupNew                   // sched_wakeup_new of a new task
	SamplePreempt                     // switch-out in R/R+ (or woken while going to sleep)
)

func (k SampleKind) String() string {
	switch k {
	case SampleWakeup:
		return "wakeup"
	case SampleWakeupNew:
		return "wakeup_new"
	case SamplePreempt:
		return "preempt"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Censor says why a sample's interval was cut.
type Censor uint8

// Censoring causes.
const (
	CensoredNone     Censor = iota
	CensoredTraceEnd        // the trace ended before the task ran
	CensoredGap             // a lost-event gap or inconsistency cut it
	CensoredWindow          // it crosses the window's start or end
)

func (c Censor) String() string {
	switch c {
	case CensoredNone:
		return ""
	case CensoredTraceEnd:
		return "trace_end"
	case CensoredGap:
		return "gap"
	case CensoredWindow:
		return "window"
	}
	return "censor(" + strconv.Itoa(int(c)) + ")"
}

// Sample is one runnable wait: a wakeup latency or a preemption wait.
// (Fields are ordered by size to keep the struct small: a trace has one
// sample per wakeup and preemption.)
type Sample struct {
	Start  timeline.Time // runnable from: sched_waking, sched_wakeup(_new), or the switch-out
	Wakeup timeline.Time // sched_wakeup / wakeup_new (enqueue), NoTime if not traced
	End    timeline.Time // switch-in, or where the interval was cut
	DurNs  int64         // End - Start, clipped to the window

	// IdleCPUNs is how long, during this wait, the task sat on a busy CPU's
	// runqueue while a CPU it may run on was idle (misplaced (a)).
	IdleCPUNs int64

	Task     timeline.TaskID
	PID      timeline.TID
	Waker    timeline.TaskID // task running where the waking was recorded
	WakerPID timeline.TID

	WakeCPU   timeline.CPU // CPU that recorded the waking (wakeups only)
	TargetCPU timeline.CPU // target_cpu of the waking/wakeup event, updated by migrations
	CPU       timeline.CPU // CPU it was switched in on; NoCPU if censored

	// CommID and WakerCommID are the task's and the waker's names when
	// the wait started, as ids of the timeline's Strings (Latency.Comm and
	// Latency.WakerComm give the names).
	CommID, WakerCommID timeline.CommID

	Prio     int16            // kernel prio (0..139), -1 if unknown
	Kind     SampleKind       // what started the wait
	WakerCtx timeline.Context // task, softirq, hardirq (ftrace irq-info flags), unknown
	Censored Censor

	NoWaking  bool // a wakeup sample that starts at sched_wakeup
	AfterRace bool // a preemption sample of a task woken while going to sleep
	split     bool // both sched_waking and sched_wakeup traced, complete
}

// PlacementNs returns the placement delay (sched_waking to sched_wakeup),
// or -1 unless both events were traced and the sample is complete.
func (s *Sample) PlacementNs() int64 {
	if !s.split {
		return -1
	}
	return int64(s.Wakeup - s.Start)
}

// QueueNs returns the queue delay (sched_wakeup to switch-in), or -1 as
// for PlacementNs.
func (s *Sample) QueueNs() int64 {
	if !s.split {
		return -1
	}
	return int64(s.End - s.Wakeup)
}

// Exactness of the sample's duration.
func (s *Sample) Exactness() Exactness {
	if s.Censored != CensoredNone {
		return Censored
	}
	return Exact
}

// PrioClass names the scheduling class of a kernel prio: "rt N" (N the
// user-visible rtprio, 99 - prio) for 0..99, "nice N" for 100..139,
// "unknown" otherwise (deadline tasks show prio -1 in ftrace).
func PrioClass(prio int16) string {
	switch {
	case prio >= 0 && prio < 100:
		return "rt " + strconv.Itoa(99-int(prio))
	case prio >= 100 && prio < 140:
		return "nice " + strconv.Itoa(int(prio)-120)
	}
	return "unknown"
}

// Histogram counts values in log2 buckets of microseconds, like runqlat:
// bucket 0 holds 0 and 1 µs, bucket k >= 1 holds [2^k, 2^(k+1)) µs.
type Histogram []int64

// CDFDistance is the Kolmogorov-Smirnov distance between two latency
// distributions read at their histograms' bucket bounds (powers of two in
// µs): the largest gap between the shares of samples at or below a bound,
// 0 for the same distribution, 1 for disjoint ones. Unlike a ratio of
// medians it does not jump when a median falls between two modes.
func CDFDistance(a, b Histogram) float64 {
	var na, nb int64
	for _, v := range a {
		na += v
	}
	for _, v := range b {
		nb += v
	}
	if na == 0 || nb == 0 {
		if na == nb {
			return 0
		}
		return 1
	}
	var ca, cb int64
	d := 0.0
	for k := 0; k < max(len(a), len(b)); k++ {
		if k < len(a) {
			ca += a[k]
		}
		if k < len(b) {
			cb += b[k]
		}
		d = max(d, math.Abs(float64(ca)/float64(na)-float64(cb)/float64(nb)))
	}
	return d
}

// HistBucket returns the bucket of a value in nanoseconds.
func HistBucket(ns int64) int {
	us := uint64(max(ns, 0)) / 1000
	if us < 2 {
		return 0
	}
	return bits.Len64(us) - 1
}

// HistRange returns the µs range [lo, hi] of bucket k.
func HistRange(k int) (lo, hi int64) {
	if k == 0 {
		return 0, 1
	}
	return 1 << k, 1<<(k+1) - 1
}

func (h *Histogram) add(ns int64) {
	k := HistBucket(ns)
	for len(*h) <= k {
		*h = append(*h, 0)
	}
	(*h)[k]++
}

// Dist summarises durations. Percentiles use the nearest rank: P is the
// smallest sample such that at least P% of the samples are at or below it.
type Dist struct {
	Count  int64
	SumNs  int64
	MeanNs int64
	P50Ns  int64
	P90Ns  int64
	P99Ns  int64
	P999Ns int64
	MaxNs  int64
	Hist   Histogram
	// Estimated has bit i set when percentile i (P50, P90, P99, P999)
	// is estimated from a sketch's bucket (DefEstimated), not exact.
	Estimated uint8
}

// EstimatedAt reports whether percentile i (0 P50, 1 P90, 2 P99, 3 P999)
// is estimated.
func (d *Dist) EstimatedAt(i int) bool { return d.Estimated&(1<<i) != 0 }

// rank returns the nearest-rank percentile (per mille) of sorted.
func rank(sorted []int64, perMille int) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	i := (n*perMille + 999) / 1000 // ceil(n * p)
	return sorted[max(i, 1)-1]
}

// distOf summarises durations in any order, with the histogram if hist.
// The nearest-rank percentiles come from one counting pass over
// logarithmic buckets (16 per power of two, exact below 32 ns), then a
// sort of only the few buckets that hold the wanted ranks.
func distOf(vals []int64, hist bool) Dist {
	d := Dist{Count: int64(len(vals))}
	n := len(vals)
	if n == 0 {
		return d
	}
	d.MaxNs = vals[0]
	for _, v := range vals {
		d.SumNs += v
		d.MaxNs = max(d.MaxNs, v)
	}
	if hist {
		for _, v := range vals {
			d.Hist.add(v)
		}
	}
	d.MeanNs = d.SumNs / d.Count
	out := [4]*int64{&d.P50Ns, &d.P90Ns, &d.P99Ns, &d.P999Ns}
	var ranks [4]int
	for i, pm := range [4]int{500, 900, 990, 999} {
		ranks[i] = max((n*pm+999)/1000, 1) - 1
	}
	if n <= 64 {
		slices.Sort(vals)
		for i, k := range ranks {
			*out[i] = vals[k]
		}
		return d
	}
	var counts [logBuckets]int32
	for _, v := range vals {
		counts[logBucket(v)]++
	}
	// The bucket of each rank, and how many values lie below it.
	var bucket, below [4]int
	cum, r := 0, 0
	for b := 0; b < logBuckets && r < 4; b++ {
		c := int(counts[b])
		for r < 4 && ranks[r] < cum+c {
			bucket[r], below[r] = b, cum
			r++
		}
		cum += c
	}
	// Gather and sort the values of those buckets (at most four).
	var gathered [4][]int64
	for i := range 4 {
		if i > 0 && bucket[i] == bucket[i-1] {
			continue
		}
		gathered[i] = make([]int64, 0, counts[bucket[i]])
	}
	for _, v := range vals {
		b := logBucket(v)
		for i := range 4 {
			if b == bucket[i] && gathered[i] != nil {
				gathered[i] = append(gathered[i], v)
				break
			}
		}
	}
	for i := range 4 {
		j := i
		for j > 0 && gathered[j] == nil {
			j--
		}
		if i == j {
			slices.Sort(gathered[i])
		}
		*out[i] = gathered[j][ranks[i]-below[i]]
	}
	return d
}

// logBuckets is the number of logBucket values.
const logBuckets = 60*16 + 32

// logBucket maps a duration to an ordered bucket: the value itself below
// 32, else 16 sub-buckets per power of two (each at most 1/16 of its
// values wide).
func logBucket(v int64) int {
	if v < 32 {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - 5
	return e*16 + int(uint64(v)>>e)
}

// NewDist summarises ascending durations.
func NewDist(sorted []int64) Dist {
	d := Dist{Count: int64(len(sorted))}
	if len(sorted) == 0 {
		return d
	}
	for _, v := range sorted {
		d.SumNs += v
		d.Hist.add(v)
	}
	d.MeanNs = d.SumNs / d.Count
	d.P50Ns, d.P90Ns, d.P99Ns, d.P999Ns = rank(sorted, 500), rank(sorted, 900), rank(sorted, 990), rank(sorted, 999)
	d.MaxNs = sorted[len(sorted)-1]
	return d
}

// GroupDist is the distribution of one group of samples: a task, a comm, a
// priority class or a CPU. Its Dist has no histogram.
type GroupDist struct {
	Key  string          // "nice 0", "rt 50", "cpu 1", a comm, or "pid/comm"
	Task timeline.TaskID // by task only, else NoTask
	PID  timeline.TID    // by task only
	Comm string          // by task and by comm
	CPU  timeline.CPU    // by CPU only, else NoCPU
	Dist Dist            // complete samples
	// Censored samples of the group and their clipped time; SumNs plus
	// CensoredNs is the group's whole runnable time in the window.
	Censored   int64
	CensoredNs int64
}

// CensorCounts counts censored samples by cause.
type CensorCounts struct {
	Count    int64
	Ns       int64 // their clipped durations, a lower bound
	TraceEnd int64
	Gap      int64
	Window   int64
}

// add counts censored sample r.
func (cc *CensorCounts) add(r *sampleRec) {
	cc.Count++
	cc.Ns += r.dur
	switch r.censored() {
	case CensoredTraceEnd:
		cc.TraceEnd++
	case CensoredGap:
		cc.Gap++
	case CensoredWindow:
		cc.Window++
	}
}

// LatencyStats is the summary of one kind of wait.
type LatencyStats struct {
	Overall   Dist
	Placement Dist // waking -> wakeup, samples with both events
	Queue     Dist // wakeup -> switch-in, same samples
	ByTask    []GroupDist
	ByComm    []GroupDist
	ByClass   []GroupDist
	ByCPU     []GroupDist
	Censored  CensorCounts
	// ByContext counts complete wakeup samples by the context of their
	// waking: "task", "softirq", "hardirq", "nmi", "unknown" (no flags).
	ByContext map[string]int64
	// FromWakeup counts wakeup samples that start at sched_wakeup because
	// no sched_waking was traced for them.
	FromWakeup int64
}

// Estimated reports whether some distribution's percentiles are
// estimated (Dist.Estimated).
func (st *LatencyStats) Estimated() bool {
	if st.Overall.Estimated|st.Placement.Estimated|st.Queue.Estimated != 0 {
		return true
	}
	for _, gs := range [][]GroupDist{st.ByTask, st.ByComm, st.ByClass, st.ByCPU} {
		for i := range gs {
			if gs[i].Dist.Estimated != 0 {
				return true
			}
		}
	}
	return false
}

// Latency is the wakeup-latency and preemption-wait metric.
type Latency struct {
	// Samples holds every wait of the selected tasks that overlaps the
	// window, in switch-in order, censored ones included.
	Samples []Sample
	Wakeup  LatencyStats
	Preempt LatencyStats
	// WakeupsOfRunning and WakeupsOfQueued count wakeups of the selected
	// tasks while they were running or already runnable (whole trace):
	// not samples.
	WakeupsOfRunning int64
	WakeupsOfQueued  int64
	HasWaking        bool // the trace has sched_waking
	HasWakeup        bool // the trace has sched_wakeup

	// Strings names the samples' comm ids (the timeline's).
	Strings *timeline.Strings

	// Wakeups holds, with Options.TaskWakeups, each complete wakeup
	// sample's task and duration: those folded during the walk first,
	// then the rest in the order of their samples.
	Wakeups []TaskWait
}

// TaskWait is one complete wait of a task.
type TaskWait struct {
	Task  timeline.TaskID
	DurNs int64
}

// Comm returns the name sample s's task had when its wait started.
func (l *Latency) Comm(s *Sample) string { return l.Strings.Get(s.CommID) }

// WakerComm returns the name of sample s's waker when the wait started, ""
// without a waker.
func (l *Latency) WakerComm(s *Sample) string {
	if s.Waker == timeline.NoTask {
		return ""
	}
	return l.Strings.Get(s.WakerCommID)
}

func (c *collector) latency() *Latency {
	l := &Latency{Samples: c.samples, HasWaking: c.tl.HasWaking, HasWakeup: c.tl.HasWakeup, Strings: c.tl.Strings}
	for id, m := range c.match {
		if m && id < len(c.walk.WakeupsOfRunningBy) {
			l.WakeupsOfRunning += int64(c.walk.WakeupsOfRunningBy[id])
			l.WakeupsOfQueued += int64(c.walk.WakeupsOfQueuedBy[id])
		}
	}
	if c.wakeups {
		var folded []TaskWait
		if c.fold != nil {
			folded = c.fold.wakeups
		}
		n := len(folded)
		for i := range c.recs {
			if r := &c.recs[i]; r.completeWakeup() {
				n++
			}
		}
		l.Wakeups = slices.Grow(folded, n-len(folded))
		for i := range c.recs {
			if r := &c.recs[i]; r.completeWakeup() {
				l.Wakeups = append(l.Wakeups, TaskWait{Task: r.task, DurNs: r.dur})
			}
		}
		if c.noSamples {
			// The wakeups' overall distribution is all the caller reads.
			durs := make([]int64, len(l.Wakeups))
			for i, w := range l.Wakeups {
				durs[i] = w.DurNs
			}
			l.Wakeup.Overall = distOf(durs, true)
			return l
		}
	}
	if f := c.fold; f != nil {
		for i := range c.recs {
			r := &c.recs[i]
			f.kinds[kindOf(r)].add(r, r.comm)
		}
		l.Wakeup = f.kinds[0].stats(c.tl, c.topo.NCPU())
		l.Preempt = f.kinds[1].stats(c.tl, c.topo.NCPU())
		return l
	}
	ntask, ncomm, ncpu := len(c.tl.Tasks), c.tl.Strings.Len(), c.topo.NCPU()
	g := [2]*grouper{newGrouper(ntask, ncomm, ncpu, false), newGrouper(ntask, ncomm, ncpu, true)}
	for _, x := range g {
		x.taskName, x.tasks = c.tl.TaskName, c.tl.Tasks
		// Strings is safe to read from several goroutines (the idle
		// sweep runs beside this); the collector's name cache is not.
		x.name = c.tl.Strings.Get
	}
	// One pass sizes every group of both kinds and a second collects the
	// complete samples' durations and placement delays overall. Then each
	// grouping in turn (task, comm, class, CPU) deals the durations out to
	// its groups, in sample order, into the overall array, which the next
	// grouping reuses; the first also collects the queue delays, into the
	// placement delays' array. Percentiles come from selection, not
	// sorting.
	for i := range c.recs {
		r := &c.recs[i]
		g[kindOf(r)].count(r)
	}
	g[0].allocOverall()
	g[1].allocOverall()
	for i := range c.recs {
		if r := &c.recs[i]; r.censored() == CensoredNone {
			g[kindOf(r)].fillOverall(r)
		}
	}
	g[0].finishOverall()
	g[1].finishOverall()
	// The overall durations are summarised: their arrays, one complete
	// sample long each, back the groupings.
	back := [2][]int64{g[0].all[:g[0].n], g[1].all[:g[1].n]}
	g[0].all, g[1].all = nil, nil
	for j := range groupings {
		g[0].carve(j, back[0])
		g[1].carve(j, back[1])
		for i := range c.recs {
			if r := &c.recs[i]; r.censored() == CensoredNone {
				x := g[kindOf(r)]
				x.fill(j, r)
				if j == byTask {
					x.fillQueue(r)
				}
			}
		}
		if j == byTask {
			g[0].finishQueue()
			g[1].finishQueue()
		}
		g[0].finishGrouping(j)
		g[1].finishGrouping(j)
	}
	l.Wakeup = g[0].st
	l.Preempt = g[1].st
	return l
}

// kindOf is the grouper of sample r: 0 wakeups, 1 preemptions.
func kindOf(r *sampleRec) int {
	if r.kind == SamplePreempt {
		return 1
	}
	return 0
}

type groupAcc struct {
	g    GroupDist
	n    int // complete samples
	durs []int64
}

// grouper builds the distributions of one kind of wait (wakeups or
// preemptions), with its groups held in slices indexed by task, comm id,
// prio and CPU.
type grouper struct {
	preempt      bool
	groupsByTask []*groupAcc
	comms        []*groupAcc
	classes      [141]*groupAcc // prio+1; 0 = unknown
	cpus         []*groupAcc
	// The groups in order of creation.
	lTasks, lComms, lClasses, lCPUs []*groupAcc
	// taskName names a task by its latest comm (a task that exec'd has
	// samples under several).
	taskName func(timeline.TaskID) string
	name     func(timeline.CommID) string // a comm id's name
	tasks    []timeline.Task              // the task instances, for their pids

	st        LatencyStats
	ctx       [timeline.CtxNMI + 1]int64
	n, nplace int
	// all holds the complete samples' durations, delays their placement
	// delays, then their queue delays (one array for both, in turn).
	all, delays []int64
}

func newGrouper(ntask, ncomm, ncpu int, preempt bool) *grouper {
	return &grouper{preempt: preempt, groupsByTask: make([]*groupAcc, ntask), comms: make([]*groupAcc, ncomm), cpus: make([]*groupAcc, ncpu)}
}

func prioSlot(prio int16) int {
	if p := int(prio) + 1; p > 0 && p < 141 {
		return p
	}
	return 0
}

// count sizes the groups for sample r, creating them, and tallies
// censoring.
func (g *grouper) count(r *sampleRec) {
	st := &g.st
	if r.kind == SampleWakeup && r.noWaking() {
		st.FromWakeup++
	}
	ta := g.groupsByTask[r.task]
	if ta == nil {
		name := g.name(r.comm)
		if g.taskName != nil {
			name = g.taskName(r.task)
		}
		ta = &groupAcc{g: taskGroup(r.task, g.tasks[r.task].PID, name)}
		g.groupsByTask[r.task] = ta
		g.lTasks = append(g.lTasks, ta)
	}
	if r.censored() != CensoredNone {
		st.Censored.add(r)
		ta.g.Censored++
		ta.g.CensoredNs += r.dur
		return
	}
	g.n++
	ta.n++
	ca := g.comms[r.comm]
	if ca == nil {
		ca = &groupAcc{g: commGroup(g.name(r.comm))}
		g.comms[r.comm] = ca
		g.lComms = append(g.lComms, ca)
	}
	ca.n++
	p := prioSlot(r.prio)
	pa := g.classes[p]
	if pa == nil {
		pa = &groupAcc{g: classGroup(p)}
		g.classes[p] = pa
		g.lClasses = append(g.lClasses, pa)
	}
	pa.n++
	if r.cpu >= 0 && int(r.cpu) < len(g.cpus) {
		xa := g.cpus[r.cpu]
		if xa == nil {
			xa = &groupAcc{g: cpuGroup(r.cpu)}
			g.cpus[r.cpu] = xa
			g.lCPUs = append(g.lCPUs, xa)
		}
		xa.n++
	}
	if r.split() {
		g.nplace++
	}
	if !g.preempt && int(r.wakerCtx()) < len(g.ctx) {
		g.ctx[r.wakerCtx()]++
	}
}

// The heads of the groups (their keys and what they are of).
func taskGroup(id timeline.TaskID, pid timeline.TID, name string) GroupDist {
	return GroupDist{Key: strconv.Itoa(int(pid)) + "/" + name, Task: id, PID: pid, Comm: name, CPU: timeline.NoCPU}
}

func commGroup(name string) GroupDist {
	return GroupDist{Key: name, Task: timeline.NoTask, Comm: name, CPU: timeline.NoCPU}
}

// classGroup heads the group of prioSlot p.
func classGroup(p int) GroupDist {
	return GroupDist{Key: PrioClass(int16(p - 1)), Task: timeline.NoTask, CPU: timeline.NoCPU}
}

func cpuGroup(cpu timeline.CPU) GroupDist {
	return GroupDist{Key: "cpu " + strconv.Itoa(int(cpu)), Task: timeline.NoTask, CPU: cpu}
}

// The groupings of a grouper, in the order they are dealt.
const (
	byTask = iota
	byComm
	byClass
	byCPU
	groupings
)

// groups returns the groups of grouping j in order of creation.
func (g *grouper) groups(j int) []*groupAcc {
	switch j {
	case byTask:
		return g.lTasks
	case byComm:
		return g.lComms
	case byClass:
		return g.lClasses
	}
	return g.lCPUs
}

// group returns sample r's group in grouping j, nil for none.
func (g *grouper) group(j int, r *sampleRec) *groupAcc {
	switch j {
	case byTask:
		return g.groupsByTask[r.task]
	case byComm:
		return g.comms[r.comm]
	case byClass:
		return g.classes[prioSlot(r.prio)]
	}
	if r.cpu >= 0 && int(r.cpu) < len(g.cpus) {
		return g.cpus[r.cpu]
	}
	return nil
}

// allocOverall sizes the durations of every complete sample and the
// placement delays.
func (g *grouper) allocOverall() {
	g.all = make([]int64, 0, g.n)
	g.delays = make([]int64, 0, g.nplace)
}

// fillOverall adds complete sample r's duration (and placement delay)
// overall.
func (g *grouper) fillOverall(r *sampleRec) {
	g.all = append(g.all, r.dur)
	if r.split() {
		g.delays = append(g.delays, r.place)
	}
}

// finishOverall computes the overall and placement distributions (the
// caller reuses the durations' array, fillQueue the delays').
func (g *grouper) finishOverall() {
	st := &g.st
	st.Overall = distOf(g.all, true)
	st.Placement = distOf(g.delays, true)
	g.delays = g.delays[:0]
	if !g.preempt {
		st.ByContext = contextCounts(&g.ctx)
	}
}

// contextCounts names the non-zero counts of wakers' contexts.
func contextCounts(ctx *[timeline.CtxNMI + 1]int64) map[string]int64 {
	m := map[string]int64{}
	for c, n := range ctx {
		if n > 0 {
			m[timeline.Context(c).String()] = n
		}
	}
	return m
}

// fillQueue adds complete sample r's queue delay.
func (g *grouper) fillQueue(r *sampleRec) {
	if r.split() {
		g.delays = append(g.delays, r.dur-r.place)
	}
}

// finishQueue computes the queue distribution and lets go of the delays.
func (g *grouper) finishQueue() {
	g.st.Queue = distOf(g.delays, true)
	g.delays = nil
}

// carve gives every group of grouping j its slice of back, which must
// hold the grouper's complete samples.
func (g *grouper) carve(j int, back []int64) {
	for _, a := range g.groups(j) {
		a.durs, back = back[:0:a.n], back[a.n:]
	}
}

// fill deals the duration of complete sample r out to its group of
// grouping j.
func (g *grouper) fill(j int, r *sampleRec) {
	if a := g.group(j, r); a != nil {
		a.durs = append(a.durs, r.dur)
	}
}

// finishGrouping computes the distributions of grouping j's groups and
// lets go of their durations.
func (g *grouper) finishGrouping(j int) {
	m := g.groups(j)
	out := make([]GroupDist, len(m))
	for i, a := range m {
		if int64(len(a.durs)) == g.st.Overall.Count {
			// The group holds every sample: its figures are the overall ones.
			a.g.Dist = g.st.Overall
			a.g.Dist.Hist = nil
		} else {
			a.g.Dist = distOf(a.durs, false)
		}
		a.durs = nil
		out[i] = a.g
	}
	g.st.setGrouping(j, out)
}

// setGrouping sorts the groups of grouping j and sets them.
func (st *LatencyStats) setGrouping(j int, gs []GroupDist) {
	switch j {
	case byTask:
		slices.SortFunc(gs, func(a, b GroupDist) int {
			if c := cmp.Compare(b.Dist.MaxNs, a.Dist.MaxNs); c != 0 {
				return c
			}
			if c := cmp.Compare(a.PID, b.PID); c != 0 {
				return c
			}
			return cmp.Compare(a.Task, b.Task)
		})
		st.ByTask = gs
	case byComm:
		slices.SortFunc(gs, func(a, b GroupDist) int {
			if c := cmp.Compare(b.Dist.MaxNs, a.Dist.MaxNs); c != 0 {
				return c
			}
			return cmp.Compare(a.Comm, b.Comm)
		})
		st.ByComm = gs
	case byClass:
		slices.SortFunc(gs, func(a, b GroupDist) int { return cmp.Compare(classOrder(a.Key), classOrder(b.Key)) })
		st.ByClass = gs
	case byCPU:
		slices.SortFunc(gs, func(a, b GroupDist) int { return cmp.Compare(a.CPU, b.CPU) })
		st.ByCPU = gs
	}
}

// classOrder sorts rt (highest rtprio first), then nice (lowest first),
// then unknown.
func classOrder(key string) int {
	if v, ok := cutInt(key, "rt "); ok {
		return -1000 - v
	}
	if v, ok := cutInt(key, "nice "); ok {
		return v
	}
	return 1000
}

func cutInt(s, prefix string) (int, bool) {
	if len(s) <= len(prefix) || s[:len(prefix)] != prefix {
		return 0, false
	}
	v, err := strconv.Atoi(s[len(prefix):])
	return v, err == nil
}
