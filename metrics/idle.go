package metrics

import (
	"cmp"
	"slices"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// DefIdleWithRunnable is the one-line definition of the idle metric.
const DefIdleWithRunnable = "idle with runnable: a CPU runs its idle task while a task it may run " +
	"sits on the runqueue of a busy CPU; classed by the topology distance between the two CPUs; " +
	"affinity is assumed free unless the task is a per-CPU kthread or listed with --affinity"

// IdleWindow is one idle-with-runnable window: CPU idle while a task that
// may run there waits on another CPU's runqueue.
type IdleWindow struct {
	CPU   timeline.CPU
	Start timeline.Time
	DurNs int64
	// The waiting task shown for the window: when it opened, the waiting
	// task nearest in the topology (then the longest waiting).
	Task     timeline.TaskID
	PID      timeline.TID
	Comm     string
	WaitCPU  timeline.CPU      // runqueue the task waited on
	Relation topology.Relation // between CPU and WaitCPU
	// Capacity of the idle CPU and of the waiting task's CPU.
	Capacity     int
	WaitCapacity int
	// Waiting is how many tasks could have used CPU when the window opened.
	Waiting int
	// Affinity says which assumption made the task eligible for CPU.
	Affinity affinity.Source
	// QueueInferred: the runqueue was taken from where the task later ran.
	QueueInferred bool
	// Censored: the window touches the window edge, the trace end or a
	// lost-event gap; its length is a lower bound.
	Censored bool

	period int32 // index of its run of back-to-back windows
}

// Exactness of the window as a "could have run" claim.
func (w *IdleWindow) Exactness() Exactness {
	switch {
	case w.Censored:
		return Censored
	case w.QueueInferred || (!w.Affinity.Exact()):
		return Inferred
	}
	return Exact
}

// RelationTimes splits a duration by topology relation.
type RelationTimes struct {
	SMT       int64
	LLC       int64
	CrossLLC  int64
	CrossNUMA int64
	Unknown   int64
}

func (r *RelationTimes) add(rel topology.Relation, ns int64) {
	switch rel {
	case topology.SMT:
		r.SMT += ns
	case topology.LLC:
		r.LLC += ns
	case topology.CrossLLC:
		r.CrossLLC += ns
	case topology.CrossNUMA:
		r.CrossNUMA += ns
	default:
		r.Unknown += ns
	}
}

// IdleCPU is the per-CPU view of the idle metric.
type IdleCPU struct {
	CPU                timeline.CPU
	Capacity           int
	IdleNs             int64 // idle task on CPU, in the window
	IdleWithRunnableNs int64
	Windows            int64
}

// CouldRun is a task's time waiting while a CPU it may use was idle.
type CouldRun struct {
	Task       timeline.TaskID
	PID        timeline.TID
	Comm       string
	CouldRunNs int64 // waiting on a busy CPU while an allowed CPU idled
	Waits      int64 // waits with some of that time
	RunnableNs int64 // all its runnable time in the window
	Affinity   affinity.Source
	// RanOn is the only CPU the task ran on in the trace, -1 if it ran on
	// several or none.
	RanOn int
}

// Idle is the idle-with-runnable metric.
type Idle struct {
	MinWindowNs        int64
	TotalIdleNs        int64 // every CPU's idle time in the window
	IdleWithRunnableNs int64 // sum of the counted windows
	ByRelation         RelationTimes
	// Windows counted (at least MinWindowNs long), in start order.
	Windows []IdleWindow
	// ShortWindows and ShortNs: periods of back-to-back windows shorter
	// than MinWindowNs (the threshold applies to a whole stretch of one
	// CPU's idle-with-runnable time, not to each task's part), not counted.
	ShortWindows int64
	ShortNs      int64
	// Durations of the counted windows.
	Durations Dist
	// ByAffinity splits IdleWithRunnableNs by the affinity assumption of
	// each window's task; CensoredNs and InferredQueueNs are the parts of
	// it from censored windows and from windows whose runqueue was inferred.
	ByAffinity      map[affinity.Source]int64
	CensoredNs      int64
	InferredQueueNs int64
	ByCPU           []IdleCPU
	// ByTask lists the selected tasks that waited while an allowed CPU
	// was idle, most such time first.
	ByTask []CouldRun
	// PossiblyPinnedTasks counts tasks flagged affinity.PossiblyPinned.
	PossiblyPinnedTasks int
	// OwnQueue is the other idle measure: a CPU idle while a task queued
	// on it waits (the idle CPU's own wake-up path, or forced idle).
	OwnQueue *OwnQueue
}

// Sweep event kinds; at one timestamp ends go before starts.
const (
	evRunEnd uint8 = iota
	evIdleEnd
	evWaitEnd
	evRunStart
	evIdleStart
	evWaitStart
)

// sweepEv is a segment start or end at key; sub packs the kind (high 32
// bits) and the segment index.
type sweepEv = keyed

func mkEv(t timeline.Time, kind uint8, idx int) sweepEv {
	return sweepEv{int64(t), uint64(kind)<<32 | uint64(uint32(idx))}
}

func evKind(e sweepEv) uint8 { return uint8(e.sub >> 32) }
func evIdx(e sweepEv) int32  { return int32(uint32(e.sub)) }

// sweepEvents returns the start and end of every segment in time order,
// ends before starts at one timestamp, then by kind and index. The events
// are built in (kind, index) order and sorted stably by time.
func (c *collector) sweepEvents() []sweepEv {
	// Outside the times when some CPU is idle nothing is accounted: no
	// window, no (a) time, no idle core for (c). Waits, and on symmetric
	// topologies runs (misfit needs every run), that do not overlap any
	// idle time are left out; on a busy machine that is nearly all.
	union := c.idleUnion()
	overlaps := func(s, e timeline.Time) bool { return overlapsUnion(union, s, e) }
	keepRun := make([]bool, len(c.runs))
	nr := 0
	for i := range c.runs {
		if c.asym || overlaps(c.runs[i].start, c.runs[i].end) {
			keepRun[i] = true
			nr++
		}
	}
	keepWait := make([]bool, len(c.waits))
	nw := 0
	for i := range c.waits {
		if overlaps(c.waits[i].start, c.waits[i].end) {
			keepWait[i] = true
			nw++
		}
	}
	evs := make([]sweepEv, 0, 2*(nr+nw+len(c.idles)))
	// A run followed at once by the CPU's next segment needs no end event:
	// the next start replaces it (and if that next run was left out, the
	// CPU counts as busy a little longer where nothing is accounted).
	// Idle segments always end explicitly: an idle CPU must never outlast
	// its idle time.
	for i := range c.runs {
		if keepRun[i] && c.runs[i].flags&segAbut == 0 {
			evs = append(evs, mkEv(c.runs[i].end, evRunEnd, i))
		}
	}
	for i := range c.idles {
		evs = append(evs, mkEv(c.idles[i].end, evIdleEnd, i))
	}
	for i := range c.waits {
		if keepWait[i] {
			evs = append(evs, mkEv(c.waits[i].end, evWaitEnd, i))
		}
	}
	for i := range c.runs {
		if keepRun[i] {
			evs = append(evs, mkEv(c.runs[i].start, evRunStart, i))
		}
	}
	for i := range c.idles {
		evs = append(evs, mkEv(c.idles[i].start, evIdleStart, i))
	}
	for i := range c.waits {
		if keepWait[i] {
			evs = append(evs, mkEv(c.waits[i].start, evWaitStart, i))
		}
	}
	return radixSort(evs, nil)
}

type interval struct{ start, end timeline.Time }

// idleUnion returns the times some CPU was idle, as sorted disjoint
// intervals.
func (c *collector) idleUnion() []interval {
	k := make([]keyed, len(c.idles))
	for i, s := range c.idles {
		k[i] = keyed{int64(s.start), uint64(i)}
	}
	k = radixSort(k, nil)
	var out []interval
	for _, x := range k {
		s := &c.idles[x.sub]
		if n := len(out); n > 0 && s.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, interval{s.start, s.end})
	}
	return out
}

// sweeper walks the CPU and runqueue intervals in time order.
type sweeper struct {
	c    *collector
	ncpu int

	cpuRun  []int32 // run segment on the CPU, -1
	cpuIdle []int32 // idle segment on the CPU, -1
	// busy is what the waiters' eligibility follows: cpuRun >= 0 as of the
	// last reconcile. A switch from one task to another within one
	// timestamp leaves it unchanged, so the waiters are not toggled.
	busy  []bool
	dirty []int32

	waitersOn [][]int32 // per CPU: waits queued there
	eligPos   []int32   // per wait: index in freeElig/restElig, -1
	freeElig  []int32   // eligible waits of free tasks
	restElig  []int32   // eligible waits of tasks with an affinity mask
	g0        []int64   // per free eligible wait: gFree when it became eligible
	gFree     int64     // total time with an available CPU so far
	cntR      []int32   // per CPU: eligible restricted waits allowed there

	core       []int32 // dense core index per CPU
	coreSize   []int32
	coreIdle   []int32
	coreBusy   []int32
	nIdleCores int
	hasSMT     bool
	bigger     [][]int32 // per CPU: CPUs of higher capacity

	open    []int32 // open window per CPU, -1
	rep     []int32 // wait shown by the open window of each CPU
	windows []IdleWindow
	// A period is a run of back-to-back windows on one CPU (the shown task
	// changed, the CPU stayed idle with a task that could use it); the
	// minimum window length applies to periods.
	periods   []int64
	lastClose []timeline.Time
	lastPer   []int32
	avail     cpuMask // CPUs in an open window that counts
	nAvail    int
	cut       map[timeline.Time]bool // gap starts: windows ending there are censored

	couldRun  bool   // accumulate misplaced (a)
	misplaced bool   // accumulate misfit and SMT contention
	qualify   []bool // per window index: counts (pass 2 only)
	minWindow int64
}

