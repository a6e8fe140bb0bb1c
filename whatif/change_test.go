package whatif

import (
	"strings"
	"testing"
)

func TestParseChange(t *testing.T) {
	tests := []struct {
		in   string
		kind ChangeKind
		err  string
	}{
		{in: "NO_RUN_TO_PARITY", kind: ChangeFeature},
		{in: "LB_MIN", kind: ChangeFeature},
		{in: "+resched-ineligible", kind: ChangePatch},
		{in: "-newidle-bailout", kind: ChangePatch},
		{in: "base_slice_ns=3000000", kind: ChangeTunable},
		{in: "migration_cost_ns=0", kind: ChangeTunable},
		{in: "nr_migrate=8", kind: ChangeTunable},
		{in: "sched_autogroup_enabled=0", kind: ChangeTunable},
		{in: "kernel.sched_autogroup_enabled=0", kind: ChangeTunable},
		{in: "cpus=0", kind: ChangeCPUs},
		{in: "nice:cyclictest=-10", kind: ChangeTask},
		{in: "affinity:kworker/u8:1=0-1", kind: ChangeTask},
		{in: "nice:a=b=5", kind: ChangeTask},
		{in: "cpus=0-3,6", kind: ChangeCPUs},
		// Unmodeled names list the modeled ones.
		{in: "NO_TTWU_QUEUE", err: "the model implements no such knob; want a patch (+name or -name: lb-eligible-first"},
		{in: "NO_TTWU_QUEUE", err: "NO_NAME: PLACE_LAG, PLACE_DEADLINE_INITIAL"},
		{in: "sched_latency_ns=1", err: `the model has no tunable "sched_latency_ns"; want`},
		{in: "+fast-path", err: `the model has no patch "fast-path"`},
		{in: "newidle-bailout", err: "is a patch: write +newidle-bailout or -newidle-bailout"},
		{in: "base_slice_ns=0", err: "base_slice_ns=0: want 1..4294967295"},
		{in: "nr_migrate=many", err: `"many" is not an integer`},
		{in: "cpus=", err: "want cpus=LIST"},
		{in: "sched_autogroup_enabled=2", err: "sched_autogroup_enabled=2: want 0..1"},
		{in: "nice:cyclictest=-21", err: `nice "-21": want -20..19`},
		{in: "nice:=3", err: "want nice:COMM=N"},
		{in: "nice:cyclictest", err: "want nice:COMM=N"},
		{in: "affinity:x=", err: `CPU list ""`},
		{in: "affinity:x=zz", err: `CPU list "zz"`},
		{in: "kernel.sched_child_runs_first=1", err: `the model has no tunable "sched_child_runs_first"`},
		{in: "", err: "empty change"},
	}
	for _, tc := range tests {
		c, err := ParseChange(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseChange(%q) = %v, want error containing %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || c.Kind != tc.kind):
			t.Errorf("ParseChange(%q) = %+v, %v, want kind %d", tc.in, c, err, tc.kind)
		}
	}
}

func TestApply(t *testing.T) {
	mustParse := func(ss ...string) []Change {
		var out []Change
		for _, s := range ss {
			c, err := ParseChange(s)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
		return out
	}
	desc, cpus, err := Apply("6.12", mustParse("NO_RUN_TO_PARITY", "base_slice_ns=3000000", "+resched-ineligible"))
	if err != nil || desc != "6.12,+resched-ineligible,NO_RUN_TO_PARITY,base_slice_ns=3000000" || cpus != nil {
		t.Errorf("Apply = %q, %v, %v", desc, cpus, err)
	}
	desc, _, err = Apply("6.12", mustParse("kernel.sched_autogroup_enabled=0"))
	if err != nil || desc != "6.12,sched_autogroup_enabled=0" {
		t.Errorf("kernel.sched_autogroup_enabled=0: %q, %v", desc, err)
	}
	desc, _, err = Apply("6.12,sched_autogroup_enabled=0", mustParse("sched_autogroup_enabled=1"))
	if err != nil || desc != "6.12" {
		t.Errorf("sched_autogroup_enabled=1 on a baseline without autogroups: %q, %v", desc, err)
	}
	desc, cpus, err = Apply("6.12", mustParse("cpus=0"))
	if err != nil || desc != "6.12" || cpus.String() != "0" {
		t.Errorf("cpus=0: %q, %v, %v", desc, cpus, err)
	}
	// What the baseline already is: an error naming it.
	for _, tc := range []struct{ base, change, err string }{
		{"6.6", "NO_DELAY_DEQUEUE", `change "NO_DELAY_DEQUEUE" changes nothing on 6.6`},
		{"6.12", "RUN_TO_PARITY", "changes nothing on 6.12"},
		{"6.12", "+newidle-bailout", "6.12 already has it"},
		// Autogroups are on at boot: =1 is the baseline itself.
		{"6.12", "sched_autogroup_enabled=1", "changes nothing on 6.12"},
	} {
		if _, _, err := Apply(tc.base, mustParse(tc.change)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Apply(%s, %s) = %v, want %q", tc.base, tc.change, err, tc.err)
		}
	}
}
