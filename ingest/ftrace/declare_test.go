package ftrace

import (
	"bytes"
	"testing"
	"testing/iotest"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// TestDeclaredHeader: the CPU count and coverage a Reader declares before
// its first record (for a walk beside the read) are those its Meta states
// once the whole input is read, where nothing after the header revises
// them; nothing is declared without a header, or when the first read
// ends inside it.
func TestDeclaredHeader(t *testing.T) {
	rec := "          <idle>-0       [001] d..2.   100.000100: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=7 next_prio=120\n"
	file := func(entries string) string {
		return "# tracer: nop\n#\n" + entries + "\n#\n#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n#              | |         |   |||||     |         |\n" + rec
	}
	for _, tc := range []struct {
		name, in string
		ncpu     int
		cov      timeline.Coverage
		sameMeta bool // the Meta after the read says the same
	}{
		{"trace, none overwritten", file("# entries-in-buffer/entries-written: 1/1   #P:2"), 2, timeline.CoverageComplete, true},
		{"trace, some overwritten", file("# entries-in-buffer/entries-written: 1/5   #P:4"), 4, timeline.CoverageLost, true},
		{"trace, no #P", file("# entries-in-buffer/entries-written: 1/1"), 0, timeline.CoverageComplete, true},
		{"trace, CRLF", "# tracer: nop\r\n# entries-in-buffer/entries-written: 1/1   #P:3\r\n" + rec, 3, timeline.CoverageComplete, true},
		{"trace-cmd report", "cpus=2\n" + rec, 2, timeline.CoverageUnknown, true},
		{"trace-cmd report, version first", "version = 6\ncpus=8\n" + rec, 8, timeline.CoverageUnknown, true},
		{"trace_pipe", rec, 0, timeline.CoverageUnknown, false},
		{"a record before the header", rec + "cpus=2\n", 0, timeline.CoverageUnknown, false},
		{"bad entries line", file("# entries-in-buffer/entries-written: 1/x   #P:2"), 0, timeline.CoverageUnknown, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader([]byte(tc.in)), parse.Options{Name: "x"})
			if err != nil {
				t.Fatal(err)
			}
			cov, why := r.DeclaredCoverage()
			if r.DeclaredCPUs() != tc.ncpu || cov != tc.cov {
				t.Fatalf("declared %d CPUs, coverage %v (%s); want %d, %v", r.DeclaredCPUs(), cov, why, tc.ncpu, tc.cov)
			}
			if !tc.sameMeta {
				return
			}
			_, rd := readAll(t, "x", []byte(tc.in), parse.Options{})
			m := rd.Meta()
			if tc.ncpu > 0 && m.NCPU != tc.ncpu || m.Coverage != cov || m.CoverageNote != why {
				t.Errorf("declared %d CPUs, %v (%q); the read ends with %d, %v (%q)", tc.ncpu, cov, why, m.NCPU, m.Coverage, m.CoverageNote)
			}
		})
	}
	// the first read ends inside the header: nothing declared, nothing waited for
	r, err := NewReader(iotest.OneByteReader(bytes.NewReader([]byte(file("# entries-in-buffer/entries-written: 1/1   #P:2")))), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := r.DeclaredCPUs(); n != 0 {
		t.Errorf("a first read of one byte: declared %d CPUs, want 0", n)
	}
}