type sweepResult struct {
	windows []IdleWindow
	periods []int64 // duration of each period of back-to-back windows
}

// sweep runs the interval sweep: windows, misfit and SMT contention, and
// the (a) time of every wait. With a minimum window length a second pass
// computes (a) counting only windows that pass it.
func (c *collector) sweep(minWindow int64) *sweepResult {
	evs := c.sweepEvents()
	if c.hasSMT {
		c.smtNs = make([]int64, len(c.runs))
	}
	s1 := c.newSweeper(minWindow)
	s1.misplaced = true
	s1.couldRun = minWindow <= 0
	s1.run(evs)
	if minWindow > 0 {
		s2 := c.newSweeper(minWindow)
		s2.couldRun = true
		s2.qualify = make([]bool, len(s1.windows))
		for i := range s1.windows {
			s2.qualify[i] = s1.periods[s1.windows[i].period] >= minWindow
		}
		s2.run(evs)
	}
	return &sweepResult{windows: s1.windows, periods: s1.periods}
}

func (c *collector) newSweeper(minWindow int64) *sweeper {
	n := c.topo.NCPU()
	sw := &sweeper{c: c, ncpu: n, cpuRun: make([]int32, n), cpuIdle: make([]int32, n), waitersOn: make([][]int32, n), busy: make([]bool, n),
		eligPos: make([]int32, len(c.waits)), g0: make([]int64, len(c.waits)), cntR: make([]int32, n),
		core: make([]int32, n), open: make([]int32, n), rep: make([]int32, n), avail: newMask(n), cut: map[timeline.Time]bool{},
		minWindow: minWindow, lastClose: make([]timeline.Time, n), lastPer: make([]int32, n)}
	for i := range sw.cpuRun {
		sw.cpuRun[i], sw.cpuIdle[i], sw.open[i], sw.rep[i], sw.lastPer[i] = -1, -1, -1, -1, -1
		sw.lastClose[i] = timeline.NoTime
	}
	for i := range sw.eligPos {
		sw.eligPos[i] = -1
	}
	ids := map[int]int32{}
	for i, cpu := range c.topo.CPUs {
		k, ok := ids[cpu.Core]
		if !ok {
			k = int32(len(sw.coreSize))
			ids[cpu.Core] = k
			sw.coreSize = append(sw.coreSize, 0)
		}
		sw.core[i] = k
		sw.coreSize[k]++
		if sw.coreSize[k] > 1 {
			sw.hasSMT = true
		}
	}
	sw.coreIdle = make([]int32, len(sw.coreSize))
	sw.coreBusy = make([]int32, len(sw.coreSize))
	if c.asym {
		sw.bigger = make([][]int32, n)
		for i := range n {
			for j := range n {
				if c.caps[j] > c.caps[i] {
					sw.bigger[i] = append(sw.bigger[i], int32(j))
				}
			}
		}
	}
	for _, g := range c.tl.Gaps {
		sw.cut[g.Start] = true
	}
	return sw
}

