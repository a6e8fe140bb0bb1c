package metrics

import (
	"cmp"
	"slices"

	"github.com/schedlens/schedlens/timeline"
)

// DefOwnQueue is the one-line definition of the own-queue idle metric.
const DefOwnQueue = "idle with its own queue non-empty: a CPU runs its idle task while a task queued on that CPU " +
	"(sched_wakeup target, migration, or preempted there) waits and has not switched in; normally the idle CPU's " +
	"wake-up path (IPI, idle exit), under core scheduling forced idle"

// DefaultOwnQueueList is the default Options.OwnQueueList: own-queue idle
// windows at least this long are listed one by one.
const DefaultOwnQueueList = 1_000_000

// OwnQueueStallNs is the own-queue idle window length no wake-up path
// explains (an IPI and an idle exit take microseconds, a slow guest's a
// few milliseconds): `schedlens report` shows the measure when a window
// reaches it.
const OwnQueueStallNs = 100_000_000

// CookieRelation compares the core-scheduling cookies of a waiting task
// and of the task its CPU's SMT sibling runs.
type CookieRelation uint8

// Cookie relations.
const (
	// CookieUnknown: the trace has no core_sched_cookie marker, or the
	// sibling ran no known task.
	CookieUnknown CookieRelation = iota
	// CookieSame: both tasks carry the same cookie (0 is untagged).
	CookieSame
	// CookieDiffers: the cookies differ, so core scheduling forbids the
	// two tasks on one core at once.
	CookieDiffers
)

func (r CookieRelation) String() string {
	switch r {
	case CookieSame:
		return "same"
	case CookieDiffers:
		return "differs"
	}
	return "unknown"
}

// OwnQueueWindow is one stretch of a CPU running its idle task while its
// own runqueue holds a waiting task.
type OwnQueueWindow struct {
	CPU   timeline.CPU
	Start timeline.Time
	DurNs int64
	// The task shown: of those queued on CPU when the window opened, the
	// one waiting longest (then the lowest PID). Waiting is how many were
	// queued then.
	Task    timeline.TaskID
	PID     timeline.TID
	Comm    string
	Waiting int
	// Sibling is the SMT sibling shown (NoCPU without SMT): the first
	// sibling running a task when the window opened, else the first
	// sibling. SiblingTask is what it ran then (NoTask: idle or unknown,
	// SiblingIdle says which).
	Sibling     timeline.CPU
	SiblingTask timeline.TaskID
	SiblingPID  timeline.TID
	SiblingComm string
	SiblingIdle bool
	// SiblingIdleNs is the part of the window in which every sibling was
	// idle too (the whole core idle with a task queued on it).
	SiblingIdleNs int64
	// Cookie compares the waiting task's core-scheduling cookie with the
	// sibling's task's, when the trace's markers give cookies.
	Cookie CookieRelation
	// QueueInferred: some queue stretch in the window was taken from where
	// the task ran next, not from an event.
	QueueInferred bool
	// Censored: the window touches the analysis window's edge, the trace
	// end or a lost-event gap; its length is a lower bound.
	Censored bool
}

// Exactness of the window.
func (w *OwnQueueWindow) Exactness() Exactness {
	switch {
	case w.Censored:
		return Censored
	case w.QueueInferred:
		return Inferred
	}
	return Exact
}

// OwnQueueCPU is the per-CPU view of the own-queue idle metric.
type OwnQueueCPU struct {
	CPU     timeline.CPU
	Windows int64
	Ns      int64
	MaxNs   int64
}

// OwnQueue is the own-queue idle metric: every window, summed, by CPU,
// and the long ones listed.
type OwnQueue struct {
	// ListNs: windows at least this long are in Windows.
	ListNs int64
	// Count and TotalNs cover every window, censored ones too.
	Count   int64
	TotalNs int64
	// Durations of the complete (not censored) windows.
	Durations Dist
	// CensoredWindows and CensoredNs: windows cut by the window edge, the
	// trace end or a gap; InferredNs: windows with an inferred runqueue.
	CensoredWindows int64
	CensoredNs      int64
	InferredNs      int64
	ByCPU           []OwnQueueCPU
	// Windows at least ListNs long, in start order.
	Windows []OwnQueueWindow
	// CookieMarkers is how many core_sched_cookie markers the trace has;
	// 0: cookies unknown.
	CookieMarkers int
}

