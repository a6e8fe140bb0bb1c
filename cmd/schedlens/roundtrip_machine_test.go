package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A trace converted to Perfetto keeps its machine: the topology (SMT
// siblings, LLCs, nodes, capacities) and the trace clock come back, so every
// figure of the report (top tasks, latency, idle, misplaced, the topology
// and window) is the same on the converted trace as on the source, for every
// real fixture.
func TestConvertKeepsTopologyAndClock(t *testing.T) {
	fixtures := []string{
		"ftrace-hackbench-cyclictest/trace.txt.gz",
		"ftrace-hackbench-quiet/trace.txt.zst",
		"ftrace-oracle-busy/trace.txt.zst",
		"ftrace-oracle-busy/trace.dat.zst",
		"ftrace-overflow/trace.txt.gz",
		"ftrace-pipe-lost/trace.txt.gz",
		"perf-hackbench-cyclictest/perf-script.txt.gz",
		"perf-hackbench-cyclictest/perf.data.zst",
		"perfetto-from-ftrace-hackbench-cyclictest/trace.pftrace.zst",
		"perfetto-tracebox-hackbench-plain/trace.pftrace.zst",
		"perfetto-tracebox-oracle-busy/trace.pftrace.zst",
		"qemu-juno-asym/trace.txt.zst",
		"qemu-smt8-hackbench/trace.txt.zst",
		"qemu-smt8-pingpong/trace.txt.zst",
	}
	dir := t.TempDir()
	for _, f := range fixtures {
		t.Run(f, func(t *testing.T) {
			in := fx + f
			out := filepath.Join(dir, strings.ReplaceAll(f, "/", "-")+".pftrace")
			if _, stderr, code := execute(t, "convert", in, "-o", out); code != 0 {
				t.Fatalf("convert: exit %d: %s", code, stderr)
			}
			src, back := reportJSON(t, in), reportJSON(t, out)
			wantClock := src["trace"].(map[string]any)["clock"]
			if wantClock == nil {
				wantClock = metaClock(t, in)
			}
			if got := back["trace"].(map[string]any)["clock"]; got != wantClock {
				t.Errorf("clock %v after the round trip, want %v", got, wantClock)
			}
			st, bt := src["topology"].(map[string]any), back["topology"].(map[string]any)
			for _, k := range []string{"cpus", "summary", "domains"} {
				if !reflect.DeepEqual(st[k], bt[k]) {
					t.Errorf("topology %s after the round trip:\n %v\nwant\n %v", k, bt[k], st[k])
				}
			}
			for _, k := range []string{"window", "top_tasks", "latency", "idle", "misplaced"} {
				if !reflect.DeepEqual(src[k], back[k]) {
					t.Errorf("report %s differs after the round trip", k)
				}
			}
		})
	}
}

// The modeled schedule `replay -o` writes keeps the recording's topology
// and clock: an SMT guest stays 4 cores x 2 threads, on the mono clock.
func TestReplayOutputKeepsTopologyAndClock(t *testing.T) {
	in := fx + "qemu-smt8-pingpong/trace.txt.zst"
	out := filepath.Join(t.TempDir(), "modeled.pftrace")
	if _, stderr, code := execute(t, "replay", "-o", out, in); code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	src, back := reportJSON(t, in), reportJSON(t, out)
	st, bt := src["topology"].(map[string]any), back["topology"].(map[string]any)
	for _, k := range []string{"cpus", "summary", "domains"} {
		if !reflect.DeepEqual(st[k], bt[k]) {
			t.Errorf("topology %s of the modeled schedule:\n %v\nwant\n %v", k, bt[k], st[k])
		}
	}
	if got := back["trace"].(map[string]any)["clock"]; got != "mono" {
		t.Errorf("clock %v of the modeled schedule, want mono (meta.txt)", got)
	}
}

func reportJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	out, stderr, code := execute(t, "report", "--format", "json", path)
	if code != 0 {
		t.Fatalf("report %s: exit %d: %s", path, code, stderr)
	}
	return decodeJSON(t, out)
}

// metaClock is the "clock:" line of the meta.txt next to a trace, or nil.
func metaClock(t *testing.T, path string) any {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(path), "meta.txt"))
	if err != nil {
		return nil
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "clock:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return nil
}