func (sw *sweeper) run(evs []sweepEv) {
	if len(evs) == 0 {
		return
	}
	prev := timeline.Time(evs[0].key)
	for i := 0; i < len(evs); {
		t := timeline.Time(evs[i].key)
		sw.interval(prev, t)
		for ; i < len(evs) && timeline.Time(evs[i].key) == t; i++ {
			sw.apply(evs[i])
		}
		sw.reconcile()
		sw.windowsAt(t)
		prev = t
	}
	// Every segment ended in the last batch; windows closed there.
}

func (sw *sweeper) apply(ev sweepEv) {
	c := sw.c
	e := struct {
		kind uint8
		idx  int32
	}{evKind(ev), evIdx(ev)}
	switch e.kind {
	case evRunEnd:
		if cpu := c.runs[e.idx].cpu; int(cpu) < sw.ncpu && sw.cpuRun[cpu] == e.idx {
			sw.setBusy(cpu, -1)
		}
	case evIdleEnd:
		if cpu := c.idles[e.idx].cpu; int(cpu) < sw.ncpu && sw.cpuIdle[cpu] == e.idx {
			sw.setIdle(cpu, -1)
		}
	case evWaitEnd:
		sw.removeWaiter(e.idx)
	case evRunStart:
		if cpu := c.runs[e.idx].cpu; int(cpu) < sw.ncpu {
			if sw.cpuIdle[cpu] >= 0 {
				sw.setIdle(cpu, -1)
			}
			sw.setBusy(cpu, e.idx)
		}
	case evIdleStart:
		if cpu := c.idles[e.idx].cpu; int(cpu) < sw.ncpu {
			if sw.cpuRun[cpu] >= 0 {
				sw.setBusy(cpu, -1)
			}
			sw.setIdle(cpu, e.idx)
		}
	case evWaitStart:
		sw.addWaiter(e.idx)
	}
}

func (sw *sweeper) setBusy(cpu int32, idx int32) {
	if (sw.cpuRun[cpu] >= 0) != (idx >= 0) {
		sw.dirty = append(sw.dirty, cpu)
	}
	sw.cpuRun[cpu] = idx
}

// reconcile applies the busy changes of one timestamp to the waiters.
func (sw *sweeper) reconcile() {
	for _, cpu := range sw.dirty {
		now := sw.cpuRun[cpu] >= 0
		if sw.busy[cpu] == now {
			continue
		}
		sw.busy[cpu] = now
		if now {
			sw.coreBusy[sw.core[cpu]]++
			for _, w := range sw.waitersOn[cpu] {
				sw.makeEligible(w)
			}
		} else {
			sw.coreBusy[sw.core[cpu]]--
			for _, w := range sw.waitersOn[cpu] {
				sw.makeIneligible(w)
			}
		}
	}
	sw.dirty = sw.dirty[:0]
}

func (sw *sweeper) setIdle(cpu int32, idx int32) {
	was := sw.cpuIdle[cpu] >= 0
	sw.cpuIdle[cpu] = idx
	now := idx >= 0
	if was == now {
		return
	}
	k := sw.core[cpu]
	if now {
		sw.coreIdle[k]++
		if sw.coreIdle[k] == sw.coreSize[k] {
			sw.nIdleCores++
		}
	} else {
		if sw.coreIdle[k] == sw.coreSize[k] {
			sw.nIdleCores--
		}
		sw.coreIdle[k]--
	}
}

