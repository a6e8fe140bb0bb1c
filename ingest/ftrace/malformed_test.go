package ftrace

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// Good lines around the bad ones: CPU 0 at 1.0 s and 2.0 s.
const (
	good1 = "            bash-100   [000] d..2.     1.000000: sched_switch: prev_comm=bash prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=cat next_pid=200 next_prio=120\n"
	good2 = "             cat-200   [000] d..2.     2.000000: sched_switch: prev_comm=cat prev_pid=200 prev_prio=120 prev_state=R+ ==> next_comm=bash next_pid=100 next_prio=120\n"
	// A record line up to the event fields.
	hdr = "            bash-100   [000] d..2.     1.500000: "
	// trace-cmd report equivalents.
	tcGood1 = "             bash-100 [000]     1.000000: sched_switch:         bash:100 [120] S ==> cat:200 [120]\n"
	tcGood2 = "              cat-200 [000]     2.000000: sched_switch:         cat:200 [120] R ==> bash:100 [120]\n"
	tcHdr   = "             bash-100 [000]     1.500000: "
)

// errForm is the shape of every malformed-input error:
// name:LINE: record: what was expected, what was found.
var errForm = regexp.MustCompile(`^bad\.txt:([0-9]+): ([a-z_ ]+): (field [^:]+: )?want .+, got .+$`)

