package replay

import (
	"fmt"
	"slices"

	"github.com/schedlens/schedlens/timeline"
)

// Group is a task group (CONFIG_FAIR_GROUP_SCHED, one level below the root
// group): a cgroup v2 cpu controller or an autogroup. Its fair tasks share
// Weight on every CPU as one entity of the root run queue, whatever their
// number; a task's own nice only ranks it inside its group.
type Group struct {
	// ID is what Task.Group names: Groups[k].ID is k+1. 0 is the root
	// group, which is never listed.
	ID int `json:"id"`
	// Name is the cgroup path ("/system.slice/x.service") or the
	// autogroup's ("/autogroup-2"); unique within a workload.
	Name string `json:"name"`
	// Weight is the group's load weight, tg->shares scaled down (nice 0 =
	// 1024): CgroupWeight of a cpu.weight, or AutogroupWeight of an
	// autogroup's nice. MinGroupWeight..MaxGroupWeight.
	Weight int64 `json:"weight"`
	// Autogroup says the group is an autogroup (a session's group,
	// weighted by the autogroup's nice), not a cgroup.
	Autogroup bool `json:"autogroup,omitempty"`
}

// Group weight bounds: MIN_SHARES and MAX_SHARES (kernel/sched/sched.h),
// which sched_group_set_shares clamps to.
const (
	MinGroupWeight = 2
	MaxGroupWeight = 1 << 18
)

// niceToWeight is sched_prio_to_weight (kernel/sched/core.c): the load
// weight of nice -20 .. 19, nice 0 = 1024, about 1.25x per step.
var niceToWeight = [40]int64{
	88761, 71755, 56483, 46273, 36291,
	29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906,
	3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423,
	335, 272, 215, 172, 137,
	110, 87, 70, 56, 45,
	36, 29, 23, 18, 15,
}

// NiceWeight returns the load weight of a nice value (sched_prio_to_weight),
// nice clamped to -20..19.
func NiceWeight(nice int) int64 { return niceToWeight[min(max(nice, -20), 19)+20] }

// CgroupWeight returns the group weight of a cgroup v2 cpu.weight (1..10000,
// 100 by default): sched_weight_from_cgroup, cpu.weight x 1024 / 100
// rounded to the nearest (kernel/sched/sched.h, used by cpu_weight_write_u64
// in kernel/sched/core.c).
func CgroupWeight(cpuWeight int) (int64, error) {
	if cpuWeight < 1 || cpuWeight > 10000 {
		return 0, fmt.Errorf("cpu.weight %d: want 1..10000", cpuWeight)
	}
	return (int64(cpuWeight)*1024 + 50) / 100, nil
}

// AutogroupWeight returns the group weight of an autogroup whose nice is
// nice (-20..19): proc_sched_autogroup_set_nice sets the group's shares to
// sched_prio_to_weight[nice + 20] (kernel/sched/autogroup.c).
func AutogroupWeight(nice int) (int64, error) {
	if nice < -20 || nice > 19 {
		return 0, fmt.Errorf("autogroup nice %d: want -20..19", nice)
	}
	return NiceWeight(nice), nil
}

// Assumptions about task groups.
const (
	// AssumeGroups: the groups come from the recording's group table.
	AssumeGroups = "task-groups"
	// AssumeGroupFirstSight: a task stays in the group it was first seen in.
	AssumeGroupFirstSight = "group-first-sight"
)

// validateGroups checks the group table and every task's reference to it.
func (w *Workload) validateGroups() error {
	names := make(map[string]int, len(w.Groups))
	for k, g := range w.Groups {
		if g.ID != k+1 {
			return fmt.Errorf("group %d (%s): id %d, want %d (ids count from 1 in table order)", k, g.Name, g.ID, k+1)
		}
		if g.Name == "" {
			return fmt.Errorf("group %d: no name", g.ID)
		}
		if prev, dup := names[g.Name]; dup {
			return fmt.Errorf("group %d: name %q already used by group %d", g.ID, g.Name, prev)
		}
		names[g.Name] = g.ID
		if g.Weight < MinGroupWeight || g.Weight > MaxGroupWeight {
			return fmt.Errorf("group %d (%s): weight %d, want %d..%d", g.ID, g.Name, g.Weight, MinGroupWeight, MaxGroupWeight)
		}
	}
	for i := range w.Tasks {
		if g := w.Tasks[i].Group; g < 0 || g > len(w.Groups) {
			return fmt.Errorf("task %d (%s): group %d, the workload has %d groups", i, w.Tasks[i].Comm, g, len(w.Groups))
		}
	}
	return nil
}