func (sw *sweeper) addWaiter(w int32) {
	q := sw.c.waits[w].q
	if q < 0 || int(q) >= sw.ncpu {
		return
	}
	sw.waitersOn[q] = append(sw.waitersOn[q], w)
	if sw.busy[q] {
		sw.makeEligible(w)
	}
}

func (sw *sweeper) removeWaiter(w int32) {
	q := sw.c.waits[w].q
	if q < 0 || int(q) >= sw.ncpu {
		return
	}
	l := sw.waitersOn[q]
	if i := slices.Index(l, w); i >= 0 {
		l[i] = l[len(l)-1]
		sw.waitersOn[q] = l[:len(l)-1]
	}
	sw.makeIneligible(w)
}

// makeEligible: wait w sits on a busy CPU's runqueue.
func (sw *sweeper) makeEligible(w int32) {
	if sw.eligPos[w] >= 0 {
		return
	}
	ws := &sw.c.waits[w]
	mask := sw.c.maskTab[ws.mask]
	switch {
	case mask == nil:
		sw.eligPos[w] = int32(len(sw.freeElig))
		sw.freeElig = append(sw.freeElig, w)
		sw.g0[w] = sw.gFree
	case mask.subsetOf(int(ws.q)):
		// Pinned to the CPU it waits on: no other CPU could take it.
	default:
		sw.eligPos[w] = int32(len(sw.restElig))
		sw.restElig = append(sw.restElig, w)
		for c := range sw.ncpu {
			if c != int(ws.q) && mask.has(c) {
				sw.cntR[c]++
			}
		}
	}
}

func (sw *sweeper) makeIneligible(w int32) {
	p := sw.eligPos[w]
	if p < 0 {
		return
	}
	ws := &sw.c.waits[w]
	mask := sw.c.maskTab[ws.mask]
	list := &sw.freeElig
	if mask != nil {
		list = &sw.restElig
		for c := range sw.ncpu {
			if c != int(ws.q) && mask.has(c) {
				sw.cntR[c]--
			}
		}
	} else if sw.couldRun {
		if d := sw.gFree - sw.g0[w]; d > 0 {
			sw.c.recs[ws.sample].idleNs += d
			sw.c.qIdle[ws.q] += d
		}
	}
	l := *list
	last := l[len(l)-1]
	l[p] = last
	sw.eligPos[last] = p
	sw.eligPos[w] = -1
	*list = l[:len(l)-1]
}

// interval accounts [a, b), over which nothing changes.
func (sw *sweeper) interval(a, b timeline.Time) {
	dt := int64(b - a)
	if dt <= 0 {
		return
	}
	c := sw.c
	if sw.couldRun && sw.nAvail > 0 {
		sw.gFree += dt
		for _, w := range sw.restElig {
			ws := &c.waits[w]
			if sw.avail.intersectsExcept(c.maskTab[ws.mask], int(ws.q)) {
				c.recs[ws.sample].idleNs += dt
				c.qIdle[ws.q] += dt
			}
		}
	}
	if !sw.misplaced {
		return
	}
	if c.asym {
		for cpu := range sw.ncpu {
			if r := sw.cpuRun[cpu]; r >= 0 && c.fit[r].onset < b {
				sw.misfit(cpu, r, a, b)
			}
		}
	}
	if sw.hasSMT && sw.nIdleCores > 0 {
		for cpu := range sw.ncpu {
			r := sw.cpuRun[cpu]
			if r < 0 || sw.coreBusy[sw.core[cpu]] < 2 {
				continue
			}
			if m := c.maskTab[c.runs[r].mask]; m != nil && !sw.idleCoreIn(m) {
				continue
			}
			c.smtNs[r] += dt
		}
	}
}

// idleCoreIn reports whether a whole idle core has a CPU in m.
func (sw *sweeper) idleCoreIn(m cpuMask) bool {
	for cpu := range sw.ncpu {
		k := sw.core[cpu]
		if m.has(cpu) && sw.coreIdle[k] == sw.coreSize[k] {
			return true
		}
	}
	return false
}

