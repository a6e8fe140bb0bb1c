package outfile

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, path string, o Options, data string) error {
	t.Helper()
	f, err := Create(path, o)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

func tmpFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".*"))
	return m
}

// A device node is written in place: it stays a device (the reproduction
// of issue 16 item 1 turned a copy of /dev/null into a regular file).
func TestDeviceWrittenInPlace(t *testing.T) {
	d := t.TempDir()
	null := filepath.Join(d, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, int(1<<8|3)); err != nil {
		// Unprivileged: a FIFO is the non-regular file anyone can make.
		if err := syscall.Mkfifo(null, 0o666); err != nil {
			t.Fatal(err)
		}
		go func() {
			r, err := os.Open(null)
			if err == nil {
				io.Copy(io.Discard, r)
				r.Close()
			}
		}()
	}
	before, _ := os.Lstat(null)
	if err := write(t, null, Options{}, strings.Repeat("x", 1<<20)); err != nil {
		t.Fatal(err)
	}
	after, err := os.Lstat(null)
	if err != nil {
		t.Fatal(err)
	}
	if after.Mode().IsRegular() || after.Mode().Type() != before.Mode().Type() {
		t.Fatalf("%s became %v, was %v", null, after.Mode(), before.Mode())
	}
	if m := tmpFiles(t, d); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}

// A full device reports the error instead of a rename hiding it.
func TestFullDeviceReportsError(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	err := write(t, "/dev/full", Options{}, "trace")
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("writing /dev/full: got %v, want ENOSPC", err)
	}
}

// A symlink into /proc (as /dev/stdout is) is written through, and stays
// a symlink.
func TestProcSymlinkWrittenThrough(t *testing.T) {
	d := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	link := filepath.Join(d, "stdout")
	if err := os.Symlink("/proc/self/fd/"+strconv.Itoa(int(w.Fd())), link); err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() { b, _ := io.ReadAll(r); got <- string(b) }()
	if err := write(t, link, Options{}, "hello"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if s := <-got; s != "hello" {
		t.Fatalf("pipe got %q", s)
	}
	if li, _ := os.Lstat(link); li.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symlink: %v", link, li.Mode())
	}
}

// A symlink to a regular file keeps pointing at it; the file is replaced.
func TestSymlinkToRegularFile(t *testing.T) {
	d := t.TempDir()
	real := filepath.Join(d, "run3.pftrace")
	os.WriteFile(real, []byte("old"), 0o600)
	link := filepath.Join(d, "latest.pftrace")
	os.Symlink("run3.pftrace", link)
	if err := write(t, link, Options{}, "new"); err != nil {
		t.Fatal(err)
	}
	if li, _ := os.Lstat(link); li.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symlink", link)
	}
	b, _ := os.ReadFile(real)
	if string(b) != "new" {
		t.Fatalf("%s holds %q", real, b)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
}

// An existing file keeps its mode; a new one follows the umask.
func TestModes(t *testing.T) {
	d := t.TempDir()
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	priv := filepath.Join(d, "private.pftrace")
	os.WriteFile(priv, []byte("x"), 0o600)
	os.Chmod(priv, 0o600)
	if err := write(t, priv, Options{}, "y"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(priv); fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced 0600 file has mode %v", fi.Mode().Perm())
	}
	fresh := filepath.Join(d, "new.pftrace")
	if err := write(t, fresh, Options{}, "y"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o640 {
		t.Errorf("new file with umask 027 has mode %v, want 0640", fi.Mode().Perm())
	}
}

// The output may not be an input, under its own name or another.
func TestOutputIsInput(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "trace.txt")
	os.WriteFile(in, []byte("data"), 0o644)
	hard := filepath.Join(d, "other.txt")
	os.Link(in, hard)
	for _, out := range []string{in, hard, filepath.Join(d, ".", "trace.txt")} {
		err := write(t, out, Options{Inputs: []string{in}}, "clobber")
		if err == nil || !strings.Contains(err.Error(), "input") {
			t.Errorf("-o %s with input %s: got %v", out, in, err)
		}
	}
	if b, _ := os.ReadFile(in); string(b) != "data" {
		t.Fatalf("input overwritten: %q", b)
	}
}

func TestStdoutAndDirectory(t *testing.T) {
	var sb strings.Builder
	if err := write(t, "-", Options{Stdout: &sb}, "abc"); err != nil || sb.String() != "abc" {
		t.Fatalf("-: %v %q", err, sb.String())
	}
	if err := write(t, "-", Options{}, "abc"); err == nil {
		t.Fatal("- without Stdout accepted")
	}
	d := t.TempDir()
	if err := write(t, d, Options{}, "abc"); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("directory: %v", err)
	}
}

// Abort leaves an existing target as it was and no temporary file.
func TestAbortKeepsTarget(t *testing.T) {
	d := t.TempDir()
	p := filepath.Join(d, "out")
	os.WriteFile(p, []byte("old"), 0o644)
	f, err := Create(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "partial")
	f.Abort()
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("target changed: %q", b)
	}
	if m := tmpFiles(t, d); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}

// SIGINT and SIGTERM during a write remove the temporary file (the
// reproduction left a 237 MB .OUT.NNN.tmp behind).
func TestSignalRemovesTemp(t *testing.T) {
	if os.Getenv("OUTFILE_HELPER") != "" {
		f, err := Create(os.Getenv("OUTFILE_HELPER"), Options{RemoveOnSignal: true})
		if err != nil {
			os.Exit(3)
		}
		io.WriteString(f, "partial")
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Minute)
		os.Exit(4)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		d := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestSignalRemovesTemp$")
		cmd.Env = append(os.Environ(), "OUTFILE_HELPER="+filepath.Join(d, "out.pftrace"))
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if line != "ready\n" {
			t.Fatalf("helper said %q", line)
		}
		if m := tmpFiles(t, d); len(m) != 1 {
			t.Fatalf("want one temporary file while writing, got %v", m)
		}
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != sig {
			t.Errorf("%v: helper ended with %v, want death by the signal", sig, err)
		}
		if m := tmpFiles(t, d); len(m) != 0 {
			t.Errorf("%v: temporary files left: %v", sig, m)
		}
	}
}
