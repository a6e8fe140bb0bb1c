package policies

import (
	"fmt"
	"math"
	"strings"

	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/topology"
)

// The figures of seed 003's e-mail ("sched: allow newidle balancing to bail
// out of load_balance", 2022-06-08): the ping-pong pair's wakeup latency
// was ~120 µs without the patch, "almost entirely spent in
// load_balance()", and ~6 µs with it. The 6 µs is a wakeup onto an idle
// CPU from another CPU on that machine, IPI and exit from idle included.
const emailRemoteWakeNs = 6_000

// Bounds on the kernel-time scale a recording may set.
const (
	minCostScale = 1.0
	maxCostScale = 50.0
)

// scaled applies Scale to a cost at Scale 1.
func (c CostModel) scaled(ns int64) int64 {
	if c.Scale <= 0 || c.Scale == 1 {
		return ns
	}
	return int64(math.Round(float64(ns) * c.Scale))
}

// CalibratedCost returns DefaultCost scaled to the kernel speed w's
// recording shows, and the note that says how. The evidence is the fast
// end of the recorded wakeups onto an idle CPU raised on another CPU (the
// 10th percentile of WakeDelays.RemoteQ: shallow idle, so kernel code
// rather than an idle state's exit latency): Scale = that / the e-mail's
// 6 µs, within 1..50. An emulated guest, whose kernel runs several times
// slower than the host, then pays as much more for a domain walk. Without
// enough such wakeups (replay.CalibratedOptions' minimum) Scale stays 1.
// The note also prices a pass and an all-pinned walk over each domain
// level of topo.
func CalibratedCost(w *replay.Workload, topo *topology.Topology) (CostModel, replay.Assumption) {
	c := DefaultCost
	c.Scale = 1
	var why string
	q := w.WakeDelays.RemoteQ
	if len(q) == 0 {
		why = fmt.Sprintf("scale 1: %d wakeups onto an idle CPU from another CPU, too few to measure the kernel's speed", w.WakeDelays.Remote)
	} else {
		p10 := q[len(q)/10]
		c.Scale = min(max(float64(p10)/emailRemoteWakeNs, minCostScale), maxCostScale)
		why = fmt.Sprintf("scale %.2f: the 10th percentile of the %d wakeups onto an idle CPU from another CPU is %.1f us, against the %.0f us seed 003's e-mail measured with its patch (scale bounded to %.0f..%.0f)",
			c.Scale, w.WakeDelays.Remote, float64(p10)/1000, emailRemoteWakeNs/1000.0, minCostScale, maxCostScale)
	}
	return c, replay.Assumption{Name: "newidle-cost", Detail: fmt.Sprintf(
		"newidle balancing costs %d ns per pass + %d ns per group + %d ns per CPU visited + %d ns per task examined (fitted to the all-pinned walk of seed 003's e-mail on 64 CPUs), %s; %s",
		c.PerBalance, c.PerGroup, c.PerCPU, c.PerTask, why, c.walkText(topo))}
}

// walkText prices, for each domain level of topo, one pass of CPU 0's
// domain (or the first CPU that has the level) with two tasks examined and
// the all-pinned walk that redoes once per CPU outside the local group.
func (c CostModel) walkText(topo *topology.Topology) string {
	if topo == nil {
		return "no topology"
	}
	doms := topo.Domains()
	var parts []string
	var child *topology.Domain
	for i := range doms {
		d := &doms[i]
		cpu := -1
		for k, s := range d.Spans {
			if len(s) > 0 {
				cpu = k
				break
			}
		}
		if cpu < 0 {
			continue
		}
		span := d.Spans[cpu]
		groups, local, largest := len(span), 1, 1
		if child != nil {
			groups = 0
			seen := map[int]bool{}
			for _, x := range span {
				if seen[x] || x >= len(child.Spans) || len(child.Spans[x]) == 0 {
					continue
				}
				groups++
				largest = max(largest, len(child.Spans[x]))
				for _, y := range child.Spans[x] {
					seen[y] = true
				}
			}
			if cpu < len(child.Spans) && len(child.Spans[cpu]) > 0 {
				local = len(child.Spans[cpu])
			}
		}
		pass := c.scaled(c.PerBalance + c.PerGroup*int64(groups) + c.PerCPU*int64(len(span)+largest) + c.PerTask*2)
		redo := max(len(span)-local, 1)
		passes := "passes"
		if redo == 1 {
			passes = "pass"
		}
		parts = append(parts, fmt.Sprintf("%s (%d CPUs, %d groups) %.1f us a pass, %.1f us an all-pinned walk of %d %s",
			d.Name, len(span), groups, float64(pass)/1000, float64(pass)*float64(redo)/1000, redo, passes))
		child = d
	}
	if len(parts) == 0 {
		return "no domains"
	}
	return "per domain here: " + strings.Join(parts, "; ")
}