// misfit accounts the misfit time of run segment r on cpu within [a, b):
// from its misfit onset, while a CPU of higher capacity that the task may
// use is idle or runs a task that would fit on cpu.
func (sw *sweeper) misfit(cpu int, ri int32, a, b timeline.Time) {
	c := sw.c
	r, rf := &c.runs[ri], &c.fit[ri]
	m0 := max(a, rf.onset)
	if m0 >= b {
		return
	}
	capacity := c.caps[cpu]
	th := fitThreshold(capacity)
	mask := c.maskTab[r.mask]
	x := a // a bigger CPU is available over [a, x)
	for _, d := range sw.bigger[cpu] {
		if mask != nil && !mask.has(int(d)) {
			continue
		}
		if sw.cpuIdle[d] >= 0 {
			x = b
			break
		}
		h := sw.cpuRun[d]
		if h < 0 {
			continue // unknown
		}
		y := b
		if dt, ok := c.ut.p.RunUntil(c.fit[h].u0, th, c.caps[d]); ok {
			y = min(b, c.runs[h].start+timeline.Time(dt))
		}
		x = max(x, y)
	}
	if x > m0 {
		rf.misfit += int64(x - m0)
	}
}

// windowsAt opens and closes windows after the events at t.
func (sw *sweeper) windowsAt(t timeline.Time) {
	anyFree := len(sw.freeElig) > 0
	for cpu := range sw.ncpu {
		cond := sw.cpuIdle[cpu] >= 0 && (anyFree || sw.cntR[cpu] > 0)
		if sw.open[cpu] >= 0 && (!cond || sw.eligPos[sw.rep[cpu]] < 0) {
			// Closed, or the task it shows stopped waiting there.
			sw.closeWindow(cpu, t)
		}
		if cond && sw.open[cpu] < 0 {
			sw.openWindow(cpu, t)
		}
	}
}

func (sw *sweeper) openWindow(cpu int, t timeline.Time) {
	c := sw.c
	best, bestRel, n := int32(-1), topology.Relation(0), 0
	var bestStart timeline.Time
	consider := func(w int32) {
		ws := &c.waits[w]
		n++
		rel := c.topo.Relation(cpu, int(ws.q))
		st := c.recs[ws.sample].start
		if best < 0 || rel < bestRel || (rel == bestRel && (st < bestStart || (st == bestStart && c.pidOf(ws.task) < c.pidOf(c.waits[best].task)))) {
			best, bestRel, bestStart = w, rel, st
		}
	}
	for _, w := range sw.freeElig {
		consider(w)
	}
	for _, w := range sw.restElig {
		if c.maskTab[c.waits[w].mask].has(cpu) {
			consider(w)
		}
	}
	if best < 0 {
		return
	}
	ws := &c.waits[best]
	rec := &c.recs[ws.sample]
	k := int32(len(sw.windows))
	per := sw.lastPer[cpu]
	if sw.lastClose[cpu] != t || per < 0 {
		per = int32(len(sw.periods))
		sw.periods = append(sw.periods, 0)
	}
	sw.rep[cpu] = best
	sw.windows = append(sw.windows, IdleWindow{period: per,
		CPU: timeline.CPU(cpu), Start: t, DurNs: -1, Task: ws.task, PID: c.pidOf(ws.task), Comm: c.tl.Strings.Get(rec.comm),
		WaitCPU: timeline.CPU(ws.q), Relation: bestRel, Capacity: c.caps[cpu], WaitCapacity: c.caps[ws.q],
		Waiting: n, Affinity: c.affSrc[ws.task], QueueInferred: ws.inferred,
		Censored: t <= c.win.Start,
	})
	sw.open[cpu] = k
	if sw.couldRun && (sw.qualify == nil || (int(k) < len(sw.qualify) && sw.qualify[k])) {
		sw.avail.set(cpu)
		sw.nAvail++
	}
}

