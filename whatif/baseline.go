package whatif

import (
	"fmt"
	"strings"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/policies"
)

// RecordedChanges turns what meta.txt says the recording kernel ran
// beyond its version's defaults (seed patches reverted or applied, sched
// features and tunables the capture set) into changes of the baseline:
// the model of the kernel that was recorded, not of the version it was
// built from. Model features (sched_model_features:) must be features of
// the model. A sysctl the model implements (kernel.sched_autogroup_enabled)
// is a change; the others come back as notes.
func RecordedChanges(k ingest.Knobs) ([]Change, []string, error) {
	var out []Change
	var notes []string
	for _, group := range [][]string{k.Patches, k.Features, k.Tunables} {
		for _, s := range group {
			c, err := ParseChange(s)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %v", k.File, err)
			}
			out = append(out, c)
		}
	}
	// What the kernel reported at capture (the capture's own settings
	// are in Tunables, and ingest leaves them out of Reported).
	for _, s := range k.Reported {
		c, err := ParseChange(s)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: sched_state: %v", k.File, err)
		}
		out = append(out, c)
	}
	for _, s := range k.ModelFeatures {
		c, err := ParseChange(s)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: sched_model_features: %v", k.File, err)
		}
		if c.Kind != ChangeFeature {
			return nil, nil, fmt.Errorf("%s: sched_model_features: %q is not a feature of the model", k.File, s)
		}
		out = append(out, c)
	}
	for _, s := range k.Sysctls {
		// A sysctl the model implements is a tunable under its name
		// without the "kernel." of its /proc/sys path.
		if name, _, _ := strings.Cut(strings.TrimPrefix(s, "kernel."), "="); strings.HasPrefix(s, "kernel.") {
			if _, ok := policies.TunableByName(name); ok {
				c, err := ParseChange(strings.TrimPrefix(s, "kernel."))
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %v", k.File, err)
				}
				out = append(out, c)
				continue
			}
		}
		notes = append(notes, fmt.Sprintf("the recording set sysctl %s (%s); the model has no such knob", s, k.File))
	}
	return out, notes, nil
}

// Baseline applies the recording kernel's own changes to the version's
// model desc: a change that leaves the model as it was (a feature at its
// default) is skipped. cpus= is not a kernel knob and is an error.
func Baseline(desc string, changes []Change) (string, error) {
	out := desc
	var applied []string
	for _, c := range changes {
		if c.Kind == ChangeCPUs {
			return "", fmt.Errorf("baseline change %q: the CPUs are the recording's own", c.Text)
		}
		if c.Kind == ChangeTask {
			return "", fmt.Errorf("baseline change %q: the tasks' nice and affinity are the recording's own", c.Text)
		}
		next, changed, err := step(out, c)
		if err != nil {
			return "", fmt.Errorf("baseline: %w", err)
		}
		if !changed {
			continue
		}
		out = next
		applied = append(applied, c.Text)
	}
	if len(applied) == 0 {
		return desc, nil
	}
	cfg, _ := policies.Parse(out)
	if _, err := policies.New(cfg); err != nil {
		return "", fmt.Errorf("baseline %q (%s): %w", out, strings.Join(applied, ", "), err)
	}
	return cfg.String(), nil
}

// RecordedKnobs reads what the kernel of the trace at path ran beyond its
// version's defaults: meta.txt next to it (ingest.KnobsNextTo), with the
// sysctls the trace itself states (traceSysctls, as schedlens record
// writes them) for those meta.txt does not name. It returns the changes
// of the baseline (RecordedChanges), where they came from, and notes on
// what has no model.
func RecordedKnobs(path string, traceSysctls []string) (changes []Change, source string, notes []string, err error) {
	k, err := ingest.KnobsNextTo(path)
	if err != nil {
		return nil, "", nil, err
	}
	if k.MergeSysctls(traceSysctls) > 0 {
		if k.File == "" {
			k.File = path
		} else {
			k.File += " and " + path
		}
	}
	changes, notes, err = RecordedChanges(k)
	return changes, k.File, notes, err
}
