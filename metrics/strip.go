package metrics

import "github.com/schedlens/schedlens/timeline"

// StripBins is how many bins a CPU strip has.
const StripBins = 400

// StripBin is what one CPU did over one bin of the window, in ns.
type StripBin struct {
	BusyNs             int64
	IdleNs             int64
	IdleWithRunnableNs int64
}

// CPUStrips returns, per CPU, the window cut into StripBins equal bins (each
// span/StripBins ns long, rounded to whole ns) with
// the busy, idle and idle-with-runnable time of each: the data of a per-CPU
// timeline strip. Time in none of them is unknown. It is computed on
// demand.
func (a *Analysis) CPUStrips() [][]StripBin {
	if a.strips == nil {
		return nil
	}
	return a.strips()
}

// stripEdge is where bin k of a window span ns long starts, in ns from the
// window start; bin k covers [stripEdge(k), stripEdge(k+1)).
func stripEdge(k, span int64) int64 { return k * span / StripBins }

// stripBin is the bin holding offset t (0 <= t < span): the last k with
// stripEdge(k) <= t. The estimate t*StripBins/span can be one off either
// way where the integer division rounds the edges.
func stripBin(t, span int64) int64 {
	k := min(t*StripBins/span, StripBins-1)
	for k > 0 && stripEdge(k, span) > t {
		k--
	}
	for k+1 < StripBins && stripEdge(k+1, span) <= t {
		k++
	}
	return k
}

func (c *collector) buildStrips(windows []IdleWindow, periods []int64) [][]StripBin {
	n := c.topo.NCPU()
	span := int64(c.win.End - c.win.Start)
	if span <= 0 {
		return nil
	}
	out := make([][]StripBin, n)
	for i := range out {
		out[i] = make([]StripBin, StripBins)
	}
	add := func(cpu int32, s, e timeline.Time, f func(*StripBin, int64)) {
		if int(cpu) >= n {
			return
		}
		forBins(c.win.Start, span, s, e, func(k, d int64) { f(&out[cpu][k], d) })
	}
	if p := c.prune; p != nil && p.bins != nil {
		for cpu, bins := range p.bins {
			for k, d := range bins {
				out[cpu][k].BusyNs += d // the runs dropped during the walk (prune.go)
			}
		}
	}
	for _, r := range c.runs {
		add(r.cpu, r.start, r.end, func(b *StripBin, d int64) { b.BusyNs += d })
	}
	for _, s := range c.idles {
		add(s.cpu, s.start, s.end, func(b *StripBin, d int64) { b.IdleNs += d })
	}
	for _, w := range windows {
		if w.DurNs > 0 && periods[w.period] >= c.minWin {
			add(int32(w.CPU), w.Start, w.Start+timeline.Time(w.DurNs), func(b *StripBin, d int64) { b.IdleWithRunnableNs += d })
		}
	}
	return out
}

// forBins calls f with the bin and the ns of each part of [s, e) in the
// strip bins of a window from start, span ns long.
func forBins(start timeline.Time, span int64, s, e timeline.Time, f func(k, d int64)) {
	a, b := int64(s-start), int64(e-start)
	for a < b {
		k := stripBin(a, span)
		end := min(b, stripEdge(k+1, span))
		f(k, end-a)
		a = end
	}
}
