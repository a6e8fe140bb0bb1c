package whatif

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/topology"
)

// TaskChange is a what-if change of some tasks rather than of the kernel:
// what `nice` or `taskset` would do to every task of one comm before the
// workload starts ("nice:cyclictest=-10", "affinity:stress=0-1").
type TaskChange struct {
	// Comm names the tasks: every task of the recording that had it (as
	// compare matches tasks, by name, since pids differ between runs).
	Comm string
	// Nice is the nice value to give them when SetNice.
	Nice    int
	SetNice bool
	// CPUs is the allowed set to give them for their whole life, when
	// not nil.
	CPUs topology.CPUSet
}

// parseTaskChange reads "nice:COMM=N" or "affinity:COMM=LIST"; ok is false
// when s is neither form.
func parseTaskChange(s string) (tc TaskChange, ok bool, err error) {
	kind, rest, found := strings.Cut(s, ":")
	if !found || (kind != "nice" && kind != "affinity") {
		return tc, false, nil
	}
	i := strings.LastIndexByte(rest, '=')
	if i <= 0 {
		return tc, true, fmt.Errorf("change %q: want %s:COMM=%s", s, kind, map[string]string{"nice": "N", "affinity": "CPULIST"}[kind])
	}
	tc.Comm, rest = rest[:i], rest[i+1:]
	switch kind {
	case "nice":
		n, err := strconv.Atoi(rest)
		if err != nil || n < -20 || n > 19 {
			return tc, true, fmt.Errorf("change %q: nice %q: want -20..19", s, rest)
		}
		tc.Nice, tc.SetNice = n, true
	case "affinity":
		set, err := topology.ParseCPUSet(rest)
		if err == nil && set.Empty() {
			err = fmt.Errorf("no CPU")
		}
		if err != nil {
			return tc, true, fmt.Errorf("change %q: CPU list %q: %v", s, rest, err)
		}
		tc.CPUs = set
	}
	return tc, true, nil
}

// String is the change as ParseChange reads it.
func (tc TaskChange) String() string {
	if tc.SetNice {
		return fmt.Sprintf("nice:%s=%d", tc.Comm, tc.Nice)
	}
	return fmt.Sprintf("affinity:%s=%s", tc.Comm, tc.CPUs)
}

// TaskChanges returns the task changes among changes, in order.
func TaskChanges(changes []Change) []TaskChange {
	var out []TaskChange
	for _, c := range changes {
		if c.Kind == ChangeTask {
			out = append(out, c.Task)
		}
	}
	return out
}

// applyTaskChanges changes the workload's tasks (before any cpus= change,
// so CPU numbers are the recording's) and says what it did. A change that
// names no task of the recording, or a CPU it lacks, is an error: a what-if
// of nothing.
func applyTaskChanges(w *replay.Workload, ncpu int, changes []TaskChange) error {
	for _, tc := range changes {
		if tc.CPUs != nil && tc.CPUs.Max() >= ncpu {
			return fmt.Errorf("%s: the recording has CPUs 0-%d", tc, ncpu-1)
		}
		var changed, skipped int
		for i := range w.Tasks {
			tk := &w.Tasks[i]
			if tk.Comm != tc.Comm {
				continue
			}
			if tc.SetNice {
				if tk.Class() != replay.ClassFair {
					skipped++ // nice does not change an RT or deadline task's scheduling
					continue
				}
				tk.Prio = 120 + tc.Nice
			}
			if tc.CPUs != nil {
				tk.CPUs = slices.Clone(tc.CPUs)
				tk.Affinity = nil
			}
			changed++
		}
		if changed+skipped == 0 {
			return fmt.Errorf("%s: the recording has no task named %q", tc, tc.Comm)
		}
		detail := fmt.Sprintf("%s: %d tasks %s", tc, changed, map[bool]string{true: fmt.Sprintf("at nice %d for their whole life", tc.Nice), false: "allowed on CPUs " + tc.CPUs.String() + " for their whole life"}[tc.SetNice])
		if skipped > 0 {
			detail += fmt.Sprintf("; %d real-time or deadline tasks of that name left as they were", skipped)
		}
		w.Assumptions = append(w.Assumptions, replay.Assumption{Name: "task-change", Detail: detail, Tasks: changed})
	}
	return nil
}
