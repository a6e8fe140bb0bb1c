package perf

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

const (
	good1 = "            perf 13341 [000]     1.000000:       sched:sched_waking: comm=a pid=18 prio=0 target_cpu=000\n"
	good2 = "            perf 13341 [001]     3.000000:       sched:sched_waking: comm=b pid=19 prio=0 target_cpu=001\n"
	hdr   = "            perf 13341 [000]     2.000000: "
)

// malformedCases are malformed lines: each goes between good1 and (unless
// last) good2.
var malformedCases = []struct {
	name   string
	bad    string
	last   bool // bad is the last, unterminated line: no good2 after it
	err    error
	record string
	msg    string // substring of ParseError.Msg
}{
	{"cut mid-line", hdr + "      sched:sched_switch: prev_comm=perf prev_pid=13341 prev_prio=120 prev_st", true, parse.ErrTruncated, "sched_switch", "prev_state"},
	{"cut in the header", "            perf 13341 [0", true, parse.ErrTruncated, "perf script sample", "timestamp"},
	{"cut after the time", "            perf 13341 [000]     2.0000", true, parse.ErrTruncated, "perf script sample", "timestamp"},
	{"bad pid number", hdr + "      sched:sched_switch: prev_comm=perf prev_pid=13x41 prev_prio=120 prev_state=S ==> next_comm=a next_pid=1 next_prio=120\n", false, parse.ErrBadField, "sched_switch", "field prev_pid: want an integer, got \"13x41\""},
	{"bad time", "            perf 13341 [000]     2.00x000:       sched:sched_waking: comm=a pid=18 prio=0 target_cpu=000\n", false, parse.ErrBadField, "perf script sample", "timestamp"},
	{"ten fraction digits", "            perf 13341 [000]     2.0000000001:       sched:sched_waking: comm=a pid=18 prio=0 target_cpu=000\n", false, parse.ErrBadField, "perf script sample", "1 to 9 fraction digits"},
	{"time overflows", "            perf 13341 [000]     99999999999999999999.000000:       sched:sched_waking: comm=a pid=18 prio=0 target_cpu=000\n", false, parse.ErrBadField, "perf script sample", "overflows"},
	{"unknown state letter", hdr + "      sched:sched_switch: prev_comm=perf prev_pid=13341 prev_prio=120 prev_state=Q ==> next_comm=a next_pid=1 next_prio=120\n", false, parse.ErrBadField, "sched_switch", "field prev_state: want R, R+ or letters of SDTtXZPIKWxN joined by |, got \"Q\""},
	{"backwards on its CPU", "            perf 13341 [000]     0.500000:       sched:sched_waking: comm=a pid=18 prio=0 target_cpu=000\n", false, parse.ErrBackwards, "sched_waking", "before the CPU's previous record"},
	{"backwards uninterpreted record", "            perf 13341 [000]     0.500000: sched:sched_stat_runtime: comm=perf pid=13341 runtime=1 [ns]\n", false, parse.ErrBackwards, "sched_stat_runtime", "before the CPU's previous record"},
	{"binary garbage", "\x00\x01\x7fELF\xff\xfe\x00 [\x00]: :\n", false, parse.ErrBadField, "perf script sample", "timestamp"},
	{"no cpu column", "            perf 13341     2.000000:       sched:sched_waking: comm=a pid=18 prio=0 target_cpu=000\n", false, parse.ErrBadField, "perf script sample", "cpu field required"},
	{"cpu out of range", "            perf 13341 [9999]     2.000000:       sched:sched_waking: comm=a pid=18 prio=0 target_cpu=000\n", false, parse.ErrBadField, "perf script sample", "field cpu"},
	{"no event column", hdr + "comm=a pid=18 prio=0 target_cpu=000\n", false, parse.ErrBadField, "perf script sample", "event field required"},
	{"sched_switch without next_pid", hdr + "      sched:sched_switch: prev_comm=perf prev_pid=13341 prev_prio=120 prev_state=S ==> next_comm=a next_prio=120\n", false, parse.ErrBadField, "sched_switch", "field next_comm"},
	{"sched_switch without arrow", hdr + "      sched:sched_switch: prev_comm=perf prev_pid=13341 prev_prio=120 prev_state=S next_comm=a next_pid=1 next_prio=120\n", false, parse.ErrBadField, "sched_switch", "==>"},
	{"sched_waking without pid", hdr + "      sched:sched_waking: comm=a prio=0 target_cpu=000\n", false, parse.ErrBadField, "sched_waking", "field comm"},
	{"sched_wakeup bad target_cpu", hdr + "      sched:sched_wakeup: comm=a pid=18 prio=0 target_cpu=x\n", false, parse.ErrBadField, "sched_wakeup", "field target_cpu"},
	{"sched_wakeup_new prio out of range", hdr + "  sched:sched_wakeup_new: comm=a pid=18 prio=40000 target_cpu=000\n", false, parse.ErrBadField, "sched_wakeup_new", "field prio: want -32768 to 32767"},
	{"sched_migrate_task without dest_cpu", hdr + "sched:sched_migrate_task: comm=a pid=18 prio=0 orig_cpu=0\n", false, parse.ErrBadField, "sched_migrate_task", "field dest_cpu"},
	{"sched_process_fork without child_pid", hdr + "sched:sched_process_fork: comm=bash pid=1 child_comm=bash\n", false, parse.ErrBadField, "sched_process_fork", "field child_comm"},
	{"sched_process_exec without old_pid", hdr + "sched:sched_process_exec: filename=/bin/sh pid=7\n", false, parse.ErrBadField, "sched_process_exec", "field old_pid"},
	{"sched_process_exit without prio", hdr + "sched:sched_process_exit: comm=a pid=7\n", false, parse.ErrBadField, "sched_process_exit", "field prio"},
	{"sched_process_free negative pid", hdr + "sched:sched_process_free: comm=a pid=-7 prio=120\n", false, parse.ErrBadField, "sched_process_free", "field pid"},
	{"task_newtask without pid", hdr + "task:task_newtask: comm=sh clone_flags=4100 oom_score_adj=0\n", false, parse.ErrBadField, "task_newtask", "field pid"},
	{"task_rename without newcomm", hdr + "task:task_rename: pid=7 oldcomm=sh oom_score_adj=0\n", false, parse.ErrBadField, "task_rename", "field oldcomm"},
	{"cpu_idle without cpu_id", hdr + "power:cpu_idle: state=1\n", false, parse.ErrBadField, "cpu_idle", "field cpu_id"},
	{"lost with a bad count", hdr + "PERF_RECORD_LOST lost many\n", false, parse.ErrBadField, "PERF_RECORD_LOST", "field lost"},
	{"line over 4 MiB", hdr + strings.Repeat("x", maxLine) + "\n", false, parse.ErrBadField, "perf script line", "line longer than"},
}

