package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestProfileFlags runs a command with --cpuprofile and --memprofile and
// checks both files are pprof profiles (gzip-compressed protobuf), that the
// output is the same as without them, and that an unwritable path is an
// error naming the flag.
func TestProfileFlags(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	in := fx + "ftrace-pipe-lost/trace.txt.gz"
	plain, _, code := execute(t, "tasks", "--format", "json", in)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	out, stderr, code := execute(t, "tasks", "--format", "json", "--cpuprofile", cpu, "--memprofile", mem, in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if out != plain {
		t.Errorf("the output changed with the profile flags")
	}
	for _, f := range []string{cpu, mem} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			t.Errorf("%s: %d bytes, not a gzip-compressed pprof profile", filepath.Base(f), len(b))
		}
	}
	_, stderr, code = execute(t, "tasks", "--cpuprofile", filepath.Join(dir, "no", "such", "dir"), in)
	if code != 1 || !strings.Contains(stderr, "--cpuprofile") {
		t.Errorf("unwritable --cpuprofile: exit %d, stderr %q; want exit 1 naming the flag", code, stderr)
	}
}

// TestCollectOften: replay's collector runs at half the heap's growth,
// unless the user set GOGC.
func TestCollectOften(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	restore := collectOften()
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("GC percent %d, want 50", got)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d once put back, want 100", got)
	}
	t.Setenv("GOGC", "100")
	collectOften()()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set: GC percent %d, want 100", got)
	}
}
