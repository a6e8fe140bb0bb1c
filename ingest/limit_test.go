package ingest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
)

// endless is an ftrace text of valid switch lines that never ends, as a
// small .zst that expands to gigabytes looks to the reader.
type endless struct {
	buf   []byte
	n     int
	lines int // stop after this many lines; 0: never
}

func (e *endless) Read(p []byte) (int, error) {
	if len(e.buf) == 0 {
		if e.lines > 0 && e.n >= e.lines {
			return 0, io.EOF
		}
		if e.n == 0 {
			e.buf = []byte("# tracer: nop\n#\n")
		}
		pid := 100 + e.n%50
		e.buf = fmt.Appendf(e.buf, "  a-%d [000] d..2. %d.%06d: sched_switch: prev_comm=a prev_pid=%d prev_prio=120 prev_state=R ==> next_comm=a next_pid=%d next_prio=120\n",
			pid, 100+e.n/1000000, e.n%1000000, pid, 100+(e.n+1)%50)
		e.n++
	}
	k := copy(p, e.buf)
	e.buf = e.buf[k:]
	return k, nil
}

// TestMaxEvents: issue 16 item 4. Load stops with ErrTooManyEvents, naming
// the limit and where it comes from, instead of holding events until the
// kernel kills the process (a 988 KB .zst of 10 GB of lines was killed at
// 4 GB). Before, an endless trace was read until memory ran out.
func TestMaxEvents(t *testing.T) {
	done := make(chan error, 1)
	go func() {
		_, err := LoadReader(&endless{}, "endless.txt", parse.Options{MaxEvents: 200000})
		done <- err
	}()
	err := <-done
	if !errors.Is(err, ErrTooManyEvents) || !strings.Contains(err.Error(), "more than 200000 events") || !strings.Contains(err.Error(), "--max-events") {
		t.Fatalf("endless trace: got %v", err)
	}
	// A limit the trace stays under, and no limit, load it.
	for _, max := range []int64{-1, 5000} {
		if _, err := LoadReader(&endless{lines: 5000}, "short.txt", parse.Options{MaxEvents: max}); err != nil {
			t.Fatalf("5000 events, limit %d: %v", max, err)
		}
	}
}

// TestMaxEventsFor: the derived limit is half of MemAvailable, or of the
// cgroup's limit when lower, at BytesPerEvent an event.
func TestMaxEventsFor(t *testing.T) {
	mi := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(mi, []byte("MemTotal:       32000000 kB\nMemFree:         1000000 kB\nMemAvailable:    8000000 kB\n"), 0o644)
	n, why := MaxEventsFor(mi, nil)
	if want := int64(8000000 << 10 / 2 / BytesPerEvent); n != want || !strings.Contains(why, "available memory") {
		t.Errorf("MemAvailable 8000000 kB: %d (%s), want %d", n, why, want)
	}
	n, why = MaxEventsFor(mi, func() (uint64, error) { return 4 << 30, nil })
	if want := int64(4 << 30 / 2 / BytesPerEvent); n != want || !strings.Contains(why, "cgroup") {
		t.Errorf("cgroup 4 GiB: %d (%s), want %d", n, why, want)
	}
	if n, _ := MaxEventsFor(filepath.Join(t.TempDir(), "none"), func() (uint64, error) { return 0, errors.New("no limit") }); n != 0 {
		t.Errorf("nothing known: %d, want 0 (no limit)", n)
	}
}

// TestCheckStreamedAnalysis: a streamed analysis stops before it starts
// when the events the summary counted are over --max-events, or would
// take over half the memory available at AnalysisBytesPerEvent; -1 lifts
// the limit.
func TestCheckStreamedAnalysis(t *testing.T) {
	for _, c := range []struct {
		n    int
		max  int64
		fail bool
	}{
		{1000, 1000, false}, {1001, 1000, true}, {1 << 40, -1, false},
		{1000, 0, false}, {1 << 50, 0, true}, // this machine's memory
	} {
		err := CheckStreamedAnalysis("t.txt", c.n, c.max)
		if (err != nil) != c.fail || err != nil && !errors.Is(err, ErrTooManyEvents) {
			t.Errorf("%d events, --max-events %d: %v", c.n, c.max, err)
		}
		if err != nil && !strings.Contains(err.Error(), "--max-events") {
			t.Errorf("%v: does not name --max-events", err)
		}
	}
}
