package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestScenarioList(t *testing.T) {
	out, _, code := execute(t, "scenario")
	if code != 0 || !strings.Contains(out, "003-newidle-bailout") || strings.Count(out, "\n") != 5 {
		t.Errorf("exit %d, list:\n%s", code, out)
	}
}

// TestScenarioNewidleHeadline: seed 003's pair waits ~120 us for a CPU busy
// in newidle balancing without the patch, a few us with it, over several
// seeds: every run without the patch is slower than every run with it, so
// the result is the patch's, not the seed's.
func TestScenarioNewidleHeadline(t *testing.T) {
	var with, without []int64
	for _, seed := range []string{"1", "2", "3"} {
		out, stderr, code := execute(t, "scenario", "--format", "json", "--seed", seed, "newidle-bailout")
		if code != 0 {
			t.Fatalf("seed %s: exit %d: %s", seed, code, stderr)
		}
		var doc struct {
			Runs []struct {
				Policy    string           `json:"policy"`
				EngineMax map[string]int64 `json:"engine_latency_max_by_comm_ns"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Runs) != 2 || !strings.Contains(doc.Runs[1].Policy, "-newidle-bailout") {
			t.Fatalf("seed %s: runs %+v", seed, doc.Runs)
		}
		with, without = append(with, doc.Runs[0].EngineMax["ping"]), append(without, doc.Runs[1].EngineMax["ping"])
	}
	t.Logf("ping max latency: %v ns with the patch, %v ns without", with, without)
	if slices.Max(with) >= slices.Min(without) || slices.Min(without) < 50_000 || slices.Min(without) < 5*slices.Max(with) {
		t.Errorf("ping max latency %v ns with the patch vs %v ns without: want every run without above 50 us and 5x every run with", with, without)
	}
}

func TestScenarioUnknown(t *testing.T) {
	_, stderr, code := execute(t, "scenario", "nope")
	if code != 2 || !strings.Contains(stderr, "no scenario") {
		t.Errorf("exit %d, %q", code, stderr)
	}
}