// Stalls returns how many windows reach OwnQueueStallNs.
func (oq *OwnQueue) Stalls() int {
	n := 0
	for _, w := range oq.Windows {
		if w.DurNs >= OwnQueueStallNs {
			n++
		}
	}
	return n
}

// ownQueueList returns the listing threshold of opts.
func ownQueueList(opts Options) int64 {
	switch {
	case opts.OwnQueueList < 0:
		return 0
	case opts.OwnQueueList == 0:
		return DefaultOwnQueueList
	}
	return opts.OwnQueueList
}

// oqSpan is an interval of one CPU in the own-queue sweep; a window's
// is inferred when a wait with an inferred runqueue lies in it.
type oqSpan struct {
	start, end timeline.Time
	inferred   bool
}

// byCPUSorted returns, per CPU, the indices into a list of n items of the
// items on that CPU in start order (equal starts in index order). The
// indices share one array; a CPU's are sorted only when they are not in
// start order already, as a CPU's runs and idle spans are (the walk closes
// them in turn), with a buffer the size of that CPU's.
func byCPUSorted(ncpu, n int, cpu func(int) int32, start func(int) timeline.Time) [][]int32 {
	count := make([]int, ncpu)
	total := 0
	for i := range n {
		if c := cpu(i); c >= 0 && int(c) < ncpu {
			count[c]++
			total++
		}
	}
	back := make([]int32, 0, total)
	out := make([][]int32, ncpu)
	for c := range out {
		out[c] = back[len(back) : len(back) : len(back)+count[c]]
		back = back[:len(back)+count[c]]
	}
	for i := range n {
		if c := cpu(i); c >= 0 && int(c) < ncpu {
			out[c] = append(out[c], int32(i))
		}
	}
	var k, buf []keyed // sized for the largest list on first use
	for _, l := range out {
		sorted := true
		for j := 1; j < len(l) && sorted; j++ {
			sorted = start(int(l[j-1])) <= start(int(l[j]))
		}
		if sorted {
			continue
		}
		if k == nil {
			most := slices.Max(count)
			k, buf = make([]keyed, 0, most), make([]keyed, most)
		}
		k = k[:0]
		for _, i := range l {
			k = append(k, keyed{int64(start(int(i))), uint64(i)})
		}
		k = radixSort(k, buf)
		for j, x := range k {
			l[j] = int32(x.sub)
		}
	}
	return out
}

