package affinity

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Source says how a task's allowed CPUs were decided.
type Source uint8

// Affinity sources. The order is the one reports list them in.
const (
	// Assumed: nothing says; the task is taken as free to run anywhere.
	Assumed Source = iota
	// File: the user's affinity file lists the task.
	File
	// Kthread: a per-CPU kernel thread, bound to the CPU its name carries.
	Kthread
	// PossiblyPinned: assumed free, but a metric found it ran on one CPU
	// across many waits while other CPUs were idle (set by metrics).
	PossiblyPinned
	// Recorded: the recorder saw the mask (schedlens record).
	Recorded
	// Inferred: taken as pinned from the trace's evidence (Infer).
	Inferred
)

var sourceNames = [...]string{
	Assumed:        "assumed-free",
	File:           "file",
	Kthread:        "kthread-name",
	PossiblyPinned: "possibly-pinned",
	Recorded:       "recorded",
	Inferred:       "inferred",
}

func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "affinity(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText implements encoding.TextMarshaler with String.
func (s Source) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Exact reports whether the mask is known rather than assumed or inferred.
func (s Source) Exact() bool { return s == File || s == Kthread || s == Recorded }

// Change sets a task's allowed CPUs from At on. An empty CPUs means every
// CPU.
type Change struct {
	At     timeline.Time   `json:"at_ns"`
	CPUs   topology.CPUSet `json:"cpus"`
	Source Source          `json:"source"`
}

// Map holds, per task instance of one timeline, its allowed CPUs over time
// as a list of changes in time order. A task with no changes is free
// throughout.
type Map struct {
	tasks [][]Change // by timeline.TaskID
	// Inferences lists the tasks Infer took as pinned, with the evidence.
	Inferences []Inference `json:"inferences,omitempty"`
	// Notes say what the map rests on, for reports (the per-CPU kernel
	// threads are only counted, in Kthreads).
	Notes []string `json:"notes,omitempty"`
	// Kthreads counts the per-CPU kernel threads bound by name.
	Kthreads int `json:"kthreads"`
}

// NewMap returns an empty map (every task free) for a timeline of n task
// instances.
func NewMap(n int) *Map { return &Map{tasks: make([][]Change, n)} }

// Len returns the number of task instances the map covers.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.tasks)
}

// Changes returns the changes of task id in time order (nil: free).
func (m *Map) Changes(id timeline.TaskID) []Change {
	if m == nil || id < 0 || int(id) >= len(m.tasks) {
		return nil
	}
	return m.tasks[id]
}

// At returns the CPUs task id may run on at time t (empty: every CPU) and
// where that comes from. Before a task's first change it is free
// (Assumed).
func (m *Map) At(id timeline.TaskID, t timeline.Time) (topology.CPUSet, Source) {
	ch := m.Changes(id)
	i, _ := slices.BinarySearchFunc(ch, t, func(c Change, t timeline.Time) int {
		if c.At <= t {
			return -1
		}
		return 1
	})
	if i == 0 {
		return nil, Assumed
	}
	return ch[i-1].CPUs, ch[i-1].Source
}

// Source returns the most authoritative source among task id's changes:
// what a report labels the task with.
func (m *Map) Source(id timeline.TaskID) Source {
	best := Assumed
	for _, c := range m.Changes(id) {
		if rank(c.Source) > rank(best) {
			best = c.Source
		}
	}
	return best
}

func rank(s Source) int {
	switch s {
	case File:
		return 5
	case Recorded:
		return 4
	case Kthread:
		return 3
	case Inferred:
		return 2
	case PossiblyPinned:
		return 1
	}
	return 0
}

// Set replaces task id's changes.
func (m *Map) Set(id timeline.TaskID, ch []Change) {
	if id >= 0 && int(id) < len(m.tasks) {
		m.tasks[id] = ch
	}
}

// Override sets task id's mask to cpus over [from, to) (to == NoTime: to
// the end), keeping what was in force before from and after to.
func (m *Map) Override(id timeline.TaskID, from, to timeline.Time, cpus topology.CPUSet, src Source) {
	if id < 0 || int(id) >= len(m.tasks) {
		return
	}
	old := m.tasks[id]
	var out []Change
	for _, c := range old {
		if c.At < from {
			out = append(out, c)
		}
	}
	out = append(out, Change{At: from, CPUs: cpus, Source: src})
	if to != timeline.NoTime {
		restore, rsrc := m.At(id, to)
		if i := lastBefore(old, to); i < 0 || old[i].At < to {
			// The mask in force at to before this override comes back.
			out = append(out, Change{At: to, CPUs: restore, Source: rsrc})
		}
		for _, c := range old {
			if c.At >= to {
				out = append(out, c)
			}
		}
	}
	m.tasks[id] = out
}

// lastBefore returns the index of the last change at or before t, or -1.
func lastBefore(ch []Change, t timeline.Time) int {
	i := -1
	for k, c := range ch {
		if c.At <= t {
			i = k
		}
	}
	return i
}

// Inference is a task taken as pinned from the trace's evidence, for the
// notes: over [From, To) it ran only on CPUs, and Waits times it waited
// behind another task while a CPU outside that set was idle.
type Inference struct {
	Task  timeline.TaskID `json:"task"`
	PID   timeline.TID    `json:"pid"`
	Comm  string          `json:"comm"`
	CPUs  topology.CPUSet `json:"cpus"`
	From  timeline.Time   `json:"from_ns"`
	To    timeline.Time   `json:"to_ns"`
	Waits int             `json:"waits"`
}

// String is the inference for a note: "hog-c1-0 (pid 282) on CPU 1 from
// 8.289451 s, 275 waits" (to the end unless To says otherwise).
func (in Inference) String() string {
	cpu := "CPU"
	if in.CPUs.Count() > 1 {
		cpu = "CPUs"
	}
	s := fmt.Sprintf("%s (pid %d) on %s %s", in.Comm, in.PID, cpu, in.CPUs)
	if in.From != timeline.NoTime {
		s += " from " + in.From.Seconds() + " s"
	}
	if in.To != timeline.NoTime {
		s += " to " + in.To.Seconds() + " s"
	}
	return s + fmt.Sprintf(", %d waits", in.Waits)
}
