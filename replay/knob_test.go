package replay

import "testing"

func TestKnobLine(t *testing.T) {
	k := Knob{Name: "lb-util-shr-bound", On: true, Toggled: true, Count: 187, What: "migrations allowed that mainline refused"}
	if got := k.Line(); got != "lb-util-shr-bound (on, toggled): 187 migrations allowed that mainline refused" || k.Warning() != "" {
		t.Errorf("line %q, warning %q", got, k.Warning())
	}
	k.Count = 0
	if got := k.Warning(); got != "lb-util-shr-bound never fired: the change cannot show on this trace" || !k.NeverFired() {
		t.Errorf("warning %q", got)
	}
	k.Toggled, k.On = false, false
	if k.Warning() != "" || k.NeverFired() || k.Line() != "lb-util-shr-bound (off): 0 migrations allowed that mainline refused" {
		t.Errorf("untoggled knob: %q %q", k.Line(), k.Warning())
	}
	n := Knob{Name: "PROTECT_VPROT", Toggled: true, NotCounted: true, What: "why"}
	if n.NeverFired() || n.Warning() != "" || n.Line() != "PROTECT_VPROT (off, toggled): not counted: why" {
		t.Errorf("not counted knob: %q %q", n.Line(), n.Warning())
	}
}