// ownQueue measures the own-queue idle windows: per CPU, the
// intersection of its idle segments with the union of the waits queued
// on it.
func (c *collector) ownQueue(opts Options, cookies map[timeline.TID]uint64, markers int) *OwnQueue {
	n := c.topo.NCPU()
	oq := &OwnQueue{ListNs: ownQueueList(opts), ByCPU: make([]OwnQueueCPU, n), CookieMarkers: markers}
	for i := range oq.ByCPU {
		oq.ByCPU[i].CPU = timeline.CPU(i)
	}
	idleOn := byCPUSorted(n, len(c.idles), func(i int) int32 { return c.idles[i].cpu }, func(i int) timeline.Time { return c.idles[i].start })
	// Waits queued on a CPU that never idles make no window: left out.
	waitOn := byCPUSorted(n, len(c.waits), func(i int) int32 {
		if q := c.waits[i].q; q >= 0 && int(q) < n && len(idleOn[q]) > 0 {
			return q
		}
		return -1
	}, func(i int) timeline.Time { return c.waits[i].start })
	cutEnd, cutStart := map[timeline.Time]bool{}, map[timeline.Time]bool{}
	for _, g := range c.tl.Gaps {
		cutEnd[g.Start], cutStart[g.End] = true, true
	}
	var sib *siblingView
	var durs []int64
	for cpu := range n {
		idles := make([]oqSpan, 0, len(idleOn[cpu]))
		for _, i := range idleOn[cpu] {
			idles = append(idles, oqSpan{start: c.idles[i].start, end: c.idles[i].end})
		}
		idles = mergeSpans(idles)
		// The waits' union, merged as they come (far fewer than the
		// waits), and the union of those whose runqueue is inferred: a
		// window is inferred where one of those lies in it.
		var queued []oqSpan
		var inferred []interval
		for _, i := range waitOn[cpu] {
			w := &c.waits[i]
			queued = appendMerged(queued, oqSpan{start: w.start, end: w.end})
			if w.inferred {
				if k := len(inferred); k > 0 && w.start <= inferred[k-1].end {
					inferred[k-1].end = max(inferred[k-1].end, w.end)
				} else {
					inferred = append(inferred, interval{w.start, w.end})
				}
			}
		}
		wins := mergeSpans(intersectSpans(idles, queued))
		for k := range wins {
			wins[k].inferred = overlapsUnion(inferred, wins[k].start, wins[k].end)
		}
		// The waits queued at each window's start, from a cursor over the
		// CPU's waits in start order.
		waits := waitOn[cpu]
		next := 0
		var active []int32
		for _, s := range wins {
			d := int64(s.end - s.start)
			censored := s.start <= c.win.Start || s.end >= c.win.End || cutEnd[s.end] || cutStart[s.start]
			oq.Count++
			oq.TotalNs += d
			pc := &oq.ByCPU[cpu]
			pc.Windows++
			pc.Ns += d
			pc.MaxNs = max(pc.MaxNs, d)
			if censored {
				oq.CensoredWindows++
				oq.CensoredNs += d
			} else {
				durs = append(durs, d)
			}
			if s.inferred {
				oq.InferredNs += d
			}
			if d < oq.ListNs {
				continue
			}
			for ; next < len(waits) && c.waits[waits[next]].start <= s.start; next++ {
				active = append(active, waits[next])
			}
			active = slices.DeleteFunc(active, func(i int32) bool { return c.waits[i].end <= s.start })
			w := OwnQueueWindow{CPU: timeline.CPU(cpu), Start: s.start, DurNs: d, Task: timeline.NoTask, PID: timeline.NoTID,
				Sibling: timeline.NoCPU, SiblingTask: timeline.NoTask, SiblingPID: timeline.NoTID,
				QueueInferred: s.inferred, Censored: censored, Waiting: len(active)}
			var best *sampleRec
			for _, i := range active {
				r := &c.recs[c.waits[i].sample]
				if best == nil || r.start < best.start || (r.start == best.start && c.pidOf(r.task) < c.pidOf(best.task)) {
					best = r
				}
			}
			if best != nil {
				w.Task, w.PID, w.Comm = best.task, c.pidOf(best.task), c.tl.Strings.Get(best.comm)
			}
			if c.hasSMT { // no CPU has a sibling otherwise
				if sib == nil {
					sib = c.newSiblingView(idleOn)
				}
				sib.describe(&w, cookies, markers > 0)
			}
			oq.Windows = append(oq.Windows, w)
		}
	}
	slices.SortStableFunc(oq.Windows, func(a, b OwnQueueWindow) int {
		if x := cmp.Compare(a.Start, b.Start); x != 0 {
			return x
		}
		return cmp.Compare(a.CPU, b.CPU)
	})
	slices.Sort(durs)
	oq.Durations = NewDist(durs)
	return oq
}

// mergeSpans merges sorted spans that overlap or touch.
func mergeSpans(s []oqSpan) []oqSpan {
	out := s[:0]
	for _, x := range s {
		out = appendMerged(out, x)
	}
	return out
}

