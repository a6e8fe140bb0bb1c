package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReleaseNextTo(t *testing.T) {
	// The real fixtures: a release line and a uname -a line.
	for trace, want := range map[string]string{
		"../fixtures/real/ftrace-oracle-busy/trace.txt.zst":  "6.18.44-fc-v1045",
		"../fixtures/real/qemu-juno-asym/trace.txt.zst":      "6.12.95+deb12-arm64",
		"../fixtures/real/qemu-smt8-pingpong":                "6.12.95+deb12-amd64",
		"../fixtures/real/ftrace-pipe-lost/trace.txt.gz":     "",
		"../fixtures/real/perf-hackbench-cyclictest/perf.gz": "6.18.44-fc-v1045",
	} {
		got, file, err := ReleaseNextTo(trace)
		if err != nil || got != want || (want != "" && filepath.Base(file) != MetaFileName) {
			t.Errorf("ReleaseNextTo(%s) = %q, %q, %v; want %q", trace, got, file, err, want)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, MetaFileName), []byte("host: x\nkernel: Linux\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReleaseNextTo(filepath.Join(dir, "trace.txt")); err == nil || !strings.Contains(err.Error(), "meta.txt:2: kernel line") {
		t.Errorf("bad kernel line: %v", err)
	}
}
