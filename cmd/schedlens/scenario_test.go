package main

import (
	"encoding/json"
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
// in newidle balancing without the patch, a few us with it.
func TestScenarioNewidleHeadline(t *testing.T) {
	out, stderr, code := execute(t, "scenario", "--format", "json", "newidle-bailout")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
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
	if len(doc.Runs) != 2 {
		t.Fatalf("%d runs", len(doc.Runs))
	}
	with, without := doc.Runs[0].EngineMax["ping"], doc.Runs[1].EngineMax["ping"]
	if !strings.Contains(doc.Runs[1].Policy, "-newidle-bailout") || without < 5*with || without < 50_000 {
		t.Errorf("ping max latency %d ns (%s) vs %d ns (%s)", with, doc.Runs[0].Policy, without, doc.Runs[1].Policy)
	}
}

func TestScenarioUnknown(t *testing.T) {
	_, stderr, code := execute(t, "scenario", "nope")
	if code != 2 || !strings.Contains(stderr, "no scenario") {
		t.Errorf("exit %d, %q", code, stderr)
	}
}
