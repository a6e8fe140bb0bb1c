package policies

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		in       string
		name     string // canonical String
		has      Feature
		hasNot   Feature
		with     Patch
		without  Patch
		errMatch string
	}{
		{in: "6.12", name: "6.12", has: FeatRunToParity | FeatDelayDequeue, with: PatchNewidleBailout | PatchLBUtilShrBound, without: PatchLBEligibleFirst},
		{in: "v6.6", name: "6.6", hasNot: FeatDelayDequeue | FeatPreemptShort, with: PatchNewidleBailout, without: PatchLBUtilShrBound},
		{in: "mainline-6.18", name: "6.18", has: FeatProtectVprot, with: PatchLBEligibleFirst | PatchLBUtilShrBound | PatchNewidleBailout},
		{in: "6.12,+resched-ineligible,NO_RUN_TO_PARITY", name: "6.12,+resched-ineligible,NO_RUN_TO_PARITY", hasNot: FeatRunToParity, with: PatchReschedIneligible},
		{in: "6.12+lb-eligible-first-newidle-bailout", name: "6.12,+lb-eligible-first,-newidle-bailout", with: PatchLBEligibleFirst, without: PatchNewidleBailout},
		{in: "6.18 -lb-eligible-first", name: "6.18,-lb-eligible-first", without: PatchLBEligibleFirst},
		{in: "6.12,NO_CORE_SYNC,+coresched-idle-ipi", name: "6.12,+coresched-idle-ipi,NO_CORE_SYNC", hasNot: FeatCoreSync, with: PatchCoreschedIdleIPI},
		{in: "6.6,LB_MIN", name: "6.6,LB_MIN", has: FeatLBMin},
		{in: "6.12,base_slice_ns=3000000,NO_RUN_TO_PARITY", name: "6.12,NO_RUN_TO_PARITY,base_slice_ns=3000000", hasNot: FeatRunToParity},
		{in: "6.6,nr_migrate=8,migration_cost_ns=0", name: "6.6,migration_cost_ns=0,nr_migrate=8"},
		{in: "6.12,base_slice_ns=0", errMatch: "base_slice_ns=0: want 1..4294967295"},
		{in: "6.12,nr_migrate=x", errMatch: `nr_migrate: "x" is not an integer`},
		{in: "6.12,sched_latency_ns=1", errMatch: `unknown tunable "sched_latency_ns": want one of base_slice_ns, migration_cost_ns, nr_migrate`},
		{in: "5.10", errMatch: `unknown kernel version "5.10"`},
		{in: "", errMatch: "empty policy"},
		{in: "6.12,+fast", errMatch: `unknown patch "fast"`},
		{in: "6.12,NO_FOO", errMatch: `unknown feature "NO_FOO"`},
		{in: "6.12,newidle-bailout", errMatch: `is a patch: write \+newidle-bailout`},
		// A sign that would change nothing is an error naming the other.
		{in: "6.12,+newidle-bailout", errMatch: "+newidle-bailout: 6.12 already has it (upstream: in 6.6, 6.12 and 6.18 (since about v6.0)); to model 6.12 without it, write -newidle-bailout"},
		{in: "6.12+lb-util-shr-bound", errMatch: "6.12 already has it"},
		{in: "6.12,-lb-eligible-first", errMatch: "-lb-eligible-first: 6.12 does not have it (upstream: in 6.18, not in 6.12 (task_is_ineligible_on_dst_cpu)); to model 6.12 with it, write +lb-eligible-first"},
		{in: "6.18,-resched-ineligible", errMatch: "write +resched-ineligible"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			cfg, err := Parse(tc.in)
			if tc.errMatch != "" {
				if err == nil || !strings.Contains(err.Error(), strings.ReplaceAll(tc.errMatch, `\`, "")) {
					t.Fatalf("Parse(%q) = %v, want error %q", tc.in, err, tc.errMatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.String(); got != tc.name {
				t.Errorf("String = %q, want %q", got, tc.name)
			}
			if cfg.Features&tc.has != tc.has || cfg.Features&tc.hasNot != 0 {
				t.Errorf("features = %v", cfg.Features.Names())
			}
			if cfg.Patches&tc.with != tc.with || cfg.Patches&tc.without != 0 {
				t.Errorf("patches = %v", cfg.Patches.Names())
			}
			back, err := Parse(cfg.String())
			if err != nil || back != cfg {
				t.Errorf("Parse(String()) = %+v, %v, want %+v", back, err, cfg)
			}
		})
	}
}

func TestPatchesAndScenarios(t *testing.T) {
	if len(Patches) != 5 {
		t.Fatalf("%d patches, want 5", len(Patches))
	}
	names := ScenarioNames()
	for i, p := range Patches {
		if p.Seed != []string{"000", "001", "002", "003", "004"}[i] {
			t.Errorf("patch %d seed %q", i, p.Seed)
		}
		sp, err := Scenario(p.Name)
		if err != nil {
			t.Errorf("scenario of %s: %v", p.Name, err)
			continue
		}
		if sp.Topology == nil || sp.Policy == "" || !strings.HasPrefix(p.Scenario, p.Seed) {
			t.Errorf("scenario %s: topology %v policy %q", p.Scenario, sp.Topology != nil, sp.Policy)
		}
		found := false
		for _, n := range names {
			found = found || n == p.Scenario
		}
		if !found {
			t.Errorf("scenario %s not in %v", p.Scenario, names)
		}
	}
	if _, err := Scenario("999"); err == nil {
		t.Errorf("Scenario(999) succeeded")
	}
}

func TestTunablesReachTheModel(t *testing.T) {
	const w = "topology symmetric 2\nend 1ms\ntask a\n  run 10us\n"
	_, _, m := run(t, w, "6.12,base_slice_ns=3000000,migration_cost_ns=0,nr_migrate=8", 0)
	if m.baseSlice != 3_000_000 || m.migCost != 0 || m.nrMigrate != 8 {
		t.Errorf("base slice %d, migration cost %d, nr_migrate %d; want 3000000 (unscaled), 0, 8", m.baseSlice, m.migCost, m.nrMigrate)
	}
	_, _, m = run(t, w, "6.12", 0)
	if m.baseSlice != 1_500_000 || m.migCost != 500_000 || m.nrMigrate != 32 {
		t.Errorf("defaults: base slice %d, migration cost %d, nr_migrate %d; want 1500000, 500000, 32", m.baseSlice, m.migCost, m.nrMigrate)
	}
}

func TestBaseSlice(t *testing.T) {
	// sysctl_sched_base_slice: 0.75 ms x (1 + ilog2(min(CPUs, 8))).
	tests := []struct {
		ncpu int
		want int64
	}{{1, 750_000}, {2, 1_500_000}, {3, 1_500_000}, {4, 2_250_000}, {7, 2_250_000}, {8, 3_000_000}, {64, 3_000_000}}
	for _, tc := range tests {
		_, _, m := run(t, "topology symmetric "+strconv.Itoa(tc.ncpu)+"\nend 1ms\ntask a\n  run 10us\n", "6.12", 0)
		if m.baseSlice != tc.want {
			t.Errorf("%d CPUs: base slice %d, want %d", tc.ncpu, m.baseSlice, tc.want)
		}
	}
}
