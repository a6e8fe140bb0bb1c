// Package readertest compares two reads of one trace: the test harness of
// the text readers' parallel parsing (ingest/ftrace, ingest/perf), which
// must read exactly as their serial parse does.
package readertest

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// Out is everything a read gives: the events, every interned string by id,
// the errors Next returned, Meta, and the skipped records' errors.
type Out struct {
	Events  []timeline.Event
	Strings []string
	Errs    []string
	Meta    parse.Meta
	Skipped []string
}

// Read reads r to its end. After an error it calls Next again, as a caller
// may: a reader that reads on after an error (sticky false) is read to its
// end, at most 1000 errors; one whose error sticks is asked twice more,
// must repeat it, and must hand out no event after it.
func Read(tb testing.TB, r parse.Reader, sticky bool) Out {
	tb.Helper()
	var out Out
	var ev timeline.Event
	for {
		err := r.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			out.Errs = append(out.Errs, err.Error())
			if sticky && len(out.Errs) == 3 || len(out.Errs) > 1000 {
				break
			}
			continue
		}
		if sticky && len(out.Errs) > 0 {
			tb.Fatalf("an event after the error %s", out.Errs[0])
		}
		out.Events = append(out.Events, ev)
	}
	strs := r.Strings()
	for id := 1; id < strs.Len(); id++ {
		out.Strings = append(out.Strings, strs.Get(timeline.CommID(id)))
	}
	out.Meta = *r.Meta()
	for _, e := range out.Meta.SkippedErrors {
		out.Skipped = append(out.Skipped, e.Error())
	}
	out.Meta.SkippedErrors = nil
	return out
}

// Same fails unless got (the parallel read) is want (the serial one).
func Same(tb testing.TB, what string, want, got Out) {
	tb.Helper()
	if len(want.Events) != len(got.Events) {
		tb.Fatalf("%s: %d events, serial %d", what, len(got.Events), len(want.Events))
	}
	for i := range want.Events {
		if want.Events[i] != got.Events[i] {
			tb.Fatalf("%s: event %d: %+v, serial %+v", what, i, got.Events[i], want.Events[i])
		}
	}
	for _, f := range []struct {
		name string
		x, y any
	}{
		{"strings", want.Strings, got.Strings},
		{"errors", want.Errs, got.Errs},
		{"skipped errors", want.Skipped, got.Skipped},
		{"meta", want.Meta, got.Meta},
	} {
		if !reflect.DeepEqual(f.x, f.y) {
			tb.Fatalf("%s: %s differ:\nparallel %v\nserial   %v", what, f.name, f.y, f.x)
		}
	}
}

// Config is a parallel read: its workers and its block size in lines (0:
// the default).
type Config struct{ Workers, Lines int }

// Configs are the parallel reads a malformed or fuzzed input is checked
// with: tiny blocks spread errors and header lines over blocks.
var Configs = []Config{{2, 1}, {3, 2}, {2, 7}, {2, 0}}

// Check reads in serially and under each config, strict and lenient, with
// read (which builds the format's reader for a config and reads it with
// Read), and wants the same read.
func Check(tb testing.TB, name string, configs []Config, read func(c Config, lenient bool) Out) {
	tb.Helper()
	for _, lenient := range []bool{false, true} {
		serial := read(Config{Workers: 1}, lenient)
		for _, c := range configs {
			Same(tb, fmt.Sprintf("%s, lenient %v, %d workers, blocks of %d lines", name, lenient, c.Workers, c.Lines),
				serial, read(c, lenient))
		}
	}
}

// Closer is a reader that parses on goroutines it stops on Close.
type Closer interface {
	parse.Reader
	Close() error
}

// ReadWith reads, as Read does, the reader open makes for a read on
// c.Workers goroutines (open sets the input's name), in blocks of c.Lines
// lines or records (0: the default), which it sets in blocks, the format's
// block size, for the read. It closes the reader after.
func ReadWith(tb testing.TB, blocks *int, c Config, lenient, sticky bool, open func(opts parse.Options) (Closer, error)) Out {
	tb.Helper()
	if c.Lines > 0 {
		defer func(n int) { *blocks = n }(*blocks)
		*blocks = c.Lines
	}
	r, err := open(parse.Options{Lenient: lenient, Workers: c.Workers})
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	return Read(tb, r, sticky)
}

// CheckClose reads 100 events of r, closes it, and wants Next to stop
// instead of blocking: at most the events already parsed and queued (fewer
// than a block's lines), then parse.ErrClosed, again on the next call.
func CheckClose(tb testing.TB, r Closer) {
	tb.Helper()
	var ev timeline.Event
	for range 100 {
		if err := r.Next(&ev); err != nil {
			tb.Fatal(err)
		}
	}
	r.Close()
	n := 0
	for {
		err := r.Next(&ev)
		if err == nil {
			n++ // parsed and handed over before Close
			continue
		}
		if !errors.Is(err, parse.ErrClosed) {
			tb.Fatalf("after Close: %v, want %v", err, parse.ErrClosed)
		}
		if err2 := r.Next(&ev); err2 != err {
			tb.Fatalf("after %v, Next returned %v", err, err2)
		}
		break
	}
	if n >= parse.BlockLines {
		tb.Errorf("%d events after Close, want fewer than a block's %d lines", n, parse.BlockLines)
	}
}

// SameSummary fails unless got, a read with parse.Options.Summary, gives
// what a streamed analysis's first read needs of want, the full read of
// the same input: each event's time, CPU and kind (a lost or buffer-start
// record's start and count, a marker's text), the CPU count and the
// coverage; and no error when want has none.
func SameSummary(tb testing.TB, what string, want, got Out) {
	tb.Helper()
	if len(want.Errs) > 0 {
		return // the full read stops or skips where the summary may not
	}
	if len(got.Errs) > 0 {
		tb.Fatalf("%s: summary read failed: %s", what, got.Errs[0])
	}
	if len(got.Events) != len(want.Events) {
		tb.Fatalf("%s: summary read %d events, full %d", what, len(got.Events), len(want.Events))
	}
	text := func(o Out, id int64) string {
		if id < 1 || int(id) > len(o.Strings) {
			return fmt.Sprintf("<id %d>", id)
		}
		return o.Strings[id-1]
	}
	for i, w := range want.Events {
		g := got.Events[i]
		same := g.Time == w.Time && g.CPU == w.CPU && g.Kind == w.Kind
		switch w.Kind {
		case timeline.KindLost, timeline.KindBufferStart:
			same = same && g.Start == w.Start && g.Arg == w.Arg
		case timeline.KindMarker:
			same = same && text(got, g.Arg) == text(want, w.Arg)
		}
		if !same {
			tb.Fatalf("%s: summary event %d: %v at %d on CPU %d, full %v at %d on CPU %d", what, i, g.Kind, g.Time, g.CPU, w.Kind, w.Time, w.CPU)
		}
	}
	if got.Meta.NCPU != want.Meta.NCPU || got.Meta.Coverage != want.Meta.Coverage || got.Meta.CoverageNote != want.Meta.CoverageNote {
		tb.Fatalf("%s: summary meta NCPU %d, coverage %v (%s); full %d, %v (%s)", what,
			got.Meta.NCPU, got.Meta.Coverage, got.Meta.CoverageNote, want.Meta.NCPU, want.Meta.Coverage, want.Meta.CoverageNote)
	}
}
