package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplayJSONAndOutput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "replayed.pftrace")
	stdout, stderr, code := execute(t, "replay", "--format", "json", "-o", out, fx+"ftrace-oracle-busy/trace.txt.zst")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Policy   string             `json:"policy"`
		Fidelity map[string]float64 `json:"fidelity"`
		Recorded runFigures         `json:"recorded"`
		Modeled  runFigures         `json:"modeled"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"wakeup_latency_p50_ratio", "wakeup_latency_p99_ratio", "runnable_ratio", "cpu_time_ratio", "migrations_ratio"} {
		if _, ok := doc.Fidelity[k]; !ok {
			t.Errorf("fidelity.%s missing", k)
		}
	}
	if doc.Modeled.CPUTimeNs == 0 || doc.Recorded.CPUTimeNs == 0 {
		t.Errorf("no CPU time: %+v / %+v", doc.Recorded, doc.Modeled)
	}
	// The modeled schedule reads back as a trace.
	if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
		t.Fatalf("replayed trace: %v", err)
	}
	back, stderr, code := execute(t, "tasks", "--format", "json", out)
	if code != 0 || !strings.Contains(back, `"format": "perfetto"`) {
		t.Errorf("reading the replayed trace: exit %d %s", code, stderr)
	}
}

func TestReplayDeterministic(t *testing.T) {
	a, _, _ := execute(t, "replay", "--format", "json", "--seed", "7", fx+"ftrace-pipe-lost/trace.txt.gz")
	b, _, _ := execute(t, "replay", "--format", "json", "--seed", "7", fx+"ftrace-pipe-lost/trace.txt.gz")
	if a != b || a == "" {
		t.Errorf("two replays with the same seed differ")
	}
}

func TestReplayBadPolicy(t *testing.T) {
	_, stderr, code := execute(t, "replay", "--kernel", "2.6", fx+"ftrace-pipe-lost/trace.txt.gz")
	if code != 2 || !strings.Contains(stderr, "policy") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
