package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"google.golang.org/protobuf/encoding/protowire"
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
	// The baseline is the recorded kernel's model: 6.12.95 in meta.txt,
	// whose sched_state reports base_slice_ns 1400000 (0.70 ms x 2, where
	// 6.12.0 had 0.75 ms).
	if doc.Baseline.Policy != "6.12,base_slice_ns=1400000" || doc.WhatIf.Policy != "6.12,NO_RUN_TO_PARITY,base_slice_ns=1400000" || doc.Runs != 2 {
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

// TestWhatifAutogroupBaseline: a recording made with autogroups off says so
// in meta.txt or in the trace itself (schedlens record writes the sysctl);
// either way the baseline has them off, so turning them on is a change.
func TestWhatifAutogroupBaseline(t *testing.T) {
	const src = "../../fixtures/ab/hogs-cyclictest-host"
	// meta.txt next to the run: sysctls=kernel.sched_autogroup_enabled=0.
	out, errOut, code := execute(t, "whatif", "--change", "sched_autogroup_enabled=1", "--runs", "2", "--format", "json", src+"/autogroup_off/new-1/trace.pftrace.zst")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Baseline struct{ Policy string } `json:"baseline"`
		WhatIf   struct{ Policy string } `json:"whatif"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Baseline.Policy != "6.18,sched_autogroup_enabled=0" || doc.WhatIf.Policy != "6.18" {
		t.Errorf("from meta.txt: baseline %q what-if %q", doc.Baseline.Policy, doc.WhatIf.Policy)
	}

	// The same trace without its meta.txt, with the sysctl in schedlens'
	// machine packet (TracePacket field 9871, sysctl = 3) appended.
	raw, err := os.ReadFile(src + "/autogroup_off/new-1/trace.pftrace.zst")
	if err != nil {
		t.Fatal(err)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	trace, err := dec.DecodeAll(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	machine := protowire.AppendString(protowire.AppendTag(nil, 3, protowire.BytesType), "kernel.sched_autogroup_enabled=0")
	packet := protowire.AppendBytes(protowire.AppendTag(nil, 9871, protowire.BytesType), machine)
	plain := trace
	trace = protowire.AppendBytes(protowire.AppendTag(slices.Clip(trace), 1, protowire.BytesType), packet)
	dir := t.TempDir()
	with := filepath.Join(dir, "with.pftrace")
	if err := os.WriteFile(with, trace, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = execute(t, "whatif", "--change", "sched_autogroup_enabled=1", "--runs", "2", with)
	if code != 0 || !strings.Contains(out, "baseline: 6.18,sched_autogroup_enabled=0") {
		t.Errorf("sysctl in the trace: exit %d, stderr %q, output:\n%s", code, errOut, out)
	}
	// Without either, autogroups are on: turning them on changes nothing.
	if err := os.WriteFile(with, plain, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code = execute(t, "whatif", "--change", "sched_autogroup_enabled=1", "--runs", "2", with); code != 2 || !strings.Contains(errOut, "changes nothing on 6.18") {
		t.Errorf("no sysctl anywhere: exit %d, %q", code, errOut)
	}
}
