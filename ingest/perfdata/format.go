package perfdata

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/ingest/parse"
)

// field is one field of a tracepoint's raw record, as its format file
// states it ("field:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;").
type field struct {
	name    string
	off     int
	size    int
	signed  bool
	dataLoc bool // __data_loc: a u32 holding the data's size<<16 | offset
	array   bool // char x[N] or char x[]
}

// eventFormat is one event format file of the tracing data
// (events/SYS/NAME/format in tracefs).
type eventFormat struct {
	sys, name string
	id        uint64
	fields    map[string]field
	printFmt  string
	at        int64 // file offset of the format text, for errors
}

// parseFormat reads a format file. Only name, ID, the field lines and
// print fmt are used; the field offsets come from here and nowhere else.
func parseFormat(sys string, text []byte, at int64, file string) (*eventFormat, *parse.ParseError) {
	f := &eventFormat{sys: sys, fields: map[string]field{}, at: at}
	bad := func(line int, msg string, args ...any) *parse.ParseError {
		return &parse.ParseError{File: file, Offset: at, Record: "event format " + sys + "/" + f.name,
			Msg: fmt.Sprintf("line %d: ", line) + fmt.Sprintf(msg, args...), Err: parse.ErrBadField}
	}
	haveID := false
	for i, raw := range bytes.Split(text, []byte("\n")) {
		line := strings.TrimSpace(string(raw))
		switch {
		case strings.HasPrefix(line, "name:"):
			f.name = strings.TrimSpace(line[len("name:"):])
		case strings.HasPrefix(line, "ID:"):
			v, err := strconv.ParseUint(strings.TrimSpace(line[len("ID:"):]), 10, 64)
			if err != nil {
				return nil, bad(i+1, "want ID: N, got %q", clip(line))
			}
			f.id, haveID = v, true
		case strings.HasPrefix(line, "field:"):
			fl, ok := parseField(line)
			if !ok {
				return nil, bad(i+1, "want field:TYPE NAME; offset:N; size:N; signed:N;, got %q", clip(line))
			}
			f.fields[fl.name] = fl
		case strings.HasPrefix(line, "print fmt:"):
			f.printFmt = strings.TrimSpace(line[len("print fmt:"):])
		}
	}
	if f.name == "" || !haveID {
		return nil, bad(1, "want name: and ID: lines, got %q", clip(firstLine(text)))
	}
	return f, nil
}

// parseField reads "field:TYPE NAME[N];\toffset:N;\tsize:N;\tsigned:N;".
func parseField(line string) (field, bool) {
	var fl field
	parts := strings.Split(line, ";")
	if len(parts) < 3 {
		return fl, false
	}
	decl := strings.TrimSpace(strings.TrimPrefix(parts[0], "field:"))
	fl.dataLoc = strings.HasPrefix(decl, "__data_loc")
	if strings.IndexByte(decl, '[') >= 0 {
		// "char prev_comm[16]", "__data_loc char[] comm": the name is the
		// last word once the brackets are gone.
		fl.array = true
		decl = brackets.ReplaceAllString(decl, "")
	}
	j := strings.LastIndexAny(decl, " *")
	fl.name = strings.TrimSpace(decl[j+1:])
	if fl.name == "" {
		return fl, false
	}
	seen := 0
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(p), ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fl, false
		}
		switch k {
		case "offset":
			fl.off, seen = n, seen|1
		case "size":
			fl.size, seen = n, seen|2
		case "signed":
			fl.signed = n != 0
		}
	}
	return fl, seen == 3 && fl.off >= 0 && fl.size >= 0
}

// brackets matches the array dimensions of a field declaration.
var brackets = regexp.MustCompile(`\[[^\]]*\]`)

// flagPair matches one { value, "letters" } of a __print_flags table.
var flagPair = regexp.MustCompile(`\{\s*(0x[0-9a-fA-F]+|[0-9]+)\s*,\s*"([^"]*)"\s*\}`)

// stateTable is how the kernel prints sched_switch's prev_state, read from
// the print fmt: the __print_flags table, "R" when no flag bit is set, and
// "+" when the bit above the highest flag (TASK_REPORT_MAX, or
// TASK_STATE_MAX on older kernels) is set (include/trace/events/sched.h).
type stateTable struct {
	bits    []uint64
	letters []string
	mask    uint64 // the flag bits
	plus    uint64 // the preempted bit
}

func parseStateTable(printFmt string) (stateTable, bool) {
	var t stateTable
	i := strings.Index(printFmt, "__print_flags(")
	if i < 0 {
		return t, false
	}
	var top uint64
	for _, m := range flagPair.FindAllStringSubmatch(printFmt[i:], -1) {
		v, err := strconv.ParseUint(m[1], 0, 64)
		if err != nil || v == 0 {
			return t, false
		}
		t.bits = append(t.bits, v)
		t.letters = append(t.letters, m[2])
		top = max(top, v)
	}
	if len(t.bits) == 0 {
		return t, false
	}
	t.plus = top << 1
	t.mask = t.plus - 1
	return t, true
}

// format prints the state as the kernel's print fmt does.
func (t *stateTable) format(v uint64) string {
	var b strings.Builder
	if v&t.mask == 0 {
		b.WriteString("R")
	} else {
		for i, bit := range t.bits {
			if v&bit != 0 {
				if b.Len() > 0 {
					b.WriteByte('|')
				}
				b.WriteString(t.letters[i])
			}
		}
	}
	if v&t.plus != 0 {
		b.WriteByte('+')
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60]
	}
	return s
}

func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
