package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutputTargets: issue 16 item 1. Every command that writes a file
// (convert, replay -o, report --samples, topology capture -o) leaves a
// non-regular target in place, keeps a replaced file's mode, writes "-" to
// stdout and refuses to overwrite its input.
func TestOutputTargets(t *testing.T) {
	in := fx + "ftrace-oracle-busy/trace.txt.zst"
	small := fx + "ftrace-oracle-busy/trace.txt.zst"
	d := t.TempDir()
	fifo := func(name string) string {
		p := filepath.Join(d, name)
		if err := syscall.Mkfifo(p, 0o666); err != nil {
			t.Fatal(err)
		}
		go func() {
			r, err := os.Open(p)
			if err == nil {
				buf := make([]byte, 1<<16)
				for {
					if _, err := r.Read(buf); err != nil {
						break
					}
				}
				r.Close()
			}
		}()
		return p
	}
	cases := []struct {
		name string
		args func() []string
		out  func() string
	}{
		{"convert", func() []string { return []string{"convert", in, "-o", fifo("convert.fifo")} }, nil},
		{"replay -o", func() []string { return []string{"replay", small, "-o", fifo("replay.fifo")} }, nil},
		{"report --samples", func() []string { return []string{"report", small, "--samples", fifo("samples.csv")} }, nil},
	}
	for _, c := range cases {
		args := c.args()
		target := args[len(args)-1]
		if _, stderr, code := execute(t, args...); code != 0 {
			t.Errorf("%s: exit %d: %s", c.name, code, stderr)
		}
		fi, err := os.Lstat(target)
		if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("%s -o FIFO: the FIFO became %v (%v)", c.name, fi.Mode(), err)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(d, ".*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}

	// A 0600 output stays 0600 when replaced.
	priv := filepath.Join(d, "private.pftrace")
	os.WriteFile(priv, nil, 0o600)
	if _, stderr, code := execute(t, "convert", in, "-o", priv); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	if fi, _ := os.Stat(priv); fi.Mode().Perm() != 0o600 {
		t.Errorf("convert over a 0600 file left mode %v", fi.Mode().Perm())
	}

	// The input as output is an error, and the input survives.
	cp := filepath.Join(d, "copy.txt.zst")
	b, _ := os.ReadFile(in)
	os.WriteFile(cp, b, 0o644)
	_, stderr, code := execute(t, "convert", cp, "-o", cp)
	if code == 0 || !strings.Contains(stderr, "input") {
		t.Errorf("convert IN -o IN: exit %d: %s", code, stderr)
	}
	if after, _ := os.ReadFile(cp); len(after) != len(b) {
		t.Errorf("convert IN -o IN changed the input: %d bytes, was %d", len(after), len(b))
	}

	// -o - writes the trace to stdout.
	out, stderr, code := execute(t, "convert", in, "-o", "-")
	if code != 0 || len(out) < 1000 {
		t.Errorf("convert -o -: exit %d, %d bytes on stdout: %s", code, len(out), stderr)
	}
}