// extractGroups puts w's tasks into the task groups of tl's group table
// (Timeline.Groups), by thread id, and records what that assumes; without
// a table every task stays in the root group.
//
// A record puts its task in the cgroup Path when the cpu controller is on
// for it (Weight > 0), else in its autogroup when it has one (autogroups
// apply only to tasks whose cgroup is the root of the cpu controller:
// task_wants_autogroup, kernel/sched/autogroup.h), else in the root group.
// Each distinct cgroup path is a child of the root group with its own
// cpu.weight: nested cgroups are flattened to one level; the first record
// naming a group gives its weight. A task whose group changes later keeps
// the group of its first record; a thread id reused by several task
// instances gives them all that group.
func extractGroups(w *Workload, tl *timeline.Timeline) {
	if len(tl.Groups) == 0 {
		w.Assumptions = slices.Insert(w.Assumptions, 0, Assumption{Name: AssumeFlatCgroups, Detail: "groups unknown (the recording has no group table): every task in the root group, weighing by its own nice"})
		return
	}
	first := make(map[timeline.TID]int, len(tl.Groups)) // tid -> group id (0: root)
	changed := make(map[timeline.TID]bool)
	index := map[string]int{}
	var bad int
	for _, gc := range tl.Groups {
		name, weight, ok := groupOf(gc)
		if !ok {
			bad++
		}
		id := 0
		if name != "" {
			if id = index[name]; id == 0 {
				auto := gc.Autogroup > 0 && !(gc.Weight > 0 && gc.Path != "" && gc.Path != "/")
				w.Groups = append(w.Groups, Group{ID: len(w.Groups) + 1, Name: name, Weight: weight, Autogroup: auto})
				id = len(w.Groups)
				index[name] = id
			}
		}
		if prev, seen := first[gc.TID]; !seen {
			first[gc.TID] = id
		} else if prev != id {
			changed[gc.TID] = true
		}
	}
	var nGrouped, nNone, nChanged int
	for i := range w.Tasks {
		tk := &w.Tasks[i]
		id, seen := first[tk.TID]
		if !seen {
			nNone++
			continue
		}
		tk.Group = id
		if id > 0 {
			nGrouped++
		}
		if changed[tk.TID] {
			nChanged++
			tk.Flags = append(tk.Flags, AssumeGroupFirstSight)
		}
	}
	detail := fmt.Sprintf("task groups from the recording's group table: %d groups (cgroups with the cpu controller on, else autogroups), one level below the root group, nested cgroups flattened; %d tasks in a group, %d in the root group, %d with no record taken as in the root group",
		len(w.Groups), nGrouped, len(w.Tasks)-nGrouped-nNone, nNone)
	if bad > 0 {
		detail += fmt.Sprintf("; %d records with a cpu.weight or autogroup nice out of range taken at the nearest valid value", bad)
	}
	asm := []Assumption{{Name: AssumeGroups, Detail: detail, Tasks: nGrouped}}
	if nChanged > 0 {
		asm = append(asm, Assumption{Name: AssumeGroupFirstSight, Detail: "a task whose group changed during the recording stays in the group of its first record", Tasks: nChanged})
	}
	w.Assumptions = slices.Insert(w.Assumptions, 0, asm...)
}

// groupOf returns the group a record puts its task in ("" for the root
// group) and that group's weight; ok is false when a value was out of
// range and clamped.
func groupOf(gc timeline.GroupChange) (name string, weight int64, ok bool) {
	ok = true
	switch {
	case gc.Weight > 0 && gc.Path != "" && gc.Path != "/":
		cw := gc.Weight
		if cw > 10000 {
			cw, ok = 10000, false
		}
		weight, _ = CgroupWeight(cw)
		return gc.Path, weight, ok
	case gc.Autogroup > 0:
		nice := gc.AutogroupNice
		if nice < -20 || nice > 19 {
			nice, ok = min(max(nice, -20), 19), false
		}
		weight, _ = AutogroupWeight(nice)
		return fmt.Sprintf("/autogroup-%d", gc.Autogroup), weight, ok
	}
	return "", 0, ok
}

// AssumeNoAutogroup names the assumption DropAutogroups adds.
const AssumeNoAutogroup = "no-autogroup"

// DropAutogroups schedules w as with kernel.sched_autogroup_enabled=0:
// the tasks of autogroups go to the root group (autogroup_task_group in
// kernel/sched/autogroup.c gives a task its own group, the root one, when
// autogroups are off), the autogroups leave the group table and the other
// groups are renumbered. It returns how many tasks moved.
func (w *Workload) DropAutogroups() int {
	newID := make([]int, len(w.Groups)+1) // old id -> new id (0: root)
	var kept []Group
	for _, g := range w.Groups {
		if g.Autogroup {
			continue
		}
		newID[g.ID] = len(kept) + 1
		g.ID = len(kept) + 1
		kept = append(kept, g)
	}
	if len(kept) == len(w.Groups) {
		return 0
	}
	moved := 0
	for i := range w.Tasks {
		tk := &w.Tasks[i]
		if tk.Group > 0 && newID[tk.Group] == 0 {
			moved++
		}
		if tk.Group > 0 && tk.Group < len(newID) {
			tk.Group = newID[tk.Group]
		}
	}
	w.Groups = kept
	return moved
}
