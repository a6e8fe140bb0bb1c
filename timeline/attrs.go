package timeline

import (
	"cmp"
	"slices"

	"github.com/schedlens/schedlens/topology"
)

// AffinityChange records that task TID may run only on CPUs from At on, as
// a recorder saw it (the task's first sight, sched_setaffinity, a cpuset
// change). An empty CPUs means every CPU. Tracepoint-only formats carry
// none; the affinity package adds what a file or an inference supplies.
type AffinityChange struct {
	At   Time            `json:"at_ns"`
	TID  TID             `json:"tid"`
	CPUs topology.CPUSet `json:"cpus"`
}

// GroupChange records the task group TID belongs to from At on: its cgroup
// (v2 path and cpu.weight) and its autogroup, as a recorder read them.
type GroupChange struct {
	At  Time `json:"at_ns"`
	TID TID  `json:"tid"`
	// Path is the cgroup v2 path ("/system.slice/x.service"); "" unknown.
	Path string `json:"path,omitempty"`
	// Weight is that cgroup's cpu.weight (1..10000, 100 by default); 0
	// when unknown or when the cpu controller is off for it.
	Weight int `json:"weight,omitempty"`
	// Autogroup is the autogroup id from /proc/PID/autogroup
	// ("/autogroup-N nice K"); 0 when the task is in none (the root).
	Autogroup int `json:"autogroup,omitempty"`
	// AutogroupNice is that autogroup's nice value.
	AutogroupNice int `json:"autogroup_nice,omitempty"`
}

// AddAffinity records an affinity change; Finish orders them by time.
func (b *Builder) AddAffinity(a AffinityChange) { b.affinity = append(b.affinity, a) }

// AddGroup records a task-group change; Finish orders them by time.
func (b *Builder) AddGroup(g GroupChange) { b.groups = append(b.groups, g) }

// finishAttrs moves the side tables into tl, in time order (stable: of two
// changes at one instant the later added wins).
func (b *Builder) finishAttrs(tl *Timeline) {
	tl.Affinity = slices.Clone(b.affinity)
	slices.SortStableFunc(tl.Affinity, func(x, y AffinityChange) int { return cmp.Compare(x.At, y.At) })
	tl.Groups = slices.Clone(b.groups)
	slices.SortStableFunc(tl.Groups, func(x, y GroupChange) int { return cmp.Compare(x.At, y.At) })
}
