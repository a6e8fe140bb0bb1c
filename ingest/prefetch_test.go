package ingest

import (
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// countReader hands out n events numbered by Time, then err.
type countReader struct {
	n, i int
	err  error
}

func (r *countReader) Next(ev *timeline.Event) error {
	if r.i >= r.n {
		return r.err
	}
	*ev = timeline.Event{Time: timeline.Time(r.i)}
	r.i++
	return nil
}
func (r *countReader) Meta() *parse.Meta          { return parse.NewMeta("test") }
func (r *countReader) Strings() *timeline.Strings { return timeline.NewStrings() }

// TestPrefetch: the events in order across batch boundaries, then the
// reader's own error (EOF or not) and only it, again on every call; a
// consumer that stops early leaves no goroutine behind.
func TestPrefetch(t *testing.T) {
	bad := errors.New("bad record")
	for _, tc := range []struct {
		n   int
		err error
	}{{0, io.EOF}, {1, io.EOF}, {prefetchBatch, io.EOF}, {3*prefetchBatch + 7, io.EOF}, {prefetchBatch + 1, bad}, {5, bad}} {
		p := newPrefetch(&countReader{n: tc.n, err: tc.err})
		for i := 0; i < tc.n; i++ {
			if ev, err := p.next(); err != nil || ev.Time != timeline.Time(i) {
				t.Fatalf("n=%d: event %d: %v, %+v", tc.n, i, err, ev)
			}
		}
		for range 2 {
			if _, err := p.next(); err != tc.err {
				t.Errorf("n=%d: after the events: %v, want %v", tc.n, err, tc.err)
			}
		}
		p.stop()
	}
	before := runtime.NumGoroutine()
	for range 20 {
		p := newPrefetch(&countReader{n: 10 * prefetchBatch, err: io.EOF})
		_, _ = p.next()
		p.stop()
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after early stops, %d before", n, before)
	}
}
