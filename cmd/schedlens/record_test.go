package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/record"
)

func TestRecordUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no output", []string{"record", "--duration", "1s"}, "-o FILE is required"},
		{"command without --", []string{"record", "-o", "x.pftrace", "sleep", "1"}, `put the command to trace after --`},
		{"bad cpus", []string{"record", "-o", "x.pftrace", "--cpus", "3-1"}, "--cpus"},
		{"bad transport", []string{"record", "-o", "x.pftrace", "--transport", "pipe"}, "want auto, ringbuf or perf"},
		{"negative duration", []string{"record", "-o", "x.pftrace", "--duration", "-1s"}, "--duration"},
		{"huge buffer", []string{"record", "-o", "x.pftrace", "--buffer-mb", "4096"}, "--buffer-mb"},
		{"bad flag", []string{"record", "-o", "x.pftrace", "--frobnicate"}, "unknown flag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := execute(t, tc.args...)
			if code != 2 {
				t.Errorf("exit code = %d, want 2 (stderr %q)", code, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr = %q, want it to mention %q", stderr, tc.want)
			}
		})
	}
}

// needRecord skips unless this process can record (root with BTF here).
func needRecord(t *testing.T) {
	t.Helper()
	if err := record.Check(); err != nil {
		t.Skipf("cannot record here: %v", err)
	}
}

func TestRecordCommand(t *testing.T) {
	needRecord(t)
	tests := []struct {
		name string
		args []string
	}{
		{"until the command exits", []string{"--", "sleep", "0.3"}},
		{"for a duration", []string{"--duration", "300ms"}},
		{"duration stops a longer command", []string{"--duration", "300ms", "--transport", "perf", "--cpus", "0", "--", "sleep", "30"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "rec.pftrace")
			stdout, stderr, code := execute(t, append([]string{"record", "-o", out}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit code = %d, stderr:\n%s", code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if !strings.Contains(stderr, "recorded ") || !strings.Contains(stderr, "wrote "+out) {
				t.Errorf("stderr = %q, want the summary", stderr)
			}
			ld, err := ingest.Load(out, parse.Options{})
			if err != nil {
				t.Fatalf("reading the trace back: %v", err)
			}
			if m := ld.Meta; m.Format != "perfetto" || m.NCPU == 0 || m.Kernel == "" {
				t.Errorf("trace meta: format %q, %d CPUs, kernel %q", m.Format, m.NCPU, m.Kernel)
			}
			assertOnlyFile(t, dir, "rec.pftrace")
		})
	}
}

// TestRecordFailedCommand checks that a command that cannot start leaves no
// trace file, not even a temporary one.
func TestRecordFailedCommand(t *testing.T) {
	needRecord(t)
	dir := t.TempDir()
	_, stderr, code := execute(t, "record", "-o", filepath.Join(dir, "rec.pftrace"), "--", filepath.Join(dir, "no-such-command"))
	if code != 1 || !strings.Contains(stderr, "no-such-command") {
		t.Errorf("exit %d, stderr %q; want 1 and the command named", code, stderr)
	}
	assertOnlyFile(t, dir, "")
}

// assertOnlyFile checks that dir holds exactly the named file (none if "").
func assertOnlyFile(t *testing.T, dir, name string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{}
	if name != "" {
		want = []string{name}
	}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("%s holds %v, want %v", dir, names, want)
	}
}

// helperEnv makes the test binary act as schedlens (see TestRecordHelper).
const helperEnv = "SCHEDLENS_RECORD_HELPER"

// TestRecordHelper is not a test: run with helperEnv set, it runs the
// command line after "--" as schedlens and exits with its code.
func TestRecordHelper(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("helper process for TestRecordUnprivileged")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(run(args, os.Stdout, os.Stderr))
}

