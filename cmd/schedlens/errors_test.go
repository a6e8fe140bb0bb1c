package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func init() {
	// The tests' own standard input may be a pipe: commands given no
	// TRACE must analyse the built-in trace unless a test says otherwise.
	stdinFile = nil
}

// fixtureText returns the decompressed text of a gzip fixture.
func fixtureText(t *testing.T, path string) []byte {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// "(use --lenient ...)" is offered only where skipping a record can help.
func TestLenientHintOnlyForRecords(t *testing.T) {
	dir := t.TempDir()
	text := fixtureText(t, fx+"ftrace-hackbench-cyclictest/trace.txt.gz")
	bad := bytes.Replace(text, []byte("prev_pid=12886"), []byte("prev_pid=12x86"), 1)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name, path string
		hint       bool
	}{
		{"missing file", filepath.Join(dir, "none.txt"), false},
		{"directory", dir, false},
		{"empty file", write("empty.txt", nil), false},
		{"unrecognized", write("notes.txt", []byte("shopping list\neggs\n")), false},
		{"malformed record", write("bad.txt", bad), true},
	} {
		_, stderr, code := execute(t, "tasks", c.path)
		if code == 0 {
			t.Errorf("%s: exit 0", c.name)
		}
		if got := strings.Contains(stderr, "--lenient"); got != c.hint {
			t.Errorf("%s: offers --lenient = %v, want %v: %s", c.name, got, c.hint, stderr)
		}
	}
	if _, stderr, code := execute(t, "tasks", "--lenient", filepath.Join(dir, "bad.txt")); code != 0 || !strings.Contains(stderr, "1 malformed records skipped") {
		t.Errorf("malformed record with --lenient: exit %d: %s", code, stderr)
	}
}

// Errors about the -o file name the path the user gave, not the temporary
// file written beside it.
func TestOutputErrorNamesUserPath(t *testing.T) {
	dir := t.TempDir()
	trace := fx + "ftrace-hackbench-cyclictest/trace.txt.gz"
	for _, out := range []string{filepath.Join(dir, "no-such-dir", "x.pftrace"), dir} {
		for _, args := range [][]string{{"convert", trace, "-o", out}, {"replay", "-o", out, fx + "ftrace-hackbench-quiet/trace.txt.zst"}} {
			_, stderr, code := execute(t, args...)
			if code == 0 || !strings.Contains(stderr, "-o "+out+":") || strings.Contains(stderr, ".tmp") {
				t.Errorf("%v: exit %d, stderr %q: want an error naming -o %s and no temporary file", args, code, stderr, out)
			}
		}
	}
}

// `... | schedlens report` reads the pipe, not the built-in trace.
func TestReportReadsPipedStdin(t *testing.T) {
	data, err := os.ReadFile(fx + "ftrace-hackbench-quiet/trace.txt.zst")
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		pw.Write(data)
		pw.Close()
	}()
	stdinFile = pr
	defer func() { stdinFile = nil; pr.Close() }()
	piped, stderr, code := execute(t, "tasks", "--format", "json", "-")
	if code != 0 {
		t.Fatalf("tasks -: exit %d: %s", code, stderr)
	}
	pr2, pw2, _ := os.Pipe()
	go func() {
		pw2.Write(data)
		pw2.Close()
	}()
	stdinFile = pr2
	out, stderr, code := execute(t, "report", "--format", "json")
	pr2.Close()
	if code != 0 {
		t.Fatalf("report from a pipe: exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "no TRACE given") || strings.Contains(out, "hackbench-cyclictest") {
		t.Errorf("report with a trace on stdin analysed the built-in trace: %s", stderr)
	}
	m, want := decodeJSON(t, out), decodeJSON(t, piped)
	if g, w := m["trace"].(map[string]any)["events"], want["trace"].(map[string]any)["events"]; g != w || g == nil {
		t.Errorf("report read %v events from the pipe, tasks %v", g, w)
	}
	stdinFile = nil
	if _, stderr, _ := execute(t, "report"); !strings.Contains(stderr, "no TRACE given") {
		t.Errorf("report with no pipe does not analyse the built-in trace: %s", stderr)
	}
}

// A truncated compressed trace under --lenient gives what decompressed and
// a warning; without it, an error that offers --lenient.
func TestLenientTruncatedCompressed(t *testing.T) {
	dir := t.TempDir()
	for _, src := range []string{"ftrace-hackbench-cyclictest/trace.txt.gz", "ftrace-hackbench-quiet/trace.txt.zst"} {
		data, err := os.ReadFile(fx + src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "cut-"+filepath.Base(src))
		if err := os.WriteFile(p, data[:len(data)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := execute(t, "tasks", p)
		if code == 0 || !strings.Contains(stderr, "--lenient") {
			t.Errorf("%s cut in half: exit %d, stderr %q: want an error offering --lenient", src, code, stderr)
		}
		out, stderr, code := execute(t, "tasks", "--lenient", "--format", "json", p)
		if code != 0 || !strings.Contains(stderr, "truncated") {
			t.Fatalf("%s cut in half, --lenient: exit %d, stderr %q: want the events that decompressed and a warning", src, code, stderr)
		}
		full, _, _ := execute(t, "tasks", "--format", "json", fx+src)
		got := decodeJSON(t, out)["trace"].(map[string]any)["events"].(float64)
		all := decodeJSON(t, full)["trace"].(map[string]any)["events"].(float64)
		if got < all/4 || got >= all {
			t.Errorf("%s cut in half, --lenient: %v events of %v", src, got, all)
		}
		if _, stderr, code := execute(t, "convert", "--lenient", p, "-o", p+".pftrace"); code != 0 || !strings.Contains(stderr, "truncated") {
			t.Errorf("convert --lenient %s cut in half: exit %d, stderr %q: want the events that decompressed and a warning", src, code, stderr)
		}
	}
}
