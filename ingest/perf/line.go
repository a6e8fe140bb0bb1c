package perf

import (
	"bytes"
	"fmt"
	"math"

	"github.com/schedlens/schedlens/timeline"
)

// sample is the header of one perf script line, split into its fields. The
// byte slices point into the line.
type sample struct {
	comm    []byte // header comm; nil when absent or a ":TID" placeholder
	tid     timeline.TID
	tgid    int32 // pid of pid/tid, else -1
	cpu     int
	time    timeline.Time
	full    []byte // event name as printed ("sched:sched_switch")
	sys     []byte // its system ("sched"), nil without one
	event   []byte // its name without the system ("sched_switch")
	text    []byte // the tracepoint text after "name: "
	rest    []byte // for a PERF_RECORD_* line, the text after the timestamp
	record  bool   // a PERF_RECORD_* line
	latency bool   // the -L layout (bare CPU column, comm cut to 8)
}

// recordName is the ParseError.Record for s.
func (s *sample) recordName() string {
	switch {
	case len(s.event) > 0:
		return string(s.event)
	case s.record:
		return string(recordName(s.rest))
	}
	return "perf script sample"
}

// parse splits line into s. It returns "" or what was wrong.
//
// The timestamp anchors the line: it is the first token of digits with at
// most one dot that ends in ':' followed by a space or the end. The header
// fields before it are read right to left (the comm, which may hold spaces,
// is whatever is left), the event name and text after it left to right.
func (s *sample) parse(line []byte) string {
	*s = sample{tid: timeline.NoTID, tgid: -1}
	ts, te, msg := findTime(line)
	if msg != "" {
		return msg
	}
	t, msg := parseTime(line[ts:te])
	if msg != "" {
		return msg
	}
	s.time = t
	if msg := s.header(line[:ts]); msg != "" {
		return msg
	}
	rest := skipSpace(line[te+1:])
	if bytes.HasPrefix(rest, []byte("PERF_RECORD_")) {
		s.record = true
		s.rest = rest
		return ""
	}
	// -F +period prints the period between the time and the event name.
	if len(rest) > 0 && isDigit(rest[0]) {
		j := 1
		for j < len(rest) && isDigit(rest[j]) {
			j++
		}
		if j < len(rest) && rest[j] == ' ' {
			rest = skipSpace(rest[j:])
		}
	}
	name := rest
	s.text = nil
	if i := bytes.IndexByte(rest, ' '); i >= 0 {
		name = rest[:i]
		s.text = rest[i+1:]
	}
	if len(name) < 2 || name[len(name)-1] != ':' {
		return fmt.Sprintf("event field required: want the event name and a colon (sched:sched_switch:) after the timestamp, got %q", clip(rest))
	}
	s.full = name[:len(name)-1]
	s.event = s.full
	if i := bytes.IndexByte(s.full, ':'); i >= 0 {
		s.sys = s.full[:i]
		s.event = s.full[i+1:]
	}
	if len(s.event) == 0 {
		return fmt.Sprintf("event name: want sys:name, got %q", clip(name))
	}
	return ""
}

// findTime returns the bounds of the timestamp token of line (without its
// colon; line[te] is the colon).
func findTime(line []byte) (ts, te int, msg string) {
	from := 0
	for {
		i := bytes.IndexByte(line[from:], ':')
		if i < 0 {
			return 0, 0, fmt.Sprintf("want a timestamp and a colon (590.907234:), got %q", clip(line))
		}
		i += from
		if i+1 == len(line) || line[i+1] == ' ' {
			s := bytes.LastIndexByte(line[:i], ' ') + 1
			if timeShape(line[s:i]) {
				return s, i, ""
			}
		}
		from = i + 1
	}
}