func TestMalformed(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		line   int   // line of the error
		cause  error // sentinel
		before int   // events handed out before the error
		good   int   // events under Lenient
	}{
		// Cut files and lines.
		{"cut mid-line at end of file", good1 + hdr + "sched_switch: prev_comm=bash prev_pid=100 prev_pr", 2, parse.ErrTruncated, 1, 1},
		{"cut inside the last number", good1 + hdr + "sched_switch: prev_comm=bash prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=cat next_pid=200 next_prio=12", 2, parse.ErrTruncated, 1, 1},
		{"cut inside the CPU column", good1 + "            bash-100   [00", 2, parse.ErrTruncated, 1, 1},
		{"cut inside the timestamp", good1 + "            bash-100   [000] d..2.     1.50", 2, parse.ErrTruncated, 1, 1},
		{"line ends after the event name", good1 + hdr + "sched_switch:\n" + good2, 2, parse.ErrTruncated, 1, 2},
		{"line ends inside a key", good1 + hdr + "sched_waking: comm=cat pid=200 pri\n" + good2, 2, parse.ErrTruncated, 1, 2},
		{"line ends after next_comm", good1 + hdr + "sched_switch: prev_comm=bash prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=cat\n" + good2, 2, parse.ErrTruncated, 1, 2},

		// Bad numbers and letters.
		{"bad timestamp", good1 + "            bash-100   [000] d..2.     1.5x0000: sched_switch: x\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"timestamp with 10 fraction digits", good1 + "            bash-100   [000] d..2.     1.5000000000: sched_switch: x\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"timestamp overflows", good1 + "            bash-100   [000] d..2.     99999999999999999999.000000: sched_switch: x\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"bad CPU field", good1 + "            bash-100   [0x1] d..2.     1.500000: sched_switch: x\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"CPU number too large", good1 + "            bash-100   [99999999] d..2.     1.500000: sched_switch: x\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"bad irq-info flags", good1 + "            bash-100   [000] d.Q2.     1.500000: sched_switch: x\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"unknown state letter", good1 + hdr + "sched_switch: prev_comm=bash prev_pid=100 prev_prio=120 prev_state=Q ==> next_comm=cat next_pid=200 next_prio=120\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"empty state", good1 + hdr + "sched_switch: prev_comm=bash prev_pid=100 prev_prio=120 prev_state= ==> next_comm=cat next_pid=200 next_prio=120\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"bad prev_pid", good1 + hdr + "sched_switch: prev_comm=bash prev_pid=abc prev_prio=120 prev_state=S ==> next_comm=cat next_pid=200 next_prio=120\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"negative next_pid", good1 + hdr + "sched_switch: prev_comm=bash prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=cat next_pid=-5 next_prio=120\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"prio out of range", good1 + hdr + "sched_switch: prev_comm=bash prev_pid=100 prev_prio=99999 prev_state=S ==> next_comm=cat next_pid=200 next_prio=120\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"bad target_cpu", good1 + hdr + "sched_wakeup: comm=cat pid=200 prio=120 target_cpu=abc\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"bad cpu_idle state", good1 + hdr + "cpu_idle: state=x cpu_id=0\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"bad signal number", good1 + hdr + "signal_generate: sig=x errno=0 code=0 comm=a pid=5 grp=1 res=0\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"signal_generate cut", good1 + hdr + "signal_generate: sig=15 errno=0 code=0 comm=a pid=5\n" + good2, 2, parse.ErrTruncated, 1, 2},

		// Missing fields, one case per event kind.
		{"sched_switch without prev_prio", good1 + hdr + "sched_switch: prev_comm=bash prev_pid=100 prev_state=S ==> next_comm=cat next_pid=200 next_prio=120\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"sched_waking without pid", good1 + hdr + "sched_waking: comm=cat prio=120 target_cpu=000\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"sched_wakeup_new without prio", good1 + hdr + "sched_wakeup_new: comm=cat pid=200\n" + good2, 2, parse.ErrTruncated, 1, 2},
		{"sched_migrate_task without dest_cpu", good1 + hdr + "sched_migrate_task: comm=cat pid=200 prio=120 orig_cpu=0\n" + good2, 2, parse.ErrTruncated, 1, 2},
		{"sched_process_fork bad child_pid", good1 + hdr + "sched_process_fork: comm=bash pid=100 child_comm=bash child_pid=x\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"sched_process_exec without old_pid", good1 + hdr + "sched_process_exec: filename=/bin/cat pid=200\n" + good2, 2, parse.ErrTruncated, 1, 2},
		{"sched_process_exit bad prio", good1 + hdr + "sched_process_exit: comm=cat pid=200 prio=high\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"sched_process_free without comm", good1 + hdr + "sched_process_free: pid=200 prio=120\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"task_newtask bad pid", good1 + hdr + "task_newtask: pid=- comm=cat clone_flags=0 oom_score_adj=0\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"task_rename without newcomm", good1 + hdr + "task_rename: pid=200 oldcomm=cat\n" + good2, 2, parse.ErrTruncated, 1, 2},
		{"cpu_idle without cpu_id", good1 + hdr + "cpu_idle: state=1\n" + good2, 2, parse.ErrTruncated, 1, 2},

		// Lines that are not records.
		{"binary garbage", good1 + "\x8f\x01\xff\xfe\x13garbage [zz\x7f\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"NUL bytes", good1 + "            bash-100 \x00\x00 [000] d..2.     1.500000: sched_switch: x\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"no pid in the task column", good1 + "            bash   [000] d..2.     1.500000: sched_switch: x\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"bad tgid column", good1 + "            bash-100   (  abc) [000]     1.500000: sched_switch: x\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"no colon after the timestamp", good1 + "            bash-100   [000] d..2.     1.500000 sched_switch: x\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"space in the event name", good1 + hdr + "sched switch: x\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"bad instance prefix", good1 + "some thing:             bash-100 [000]     1.500000: sched_switch: x\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"very long line", good1 + strings.Repeat("#", MaxLine+10) + "\n" + good2, 2, parse.ErrBadField, 1, 2},

		// Order.
		{"timestamp goes backwards on one CPU", good1 + "            bash-100   [000] d..2.     0.500000: sched_switch: prev_comm=bash prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=cat next_pid=200 next_prio=120\n" + good2, 2, parse.ErrBackwards, 1, 2},
		{"uninterpreted event goes backwards", good1 + "            bash-100   [000] d..2.     0.500000: sched_stat_runtime: comm=bash pid=100 runtime=1 [ns]\n" + good2, 2, parse.ErrBackwards, 1, 2},

		// Header and other non-record lines.
		{"bad buffer-started line", "# tracer: nop\n" + good1 + "##### CPU x buffer started ####\n" + good2, 3, parse.ErrBadField, 1, 2},
		{"bad entries header", "# tracer: nop\n# entries-in-buffer/entries-written: 1/x   #P:2\n" + good1 + good2, 2, parse.ErrBadField, 0, 2},
		{"bad lost-events CPU", good1 + "CPU:x [LOST 3 EVENTS]\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"lost-events line without a count", good1 + "CPU:0 [LOST EVENTS]\n" + good2, 2, parse.ErrBadField, 1, 2},
		{"lost-events line without its bracket", good1 + "CPU:0 [LOST 3 EVENTS\n" + good2, 2, parse.ErrBadField, 1, 2},

		// trace-cmd report layout errors.
		{"trace-cmd bad cpus header", "cpus=two\n" + tcGood1 + tcGood2, 1, parse.ErrBadField, 0, 2},
		{"trace-cmd bad dropped count", "cpus=2\n" + tcGood1 + "CPU:0 [many EVENTS DROPPED]\n" + tcGood2, 3, parse.ErrBadField, 1, 2},
		{"trace-cmd unknown state letter", "cpus=2\n" + tcGood1 + tcHdr + "sched_switch:         bash:100 [120] Q ==> cat:200 [120]\n" + tcGood2, 3, parse.ErrBadField, 1, 2},
		{"trace-cmd switch without arrow", "cpus=2\n" + tcGood1 + tcHdr + "sched_switch:         bash:100 [120] R cat:200 [120]\n" + tcGood2, 3, parse.ErrBadField, 1, 2},
		{"trace-cmd switch without next pid", "cpus=2\n" + tcGood1 + tcHdr + "sched_switch:         bash:100 [120] R ==> cat [120]\n" + tcGood2, 3, parse.ErrBadField, 1, 2},
		{"trace-cmd switch cut inside next comm", "cpus=2\n" + tcGood1 + tcHdr + "sched_switch:         bash:100 [120] R ==> ca\n" + tcGood2, 3, parse.ErrTruncated, 1, 2},
		{"trace-cmd switch cut after arrow", "cpus=2\n" + tcGood1 + tcHdr + "sched_switch:         bash:100 [120] R ==> \n" + tcGood2, 3, parse.ErrTruncated, 1, 2},
		{"trace-cmd wakeup bad pid", "cpus=2\n" + tcGood1 + tcHdr + "sched_wakeup:         cat:xx [120] CPU:000\n" + tcGood2, 3, parse.ErrBadField, 1, 2},
		{"trace-cmd wakeup bad CPU", "cpus=2\n" + tcGood1 + tcHdr + "sched_wakeup:         cat:200 [120] CPU:0x\n" + tcGood2, 3, parse.ErrBadField, 1, 2},
		{"trace-cmd wakeup_new without pid", "cpus=2\n" + tcGood1 + tcHdr + "sched_wakeup_new:     cat [120] CPU:000\n" + tcGood2, 3, parse.ErrBadField, 1, 2},
		{"trace-cmd bad prio bracket", "cpus=2\n" + tcGood1 + tcHdr + "sched_switch:         bash:100 [1x0] S ==> cat:200 [120]\n" + tcGood2, 3, parse.ErrBadField, 1, 2},
		{"trace-cmd cut mid-line", "cpus=2\n" + tcGood1 + tcHdr + "sched_switch:         bash:100 [120] S ==> cat:2", 3, parse.ErrTruncated, 1, 1},
	}
	if len(tests) < 30 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Strict: the events before the bad line, then its error.
			r, err := NewReader(strings.NewReader(tc.in), parse.Options{Name: "bad.txt"})
			if err != nil {
				t.Fatal(err)
			}
			var ev timeline.Event
			n := 0
			for {
				before := ev
				err = r.Next(&ev)
				if err != nil {
					if ev != before {
						t.Errorf("Next changed the event while returning %v", err)
					}
					break
				}
				n++
			}
			if errors.Is(err, io.EOF) {
				t.Fatalf("got io.EOF after %d events, want an error on line %d", n, tc.line)
			}
			var pe *parse.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *parse.ParseError", err, err)
			}
			msg := err.Error()
			m := errForm.FindStringSubmatch(msg)
			if m == nil {
				t.Errorf("error %q does not read name:LINE: record: want ..., got ...", msg)
			} else if m[1] != fmt.Sprint(tc.line) || pe.Line != tc.line {
				t.Errorf("error %q: line %s (%d), want %d", msg, m[1], pe.Line, tc.line)
			}
			if !errors.Is(err, tc.cause) {
				t.Errorf("error %q: cause %v, want %v", msg, pe.Err, tc.cause)
			}
			if n != tc.before {
				t.Errorf("events before the error = %d, want %d", n, tc.before)
			}
			if len(msg) > 400 {
				t.Errorf("error message is %d bytes long", len(msg))
			}

			// Lenient: the good events, the bad line counted.
			r, err = NewReader(strings.NewReader(tc.in), parse.Options{Name: "bad.txt", Lenient: true})
			if err != nil {
				t.Fatal(err)
			}
			n = 0
			for {
				err = r.Next(&ev)
				if err != nil {
					break
				}
				n++
			}
			if !errors.Is(err, io.EOF) {
				t.Fatalf("lenient: error %v, want io.EOF", err)
			}
			meta := r.Meta()
			if n != tc.good || meta.Skipped != 1 {
				t.Errorf("lenient: %d events, %d skipped; want %d, 1", n, meta.Skipped, tc.good)
			}
			if len(meta.SkippedErrors) != 1 || meta.SkippedErrors[0].Error() != msg {
				t.Errorf("lenient: SkippedErrors = %v, want [%s]", meta.SkippedErrors, msg)
			}
		})
	}
}