// TestRecordUnprivileged runs `schedlens record` as user nobody with no
// capabilities and checks that it fails at once, says why and what to do,
// and leaves no file.
func TestRecordUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to an unprivileged user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Copy the test binary where nobody can run it, and give nobody a
	// directory it could write the trace to.
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "schedlens.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
		bin, "-test.run=^TestRecordHelper$", "--", "record", "-o", filepath.Join(out, "x.pftrace"), "--", "true")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	msg := string(b)
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want code 1; output:\n%s", err, msg)
	}
	for _, want := range []string{"error: cannot record on this machine", "not privileged (uid 65534)", "CAP_BPF", "sudo"} {
		if !strings.Contains(msg, want) {
			t.Errorf("output does not mention %q:\n%s", want, msg)
		}
	}
	assertOnlyFile(t, out, "")
}

// TestRecordInterrupt records until SIGINT, as Ctrl-C would end it, and
// checks that the trace is complete.
func TestRecordInterrupt(t *testing.T) {
	needRecord(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "rec.pftrace")
	cmd := exec.Command(self, "-test.run=^TestRecordHelper$", "--", "record", "-o", out)
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until recording runs, then interrupt.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), "recording until Ctrl-C"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("recording did not start: %s", stderr.String())
		}
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGINT: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "wrote "+out) {
		t.Errorf("stderr = %q, want the summary", stderr.String())
	}
	if _, err := ingest.Load(out, parse.Options{}); err != nil {
		t.Errorf("reading the interrupted recording: %v", err)
	}
	assertOnlyFile(t, dir, "rec.pftrace")
}

// syncBuffer is a strings.Builder safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTraceeDiesWithRecord: issue 16 item 5. A record process killed with
// SIGKILL takes the command it traces with it (the parent-death signal);
// before, the child went on running.
func TestTraceeDiesWithRecord(t *testing.T) {
	if os.Getenv("SCHEDLENS_TRACEE_HELPER") != "" {
		c := traceeCommand([]string{"sleep", "60"}, os.Stdout, os.Stderr)
		if err := c.Start(); err != nil {
			os.Exit(3)
		}
		fmt.Println(c.Process.Pid)
		time.Sleep(time.Minute)
		os.Exit(4)
	}
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep command")
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestTraceeDiesWithRecord$")
	parent.Env = append(os.Environ(), "SCHEDLENS_TRACEE_HELPER=1")
	out, _ := parent.StdoutPipe()
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscan(out, &pid); err != nil {
		t.Fatalf("reading the child's pid: %v", err)
	}
	parent.Process.Kill()
	parent.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		// Gone, or a zombie waiting for its new parent to reap it.
		if err != nil || strings.Contains(string(st), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the traced command (pid %d) still runs 5 s after record was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRecordExitStatus: issue 14 item 10. record ends with the traced
// command's exit status, as a shell reports it: the exit code, or 128 plus
// the signal that killed it; 0 when it succeeded.
func TestRecordExitStatus(t *testing.T) {
	for _, c := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 3", 3}, {"exit 255", 255}, {"kill -TERM $$", 128 + 15}, {"kill -KILL $$", 128 + 9}} {
		err := exec.Command("sh", "-c", c.script).Run()
		got := 0
		if xerr := childExit([]string{"sh"}, err); xerr != nil {
			got = exitCode(xerr)
		}
		if got != c.want {
			t.Errorf("sh -c %q: record would exit %d, want %d (%v)", c.script, got, c.want, err)
		}
	}
}

// TestRecordExitStatusLive: the same through a real recording.
func TestRecordExitStatusLive(t *testing.T) {
	needRecord(t)
	out := filepath.Join(t.TempDir(), "rec.pftrace")
	_, stderr, code := execute(t, "record", "-o", out, "--transport", "perf", "--cpus", "0", "--", "sh", "-c", "exit 3")
	if code != 3 {
		t.Errorf("record -- sh -c 'exit 3': exit %d, want 3; stderr:\n%s", code, stderr)
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
		t.Errorf("the trace was not written: %v", err)
	}
}
