package metrics

import (
	"cmp"
	"slices"

	"github.com/schedlens/schedlens/timeline"
)

// The sweeps after the walk read a run or a wait only where some CPU was
// idle: sweepEvents leaves out the waits, and on symmetric topologies the
// runs, that overlap no idle segment, and the own-queue windows lie within
// idle segments. On a busy machine that is nearly all of them (the 1.26 GB
// hackbench text: 3.23 M runs, 3.15 M waits, 4,676 idle segments). The
// collector decides them during the walk instead of holding them to its
// end (decide):
//
//   - Every CPU's spans come in time order, so once each CPU that has
//     events has a span ending at or after F (the frontier), no idle
//     segment still to come starts before F. A run or wait ending at or
//     before F overlaps idle time if and only if it overlaps an idle
//     segment already collected.
//   - One that does is kept, in order; one that does not is dropped. A
//     dropped run leaves its sums: its task's run time (misplaced), its
//     CPU's busy time (unobserved) and its busy time per strip bin. A
//     dropped wait leaves nothing.
//   - Decisions stop at the first run or wait that ends after F, so what is
//     kept is in the order it came, and the sweeps see the lists a
//     collector that decided nothing would have given them after
//     sweepEvents' own selection.
//
// Not decided: runs on asymmetric topologies (misfit needs every run),
// and anything while a CPU that has events has not yet ended a span (a
// CPU running one task for long holds the frontier back).
type pruner struct {
	front *timeline.Frontier
	union []interval // the idle segments collected, merged, sorted
	nIdle int        // c.idles[:nIdle] are in union
	// runs[:runAt] and waits[:waitAt] are decided (kept); due is how many
	// undecided runs and waits make decide run again.
	runAt, waitAt int
	due           int
	// The sums of dropped runs.
	taskRunNs []int64   // per task
	cpuRunNs  []int64   // per CPU
	bins      [][]int64 // per CPU and strip bin: busy ns; nil until a drop
}

// pruneEvery is the number of undecided runs and waits from which decide
// runs; after a decision it waits for as many again as it left undecided,
// and at least this many. Tests lower it to 1 to decide after every run
// and wait, and set 0 to decide nothing (every one kept to the end).
var pruneEvery = 1 << 16

func newPruner(tl *timeline.Timeline, ncpu, ntask int) *pruner {
	return &pruner{front: timeline.NewFrontier(tl), cpuRunNs: make([]int64, ncpu), taskRunNs: make([]int64, ntask), due: pruneEvery}
}

// maybeDecide decides when enough runs and waits wait for it; Span calls
// it after adding one.
func (c *collector) maybeDecide() {
	if p := c.prune; p != nil && len(c.runs)-p.runAt+len(c.waits)-p.waitAt >= p.due {
		c.decide()
		p.due = max(pruneEvery, len(c.runs)-p.runAt+len(c.waits)-p.waitAt)
	}
}

// decide keeps or drops the runs and waits that end at or before the
// frontier (see pruner).
func (c *collector) decide() {
	p := c.prune
	f := p.front.Time() // no idle segment to come starts before it
	if f == timeline.NoTime {
		return
	}
	p.mergeIdle(c.idles)
	if !c.asym {
		c.decideRuns(f)
	}
	from := p.waitAt
	w, i := from, from
	for ; i < len(c.waits) && c.waits[i].end <= f; i++ {
		if ws := &c.waits[i]; p.overlapsIdle(ws.start, ws.end) {
			c.waits[w] = *ws
			w++
		}
	}
	c.waits = c.waits[:w+copy(c.waits[w:], c.waits[i:])]
	p.waitAt = w
	if c.fold != nil {
		c.foldRecs(from)
	}
}

// decideRuns keeps or drops the runs ending at or before f, and moves the
// CPUs' latest-segment indices with the runs.
func (c *collector) decideRuns(f timeline.Time) {
	p := c.prune
	w, i := p.runAt, p.runAt
	for ; i < len(c.runs) && c.runs[i].end <= f; i++ {
		r := &c.runs[i]
		l := &c.lastSeg[r.cpu]
		last := !l.idle && l.idx == int32(i)
		if p.overlapsIdle(r.start, r.end) {
			c.runs[w] = *r
			if last {
				l.idx = int32(w)
			}
			w++
			continue
		}
		if last {
			l.idx = -1 // its end event, which abut spares, no longer matters
		}
		p.drop(c, r)
	}
	if shift := int32(i - w); shift > 0 {
		for cpu := range c.lastSeg {
			if l := &c.lastSeg[cpu]; !l.idle && l.idx >= int32(i) {
				l.idx -= shift
			}
		}
	}
	c.runs = c.runs[:w+copy(c.runs[w:], c.runs[i:])]
	p.runAt = w
}

// drop keeps the sums of run r.
func (p *pruner) drop(c *collector, r *runSeg) {
	d := int64(r.end - r.start)
	p.taskRunNs[r.task] += d
	p.cpuRunNs[r.cpu] += d
	span := int64(c.win.End - c.win.Start)
	if span <= 0 {
		return
	}
	if p.bins == nil {
		p.bins = make([][]int64, len(p.cpuRunNs))
		for cpu := range p.bins {
			p.bins[cpu] = make([]int64, StripBins)
		}
	}
	bins := p.bins[r.cpu]
	forBins(c.win.Start, span, r.start, r.end, func(k, d int64) { bins[k] += d })
}

// mergeIdle adds the idle segments collected since the last call to the
// union.
func (p *pruner) mergeIdle(idles []idleSeg) {
	if p.nIdle == len(idles) {
		return
	}
	add := make([]interval, 0, len(idles)-p.nIdle)
	for _, s := range idles[p.nIdle:] {
		add = append(add, interval{s.start, s.end})
	}
	p.nIdle = len(idles)
	slices.SortFunc(add, func(a, b interval) int { return cmp.Compare(a.start, b.start) })
	// The union's intervals that the new ones can reach are at its end
	// (sorted and disjoint, its ends ascend too): take them back, merge.
	k := len(p.union)
	for k > 0 && p.union[k-1].end >= add[0].start {
		k--
	}
	tail := append([]interval(nil), p.union[k:]...)
	p.union = p.union[:k]
	i, j := 0, 0
	for i < len(tail) || j < len(add) {
		var x interval
		if j == len(add) || i < len(tail) && tail[i].start <= add[j].start {
			x, i = tail[i], i+1
		} else {
			x, j = add[j], j+1
		}
		if n := len(p.union); n > 0 && x.start <= p.union[n-1].end {
			p.union[n-1].end = max(p.union[n-1].end, x.end)
			continue
		}
		p.union = append(p.union, x)
	}
}

// overlapsIdle reports whether [s, e) overlaps the union of idle segments.
func (p *pruner) overlapsIdle(s, e timeline.Time) bool {
	return overlapsUnion(p.union, s, e)
}

// overlapsUnion reports whether [s, e) overlaps one of union's sorted
// disjoint intervals.
func overlapsUnion(union []interval, s, e timeline.Time) bool {
	lo, hi := 0, len(union)
	for lo < hi { // the first interval ending after s
		m := int(uint(lo+hi) >> 1)
		if union[m].end <= s {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(union) && union[lo].start < e
}
