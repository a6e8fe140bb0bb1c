package whatif

import (
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/policies"
)

// A recording made on 6.12 with seed 003 reverted and NO_RUN_TO_PARITY set
// has as its baseline the 6.12 model without the bail-out and with the
// feature off: a what-if of +newidle-bailout is then a real change.
func TestBaselineFromRecordedKnobs(t *testing.T) {
	k := ingest.Knobs{Patches: []string{"-newidle-bailout"}, Features: []string{"NO_RUN_TO_PARITY", "PLACE_LAG"},
		Sysctls: []string{"kernel.sched_autogroup_enabled=0"}, File: "meta.txt"}
	changes, notes, err := RecordedChanges(k)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 3 || len(notes) != 1 || !strings.Contains(notes[0], "sched_autogroup_enabled") {
		t.Fatalf("changes %v notes %v", changes, notes)
	}
	base, err := Baseline("6.12", changes)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := policies.Parse(base)
	plain, _ := policies.Parse("6.12")
	if cfg == plain {
		t.Fatalf("baseline %s is the plain 6.12 model", base)
	}
	want, _ := policies.Parse("6.12,-newidle-bailout,NO_RUN_TO_PARITY")
	if cfg != want {
		t.Errorf("baseline %s, want %s", cfg.String(), want.String())
	}
	c, _ := ParseChange("+newidle-bailout")
	if _, _, err := Apply(base, []Change{c}); err != nil {
		t.Errorf("+newidle-bailout on the recorded baseline: %v", err)
	}
	if _, err := Baseline("6.12", []Change{{Kind: ChangeCPUs, Text: "cpus=0"}}); err == nil {
		t.Error("cpus= as a baseline change: no error")
	}
	if _, _, err := RecordedChanges(ingest.Knobs{Patches: []string{"-no-such-patch"}, File: "meta.txt"}); err == nil || !strings.Contains(err.Error(), "meta.txt") {
		t.Errorf("unknown patch: %v, want an error naming meta.txt", err)
	}
}
