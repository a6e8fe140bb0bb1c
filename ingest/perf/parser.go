package perf

import (
	"bytes"
	"fmt"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// resKind says what a parsed line is.
type resKind uint8

const (
	resNone   resKind = iota // a blank line, or a tab line (callchain, branch stack)
	resErr                   // a malformed line: lineRes.err
	resHeader                // a '#' line (the --header block): lineRes.name is the line
	resCount                 // a PERF_RECORD_* record other than a loss: counted by its name, lineRes.name
	resLost                  // PERF_RECORD_LOST[_SAMPLES] after a sample header: ev.CPU, ev.Time, ev.Arg (-1: count unknown), or lineRes.err
	resSample                // a sample: ev (Kind KindUnknown: counted by name, not handed out)
)

// lineRes is one line as a lineParser parsed it: everything the line says
// by itself. What depends on the lines before it (per-CPU time order,
// pending losses, Meta, the counts of events not interpreted) and the
// interning of its texts are left to Reader.apply, which runs in input
// order. It is kept small, since a block of them is written by a worker and
// read by the Reader: its texts are spans of the line.
type lineRes struct {
	ev      timeline.Event
	err     *parse.ParseError
	text    []byte // the line, without its end of line
	lineNo  int    // its number
	off     int64  // its byte offset
	kind    resKind
	latency bool // the -L layout (comm cut to 8 columns)
	// resHeader: the line; resCount: the record's name; resSample: the
	// event's name without its system (named in errors).
	name span
	// resSample: the event's name as printed ("sched:sched_switch").
	full span
	// resSample: the texts to intern, in this order: a marker's text (into
	// ev.Arg) or the comm of ev.Task, then the comm of ev.Other; empty
	// when the event has none (the empty text is NoComm).
	comm, ocomm span
}

// span is the part text[lo:hi] of a lineRes's line.
type span struct{ lo, hi uint32 }

// spanOf returns the span of sub, which must be a part of line obtained by
// slicing it (as every text the parsers return is): both end where line's
// array ends, so sub starts cap(line)-cap(sub) bytes into line.
func spanOf(line, sub []byte) span {
	if len(sub) == 0 {
		return span{}
	}
	lo := uint32(cap(line) - cap(sub))
	return span{lo, lo + uint32(len(sub))}
}

// get returns the text of s.
func (r *lineRes) get(s span) []byte { return r.text[s.lo:s.hi] }

// lineParser parses one line into a lineRes. It keeps nothing from one line
// to the next, so several of them can parse the lines of one input at once.
type lineParser struct {
	name string // the input's name, for errors
	// summary: the fields of an event other than a marker are not
	// parsed (parse.Options.Summary).
	summary bool
}

// parse parses line (with its newline, empty when too long) at pos into
// res.
func (p *lineParser) parse(line []byte, pos *parse.LinePos, res *lineRes) {
	// Only the fields of the line's kind are set (res may hold an earlier
	// line's parse), and these first, which every kind has.
	res.kind, res.err, res.lineNo, res.off, res.latency = resNone, nil, pos.Line, pos.Off, false
	if pos.TooLong > 0 {
		res.kind, res.err = resErr, p.errorf(*pos, "perf script line", parse.ErrBadField, "line longer than %d bytes", maxLine)
		return
	}
	line = trimEOL(line)
	if len(line) == 0 || line[0] == '\t' {
		return
	}
	res.text = line
	if line[0] == '#' {
		res.kind, res.name = resHeader, spanOf(line, line)
		return
	}
	if bytes.HasPrefix(line, []byte("PERF_RECORD_")) {
		// Records printed without a sample header (--show-round-events).
		res.kind, res.name = resCount, spanOf(line, recordName(line))
		return
	}
	var s sample
	if msg := s.parse(line); msg != "" {
		res.kind, res.err = resErr, p.lineError(&s, msg, *pos)
		return
	}
	res.latency = s.latency
	if s.record {
		p.record(&s, *pos, res)
		return
	}
	ev := &res.ev
	ev.Reset()
	ev.Time = s.time
	ev.CPU = timeline.CPU(s.cpu)
	ev.TGID = s.tgid
	var kind timeline.Kind
	var comm, ocomm []byte
	var msg string
	if k := kindOf(s.sys, s.event); p.summary && k != timeline.KindMarker {
		kind = k
	} else {
		kind, comm, ocomm, msg = fill(&s, ev)
	}
	if msg != "" {
		res.kind, res.err = resErr, p.lineError(&s, msg, *pos)
		return
	}
	ev.Kind = kind
	res.kind = resSample
	res.name, res.full = spanOf(line, s.event), spanOf(line, s.full)
	res.comm, res.ocomm = spanOf(line, comm), spanOf(line, ocomm)
}

// record parses a PERF_RECORD_* line that follows a sample header.
func (p *lineParser) record(s *sample, pos parse.LinePos, res *lineRes) {
	name := recordName(s.rest)
	switch string(name) {
	case "PERF_RECORD_LOST", "PERF_RECORD_LOST_SAMPLES":
	default:
		res.kind, res.name = resCount, spanOf(res.text, name)
		return
	}
	res.kind = resLost
	res.ev.CPU, res.ev.Time, res.ev.Arg = timeline.CPU(s.cpu), s.time, -1
	// " lost %lu" (perf_event__fprintf_lost, tools/perf/util/event.c).
	rest := skipSpace(s.rest[len(name):])
	if v, ok := bytes.CutPrefix(rest, []byte("lost ")); ok {
		tok := skipSpace(v)
		if i := bytes.IndexByte(tok, ' '); i >= 0 {
			tok = tok[:i]
		}
		x, ok := parseInt(tok)
		if !ok || x < 0 {
			res.err = p.lineError(s, fmt.Sprintf("field lost: want a count, got %q", clip(tok)), pos)
			return
		}
		res.ev.Arg = x
	}
}

// lineError wraps a parse failure of the line at pos: a bad last line
// without a newline is a cut-off line.
func (p *lineParser) lineError(s *sample, msg string, pos parse.LinePos) *parse.ParseError {
	sentinel := parse.ErrBadField
	if pos.Partial {
		sentinel = parse.ErrTruncated
		msg += " (last line has no newline: cut off?)"
	}
	return p.errorf(pos, s.recordName(), sentinel, "%s", msg)
}

// errorf builds an error about the line at pos.
func (p *lineParser) errorf(pos parse.LinePos, record string, sentinel error, format string, args ...any) *parse.ParseError {
	return &parse.ParseError{File: p.name, Line: pos.Line, Offset: pos.Off, Record: record,
		Msg: fmt.Sprintf(format, args...), Err: sentinel}
}
