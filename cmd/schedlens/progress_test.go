package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/schedlens/schedlens/progress"
)

// openPTY opens a pseudo-terminal: the master end to read what is drawn,
// the slave end to give a command as its stderr.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pts: %v", err)
	}
	// A new pseudo-terminal is 0 columns wide; a terminal window is not.
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 120}); err != nil {
		t.Logf("window size: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// TestProgress: issue 14 item 7. On a terminal, reading a trace and
// running the model draw their progress on stderr (bytes of total, events,
// rate, ETA; simulated time of total); --quiet turns it off; a stderr that
// is not a terminal (a pipe, a test's buffer) never gets it, and stdout
// never does. Delay is set to 0 here; it is a second in use.
func TestProgress(t *testing.T) {
	old := progress.Delay
	progress.Delay = 0
	defer func() { progress.Delay = old }()
	in := fx + "qemu-smt8-hackbench/trace.txt.zst"
	args := []string{"whatif", "--runs", "2", "--change", "NO_PLACE_LAG", "--format", "json", in}

	// Not a terminal: no progress, even with no delay.
	stdout, stderr, code := execute(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{stdout, stderr} {
		if strings.Contains(s, "ETA") || strings.Contains(s, "simulated") || strings.Contains(s, "\r") || strings.Contains(s, "\x1b[") {
			t.Errorf("progress without a terminal: %q", s)
		}
	}

	drawn := func(extra ...string) (string, string) {
		return onTerminal(t, append(append(append([]string{}, args[:len(args)-1]...), extra...), in))
	}
	tty, out := drawn()
	for _, want := range []string{"292.7 KiB / 292.7 KiB", "47337 events", "events/s", "ETA", "whatif", "simulated 24.761 of 24.761 s"} {
		if !strings.Contains(tty, want) {
			t.Errorf("terminal stderr lacks %q: %q", want, tty)
		}
	}
	if strings.Contains(out, "ETA") || strings.Contains(out, "\x1b[") {
		t.Errorf("progress on stdout: %.200q", out)
	}
	if tty, _ := drawn("--quiet"); strings.Contains(tty, "ETA") || strings.Contains(tty, "simulated") {
		t.Errorf("progress with --quiet: %q", tty)
	}
}

// TestConvertProgress: convert, which streams instead of loading, draws
// the same reading progress on a terminal (bytes of total, events).
func TestConvertProgress(t *testing.T) {
	old := progress.Delay
	progress.Delay = 0
	defer func() { progress.Delay = old }()
	in := fx + "qemu-smt8-hackbench/trace.txt.zst"
	tty, _ := onTerminal(t, []string{"convert", "-o", t.TempDir() + "/out.pftrace", in})
	for _, want := range []string{"292.7 KiB / 292.7 KiB", "events/s"} {
		if !strings.Contains(tty, want) {
			t.Errorf("terminal stderr lacks %q: %q", want, tty)
		}
	}
}

// onTerminal runs schedlens with a pseudo-terminal as its stderr and
// returns what was drawn there and what went to stdout.
func onTerminal(t *testing.T, args []string) (tty, stdout string) {
	t.Helper()
	master, slave := openPTY(t)
	var got bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(&got, master) // ends when the slave is closed
	}()
	var out bytes.Buffer
	if code := run(args, &out, slave); code != 0 {
		t.Errorf("exit %d", code)
	}
	slave.Close()
	done := make(chan bool)
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		master.Close()
		<-done
	}
	return got.String(), out.String()
}

// TestStreamProgress: a streamed tasks draws one bar for each of its two
// reads, named (1/2) and (2/2), each with bytes of total and events.
func TestStreamProgress(t *testing.T) {
	old := progress.Delay
	progress.Delay = 0
	defer func() { progress.Delay = old }()
	in := fx + "qemu-smt8-hackbench/trace.txt.zst"
	tty, out := onTerminal(t, []string{"tasks", "--stream", "always", "--format", "json", in})
	for _, want := range []string{"trace.txt.zst (1/2)", "trace.txt.zst (2/2)", "292.7 KiB / 292.7 KiB", "47337 events"} {
		if !strings.Contains(tty, want) {
			t.Errorf("terminal stderr lacks %q: %q", want, tty)
		}
	}
	if !strings.Contains(out, `"tasks"`) {
		t.Errorf("stdout: %.200q", out)
	}
}
