package policies

import (
	"fmt"
	"strconv"
	"strings"
)

// Tunable is a scheduler tunable of /sys/kernel/debug/sched/ (or a
// scheduler sysctl of /proc/sys/kernel/) the model implements. A
// description sets one as "name=value" ("base_slice_ns=3000000"); a
// tunable not set keeps the value the kernel gives it at boot.
type Tunable uint8

// The modeled tunables.
const (
	// TunBaseSlice is base_slice_ns (sysctl_sched_base_slice): the slice
	// of every fair task. Not set, it is the version's normalized base
	// slice x (1 + ilog2(min(CPUs, 8))), as update_sysctl computes it;
	// a write to debugfs sets it as written, unscaled.
	TunBaseSlice Tunable = iota
	// TunMigrationCost is migration_cost_ns (sysctl_sched_migration_cost,
	// 500 µs): a task that ran more recently than this is cache hot to
	// the balancer (task_hot), and newidle balancing is skipped while
	// the CPU's expected idle is shorter (sched_balance_newidle). The
	// boot-time avg_idle and max_idle_balance_cost keep the default.
	TunMigrationCost
	// TunNrMigrate is nr_migrate (sysctl_sched_nr_migrate, 32): the most
	// tasks one balance pass examines on the busiest queue (loop_max).
	TunNrMigrate
	// TunAutogroup is the sysctl kernel.sched_autogroup_enabled (1 on a
	// kernel with CONFIG_SCHED_AUTOGROUP unless booted with noautogroup):
	// at 0 a task of an autogroup is scheduled in the root task group
	// (autogroup_task_group in kernel/sched/autogroup.c). The policy
	// model has no task groups of its own: the replay applies it to the
	// workload's groups (replay.Workload.DropAutogroups).
	TunAutogroup
	nTunables
)

var tunableInfo = [nTunables]struct {
	name     string
	min, max int64
	def      string
}{
	// The debugfs files are u32 (kernel/sched/debug.c). A zero slice
	// would give every task an empty request: refused.
	TunBaseSlice:     {"base_slice_ns", 1, 1<<32 - 1, "the version's base slice scaled by 1 + ilog2(min(CPUs, 8))"},
	TunMigrationCost: {"migration_cost_ns", 0, 1<<32 - 1, "500000"},
	TunNrMigrate:     {"nr_migrate", 0, 1<<32 - 1, "32"},
	TunAutogroup:     {"sched_autogroup_enabled", 0, 1, "1"},
}

// Name returns the debugfs (or sysctl) name of the tunable ("base_slice_ns").
func (t Tunable) Name() string { return tunableInfo[t].name }

// Sysctl says whether the tunable is a sysctl of /proc/sys/kernel rather
// than a debugfs file.
func (t Tunable) Sysctl() bool { return t == TunAutogroup }

// Range returns the values the tunable takes.
func (t Tunable) Range() (lo, hi int64) { return tunableInfo[t].min, tunableInfo[t].max }

// TunableNames returns the name of every modeled tunable.
func TunableNames() []string {
	out := make([]string, nTunables)
	for i := range out {
		out[i] = tunableInfo[i].name
	}
	return out
}

// TunableByName returns the tunable called name.
func TunableByName(name string) (Tunable, bool) {
	for i, ti := range tunableInfo {
		if ti.name == name {
			return Tunable(i), true
		}
	}
	return 0, false
}

// Tunables holds the tunables a description set, each with its value.
type Tunables struct {
	val [nTunables]int64
	set uint8
}

// Get returns the value of a tunable and whether it was set.
func (ts Tunables) Get(t Tunable) (int64, bool) {
	return ts.val[t], ts.set&(1<<t) != 0
}

// Set sets a tunable.
func (ts *Tunables) Set(t Tunable, v int64) {
	ts.val[t] = v
	ts.set |= 1 << t
}

// parse sets a tunable from "name=value".
func (ts *Tunables) parse(tok string) error {
	name, val, _ := strings.Cut(tok, "=")
	t, ok := TunableByName(name)
	if !ok {
		return fmt.Errorf("unknown tunable %q: want one of %s", name, strings.Join(TunableNames(), ", "))
	}
	v, err := strconv.ParseInt(val, 10, 64)
	ti := tunableInfo[t]
	if err != nil {
		return fmt.Errorf("%s: %q is not an integer", name, val)
	}
	if v < ti.min || v > ti.max {
		return fmt.Errorf("%s=%d: want %d..%d", name, v, ti.min, ti.max)
	}
	if t == TunAutogroup && v == 1 {
		// Autogroups on is the boot default: the same model as not
		// setting it, so that a description states it only when off.
		ts.val[t] = 0
		ts.set &^= 1 << t
		return nil
	}
	ts.Set(t, v)
	return nil
}

// Without returns ts with tunable t unset.
func (ts Tunables) Without(t Tunable) Tunables {
	ts.val[t] = 0
	ts.set &^= 1 << t
	return ts
}

// Autogroup says whether autogroups group tasks (sched_autogroup_enabled
// not set to 0).
func (ts Tunables) Autogroup() bool {
	v, ok := ts.Get(TunAutogroup)
	return !ok || v != 0
}

// strings returns the set tunables as "name=value", in a fixed order.
func (ts Tunables) strings() []string {
	var out []string
	for t := range nTunables {
		if v, ok := ts.Get(t); ok {
			out = append(out, tunableInfo[t].name+"="+strconv.FormatInt(v, 10))
		}
	}
	return out
}