// timeShape reports whether b is digits with at most one dot.
func timeShape(b []byte) bool {
	digits, dots := 0, 0
	for _, c := range b {
		switch {
		case isDigit(c):
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1 && b[0] != '.'
}

// parseTime parses "590.907234" (any number of fraction digits up to 9) or
// a bare integer into ns.
func parseTime(b []byte) (timeline.Time, string) {
	var sec, frac int64
	i := 0
	for ; i < len(b) && isDigit(b[i]); i++ {
		if sec > (math.MaxInt64-9)/10 {
			return 0, fmt.Sprintf("timestamp %q: overflows", clip(b))
		}
		sec = sec*10 + int64(b[i]-'0')
	}
	if i == len(b) {
		return timeline.Time(sec), ""
	}
	if b[i] != '.' {
		return 0, fmt.Sprintf("timestamp: want seconds.fraction, got %q", clip(b))
	}
	i++
	n := len(b) - i
	if n == 0 || n > 9 {
		return 0, fmt.Sprintf("timestamp %q: want 1 to 9 fraction digits", clip(b))
	}
	for ; i < len(b); i++ {
		if !isDigit(b[i]) {
			return 0, fmt.Sprintf("timestamp: want seconds.fraction, got %q", clip(b))
		}
		frac = frac*10 + int64(b[i]-'0')
	}
	for ; n < 9; n++ {
		frac *= 10
	}
	if sec > (math.MaxInt64-frac)/1e9 {
		return 0, fmt.Sprintf("timestamp %q: overflows", clip(b))
	}
	return timeline.Time(sec*1e9 + frac), ""
}

// header reads the fields before the timestamp, right to left: [tod]
// [misc] cpu, then [pid/tid | tid], then the comm.
func (s *sample) header(p []byte) string {
	ts, te := prevTok(p, len(p))
	if ts == te {
		return "cpu field required: want [CPU] before the timestamp, found nothing"
	}
	// -F +tod: "2026-12-02 16:25:46.123456" just before the timestamp.
	if isClock(p[ts:te]) {
		if ds, de := prevTok(p, ts); ds < de && isDate(p[ds:de]) {
			ts, te = prevTok(p, ds)
		}
	}
	// -F +misc: letters after the CPU column.
	if isMisc(p[ts:te]) {
		if cs, ce := prevTok(p, ts); cs < ce && p[cs] == '[' {
			ts, te = cs, ce
		}
	}
	tok := p[ts:te]
	var end int // end of the comm and id columns
	switch {
	case len(tok) >= 3 && tok[0] == '[' && tok[len(tok)-1] == ']':
		cpu, ok := parseInt(tok[1 : len(tok)-1])
		if !ok || cpu < 0 || cpu > maxCPU {
			return fmt.Sprintf("field cpu: want [0] to [%d], got %q", maxCPU, clip(tok))
		}
		s.cpu = int(cpu)
		end = ts
	case allDigits(tok):
		// -L prints the CPU bare ("%3d") after an 8-column comm and the tid.
		is, ie := prevTok(p, ts)
		if is == ie || !isID(p[is:ie]) || lastNonSpace(p[:is]) > 8 {
			return fmt.Sprintf("cpu field required: want [CPU] before the timestamp, got %q (perf script -F without cpu?)", clip(tok))
		}
		cpu, ok := parseInt(tok)
		if !ok || cpu > maxCPU {
			return fmt.Sprintf("field cpu: want 0 to %d, got %q", maxCPU, clip(tok))
		}
		s.cpu = int(cpu)
		s.latency = true
		end = ts
	default:
		return fmt.Sprintf("cpu field required: want [CPU] before the timestamp, got %q", clip(tok))
	}
	is, ie := prevTok(p, end)
	if is < ie && isID(p[is:ie]) {
		// In the default layout the comm fills columns 0-15, so a lone
		// number ending at column 16 is a numeric comm, not a tid.
		if s.latency || ie != 16 || lastNonSpace(p[:is]) != 0 {
			if msg := s.id(p[is:ie]); msg != "" {
				return msg
			}
			end = is
		}
	}
	comm := bytes.TrimSpace(p[:end])
	if !placeholder(comm) {
		s.comm = comm
	}
	return ""
}

// id parses "tid", "pid/tid"; -1 stands for unknown.
func (s *sample) id(b []byte) string {
	if pid, tid, ok := bytes.Cut(b, []byte("/")); ok {
		p, ok1 := parseInt(pid)
		t, ok2 := parseInt(tid)
		if !ok1 || !ok2 || p < -1 || t < -1 || p > math.MaxInt32 || t > math.MaxInt32 {
			return fmt.Sprintf("field pid/tid: want two task ids, got %q", clip(b))
		}
		s.tgid = int32(p)
		s.tid = timeline.TID(t)
		return ""
	}
	t, ok := parseInt(b)
	if !ok || t < -1 || t > math.MaxInt32 {
		return fmt.Sprintf("field tid: want a task id, got %q", clip(b))
	}
	s.tid = timeline.TID(t)
	return ""
}

// isID reports whether b looks like "tid" or "pid/tid" ("-1" allowed).
func isID(b []byte) bool {
	if pid, tid, ok := bytes.Cut(b, []byte("/")); ok {
		return isIDNum(pid) && isIDNum(tid)
	}
	return isIDNum(b)
}

func isIDNum(b []byte) bool {
	return allDigits(b) || string(b) == "-1"
}

// placeholder reports perf's ":TID" stand-in for an unknown comm.
func placeholder(comm []byte) bool {
	if len(comm) < 2 || comm[0] != ':' {
		return false
	}
	return isIDNum(comm[1:])
}

// isClock reports "HH:MM:SS" with an optional fraction.
func isClock(b []byte) bool {
	if len(b) < 8 || b[2] != ':' || b[5] != ':' {
		return false
	}
	for i, c := range b {
		switch {
		case i == 2 || i == 5:
		case i == 8:
			if c != '.' {
				return false
			}
		case !isDigit(c):
			return false
		}
	}
	return true
}

// isDate reports "YYYY-MM-DD".
func isDate(b []byte) bool {
	if len(b) != 10 || b[4] != '-' || b[7] != '-' {
		return false
	}
	for i, c := range b {
		if i != 4 && i != 7 && !isDigit(c) {
			return false
		}
	}
	return true
}

// isMisc reports the letters perf prints for -F +misc (K U H G g M E S p).
func isMisc(b []byte) bool {
	if len(b) == 0 || len(b) > 6 {
		return false
	}
	for _, c := range b {
		switch c {
		case 'K', 'U', 'H', 'G', 'g', 'M', 'E', 'S', 'p':
		default:
			return false
		}
	}
	return true
}

// prevTok returns the bounds of the space-separated token ending at or
// before end; ts == te when there is none.
func prevTok(p []byte, end int) (ts, te int) {
	te = end
	for te > 0 && p[te-1] == ' ' {
		te--
	}
	ts = te
	for ts > 0 && p[ts-1] != ' ' {
		ts--
	}
	return ts, te
}

// lastNonSpace returns the index after the last non-space byte of p.
func lastNonSpace(p []byte) int {
	i := len(p)
	for i > 0 && p[i-1] == ' ' {
		i--
	}
	return i
}

func skipSpace(b []byte) []byte {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	return b
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func allDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// parseInt parses an optionally negative decimal integer.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}
