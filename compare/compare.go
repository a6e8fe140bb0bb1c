package compare

import (
	"math"

	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
)

// Cell is one metric in one scope of the two runs.
type Cell struct {
	Metric    string
	Base, New int64
}

// Ratio returns New / Base: 1 when both are 0, and ok false when only Base
// is (no finite ratio).
func (c Cell) Ratio() (r float64, ok bool) { return ratio(c.New, c.Base) }

// ChangePct returns the change from Base to New in percent of Base, with
// ok as for Ratio.
func (c Cell) ChangePct() (float64, bool) {
	r, ok := c.Ratio()
	return (r - 1) * 100, ok
}

func ratio(n, b int64) (float64, bool) {
	switch {
	case b == 0 && n == 0:
		return 1, true
	case b == 0:
		return math.Inf(1), false
	}
	return float64(n) / float64(b), true
}

// ScopeDiff is the cells of one scope.
type ScopeDiff struct {
	Scope string
	// InBase, InNew: the scope has tasks in that run (a comm only one run
	// has shows zeros on the other side).
	InBase, InNew bool
	// Base and New are the scope's figures in the two runs.
	Base, New Figures
	Cells     []Cell // in the order of Metrics
	// CDFDistance is metrics.CDFDistance between the two wakeup latency
	// distributions: 0 for the same shares under every power-of-two
	// bound, 1 for disjoint ones (or samples on one side only).
	CDFDistance float64
}

// Cell returns the cell of a metric.
func (d *ScopeDiff) Cell(metric string) Cell {
	for _, c := range d.Cells {
		if c.Metric == metric {
			return c
		}
	}
	return Cell{Metric: metric}
}

// TaskPair is one task instance present in both runs under the same pid
// and comm (a replay keeps the recorded pids).
type TaskPair struct {
	PID       timeline.TID
	Comm      string
	Base, New Figures
}

// Comparison is two runs, cell by cell.
type Comparison struct {
	// Base and New name the two runs ("recorded", "modeled").
	Base, New string
	// Restricted: the runs were measured over the selected tasks only.
	Restricted bool
	// Scopes: overall first, then the classes, then the comms, each by
	// the base run's run + runnable time (scopes only the new run has
	// come last, by theirs).
	Scopes []ScopeDiff
	// Tasks pairs the base run's tasks, in its order, with the new run's
	// task of the same pid and comm; tasks without one are left out.
	Tasks []TaskPair
}

// Scope returns the diff of a scope name, or nil.
func (c *Comparison) Scope(name string) *ScopeDiff {
	for i := range c.Scopes {
		if c.Scopes[i].Scope == name {
			return &c.Scopes[i]
		}
	}
	return nil
}

// Compare pairs two measured runs. base and new are their names.
func Compare(a, b *Side, base, new string) *Comparison {
	c := &Comparison{Base: base, New: new, Restricted: a.Restricted || b.Restricted}
	c.Scopes = append(c.Scopes, diff(Overall, &a.Overall, &b.Overall, true, true))
	for _, lists := range [][2][]ScopeFigures{{a.Classes, b.Classes}, {a.Comms, b.Comms}} {
		seen := map[string]bool{}
		for _, s := range lists[0] {
			seen[s.Scope] = true
			nf, in := find(lists[1], s.Scope)
			c.Scopes = append(c.Scopes, diff(s.Scope, &s.Figures, nf, true, in))
		}
		for _, s := range lists[1] {
			if !seen[s.Scope] {
				c.Scopes = append(c.Scopes, diff(s.Scope, &Figures{}, &s.Figures, false, true))
			}
		}
	}
	type key struct {
		pid  timeline.TID
		comm string
	}
	other := make(map[key]*Figures, len(b.Tasks))
	for i := range b.Tasks {
		other[key{b.Tasks[i].PID, b.Tasks[i].Comm}] = &b.Tasks[i].Figures
	}
	for _, t := range a.Tasks {
		if f, ok := other[key{t.PID, t.Comm}]; ok {
			c.Tasks = append(c.Tasks, TaskPair{PID: t.PID, Comm: t.Comm, Base: t.Figures, New: *f})
		}
	}
	return c
}

func find(list []ScopeFigures, scope string) (*Figures, bool) {
	for i := range list {
		if list[i].Scope == scope {
			return &list[i].Figures, true
		}
	}
	return &Figures{}, false
}

func diff(scope string, a, b *Figures, inA, inB bool) ScopeDiff {
	d := ScopeDiff{Scope: scope, InBase: inA, InNew: inB, Base: *a, New: *b, CDFDistance: metrics.CDFDistance(a.Wakeup.Hist, b.Wakeup.Hist)}
	for _, m := range Metrics {
		x, _ := a.Value(m)
		y, _ := b.Value(m)
		d.Cells = append(d.Cells, Cell{Metric: m, Base: x, New: y})
	}
	return d
}
