package compare

import "strconv"

// Knob is how often one policy knob changed a decision in a modeled run:
// the policies package counts, the report prints. Name is the knob
// ("lb-util-shr-bound"); Toggled says the run flipped it from the kernel
// version's default; Count is how many decisions it changed, What what
// those were ("migrations allowed that mainline refused").
type Knob struct {
	Name    string
	Toggled bool
	Count   int64
	What    string
}

// NeverFired reports a toggled knob that changed nothing: the change it
// stands for cannot show on this trace.
func (k Knob) NeverFired() bool { return k.Toggled && k.Count == 0 }

// Line is the knob's report line: "lb-util-shr-bound (toggled): 187
// migrations allowed that mainline refused".
func (k Knob) Line() string {
	s := k.Name
	if k.Toggled {
		s += " (toggled)"
	}
	s += ": " + strconv.FormatInt(k.Count, 10)
	if k.What != "" {
		s += " " + k.What
	}
	return s
}

// Warning is the warning line of a knob that never fired, "" otherwise.
func (k Knob) Warning() string {
	if !k.NeverFired() {
		return ""
	}
	return k.Name + " never fired: the change cannot show on this trace"
}