// appendMerged appends x to the merged spans out, which end at or before
// x's start, merging it with the last one when they overlap or touch.
func appendMerged(out []oqSpan, x oqSpan) []oqSpan {
	if k := len(out); k > 0 && x.start <= out[k-1].end {
		out[k-1].end = max(out[k-1].end, x.end)
		return out
	}
	return append(out, x)
}

// intersectSpans intersects two sorted lists of disjoint spans.
func intersectSpans(a, b []oqSpan) []oqSpan {
	var out []oqSpan
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		s, e := max(a[i].start, b[j].start), min(a[i].end, b[j].end)
		if e > s {
			out = append(out, oqSpan{start: s, end: e})
		}
		if a[i].end < b[j].end {
			i++
		} else {
			j++
		}
	}
	return out
}

// siblingView answers what a CPU's SMT siblings did at a time and over a
// span.
type siblingView struct {
	c      *collector
	idles  [][]oqSpan // per CPU, merged idle spans
	runsOn [][]int32  // per CPU, run indices in start order
}

func (c *collector) newSiblingView(idleOn [][]int32) *siblingView {
	n := c.topo.NCPU()
	v := &siblingView{c: c, idles: make([][]oqSpan, n)}
	for cpu := range n {
		for _, i := range idleOn[cpu] {
			v.idles[cpu] = append(v.idles[cpu], oqSpan{start: c.idles[i].start, end: c.idles[i].end})
		}
		v.idles[cpu] = mergeSpans(v.idles[cpu])
	}
	v.runsOn = byCPUSorted(n, len(c.runs), func(i int) int32 { return c.runs[i].cpu }, func(i int) timeline.Time { return c.runs[i].start })
	return v
}

// runAt returns the run on cpu covering t (start <= t < end), -1.
func (v *siblingView) runAt(cpu int, t timeline.Time) int32 {
	l := v.runsOn[cpu]
	k, _ := slices.BinarySearchFunc(l, t, func(i int32, t timeline.Time) int {
		if v.c.runs[i].start <= t {
			return -1
		}
		return 1
	})
	if k > 0 && v.c.runs[l[k-1]].end > t {
		return l[k-1]
	}
	return -1
}

// idleAt reports whether cpu is idle at t.
func (v *siblingView) idleAt(cpu int, t timeline.Time) bool {
	l := v.idles[cpu]
	k, _ := slices.BinarySearchFunc(l, t, func(s oqSpan, t timeline.Time) int {
		if s.start <= t {
			return -1
		}
		return 1
	})
	return k > 0 && l[k-1].end > t
}

// describe fills w's sibling fields.
func (v *siblingView) describe(w *OwnQueueWindow, cookies map[timeline.TID]uint64, cookiesKnown bool) {
	c := v.c
	var sibs []int
	for _, s := range c.topo.Siblings(int(w.CPU)) {
		if s != int(w.CPU) {
			sibs = append(sibs, s)
		}
	}
	if len(sibs) == 0 {
		return
	}
	w.Sibling = timeline.CPU(sibs[0])
	w.SiblingIdle = v.idleAt(sibs[0], w.Start)
	for _, s := range sibs {
		if r := v.runAt(s, w.Start); r >= 0 {
			tk := c.runs[r].task
			w.Sibling, w.SiblingIdle, w.SiblingTask = timeline.CPU(s), false, tk
			w.SiblingPID, w.SiblingComm = c.tl.Tasks[tk].PID, c.name(c.tl.CommAt(tk, w.Start))
			break
		}
	}
	// The whole core idle: the window intersected with every sibling's
	// idle spans.
	span := []oqSpan{{start: w.Start, end: w.Start + timeline.Time(w.DurNs)}}
	for _, s := range sibs {
		span = intersectSpans(v.idles[s], span)
	}
	for _, x := range span {
		w.SiblingIdleNs += int64(x.end - x.start)
	}
	if cookiesKnown && w.SiblingTask != timeline.NoTask && w.Task != timeline.NoTask {
		w.Cookie = CookieSame
		if cookies[w.PID] != cookies[w.SiblingPID] {
			w.Cookie = CookieDiffers
		}
	}
}
