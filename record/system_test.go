package record

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestReadSysctls: the modeled sysctls as "kernel.name=value"; one the
// kernel lacks is left out.
func TestReadSysctls(t *testing.T) {
	dir := t.TempDir()
	if got := readSysctls(dir); len(got) != 0 {
		t.Errorf("no files: %q", got)
	}
	if err := os.MkdirAll(filepath.Join(dir, "kernel"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kernel", "sched_autogroup_enabled"), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := readSysctls(dir), []string{"kernel.sched_autogroup_enabled=0"}; !slices.Equal(got, want) {
		t.Errorf("readSysctls = %q, want %q", got, want)
	}
}
