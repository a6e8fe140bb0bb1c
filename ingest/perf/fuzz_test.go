package perf

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/schedlens/schedlens/internal/readertest"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// fuzzSeeds returns chunks of real lines: the start of every fixture and
// testdata file, and a window around the first lost record.
func fuzzSeeds(tb testing.TB) [][]byte {
	files := []string{
		fixtureDefault, fixtureFields,
		"testdata/allevents.txt.gz", "testdata/allevents-header.txt.gz",
		"testdata/allevents-latency.txt.gz", "testdata/allevents-ns-pidtid-ip.txt.gz",
		"testdata/allevents-period-misc.txt.gz", "testdata/allevents-nocomm.txt.gz",
		"testdata/allevents-nocpu.txt.gz", "testdata/lost.txt.gz",
	}
	seeds := [][]byte{[]byte("         timeout 21607 [000] 42008.346211: signal:signal_generate: sig=15 errno=0 code=0 comm=bash pid=21608 grp=1 res=0\n" +
		"            bash 21608 [000] 42008.346259: sched:sched_process_exit: comm=bash pid=21608 prio=120\n")}
	for _, f := range files {
		data := readGz(tb, f)
		lines := bytes.SplitAfter(data, []byte("\n"))
		for i := 0; i+8 <= len(lines) && i < 400; i += 97 {
			seeds = append(seeds, bytes.Join(lines[i:i+8], nil))
		}
		if i := bytes.Index(data, []byte("PERF_RECORD_LOST")); i >= 0 {
			start := bytes.LastIndexByte(data[:max(0, i-2000)], '\n') + 1
			end := min(len(data), i+2000)
			seeds = append(seeds, data[start:end])
		}
	}
	return seeds
}

// FuzzPerfScript checks, on any input, in strict and lenient mode:
//   - no panic, and every error is a positioned *parse.ParseError;
//   - an error fills no event (ev is left Reset);
//   - accepted per-CPU times never go backwards;
//   - a KindLost carries the time of the next event on its CPU, or ends the
//     trace, and Start <= Time;
//   - the events strict mode hands out before its error are the first events
//     lenient mode hands out (a bad record changes no reader state);
//   - parsing on several goroutines reads the same as one (events, strings,
//     errors, Meta).
func FuzzPerfScript(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		strict, strictErr := fuzzRead(t, data, false)
		lenient, _ := fuzzRead(t, data, true)
		if strictErr == nil && len(strict) != len(lenient) {
			t.Fatalf("strict read all %d events without error, lenient %d", len(strict), len(lenient))
		}
		if len(strict) > len(lenient) {
			t.Fatalf("strict gave %d events, lenient only %d", len(strict), len(lenient))
		}
		for i := range strict {
			if strict[i] != lenient[i] {
				t.Fatalf("event %d: strict %+v, lenient %+v", i, strict[i], lenient[i])
			}
		}
		checkParallelWith(t, "fuzz", data, []readertest.Config{{Workers: 2, Lines: 1}, {Workers: 3, Lines: 3}})
		full := readWith(t, data, 1, 0, false)
		readertest.SameSummary(t, "fuzz", full, readSummary(t, data, 1))
		readertest.SameSummary(t, "fuzz", full, readSummary(t, data, 2))
	})
}

func fuzzRead(t *testing.T, data []byte, lenient bool) ([]timeline.Event, error) {
	r, err := NewReader(bytes.NewReader(data), parse.Options{Name: "fuzz", Lenient: lenient, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var reset timeline.Event
	reset.Reset()
	var evs []timeline.Event
	last := map[timeline.CPU]timeline.Time{}
	lines := bytes.Count(data, []byte("\n")) + 1
	for n := 0; ; n++ {
		if n > 2*lines+1 {
			t.Fatalf("more than %d results from %d lines", n, lines)
		}
		var ev timeline.Event
		ev.Kind = timeline.KindSwitch // garbage the reader must overwrite
		err := r.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *parse.ParseError
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Line > lines || pe.Err == nil {
				t.Fatalf("error %v (%T) is not a positioned ParseError", err, err)
			}
			if lenient {
				t.Fatalf("lenient reader returned %v", err)
			}
			if ev != reset {
				t.Fatalf("error %v left event %+v", err, ev)
			}
			if err2 := r.Next(&ev); err2 != err {
				t.Fatalf("after %v, Next returned %v", err, err2)
			}
			return evs, err
		}
		if ev.CPU < 0 || ev.Kind == timeline.KindUnknown || ev.Ctx != timeline.CtxUnknown {
			t.Fatalf("bad event %+v", ev)
		}
		if l, ok := last[ev.CPU]; ok && ev.Time < l {
			t.Fatalf("CPU %d: time %d after %d", ev.CPU, ev.Time, l)
		}
		last[ev.CPU] = ev.Time
		if ev.Kind == timeline.KindLost && ev.Start != timeline.NoTime && ev.Start > ev.Time {
			t.Fatalf("lost event with Start %d after Time %d", ev.Start, ev.Time)
		}
		evs = append(evs, ev)
	}
	for i, ev := range evs {
		if ev.Kind != timeline.KindLost || i+1 == len(evs) {
			continue
		}
		next := evs[i+1]
		if next.Kind != timeline.KindLost && (next.CPU != ev.CPU || next.Time != ev.Time) {
			t.Fatalf("lost event on CPU %d at %d is followed by %+v", ev.CPU, ev.Time, next)
		}
	}
	m := r.Meta()
	if !lenient && m.Skipped != 0 {
		t.Fatalf("strict reader skipped %d", m.Skipped)
	}
	if m.NCPU < 0 {
		t.Fatalf("NCPU = %d", m.NCPU)
	}
	return evs, nil
}
