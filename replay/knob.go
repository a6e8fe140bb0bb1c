package replay

import "strconv"

// Knob is how often one policy knob changed a decision in a modeled run:
// the policy counts (KnobReporter), Result.Knobs carries it, the replay
// report prints it. Name is the knob ("lb-util-shr-bound",
// "RUN_TO_PARITY"); On is its setting in the run; Toggled says the run
// flipped it from the kernel version's default; Count is how many
// decisions came out differently from what the other setting would have
// decided at the same point, and What says what those were ("migrate_util
// migrations allowed that the unshifted test refuses"). NotCounted marks a
// knob whose alternative the policy cannot evaluate; What then says why.
type Knob struct {
	Name       string
	On         bool
	Toggled    bool
	Count      int64
	What       string
	NotCounted bool
}

// KnobReporter is implemented by a Policy that counts, per knob, the
// decisions the knob's other setting would have taken differently. The
// engine asks once, at the end of the run.
type KnobReporter interface {
	Knobs() []Knob
}

// NeverFired reports a toggled knob that changed nothing: the change it
// stands for cannot show on this trace.
func (k Knob) NeverFired() bool { return k.Toggled && !k.NotCounted && k.Count == 0 }

// Line is the knob's report line: "lb-util-shr-bound (off, toggled): 12
// migrate_util migrations refused that the patch would allow".
func (k Knob) Line() string {
	s := k.Name + " (off"
	if k.On {
		s = k.Name + " (on"
	}
	if k.Toggled {
		s += ", toggled"
	}
	s += "): "
	if k.NotCounted {
		return s + "not counted: " + k.What
	}
	s += strconv.FormatInt(k.Count, 10)
	if k.What != "" {
		s += " " + k.What
	}
	return s
}

// Warning is the warning line of a toggled knob that never fired, ""
// otherwise.
func (k Knob) Warning() string {
	if !k.NeverFired() {
		return ""
	}
	return k.Name + " never fired: the change cannot show on this trace"
}
