package abfixture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRuns(t *testing.T) {
	dir := t.TempDir()
	mk := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("base-1/trace.txt.zst")
	mk("base-1/trace.pftrace") // the text trace comes first
	mk("base-2/trace.pftrace.zst")
	mk("base-4/trace.txt") // after a gap: not a run
	got, err := Runs(dir, "base")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "base-1/trace.txt.zst"), filepath.Join(dir, "base-2/trace.pftrace.zst")}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Runs = %v, want %v", got, want)
	}
	mk("new-1/meta.txt")
	if _, err := Runs(dir, "new"); err == nil || !strings.Contains(err.Error(), "new-1: no trace") {
		t.Errorf("a run folder without a trace: err %v", err)
	}
	if got, err := Runs(dir, "none"); err != nil || len(got) != 0 {
		t.Errorf("no run folder: %v, %v", got, err)
	}
}
