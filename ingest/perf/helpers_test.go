package perf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// Fixture paths, relative to the package directory.
const (
	fixtureDefault = "../../fixtures/real/perf-hackbench-cyclictest/perf-script.txt.gz"
	fixtureFields  = "../../fixtures/real/perf-hackbench-cyclictest/perf-script-fields.txt.gz"
)

// readGz returns the decompressed content of a .gz file.
func readGz(tb testing.TB, path string) []byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return data
}

// view is an Event with its interned strings resolved, for comparisons.
type view struct {
	Time, Start timeline.Time
	CPU         timeline.CPU
	Kind        timeline.Kind
	Ctx         timeline.Context
	State       timeline.State
	Task, Other timeline.TID
	Comm, OComm string
	Prio, OPrio int16
	TGID        int32
	Arg, Arg2   int64
	Mark        string // KindMarker: the text Arg names (Arg is then 0)
}

func viewOf(s *timeline.Strings, ev timeline.Event) view {
	v := view{
		Time: ev.Time, Start: ev.Start, CPU: ev.CPU, Kind: ev.Kind, Ctx: ev.Ctx, State: ev.State,
		Task: ev.Task, Other: ev.Other, Comm: s.Get(ev.Comm), OComm: s.Get(ev.OComm),
		Prio: ev.Prio, OPrio: ev.OPrio, TGID: ev.TGID, Arg: ev.Arg, Arg2: ev.Arg2,
	}
	if ev.Kind == timeline.KindMarker {
		v.Mark = s.Get(timeline.CommID(ev.Arg))
		v.Arg = 0
	}
	return v
}

func (v view) String() string {
	return fmt.Sprintf("%s cpu=%d t=%d start=%d ctx=%s state=%s task=%d %q prio=%d other=%d %q oprio=%d tgid=%d arg=%d arg2=%d mark=%q",
		v.Kind, v.CPU, v.Time, v.Start, v.Ctx, v.State, v.Task, v.Comm, v.Prio, v.Other, v.OComm, v.OPrio, v.TGID, v.Arg, v.Arg2, v.Mark)
}

// readAll reads every event of data. It stops at the first error, which it
// returns with the events before it.
func readAll(tb testing.TB, data []byte, opts parse.Options) ([]view, *Reader, error) {
	tb.Helper()
	r, err := NewReader(bytes.NewReader(data), opts)
	if err != nil {
		tb.Fatal(err)
	}
	var out []view
	var ev timeline.Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			return out, r, nil
		}
		if err != nil {
			var pe *parse.ParseError
			if !errors.As(err, &pe) {
				tb.Fatalf("error %v (%T) is not a *parse.ParseError", err, err)
			}
			return out, r, err
		}
		out = append(out, viewOf(r.Strings(), ev))
	}
}

// kindCounts counts events by kind.
func kindCounts(evs []view) map[timeline.Kind]int {
	m := map[timeline.Kind]int{}
	for _, e := range evs {
		m[e.Kind]++
	}
	return m
}
