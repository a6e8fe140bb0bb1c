package topology

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel causes carried by ParseError.Err; test them with errors.Is.
var (
	// ErrBadField means a field is missing or its value has the wrong form.
	ErrBadField = errors.New("bad field")
	// ErrInconsistent means fields disagree, for example two CPUs that
	// list each other in different thread_siblings.
	ErrInconsistent = errors.New("inconsistent topology")
)

// ParseError is a positioned error about a malformed topology file or
// sysfs tree. It has the shape of ingest/parse.ParseError, which this
// package cannot import (parse imports topology):
//
//	topology.txt:3: cpu=2: field thread_siblings: want a CPU list like 0-1; got ""
//	topology.json:12: cpus[4]: capacity 2000, want 1..1024
//	sys/devices/system/cpu/cpu3/topology/core_id: want an integer; got "x"
type ParseError struct {
	File   string // as the user named it, or the sysfs file read
	Line   int    // 1-based; 0 when the position is not a line
	Record string // "cpu=2", "cpus[4]"; may be empty
	Msg    string // what was expected, what was found
	Err    error  // ErrBadField, ErrInconsistent, ErrInvalid or a wrapped cause
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
	} else {
		b.WriteString("<input>")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Record != "" {
		b.WriteString(e.Record)
		b.WriteString(": ")
	}
	if e.Msg != "" {
		b.WriteString(e.Msg)
	} else if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }
