package ftrace

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"testing"

	"github.com/schedlens/schedlens/internal/readertest"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// seedFuzz adds chunks of a fixture's lines as seeds: its head (headers and
// first records) and windows around interesting lines.
func seedFuzz(f *testing.F, rel string, marks ...string) {
	data := readFixture(f, rel)
	lines := bytes.SplitAfter(data, []byte("\n"))
	chunk := func(i, n int) []byte {
		if i < 0 {
			i = 0
		}
		j := min(i+n, len(lines))
		return bytes.Join(lines[i:j], nil)
	}
	f.Add(chunk(0, 20))
	for i := 20; i < 400 && i < len(lines); i += 40 {
		f.Add(chunk(i, 8))
	}
	for _, m := range marks {
		found := 0
		for i, l := range lines {
			if bytes.Contains(l, []byte(m)) {
				f.Add(chunk(i-2, 5))
				found++
				if found == 3 {
					break
				}
			}
		}
	}
}

// checkReader reads in as a fuzz target does and checks the invariants:
// no panic; Next leaves the event alone when it returns an error; an error
// is a positioned *parse.ParseError; per-CPU times never go backwards; a
// lenient read never fails and hands out the strict read's events first;
// parsing on several goroutines reads the same as one.
var fuzzErrForm = regexp.MustCompile(`^fuzz\.txt:[0-9]+: [^:]+: (field [^:]+: )?want .+, got .+$`)

func checkReader(t *testing.T, in []byte) {
	strict := read(t, in, false)
	lenient := read(t, in, true)
	if len(lenient) < len(strict) {
		t.Fatalf("lenient read %d events, strict %d", len(lenient), len(strict))
	}
	for i := range strict {
		if strict[i] != lenient[i] {
			t.Fatalf("event %d: strict %+v, lenient %+v", i, strict[i], lenient[i])
		}
	}
	checkParallelWith(t, "fuzz", in, []readertest.Config{{Workers: 2, Lines: 1}, {Workers: 3, Lines: 3}})
	full := readWith(t, in, 1, 0, false)
	readertest.SameSummary(t, "fuzz", full, readSummary(t, in, 1))
	readertest.SameSummary(t, "fuzz", full, readSummary(t, in, 2))
	checkDeclared(t, in)
}

// checkDeclared: where one line of the input states the CPU count, a
// count the Reader declares before its first record is the one its Meta
// states once a strict read ends well.
func checkDeclared(t *testing.T, in []byte) {
	r, err := NewReader(bytes.NewReader(in), parse.Options{Name: "fuzz.txt", Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := r.DeclaredCPUs()
	var ev timeline.Event
	for {
		if err := r.Next(&ev); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return
		}
	}
	if once := bytes.Count(in, []byte("cpus="))+bytes.Count(in, []byte("#P:")) == 1; once && n > 0 && r.Meta().NCPU != n {
		t.Fatalf("declared %d CPUs, the read's Meta states %d", n, r.Meta().NCPU)
	}
}

func read(t *testing.T, in []byte, lenient bool) []timeline.Event {
	r, err := NewReader(bytes.NewReader(in), parse.Options{Name: "fuzz.txt", Lenient: lenient, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var evs []timeline.Event
	last := map[timeline.CPU]timeline.Time{}
	var ev timeline.Event
	for {
		ev = timeline.Event{Time: 12345, Kind: 99, Task: 777} // a marker Next must not touch on error
		before := ev
		err := r.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if lenient {
				t.Fatalf("lenient read failed: %v", err)
			}
			if ev != before {
				t.Fatalf("Next filled an event and returned %v", err)
			}
			var pe *parse.ParseError
			if !errors.As(err, &pe) || pe.Line < 1 || pe.File != "fuzz.txt" || pe.Err == nil {
				t.Fatalf("error %v (%T) is not a positioned ParseError", err, err)
			}
			if !fuzzErrForm.MatchString(err.Error()) {
				t.Fatalf("error %q does not read name:LINE: record: want ..., got ...", err)
			}
			break
		}
		if !ev.Kind.Known() || ev.CPU < 0 || ev.CPU >= MaxCPU {
			t.Fatalf("bad event %+v", ev)
		}
		if l, ok := last[ev.CPU]; ok && ev.Time < l {
			t.Fatalf("CPU %d: time %d after %d", ev.CPU, ev.Time, l)
		}
		last[ev.CPU] = ev.Time
		evs = append(evs, ev)
		if lines := bytes.Count(in, []byte("\n")) + 1; len(evs) > 3*lines {
			t.Fatalf("%d events from %d lines", len(evs), lines)
		}
	}
	if lenient && r.Meta().Skipped < int64(len(r.Meta().SkippedErrors)) {
		t.Fatalf("Skipped %d < %d kept errors", r.Meta().Skipped, len(r.Meta().SkippedErrors))
	}
	return evs
}

func FuzzFtraceText(f *testing.F) {
	seedFuzz(f, "ftrace-oracle-busy/trace.txt.zst", "(-------)", "tracing_mark_write", "sched_process_exec")
	seedFuzz(f, "ftrace-hackbench-cyclictest/trace.txt.gz", "cpu_idle", "dNH3.", "task_rename")
	seedFuzz(f, "ftrace-overflow/trace.txt.gz", "buffer started")
	seedFuzz(f, "ftrace-pipe-lost/trace.txt.gz", "LOST")
	seedFuzz(f, "qemu-smt8-hackbench/trace.txt.zst", "4294967295")
	f.Add([]byte(good1 + "CPU:0 [LOST 3 EVENTS]\n" + good2))
	f.Add([]byte(good1 + hdr + "sched_switch: prev_comm=bash prev_pid=100 prev_pr"))
	f.Add([]byte(good1 + "         timeout-21607   [000] d..1.     1.500000: signal_generate: sig=15 errno=0 code=0 comm=bash pid=21608 grp=1 res=0\n" + good2))
	f.Fuzz(checkReader)
}

func FuzzTraceCmdReport(f *testing.F) {
	seedFuzz(f, "ftrace-oracle-busy/report.txt.zst", "print:", "sched_wakeup_new", "memfd:sealed", " W ==> ")
	f.Add([]byte("version = 7\ncpus=2\n" + tcGood1 + "CPU:0 [12 EVENTS DROPPED]\ncapture: CPU:1 [EVENTS DROPPED]\n" + tcGood2))
	f.Add([]byte("cpus=2\n" + tcHdr + "sched_wakeup:         python3:7734 [120] success=1 CPU:000\n"))
	f.Fuzz(checkReader)
}
