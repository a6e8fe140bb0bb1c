package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestWhatifCommand(t *testing.T) {
	const tr = "../../fixtures/ab/hackbench-2cpu/base-1/trace.txt.zst"
	out, errOut, code := execute(t, "whatif", "--change", "NO_RUN_TO_PARITY", "--runs", "2", "--format", "json", tr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Baseline struct{ Policy string } `json:"baseline"`
		WhatIf   struct{ Policy string } `json:"whatif"`
		Runs     int                     `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	// The baseline is the recorded kernel's model (6.12.95 in meta.txt).
	if doc.Baseline.Policy != "6.12" || doc.WhatIf.Policy != "6.12,NO_RUN_TO_PARITY" || doc.Runs != 2 {
		t.Errorf("baseline %q what-if %q runs %d", doc.Baseline.Policy, doc.WhatIf.Policy, doc.Runs)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--change", "NO_TTWU_QUEUE"}, "the model implements no such knob; want a patch"},
		{[]string{"--change", "sched_latency_ns=3"}, "a debugfs tunable (base_slice_ns=N, migration_cost_ns=N, nr_migrate=N)"},
		{[]string{}, "give at least one --change"},
		{[]string{"--change", "NO_PLACE_LAG", "--runs", "1"}, "at least 2"},
	} {
		_, errOut, code := execute(t, append(append([]string{"whatif"}, tc.args...), tr)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want usage error containing %q", tc.args, code, errOut, tc.want)
		}
	}
}