// TestMalformed feeds a good line, a bad line and (unless the bad line is
// cut at the end) another good line. Strict reading must hand out the first
// event, then a positioned *parse.ParseError on line 2 wrapping the right
// sentinel; lenient reading must keep both good events and skip one record.
func TestMalformed(t *testing.T) {
	for _, tc := range malformedCases {
		t.Run(tc.name, func(t *testing.T) {
			in := good1 + tc.bad
			wantGood := 2
			if !tc.last {
				in += good2
			} else {
				wantGood = 1
			}
			evs, _, err := readAll(t, []byte(in), parse.Options{Name: "bad.txt"})
			var pe *parse.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error = %v, want a *parse.ParseError", err)
			}
			if pe.File != "bad.txt" || pe.Line != 2 || pe.Offset != int64(len(good1)) {
				t.Errorf("position = %s:%d offset %d, want bad.txt:2 offset %d", pe.File, pe.Line, pe.Offset, len(good1))
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("error %v does not wrap %v", err, tc.err)
			}
			if pe.Record != tc.record {
				t.Errorf("Record = %q, want %q", pe.Record, tc.record)
			}
			if !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("Msg = %q, want it to contain %q", pe.Msg, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "bad.txt:2: "+tc.record+": ") {
				t.Errorf("Error() = %q, want it to start with %q", err.Error(), "bad.txt:2: "+tc.record+": ")
			}
			if len(evs) != 1 || evs[0].Task != 18 {
				t.Errorf("got events %v before the error, want the first good one", evs)
			}

			evs, r, err := readAll(t, []byte(in), parse.Options{Name: "bad.txt", Lenient: true})
			if err != nil {
				t.Fatalf("lenient: error %v", err)
			}
			if len(evs) != wantGood {
				t.Errorf("lenient: got %d events %v, want %d", len(evs), evs, wantGood)
			}
			m := r.Meta()
			if m.Skipped != 1 || len(m.SkippedErrors) != 1 {
				t.Fatalf("lenient: Skipped = %d (%v), want 1", m.Skipped, m.SkippedErrors)
			}
			if !errors.Is(m.SkippedErrors[0], tc.err) || !errors.As(m.SkippedErrors[0], &pe) || pe.Line != 2 {
				t.Errorf("lenient: skipped %v, want line 2 wrapping %v", m.SkippedErrors[0], tc.err)
			}
		})
	}
}

// TestStickyError checks that Next keeps returning the error it stopped at.
func TestStickyError(t *testing.T) {
	in := "            perf 13341 [000]     2.000000:       sched:sched_waking: comm=a pid=x prio=0\n" +
		"            perf 13341 [001]     3.000000:       sched:sched_waking: comm=b pid=19 prio=0 target_cpu=001\n"
	r, err := NewReader(strings.NewReader(in), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ev timeline.Event
	e1 := r.Next(&ev)
	e2 := r.Next(&ev)
	if e1 == nil || e1 != e2 {
		t.Errorf("errors = %v, %v; want the same ParseError twice", e1, e2)
	}
}

// failingReader hands out data, then err, as a cut gzip stream does.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// TestReadError checks that an input error stops even a lenient Reader,
// positioned, wrapping the cause, after the events read before it.
func TestReadError(t *testing.T) {
	in := "            perf 13341 [000]     1.000000:       sched:sched_waking: comm=a pid=18 prio=0 target_cpu=000\n" +
		"            perf 13341 [000]     2.000000:       sched:sched_wak"
	r, err := NewReader(&failingReader{data: []byte(in), err: io.ErrUnexpectedEOF}, parse.Options{Name: "cut.gz", Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	var ev timeline.Event
	if err := r.Next(&ev); err != nil || ev.Task != 18 {
		t.Fatalf("first Next = %v, %+v; want the first event", err, ev)
	}
	err = r.Next(&ev)
	var pe *parse.ParseError
	if !errors.As(err, &pe) || !errors.Is(err, io.ErrUnexpectedEOF) || pe.Line != 2 {
		t.Fatalf("error = %v, want cut.gz:2 wrapping io.ErrUnexpectedEOF", err)
	}
	if r.Meta().Skipped != 0 {
		t.Errorf("Skipped = %d, want 0: an input error is not a skippable record", r.Meta().Skipped)
	}
}