func TestEmptyInput(t *testing.T) {
	for _, in := range []string{"", "\n\n", "# tracer: nop\n#\n"} {
		r, err := NewReader(strings.NewReader(in), parse.Options{Name: "empty.txt"})
		if err != nil {
			t.Fatal(err)
		}
		var ev timeline.Event
		if err := r.Next(&ev); !errors.Is(err, io.EOF) {
			t.Errorf("%q: Next = %v, want io.EOF", in, err)
		}
		if err := r.Next(&ev); !errors.Is(err, io.EOF) {
			t.Errorf("%q: second Next = %v, want io.EOF", in, err)
		}
	}
}

// failReader returns its data, then an error.
type failReader struct {
	data []byte
	err  error
}

func (f *failReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// TestReadError checks that an I/O error (a corrupt compressed stream, say)
// stops the Reader even when lenient, positioned after the last good line.
func TestReadError(t *testing.T) {
	cause := errors.New("zstd: corrupt input")
	r, err := NewReader(&failReader{data: []byte(good1 + good2 + "   cat-2"), err: cause}, parse.Options{Name: "x.txt.zst", Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	var ev timeline.Event
	n := 0
	for {
		err = r.Next(&ev)
		if err != nil {
			break
		}
		n++
	}
	if n != 2 || !errors.Is(err, cause) {
		t.Errorf("got %d events and %v, want 2 and %v", n, err, cause)
	}
	if err2 := r.Next(&ev); !errors.Is(err2, cause) {
		t.Errorf("second Next = %v, want the same error", err2)
	}
}
