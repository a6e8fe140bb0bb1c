package tracedat

import (
	"bytes"
	"strconv"
	"strings"
)

// field is one line of a tracefs format file's "format:" block:
//
//	field:pid_t prev_pid;	offset:24;	size:4;	signed:1;
type field struct {
	name   string
	typ    string // the declaration before the name ("pid_t", "char", "__data_loc char[]")
	off    int
	size   int
	signed bool
	array  bool // "name[N]" or "name[]"
	loc    int  // locDataLoc, locRelLoc: a dynamic array, its field holds where the data is
}

// Dynamic arrays: the field is a 32-bit word, length<<16 | offset, the
// offset from the record start (__data_loc) or from the end of the field
// (__rel_loc) (include/trace/stages/stage2_data_offsets.h and friends).
const (
	locDataLoc = 1
	locRelLoc  = 2
)

// eventFormat is one parsed format file (events/<system>/<event>/format).
type eventFormat struct {
	system string
	name   string
	id     int
	fields []field
	print  string // the "print fmt:" text
}

func (e *eventFormat) field(name string) (field, bool) {
	for _, f := range e.fields {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

// parseFormat parses a format file. Only the name and ID are read unless
// full(name) says the fields are needed too (a kernel has some 2000 formats;
// schedlens decodes about a dozen). On failure it returns the 1-based line
// and what was wrong.
func parseFormat(b []byte, full func(name string) bool) (*eventFormat, int, string) {
	e := &eventFormat{id: -1}
	wantFields := false
	for ln := 1; len(b) > 0; ln++ {
		raw := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			raw, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		raw = bytes.TrimSpace(raw)
		switch {
		case len(raw) == 0:
		case bytes.HasPrefix(raw, []byte("name:")):
			e.name = string(bytes.TrimSpace(raw[5:]))
			wantFields = full == nil || full(e.name)
		case bytes.HasPrefix(raw, []byte("ID:")):
			id, err := strconv.Atoi(string(bytes.TrimSpace(raw[3:])))
			if err != nil || id < 0 || id > 0xffff {
				return nil, ln, "want ID: followed by a number 0..65535, got " + strconv.Quote(clipS(string(raw)))
			}
			e.id = id
		case !wantFields:
		case bytes.HasPrefix(raw, []byte("field:")):
			f, msg := parseField(string(raw))
			if msg != "" {
				return nil, ln, msg
			}
			e.fields = append(e.fields, f)
		case bytes.HasPrefix(raw, []byte("print fmt:")):
			e.print = string(bytes.TrimSpace(raw[len("print fmt:"):]))
		}
	}
	if e.name == "" {
		return nil, 1, "want a name: line, found none"
	}
	if e.id < 0 {
		return nil, 1, "want an ID: line, found none"
	}
	return e, 0, ""
}

// parseField parses "field:TYPE NAME;	offset:N;	size:N;	signed:N;". The
// header_page file writes "field: u64 timestamp;" with a space.
func parseField(line string) (field, string) {
	var f field
	parts := strings.Split(line, ";")
	if len(parts) < 3 {
		return f, "want field:DECL; offset:N; size:N;, got " + strconv.Quote(clipS(line))
	}
	decl := strings.TrimSpace(strings.TrimPrefix(parts[0], "field:"))
	sp := strings.LastIndexAny(decl, " \t*")
	if sp < 0 || sp == len(decl)-1 {
		return f, "want a type and a field name in " + strconv.Quote(clipS(decl))
	}
	f.typ = strings.TrimSpace(decl[:sp+1])
	f.name = decl[sp+1:]
	if i := strings.IndexByte(f.name, '['); i >= 0 {
		f.array = true
		f.name = f.name[:i]
	}
	switch {
	case strings.HasPrefix(f.typ, "__data_loc"):
		f.loc = locDataLoc
	case strings.HasPrefix(f.typ, "__rel_loc"):
		f.loc = locRelLoc
	}
	got := 0
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(p), ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		switch k {
		case "offset", "size", "signed":
			if err != nil || n < 0 {
				return f, "field " + f.name + ": want " + k + ":N with N >= 0, got " + strconv.Quote(clipS(p))
			}
		}
		switch k {
		case "offset":
			f.off = n
			got |= 1
		case "size":
			f.size = n
			got |= 2
		case "signed":
			f.signed = n != 0
		}
	}
	if got != 3 {
		return f, "field " + f.name + ": want offset:N; and size:N;, got " + strconv.Quote(clipS(line))
	}
	return f, ""
}

// flagTable returns the { value, "letters" } pairs of a __print_flags in a
// print fmt, in order, e.g. sched_switch's prev_state table.
func flagTable(print string) (vals []uint64, names []string) {
	s := print
	for {
		i := strings.Index(s, "{ ")
		if i < 0 {
			return
		}
		s = s[i+2:]
		j := strings.Index(s, " }")
		if j < 0 {
			return
		}
		item := s[:j]
		s = s[j:]
		v, n, ok := strings.Cut(item, ",")
		if !ok {
			continue
		}
		x, err := strconv.ParseUint(strings.TrimSpace(v), 0, 64)
		name, err2 := strconv.Unquote(strings.TrimSpace(n))
		if err != nil || err2 != nil {
			continue
		}
		vals = append(vals, x)
		names = append(names, name)
	}
}

func clipS(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
