package whatif

import (
	"fmt"
	"strings"

	"github.com/schedlens/schedlens/policies"
	"github.com/schedlens/schedlens/topology"
)

// ChangeKind says what a what-if change touches.
type ChangeKind uint8

// Kinds of change.
const (
	ChangePatch   ChangeKind = iota + 1 // a seed patch knob: +name or -name
	ChangeFeature                       // a sched_feat switch: NAME or NO_NAME
	ChangeTunable                       // a debugfs tunable: name=value
	ChangeCPUs                          // the CPU set: cpus=LIST
	ChangeTask                          // tasks of one comm: nice:COMM=N, affinity:COMM=LIST
)

// Change is one change of a what-if, under its kernel name.
type Change struct {
	Kind ChangeKind
	// Text is the change as written ("NO_RUN_TO_PARITY", "cpus=0").
	Text string
	// CPUs is the machine's CPUs the what-if keeps (ChangeCPUs only).
	CPUs topology.CPUSet
	// Task is what a ChangeTask does.
	Task TaskChange
}

// ParseChange reads one change: "+patch" or "-patch", "FEATURE" or
// "NO_FEATURE", "tunable=value", "cpus=LIST", "nice:COMM=N" or
// "affinity:COMM=LIST". A name the model does not implement is an error
// that lists the ones it does.
func ParseChange(s string) (Change, error) {
	s = strings.TrimSpace(s)
	c := Change{Text: s}
	if tc, ok, err := parseTaskChange(s); ok {
		if err != nil {
			return c, err
		}
		c.Kind, c.Task = ChangeTask, tc
		return c, nil
	}
	name, value, isAssign := strings.Cut(s, "=")
	switch {
	case s == "":
		return c, fmt.Errorf("empty change: want %s", modeled())
	case isAssign && name == "cpus":
		set, err := topology.ParseCPUSet(value)
		if err != nil || set.Empty() {
			if err == nil {
				err = fmt.Errorf("no CPU")
			}
			return c, fmt.Errorf("change %q: want cpus=LIST (e.g. cpus=0 or cpus=0-3,6): %v", s, err)
		}
		c.Kind, c.CPUs = ChangeCPUs, set
		return c, nil
	case isAssign:
		if n, ok := strings.CutPrefix(name, "kernel."); ok {
			// A sysctl under its /proc/sys/kernel name.
			name, s = n, n+"="+value
			c.Text = s
		}
		if _, ok := policies.TunableByName(name); !ok {
			return c, fmt.Errorf("change %q: the model has no tunable %q; want %s", s, name, modeled())
		}
		c.Kind = ChangeTunable
	case strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-"):
		if _, ok := policies.PatchByName(s[1:]); !ok {
			return c, fmt.Errorf("change %q: the model has no patch %q; want %s", s, s[1:], modeled())
		}
		c.Kind = ChangePatch
	default:
		if _, ok := policies.FeatureByName(strings.TrimPrefix(s, "NO_")); !ok {
			if _, isPatch := policies.PatchByName(s); isPatch {
				return c, fmt.Errorf("change %q is a patch: write +%s or -%s", s, s, s)
			}
			return c, fmt.Errorf("change %q: the model implements no such knob; want %s", s, modeled())
		}
		c.Kind = ChangeFeature
	}
	// The value of a tunable is checked by the description parser.
	if c.Kind == ChangeTunable {
		if _, err := policies.Parse(policies.DefaultKernel() + "," + s); err != nil {
			return c, fmt.Errorf("change %q: %v", s, err)
		}
	}
	return c, nil
}

// modeled lists every change the model implements.
func modeled() string {
	debugfs, sysctls := tunableForms()
	return fmt.Sprintf("a patch (+name or -name: %s), a sched feature (NAME or NO_NAME: %s), a debugfs tunable (%s), a sysctl (%s), cpus=LIST, nice:COMM=N or affinity:COMM=CPULIST",
		strings.Join(policies.PatchNames(), ", "), strings.Join(policies.FeatureNames(), ", "),
		strings.Join(debugfs, ", "), strings.Join(sysctls, ", "))
}

// tunableForms returns the forms of the modeled debugfs tunables
// ("base_slice_ns=N") and sysctls ("sched_autogroup_enabled=0|1").
func tunableForms() (debugfs, sysctls []string) {
	for _, n := range policies.TunableNames() {
		t, _ := policies.TunableByName(n)
		if !t.Sysctl() {
			debugfs = append(debugfs, n+"=N")
			continue
		}
		lo, hi := t.Range()
		if hi-lo == 1 {
			sysctls = append(sysctls, fmt.Sprintf("%s=%d|%d", n, lo, hi))
		} else {
			sysctls = append(sysctls, n+"=N")
		}
	}
	return debugfs, sysctls
}

// Apply returns the description of the baseline desc with the changes
// applied, and the CPU set of the last cpus= change (nil: every CPU). A
// change that leaves the model as it was ("NO_DELAY_DEQUEUE" on 6.6,
// which has no DELAY_DEQUEUE) is an error: a what-if of nothing.
func Apply(desc string, changes []Change) (string, topology.CPUSet, error) {
	base, err := policies.Parse(desc)
	if err != nil {
		return "", nil, fmt.Errorf("baseline %q: %w", desc, err)
	}
	out := desc
	var cpus topology.CPUSet
	tasks := false
	for _, c := range changes {
		if c.Kind == ChangeCPUs {
			cpus = c.CPUs
			continue
		}
		if c.Kind == ChangeTask {
			tasks = true
			continue
		}
		next, changed, err := step(out, c)
		if err != nil {
			return "", nil, err
		}
		if !changed {
			prev, _ := policies.Parse(out)
			return "", nil, fmt.Errorf("change %q changes nothing on %s (the model is already so)", c.Text, prev.String())
		}
		out = next
	}
	cfg, _ := policies.Parse(out)
	if _, err := policies.New(cfg); err != nil {
		return "", nil, fmt.Errorf("policy %q: %w", out, err)
	}
	if cfg == base && cpus == nil && !tasks {
		return "", nil, fmt.Errorf("the changes leave the baseline %s as it was", base.String())
	}
	return cfg.String(), cpus, nil
}

// step applies one change to a description and says whether the model
// differs after it.
func step(desc string, c Change) (string, bool, error) {
	prev, err := policies.Parse(desc)
	if err != nil {
		return "", false, fmt.Errorf("policy %q: %w", desc, err)
	}
	next := compose(desc, c.Text)
	cfg, err := policies.Parse(next)
	if err != nil {
		return "", false, fmt.Errorf("change %q on %s: %w", c.Text, desc, err)
	}
	return next, cfg != prev, nil
}

// compose appends a change to a description; a patch change that undoes
// one already there (+X after -X, -X after +X) removes that one instead,
// so that "6.12,-newidle-bailout" with +newidle-bailout is 6.12 again.
func compose(desc, change string) string {
	if len(change) > 1 && (change[0] == '+' || change[0] == '-') {
		opposite := "-" + change[1:]
		if change[0] == '-' {
			opposite = "+" + change[1:]
		}
		parts := strings.Split(desc, ",")
		for i := len(parts) - 1; i > 0; i-- {
			if parts[i] == opposite {
				return strings.Join(append(parts[:i:i], parts[i+1:]...), ",")
			}
		}
	}
	return desc + "," + change
}
