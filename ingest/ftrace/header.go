package ftrace

import (
	"bytes"
	"math"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

const (
	// maxCPUColumn bounds where the CPU column may start in a line.
	maxCPUColumn = 512
	// maxTGIDColumn bounds the width of the "(  tgid)" column.
	maxTGIDColumn = 16
)

// header is the context part of a record line, up to the event name.
type header struct {
	comm    []byte // TASK of TASK-PID, as printed ("<...>" when unknown)
	pid     timeline.TID
	tgid    int32
	cpu     timeline.CPU
	ctx     timeline.Context
	time    timeline.Time
	intTime bool   // the timestamp was a bare integer (counter clock)
	prefix  bool   // a trace-cmd instance prefix came first
	name    []byte // event name
	rest    []byte // what follows "name:"
}

// header parses the context columns of a record line into h:
//
//	[instance: ]TASK-PID [(TGID) ][CPU] [FLAGS ]TIMESTAMP: NAME:REST
//
// Outline:
//  1. Find the CPU column: a '[' whose left side, skipping spaces and an
//     optional "(tgid)", ends in "-digits" (the pid after the last dash of
//     the comm). Comms may hold '[' too, so try each '[' in turn.
//  2. The comm is the 16-column field left of that dash (wider if the comm
//     is longer); whatever is left of it must be empty or "instance:".
//  3. Right of "]": optional irq-info flags, the timestamp, ':', the name.
func (r *recParser) header(line []byte, h *header) error {
	// The CPU column comes after at most an instance name, 16 comm
	// columns, the pid and the tgid: do not look for it in the event text.
	win := line
	if len(win) > maxCPUColumn {
		win = win[:maxCPUColumn]
	}
	from := 0
	for {
		k := bytes.IndexByte(win[from:], '[')
		if k < 0 {
			return r.errf("record", parse.ErrBadField, "want TASK-PID [CPU] TIMESTAMP: EVENT: FIELDS, got %q", clip(line))
		}
		i := from + k
		from = i + 1
		if taskPID(line, i, h) {
			return r.afterCPU(line, i, h)
		}
	}
}

// taskPID parses the columns left of the '[' at line[i] into h. It reports
// false when they are not TASK-PID [(TGID)].
func taskPID(line []byte, i int, h *header) bool {
	j := i - 1
	for j >= 0 && line[j] == ' ' {
		j--
	}
	h.tgid = -1
	if j >= 0 && line[j] == ')' {
		lo := max(0, j-maxTGIDColumn)
		o := bytes.LastIndexByte(line[lo:j], '(')
		if o < 0 {
			return false
		}
		o += lo
		tg := bytes.Trim(line[o+1:j], " ")
		if len(tg) > 0 && tg[0] == '-' && len(bytes.Trim(tg, "-")) == 0 {
			h.tgid = -1
		} else {
			v, n, ok := parseUint(tg, math.MaxInt32)
			if !ok || n != len(tg) {
				return false
			}
			h.tgid = int32(v)
		}
		j = o - 1
		for j >= 0 && line[j] == ' ' {
			j--
		}
	}
	e := j + 1
	for j >= 0 && line[j] >= '0' && line[j] <= '9' {
		j--
	}
	if j < 0 || j == e-1 || line[j] != '-' {
		return false
	}
	pid, n, ok := parseUint(line[j+1:e], math.MaxInt32)
	if !ok || n != e-j-1 {
		return false
	}
	dash := j
	// The kernel prints "%16s-%-7d" (trace_print_context): the comm is
	// right-aligned in 16 columns, and kernel comms are at most 15 bytes.
	cs := dash - 16
	if cs < 0 {
		cs = 0
	}
	for cs > 0 && line[cs-1] != ' ' && line[cs] != ' ' {
		cs-- // a wider comm than the kernel prints: take the whole word
	}
	h.prefix = false
	if pre := bytes.Trim(line[:cs], " "); len(pre) > 0 {
		// trace-cmd prints "%*s: " with the instance name first.
		if pre[len(pre)-1] != ':' || bytes.IndexByte(pre, ' ') >= 0 {
			return false
		}
		h.prefix = true
	}
	c := line[cs:dash]
	for len(c) > 0 && c[0] == ' ' {
		c = c[1:]
	}
	h.comm = c
	h.pid = timeline.TID(pid)
	return true
}

// afterCPU parses the CPU column at line[i] and what follows it.
func (r *recParser) afterCPU(line []byte, i int, h *header) error {
	p := line[i+1:]
	cpu, n, ok := parseUint(p, MaxCPU-1)
	if !ok || n >= len(p) || p[n] != ']' {
		if isDigits(p) {
			return r.errf("record", parse.ErrTruncated, "field CPU: want [N], got end of line after %q", clip(line))
		}
		return r.errf("record", parse.ErrBadField, "field CPU: want [N] with N < %d, got %q", MaxCPU, clip(cpuField(p)))
	}
	h.cpu = timeline.CPU(cpu)
	p = p[n+1:]
	if len(p) == 0 {
		return r.errf("record", parse.ErrTruncated, "want a timestamp after the CPU column, got end of line")
	}
	if p[0] != ' ' {
		return r.errf("record", parse.ErrBadField, "want a space after the CPU column, got %q", clip(p))
	}
	p = p[1:]
	h.ctx = timeline.CtxUnknown
	if len(p) > 0 && (p[0] < '0' || p[0] > '9') && p[0] != ' ' {
		// irq-info flags (trace_print_lat_fmt): irqs-off, need-resched,
		// hardirq/softirq, preempt-depth[, migrate-disable].
		k := bytes.IndexByte(p, ' ')
		if k < 0 {
			return r.errf("record", parse.ErrTruncated, "want a timestamp after the irq-info flags, got end of line")
		}
		f := p[:k]
		// The kernel prints 4 (before 5.x) or 5 characters; libtraceevent
		// (data_latency_format, used by trace-cmd report since 3.3) prints
		// the preempt count in hex and may add migrate-disable and
		// lock-depth digits.
		if len(f) < 4 || len(f) > 10 {
			return r.errf("record", parse.ErrBadField, "field irq-info flags: want 4 or 5 flag characters like d..2., got %q", f)
		}
		switch f[2] {
		case '.':
			h.ctx = timeline.CtxTask
		case 's':
			h.ctx = timeline.CtxSoftirq
		case 'h', 'H':
			h.ctx = timeline.CtxHardirq
		case 'z', 'Z':
			h.ctx = timeline.CtxNMI
		default:
			return r.errf("record", parse.ErrBadField, "field irq-info flags: want one of . s h H z Z as the third flag, got %q", f)
		}
		p = p[k+1:]
	}
	for len(p) > 0 && p[0] == ' ' {
		p = p[1:]
	}
	k := bytes.IndexByte(p, ':')
	if k < 0 {
		if len(p) == 0 {
			return r.errf("record", parse.ErrTruncated, "want a timestamp, got end of line")
		}
		if _, ok := parseTime(p); ok || len(p) < 24 && isTimeChars(p) {
			return r.errf("record", parse.ErrTruncated, "want TIMESTAMP: EVENT:, got end of line after %q", clip(p))
		}
		return r.errf("record", parse.ErrBadField, "field timestamp: want seconds.fraction or an integer followed by ':', got %q", clip(p))
	}
	ts := p[:k]
	h.intTime = bytes.IndexByte(ts, '.') < 0
	t, ok := parseTime(ts)
	if !ok {
		return r.errf("record", parse.ErrBadField, "field timestamp: want seconds.fraction (at most 9 digits) or an integer, got %q", clip(ts))
	}
	h.time = t
	p = p[k+1:]
	if len(p) == 0 {
		return r.errf("record", parse.ErrTruncated, "want an event name after the timestamp, got end of line")
	}
	if p[0] != ' ' {
		return r.errf("record", parse.ErrBadField, "want ': ' after the timestamp, got %q", clip(p))
	}
	p = p[1:]
	if len(p) > 1 && p[0] == '(' && p[1] == '+' {
		// trace-cmd report -t: "(+DELTA)" between the timestamp and the name
		if k := bytes.IndexByte(p, ')'); k > 0 {
			p = bytes.TrimLeft(p[k+1:], " ")
		}
	}
	k = bytes.IndexByte(p, ':')
	if k <= 0 || bytes.IndexByte(p[:k], ' ') >= 0 {
		if k < 0 && bytes.IndexByte(p, ' ') < 0 {
			return r.errf("record", parse.ErrTruncated, "want EVENT: after the timestamp, got end of line after %q", clip(p))
		}
		return r.errf("record", parse.ErrBadField, "want EVENT: after the timestamp, got %q", clip(p))
	}
	h.name = p[:k]
	h.rest = p[k+1:]
	return nil
}

// cpuField returns the text of a bad CPU column, up to its ']' or space.
func cpuField(p []byte) []byte {
	for i, c := range p {
		if c == ']' || c == ' ' {
			return p[:i]
		}
	}
	return p
}

// isDigits reports whether b holds only decimal digits (true for empty b).
func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isTimeChars reports whether b holds only digits and dots.
func isTimeChars(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}

var pow10 = [...]int64{1e9, 1e8, 1e7, 1e6, 1e5, 1e4, 1e3, 1e2, 1e1, 1}

// parseTime parses "575.448244" as 575448244000 ns (any number of fraction
// digits up to 9) and a bare integer as is.
func parseTime(b []byte) (timeline.Time, bool) {
	var sec int64
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		if sec > (math.MaxInt64-9)/10 {
			return 0, false
		}
		sec = sec*10 + int64(b[i]-'0')
		i++
	}
	if i == 0 {
		return 0, false
	}
	if i == len(b) {
		return timeline.Time(sec), true
	}
	if b[i] != '.' {
		return 0, false
	}
	i++
	nd := len(b) - i
	if nd < 1 || nd > 9 {
		return 0, false
	}
	var frac int64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		frac = frac*10 + int64(c-'0')
	}
	if sec > (math.MaxInt64-999999999)/1000000000 {
		return 0, false
	}
	return timeline.Time(sec*1e9 + frac*pow10[nd]), true
}

// parseUint parses the decimal digits at the start of b, at most max. It
// returns the value, the number of digits, and false when there are none or
// the value is too large.
func parseUint(b []byte, max int64) (int64, int, bool) {
	var v int64
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		v = v*10 + int64(b[i]-'0')
		if v > max {
			return 0, i, false
		}
		i++
	}
	return v, i, i > 0
}