func (sw *sweeper) closeWindow(cpu int, t timeline.Time) {
	k := sw.open[cpu]
	sw.open[cpu] = -1
	w := &sw.windows[k]
	w.DurNs = int64(t - w.Start)
	sw.periods[w.period] += w.DurNs
	sw.lastClose[cpu], sw.lastPer[cpu] = t, w.period
	if t >= sw.c.win.End || sw.cut[t] {
		w.Censored = true
	}
	if sw.avail.has(cpu) {
		sw.avail[cpu/64] &^= 1 << (cpu % 64)
		sw.nAvail--
	}
}

// idle assembles the idle metric from the sweep.
func (c *collector) idle(sw *sweepResult, opts Options) *Idle {
	id := &Idle{MinWindowNs: max(opts.MinWindow, 0), ByAffinity: map[affinity.Source]int64{}}
	n := c.topo.NCPU()
	cpus := make([]IdleCPU, n)
	for i := range cpus {
		cpus[i] = IdleCPU{CPU: timeline.CPU(i), Capacity: c.caps[i]}
	}
	for _, s := range c.idles {
		d := int64(s.end - s.start)
		id.TotalIdleNs += d
		if int(s.cpu) < n {
			cpus[s.cpu].IdleNs += d
		}
	}
	// Possibly pinned: ran on one CPU only, though many of its waits had
	// another CPU idle.
	minWaits := opts.PinnedMinWaits
	if minWaits <= 0 {
		minWaits = DefaultPinnedMinWaits
	}
	type acc struct {
		cr    CouldRun
		valid bool
	}
	per := make([]acc, len(c.tl.Tasks))
	for i := range c.recs {
		r := &c.recs[i]
		a := &per[r.task]
		if !a.valid {
			a.valid = true
			a.cr = CouldRun{Task: r.task, PID: c.pidOf(r.task), Comm: c.tl.TaskName(r.task), Affinity: c.affSrc[r.task], RanOn: int(max(c.ranOn[r.task], -1))}
		}
		a.cr.RunnableNs += r.dur
		if r.idleNs > 0 {
			a.cr.CouldRunNs += r.idleNs
			a.cr.Waits++
		}
	}
	for i := range per {
		a := &per[i]
		if !a.valid {
			continue
		}
		if c.fold != nil && i < len(c.fold.runnable) {
			a.cr.RunnableNs += c.fold.runnable[i] // the folded records'
		}
		if a.cr.Affinity == affinity.Assumed && a.cr.RanOn >= 0 && a.cr.Waits >= int64(minWaits) {
			a.cr.Affinity = affinity.PossiblyPinned
			c.affSrc[i] = affinity.PossiblyPinned
			id.PossiblyPinnedTasks++
		}
		if a.cr.CouldRunNs > 0 {
			id.ByTask = append(id.ByTask, a.cr)
		}
	}
	slices.SortFunc(id.ByTask, func(a, b CouldRun) int {
		if c := cmp.Compare(b.CouldRunNs, a.CouldRunNs); c != 0 {
			return c
		}
		return cmp.Compare(a.PID, b.PID)
	})
	var durs []int64
	shortPer := map[int32]bool{}
	for _, w := range sw.windows {
		if w.DurNs <= 0 {
			continue
		}
		if sw.periods[w.period] < id.MinWindowNs {
			shortPer[w.period] = true
			id.ShortNs += w.DurNs
			continue
		}
		w.Affinity = c.affSrc[w.Task]
		id.Windows = append(id.Windows, w)
		id.IdleWithRunnableNs += w.DurNs
		id.ByRelation.add(w.Relation, w.DurNs)
		id.ByAffinity[w.Affinity] += w.DurNs
		if w.Censored {
			id.CensoredNs += w.DurNs
		}
		if w.QueueInferred {
			id.InferredQueueNs += w.DurNs
		}
		if int(w.CPU) < n {
			cpus[w.CPU].IdleWithRunnableNs += w.DurNs
			cpus[w.CPU].Windows++
		}
		durs = append(durs, w.DurNs)
	}
	id.ShortWindows = int64(len(shortPer))
	slices.Sort(durs)
	id.Durations = NewDist(durs)
	id.ByCPU = cpus
	return id
}
