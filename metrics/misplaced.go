package metrics

import (
	"cmp"
	"slices"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/timeline"
)

// DefMisplaced is the one-line definition of the misplaced-task metric.
const DefMisplaced = "misplaced: (a) waiting on a busy CPU while a CPU it may use idles; " +
	"(b) misfit: PELT utilization (32 ms half-life) x 1280 > capacity x 1024 of its CPU " +
	"while a bigger CPU idles or runs a task that would fit; (c) running beside a busy SMT " +
	"sibling while a whole core idles"

// MisplacedTask is one task's misplaced time.
type MisplacedTask struct {
	Task timeline.TaskID
	PID  timeline.TID
	Comm string

	// (a) waiting on a busy CPU's runqueue while a CPU it may use idled,
	// and the number of waits with some of it. Inferred unless the
	// affinity came from a file or the task's name.
	WaitingWhileIdleNs    int64
	WaitingWhileIdleCount int64
	// (b) misfit time and the number of runs with some. Always inferred
	// (the utilization is estimated).
	MisfitNs    int64
	MisfitCount int64
	// (c) SMT-contended time and the number of runs with some.
	SMTContendedNs    int64
	SMTContendedCount int64

	// PeakUtil is the highest estimated PELT utilization (0..1024) the
	// task reached on CPU in the window, on asymmetric topologies only (0
	// elsewhere: utilization is not estimated where it cannot make a misfit).
	PeakUtil int
	RunNs    int64 // on CPU in the window
	Affinity affinity.Source
}

// TotalNs is the sum of the three kinds.
func (m *MisplacedTask) TotalNs() int64 { return m.WaitingWhileIdleNs + m.MisfitNs + m.SMTContendedNs }

// MisplacedCPU is the per-CPU view: what the selected tasks lost on a CPU.
type MisplacedCPU struct {
	CPU      timeline.CPU
	Capacity int
	// WaitingWhileIdleNs: tasks queued on this CPU while another CPU they
	// may use idled. IdleWithRunnableNs: this CPU idle while a task that
	// may use it waited elsewhere (the idle metric's windows).
	WaitingWhileIdleNs int64
	IdleWithRunnableNs int64
	MisfitNs           int64 // a misfit task ran here
	SMTContendedNs     int64 // a task ran here beside a busy sibling while a core idled
}

// Misplaced is the misplaced-task metric.
type Misplaced struct {
	// Tasks with any misplaced time, most first.
	Tasks []MisplacedTask
	CPUs  []MisplacedCPU
	// Totals over the selected tasks.
	WaitingWhileIdleNs int64
	MisfitNs           int64
	SMTContendedNs     int64
	// Asymmetric: the topology has CPUs of different capacity, so (b)
	// applies. SMT: some core has several CPUs, so (c) applies.
	Asymmetric bool
	SMT        bool
	// MinWindowNs is the idle metric's threshold, which (a) follows.
	MinWindowNs int64
}

func (c *collector) misplaced(sw *sweepResult) *Misplaced {
	m := &Misplaced{Asymmetric: c.asym}
	n := c.topo.NCPU()
	cores := map[int]int{}
	for _, cpu := range c.topo.CPUs {
		cores[cpu.Core]++
		if cores[cpu.Core] > 1 {
			m.SMT = true
		}
	}
	m.CPUs = make([]MisplacedCPU, n)
	for i := range m.CPUs {
		m.CPUs[i] = MisplacedCPU{CPU: timeline.CPU(i), Capacity: c.caps[i]}
	}
	per := make([]*MisplacedTask, len(c.tl.Tasks))
	get := func(id timeline.TaskID) *MisplacedTask {
		if per[id] == nil {
			per[id] = &MisplacedTask{Task: id, PID: c.tl.Tasks[id].PID, Comm: c.tl.TaskName(id), Affinity: c.affSrc[id]}
		}
		return per[id]
	}
	for i := range c.recs {
		r := &c.recs[i]
		if r.idleNs > 0 {
			t := get(r.task)
			t.WaitingWhileIdleNs += r.idleNs
			t.WaitingWhileIdleCount++
		}
	}
	for q, d := range c.qIdle {
		if q < n {
			m.CPUs[q].WaitingWhileIdleNs = d
		}
	}
	for i := range c.runs {
		r := &c.runs[i]
		if !c.match[r.task] {
			continue
		}
		var misfit, smt int64
		if c.fit != nil {
			misfit = c.fit[i].misfit
		}
		if c.smtNs != nil {
			smt = c.smtNs[i]
		}
		if misfit > 0 {
			t := get(r.task)
			t.MisfitNs += misfit
			t.MisfitCount++
			m.CPUs[r.cpu].MisfitNs += misfit
		}
		if smt > 0 {
			t := get(r.task)
			t.SMTContendedNs += smt
			t.SMTContendedCount++
			m.CPUs[r.cpu].SMTContendedNs += smt
		}
	}
	for _, w := range sw.windows {
		if w.DurNs > 0 && sw.periods[w.period] >= c.minWin && int(w.CPU) < n {
			m.CPUs[w.CPU].IdleWithRunnableNs += w.DurNs
		}
	}
	for i := range c.runs {
		r := &c.runs[i]
		if t := per[r.task]; t != nil {
			t.RunNs += int64(r.end - r.start)
		}
	}
	for id, t := range per {
		if t == nil {
			continue
		}
		if c.prune != nil {
			t.RunNs += c.prune.taskRunNs[id]
		}
		t.PeakUtil = int(c.peak[id] + 0.5)
		t.Affinity = c.affSrc[id]
		m.Tasks = append(m.Tasks, *t)
		m.WaitingWhileIdleNs += t.WaitingWhileIdleNs
		m.MisfitNs += t.MisfitNs
		m.SMTContendedNs += t.SMTContendedNs
	}
	slices.SortFunc(m.Tasks, func(a, b MisplacedTask) int {
		if c := cmp.Compare(b.TotalNs(), a.TotalNs()); c != 0 {
			return c
		}
		return cmp.Compare(a.PID, b.PID)
	})
	m.MinWindowNs = c.minWin
	return m
}
