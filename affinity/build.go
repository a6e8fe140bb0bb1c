package affinity

import (
	"fmt"
	"sort"
	"strings"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// BuildOptions say what Build may use besides the timeline.
type BuildOptions struct {
	// Rules are the user's affinity file lines (ParseRules), applied last,
	// in order.
	Rules []Rule
	// NoInfer turns the inference off: tasks nothing else covers are free.
	NoInfer bool
	// Infer tunes the inference.
	Infer InferOptions
	// Inferred is an inference that a walk of the caller's has fed (a
	// streamed walk, which cannot be run again): Build takes its Result
	// instead of walking tl itself, and its options instead of Infer.
	Inferred *Inferrer
}

// Build returns the affinity map of tl: per-CPU kernel threads by name,
// then the inference for tasks the recording does not cover, then what the
// recorder saw (tl.Affinity), then the user's rules. Notes say what it
// rests on. A change at timeline.NoTime holds from the task's start.
func Build(tl *timeline.Timeline, o BuildOptions) (*Map, error) {
	m := NewMap(len(tl.Tasks))
	known := make([]bool, len(tl.Tasks))
	nK := 0
	for id := range tl.Tasks {
		if cpu, ok := KthreadCPU(tl, timeline.TaskID(id)); ok && cpu < max(tl.NCPU, 1) {
			m.tasks[id] = []Change{{At: timeline.NoTime, CPUs: topology.NewCPUSet(cpu), Source: Kthread}}
			known[id] = true
			nK++
		}
	}
	nRec := recorded(tl, m, known)
	if !o.NoInfer {
		skip := func(id timeline.TaskID) bool { return known[id] }
		var ch [][]Change
		var infs []Inference
		if o.Inferred != nil {
			o.Infer = o.Inferred.o
			ch, infs = o.Inferred.Result(tl, skip)
		} else {
			ch, infs = Infer(tl, skip, o.Infer)
		}
		for id, c := range ch {
			if c != nil {
				m.tasks[id] = c
			}
		}
		m.Inferences = infs
	}
	nFile := 0
	for _, r := range o.Rules {
		hit := 0
		for id := range tl.Tasks {
			if !r.matches(tl, timeline.TaskID(id)) {
				continue
			}
			m.Override(timeline.TaskID(id), r.From, r.To, r.CPUs, File)
			hit++
		}
		if hit == 0 {
			m.Notes = append(m.Notes, fmt.Sprintf("affinity file line %d (%s) matches no task of the trace", r.Line, r.who()))
		}
		nFile += hit
	}
	if tl.NCPU > 0 {
		for id := range m.tasks {
			for _, c := range m.tasks[id] {
				if mx := c.CPUs.Max(); mx >= tl.NCPU {
					return nil, fmt.Errorf("affinity: task %d (%s) is allowed CPU %d, but the trace has %d CPUs", tl.Tasks[id].PID, tl.TaskName(timeline.TaskID(id)), mx, tl.NCPU)
				}
			}
		}
	}
	m.Kthreads = nK
	if nRec > 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("%d tasks have the allowed CPUs the recorder saw", nRec))
	}
	if nFile > 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("%d task instances take their allowed CPUs from the affinity file", nFile))
	}
	if len(m.Inferences) > 0 {
		o := o.Infer.withDefaults()
		tasks := map[timeline.TaskID]bool{}
		for _, in := range m.Inferences {
			tasks[in.Task] = true
		}
		note := fmt.Sprintf("inferred: %d tasks taken as pinned over %d stretches: each waited at least %d times for %s or more behind another task while a CPU outside the ones it ran on sat idle for %s or more (a mask the trace does not show); pass --affinity FILE to state them",
			len(tasks), len(m.Inferences), o.MinWaits, dur(o.MinWait), dur(o.MinIdle))
		const shown = 8
		var parts []string
		for i, in := range m.Inferences {
			if i == shown {
				parts = append(parts, fmt.Sprintf("%d more", len(m.Inferences)-shown))
				break
			}
			parts = append(parts, in.String())
		}
		m.Notes = append(m.Notes, note+": "+strings.Join(parts, "; "))
	}
	return m, nil
}

func dur(t timeline.Time) string {
	if t%1_000_000 == 0 {
		return fmt.Sprintf("%d ms", t/1_000_000)
	}
	return fmt.Sprintf("%d us", t/1000)
}

// recorded applies the recorder's changes (tl.Affinity) to the task
// instances they name, marks those tasks known and returns their number.
// A change is given to the instance of its TID alive at its time, or the
// next one to appear; a task's first recorded mask holds from its start.
func recorded(tl *timeline.Timeline, m *Map, known []bool) int {
	if len(tl.Affinity) == 0 {
		return 0
	}
	byTID := map[timeline.TID][]timeline.TaskID{}
	for id := range tl.Tasks {
		if !tl.Tasks[id].Idle {
			byTID[tl.Tasks[id].PID] = append(byTID[tl.Tasks[id].PID], timeline.TaskID(id))
		}
	}
	for _, ids := range byTID {
		sort.Slice(ids, func(a, b int) bool { return tl.Tasks[ids[a]].First < tl.Tasks[ids[b]].First })
	}
	ch := append([]timeline.AffinityChange(nil), tl.Affinity...)
	sort.SliceStable(ch, func(a, b int) bool { return ch[a].At < ch[b].At })
	n := 0
	for _, c := range ch {
		ids := byTID[c.TID]
		if len(ids) == 0 {
			continue
		}
		id := ids[len(ids)-1]
		for _, x := range ids {
			if tl.Tasks[x].Last >= c.At {
				id = x
				break
			}
		}
		if !known[id] || m.Source(id) == Kthread {
			// The first sighting holds from the task's start, over what
			// its name said.
			m.tasks[id] = []Change{{At: timeline.NoTime, CPUs: c.CPUs, Source: Recorded}}
			known[id] = true
			n++
			continue
		}
		m.tasks[id] = append(m.tasks[id], Change{At: c.At, CPUs: c.CPUs, Source: Recorded})
	}
	return n
}

func (r *Rule) matches(tl *timeline.Timeline, id timeline.TaskID) bool {
	tk := &tl.Tasks[id]
	if tk.Idle {
		return false
	}
	if r.PID != timeline.NoTID {
		return tk.PID == r.PID
	}
	if tl.Strings.Get(tk.Comm) == r.Comm {
		return true
	}
	for _, c := range tk.Comms {
		if tl.Strings.Get(c.Comm) == r.Comm {
			return true
		}
	}
	return false
}

func (r *Rule) who() string {
	if r.PID != timeline.NoTID {
		return fmt.Sprintf("pid %d", r.PID)
	}
	return "comm " + r.Comm
}
