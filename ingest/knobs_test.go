package ingest

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestKnobsNextTo(t *testing.T) {
	for _, tc := range []struct {
		name, meta string
		want       Knobs
		err        string
	}{
		{"none", "kernel: 6.12.95\n", Knobs{}, ""},
		{"defaults", "sched_knobs: features= debugfs= sysctls=\n", Knobs{}, ""},
		{"all", "kernel: 6.12.118\nsched_knobs: features=NO_RUN_TO_PARITY NO_PLACE_LAG debugfs=base_slice_ns=3000000 migration_cost_ns=0 sysctls=kernel.sched_autogroup_enabled=0\nsched_patches: -newidle-bailout +resched-ineligible\n",
			Knobs{Features: []string{"NO_RUN_TO_PARITY", "NO_PLACE_LAG"}, Tunables: []string{"base_slice_ns=3000000", "migration_cost_ns=0"},
				Sysctls: []string{"kernel.sched_autogroup_enabled=0"}, Patches: []string{"-newidle-bailout", "+resched-ineligible"}}, ""},
		{"orphan", "sched_knobs: NO_RUN_TO_PARITY\n", Knobs{}, "meta.txt:1: sched_knobs: \"NO_RUN_TO_PARITY\" before features="},
		{"tunable without value", "\nsched_knobs: features= debugfs=base_slice_ns\n", Knobs{}, "meta.txt:2: sched_knobs: \"base_slice_ns\": want name=value"},
		{"bad patch", "sched_patches: newidle-bailout\n", Knobs{}, "meta.txt:1: sched_patches: \"newidle-bailout\": want +name or -name"},
		{"model features", "sched_knobs: features= debugfs= sysctls=\nsched_patches: +coresched-idle-ipi\nsched_model_features: NO_CORE_SYNC\n",
			Knobs{Patches: []string{"+coresched-idle-ipi"}, ModelFeatures: []string{"NO_CORE_SYNC"}}, ""},
		{"empty model features", "sched_patches:\nsched_model_features:\n", Knobs{}, ""},
		{"bad model feature", "sched_model_features: NO_CORE_SYNC core_sync\n", Knobs{}, "meta.txt:1: sched_model_features: \"core_sync\": want a feature name"},
		{"model feature tunable", "\n\nsched_model_features: base_slice_ns=1\n", Knobs{}, "meta.txt:3: sched_model_features: \"base_slice_ns=1\": want a feature name"},
		// The line tools/qemu's guest-init.sh writes (a 6.12.95 guest, 2
		// CPUs): the base slice always, the other two only off their
		// defaults; the feature list and the preemption mode are not
		// tunables of the model.
		{"state", "sched_state: sched_features: PLACE_LAG RUN_TO_PARITY ;sched_base_slice_ns: 1400000;sched_migration_cost_ns: 500000;sched_nr_migrate: 32;sched_preempt: none (voluntary) full ;sched_autogroup_enabled: 1;\n",
			Knobs{Reported: []string{"base_slice_ns=1400000"}}, ""},
		{"state off defaults", "sched_state: sched_base_slice_ns: 3000000;sched_migration_cost_ns: 0;sched_nr_migrate: 8;\n",
			Knobs{Reported: []string{"base_slice_ns=3000000", "migration_cost_ns=0", "nr_migrate=8"}}, ""},
		// base_slice_3ms's new runs: the capture set the slice, and
		// sched_state shows it; it stays the capture's tunable.
		{"state set by the capture", "sched_state: sched_base_slice_ns: 3000000;sched_nr_migrate: 8;\nsched_knobs: features= debugfs=base_slice_ns=3000000 sysctls=\n",
			Knobs{Tunables: []string{"base_slice_ns=3000000"}, Reported: []string{"nr_migrate=8"}}, ""},
		{"state out of range", "sched_state: sched_base_slice_ns: 99999999999;sched_nr_migrate: -1;sched_migration_cost_ns: x;\n", Knobs{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, MetaFileName)
			if err := os.WriteFile(file, []byte(tc.meta), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := KnobsNextTo(filepath.Join(dir, "trace.txt.zst"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Empty() {
				tc.want.File = file
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if k, err := KnobsNextTo(filepath.Join(t.TempDir(), "trace.txt")); err != nil || !k.Empty() {
		t.Errorf("no meta.txt: %+v, %v; want no knobs", k, err)
	}
}

// TestMergeSysctls: a trace's sysctls fill in what meta.txt does not set;
// meta.txt's own value wins.
func TestMergeSysctls(t *testing.T) {
	k := Knobs{Sysctls: []string{"kernel.sched_autogroup_enabled=0"}}
	if n := k.MergeSysctls([]string{"kernel.sched_autogroup_enabled=1", "kernel.other=3"}); n != 1 {
		t.Errorf("added %d, want 1", n)
	}
	if want := []string{"kernel.sched_autogroup_enabled=0", "kernel.other=3"}; !slices.Equal(k.Sysctls, want) {
		t.Errorf("Sysctls %q, want %q", k.Sysctls, want)
	}
	var empty Knobs
	if n := empty.MergeSysctls([]string{"kernel.sched_autogroup_enabled=0"}); n != 1 || empty.Empty() {
		t.Errorf("into no knobs: added %d, %+v", n, empty)
	}
}
