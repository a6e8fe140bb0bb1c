package progress

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuf is a buffer mpb's goroutine and the test can share.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestQuickWorkDrawsNothing: work shorter than Delay leaves no trace on the
// output, and Done returns.
func TestQuickWorkDrawsNothing(t *testing.T) {
	var out syncBuf
	b := Reading(&out, "trace.txt")
	b.Update(500, 1000, 10)
	b.Update(1000, 1000, 20)
	done := make(chan bool)
	go func() { b.Done(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Done did not return")
	}
	if s := out.String(); s != "" {
		t.Errorf("quick work drew %q", s)
	}
}

// TestSlowWorkDraws: past Delay the bar shows bytes of total, events, a
// rate and the time left; a model run shows simulated time of total.
func TestSlowWorkDraws(t *testing.T) {
	old := Delay
	Delay = 10 * time.Millisecond
	defer func() { Delay = old }()
	var out syncBuf
	b := Reading(&out, "trace.txt")
	b.Update(1<<20, 4<<20, 12345)
	time.Sleep(400 * time.Millisecond)
	s := out.String()
	b.Update(4<<20, 4<<20, 50000)
	b.Done()
	for _, want := range []string{"trace.txt", "1.0 MiB / 4.0 MiB", "12345 events, ", " events/s, ", " MiB/s", "ETA"} {
		if !strings.Contains(s, want) {
			t.Errorf("reading progress %q lacks %q", s, want)
		}
	}
	var sim syncBuf
	m := Simulating(&sim, "replay")
	m.Update(5e8, 2e9, 0)
	time.Sleep(400 * time.Millisecond)
	s = sim.String()
	m.Done()
	if !strings.Contains(s, "simulated 0.500 of 2.000 s") {
		t.Errorf("model progress %q lacks the simulated time", s)
	}
}

// TestWanted: never on a pipe, a file or with --quiet.
func TestWanted(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if Wanted(w, false) {
		t.Error("progress wanted on a pipe")
	}
	if Wanted(&bytes.Buffer{}, false) {
		t.Error("progress wanted on a buffer")
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if !Wanted(tty, false) {
			t.Error("progress not wanted on a terminal")
		}
		if Wanted(tty, true) {
			t.Error("progress wanted on a terminal with --quiet")
		}
	}
}
