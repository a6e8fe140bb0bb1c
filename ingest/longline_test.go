package ingest

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
)

// longLine is a trace head, then one line of n bytes of 'x' and a
// newline, then a valid record; it counts the bytes handed out.
type longLine struct {
	head, tail string
	n, pos     int64
	read       int64
}

func (l *longLine) Read(p []byte) (int, error) {
	total := int64(len(l.head)) + l.n + 1 + int64(len(l.tail))
	if l.pos >= total {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && l.pos < total {
		switch {
		case l.pos < int64(len(l.head)):
			p[k] = l.head[l.pos]
		case l.pos < int64(len(l.head))+l.n:
			p[k] = 'x'
		case l.pos == int64(len(l.head))+l.n:
			p[k] = '\n'
		default:
			p[k] = l.tail[l.pos-int64(len(l.head))-l.n-1]
		}
		k++
		l.pos++
	}
	l.read += int64(k)
	return k, nil
}

// TestLongLineStopsAtLimit: issue 16 item 9. A line longer than the
// readers' limit (ftrace 16 MiB, perf 4 MiB) is an error as soon as the
// limit is passed: before, a 10 GB line was read to its end first (here
// 64 MiB were read for a 64 MiB line). Under --lenient the line is
// skipped, which needs reading to its end, and the next record is read.
func TestLongLineStopsAtLimit(t *testing.T) {
	const n = 64 << 20
	sw := func(cpu string) string {
		return "  a-1 [" + cpu + "] d..2. 1.000000: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
	}
	cases := []struct{ name, head, tail string }{
		{"ftrace", "# tracer: nop\n#\n" + sw("000"), sw("000")},
		{"perf", "   a     1 [000]     1.000000: sched:sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n",
			"   a     1 [000]     1.000001: sched:sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"},
	}
	for _, c := range cases {
		src := &longLine{head: c.head, tail: c.tail, n: n}
		_, err := LoadReader(src, c.name+".txt", parse.Options{})
		var pe *parse.ParseError
		if !errors.As(err, &pe) || pe.Line != strings.Count(c.head, "\n")+1 {
			t.Errorf("%s: got %v, want a positioned error at the long line", c.name, err)
		}
		if src.read > 32<<20 {
			t.Errorf("%s: %d MiB read before the error, want at most 32 MiB", c.name, src.read>>20)
		}
		src = &longLine{head: c.head, tail: c.tail, n: n}
		ld, err := LoadReader(src, c.name+".txt", parse.Options{Lenient: true})
		if err != nil || ld.Meta.Skipped != 1 || ld.Timeline.Len() != 2 {
			t.Errorf("%s --lenient: %v, want the long line skipped and 2 events", c.name, err)
		}
	}
}
