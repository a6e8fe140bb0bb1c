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
		Sysctls: []string{"kernel.sched_autogroup_enabled=0", "kernel.sched_child_runs_first=1"}, File: "meta.txt"}
	changes, notes, err := RecordedChanges(k)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 4 || len(notes) != 1 || !strings.Contains(notes[0], "sched_child_runs_first") {
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
	want, _ := policies.Parse("6.12,-newidle-bailout,NO_RUN_TO_PARITY,sched_autogroup_enabled=0")
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

// Seed 004's kernels: 004-nosync is the model's NO_CORE_SYNC (a feature of
// the model, not a sched_feat), written to meta.txt's sched_model_features:;
// the "after" build also carries +coresched-idle-ipi.
func TestBaselineModelFeatures(t *testing.T) {
	for _, tc := range []struct {
		knobs ingest.Knobs
		want  string
	}{
		{ingest.Knobs{ModelFeatures: []string{"NO_CORE_SYNC"}, File: "meta.txt"}, "6.12,NO_CORE_SYNC"},
		{ingest.Knobs{Patches: []string{"+coresched-idle-ipi"}, ModelFeatures: []string{"NO_CORE_SYNC"}, File: "meta.txt"}, "6.12,NO_CORE_SYNC,+coresched-idle-ipi"},
	} {
		changes, _, err := RecordedChanges(tc.knobs)
		if err != nil {
			t.Fatal(err)
		}
		base, err := Baseline("6.12", changes)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := policies.Parse(base)
		want, _ := policies.Parse(tc.want)
		plain, _ := policies.Parse("6.12")
		if got != want || got == plain {
			t.Errorf("%+v: baseline %s, want %s", tc.knobs, got.String(), want.String())
		}
		if got.Has(policies.FeatCoreSync) {
			t.Errorf("%+v: baseline %s keeps CORE_SYNC", tc.knobs, got.String())
		}
	}
	for _, bad := range []string{"base_slice_ns=1", "+coresched-idle-ipi", "NO_SUCH_FEATURE"} {
		if _, _, err := RecordedChanges(ingest.Knobs{ModelFeatures: []string{bad}, File: "meta.txt"}); err == nil || !strings.Contains(err.Error(), "meta.txt: sched_model_features") {
			t.Errorf("model feature %q: %v, want an error naming meta.txt's sched_model_features", bad, err)
		}
	}
}
