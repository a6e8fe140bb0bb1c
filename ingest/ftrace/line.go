package ftrace

import (
	"bytes"
	"fmt"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// resKind says what a parsed line is.
type resKind uint8

const (
	resNone   resKind = iota // a blank line
	resErr                   // a malformed line: lineRes.err
	resCtl                   // a header, lost-event, cpus= or version line: lineRes.line, applied in order
	resRecord                // an event record: lineRes.ev, or an event not interpreted, named lineRes.name
)

// lineRes is one line as a recParser parsed it: everything the line says
// by itself. What depends on the lines before it (time order per CPU,
// pending lost events, Meta) is left to Reader.apply.
type lineRes struct {
	kind    resKind
	known   bool // resRecord: an event this package interprets
	prefix  bool // a trace-cmd instance prefix came first
	plugin  bool // the event used a trace-cmd plugin layout
	intTime bool // the timestamp was a bare integer
	pos     parse.LinePos
	refs    [2]int32 // deferred comms of the line: [lo, hi) in its block's refs
	err     error
	line    []byte // resCtl: the line (after an instance prefix)
	name    []byte // resRecord: the event name
	ev      timeline.Event
}

// recParser parses one line into a lineRes. It keeps nothing from one line
// to the next but its comm cache, so several of them can parse the lines
// of one input at once. A parser with no comm cache defers interning: it
// collects the texts in refs and leaves placeholders.
type recParser struct {
	name   string
	strs   *timeline.Strings
	comms  *[1 << commCacheBits]commSlot // nil: defer interning to refs
	refs   []parse.TextRef
	pos    parse.LinePos // of the line being parsed
	hdr    header
	plugin bool // set by the event parsers for a trace-cmd plugin layout
	// summary: the fields of an event other than a marker are not
	// parsed (parse.Options.Summary).
	summary bool
}

// classify parses line (with its newline) at r.pos into res.
func (r *recParser) classify(line []byte, res *lineRes) {
	// Every field but the event, which only a record has and which
	// parseRecord resets: res may hold an earlier line's parse, and a
	// whole reset writes its 176 bytes for every line.
	res.kind, res.known, res.prefix, res.plugin, res.intTime = resNone, false, false, false, false
	res.pos, res.err, res.line, res.name = r.pos, nil, nil, nil
	lo := int32(len(r.refs))
	err := r.parseLine(line, res)
	res.refs = [2]int32{lo, int32(len(r.refs))}
	if err != nil {
		if r.pos.Partial {
			// The last line of the input has no newline: it was cut.
			if pe, ok := err.(*parse.ParseError); ok {
				pe.Err = parse.ErrTruncated
			}
		}
		res.kind, res.err = resErr, err
	}
}

func (r *recParser) parseLine(line []byte, res *lineRes) error {
	if r.pos.TooLong > 0 {
		if r.pos.Cut {
			return r.errf("line", parse.ErrBadField, "want a line of at most %d bytes, got more than %d bytes", MaxLine, r.pos.TooLong)
		}
		return r.errf("line", parse.ErrBadField, "want a line of at most %d bytes, got %d bytes", MaxLine, r.pos.TooLong)
	}
	n := len(line)
	if n > 0 && line[n-1] == '\n' {
		n--
	}
	if n > 0 && line[n-1] == '\r' {
		n--
	}
	line = line[:n]
	if n == 0 {
		return nil
	}
	if i := bytes.IndexByte(line, 0); i >= 0 {
		return r.errf("line", parse.ErrBadField, "want text, got a NUL byte at column %d", i+1)
	}
	ctl := false
	switch line[0] {
	case '#':
		ctl = true
	case 'C':
		ctl = bytes.HasPrefix(line, []byte("CPU"))
	case 'c':
		ctl = bytes.HasPrefix(line, []byte("cpus="))
	case 'v':
		ctl = bytes.HasPrefix(line, []byte("version = "))
	}
	if ctl {
		res.kind, res.line = resCtl, line
		return nil
	}
	return r.parseRecord(line, res)
}

// parseRecord parses a record line: its context columns, then its event
// fields.
func (r *recParser) parseRecord(line []byte, res *lineRes) error {
	h := &r.hdr
	if err := r.header(line, h); err != nil {
		// trace-cmd prints the instance prefix before its CPU: and cpus=
		// lines too.
		if rest, ok := cutInstance(line); ok {
			if bytes.HasPrefix(rest, []byte("CPU")) || bytes.HasPrefix(rest, []byte("cpus=")) {
				res.kind, res.line = resCtl, rest
				return nil
			}
		}
		return err
	}
	res.prefix = h.prefix
	ev := &res.ev
	ev.Reset()
	ev.Time = h.time
	ev.CPU = h.cpu
	ev.Ctx = h.ctx
	ev.TGID = h.tgid
	r.plugin = false
	known, err := r.event(h, ev)
	if err != nil {
		return err
	}
	if r.pos.Partial {
		return r.errf(recName(h.name), parse.ErrTruncated, "want a line ending in a newline, got end of input after %q", clip(line))
	}
	res.kind = resRecord
	res.known = known
	res.plugin = r.plugin
	res.intTime = h.intTime
	res.name = h.name
	return nil
}

// intern returns the id of comm, through a small direct-mapped cache in
// front of the shared interner (which takes a lock), or a placeholder when
// the parser defers interning.
func (r *recParser) intern(comm []byte) timeline.CommID {
	n := len(comm)
	if n == 0 {
		return timeline.NoComm
	}
	if r.comms == nil {
		r.refs = append(r.refs, parse.TextRef{B: comm})
		return parse.DeferredID | timeline.CommID(len(r.refs)-1)
	}
	return r.cached(comm)
}

func (r *recParser) cached(comm []byte) timeline.CommID {
	n := len(comm)
	if n > len(commSlot{}.b) {
		return r.strs.ID(comm)
	}
	s := &r.comms[commHash(comm)]
	if int(s.n) == n && string(s.b[:n]) == string(comm) {
		return s.id
	}
	id := r.strs.ID(comm)
	s.n = uint8(n)
	copy(s.b[:], comm)
	s.id = id
	return id
}

// internText returns the id of a marker text (no cache: markers rarely
// repeat), or a placeholder when the parser defers interning.
func (r *recParser) internText(text []byte) int64 {
	if r.comms == nil {
		r.refs = append(r.refs, parse.TextRef{B: text, Raw: true})
		return parse.DeferredID | int64(len(r.refs)-1)
	}
	return int64(r.strs.ID(text))
}

// deferred is what a block keeps of the comms its worker deferred: their
// texts, in order, and the ids the Reader gave those of one line.
type deferred struct {
	refs []parse.TextRef
	ids  []timeline.CommID
}

// resolve interns the comms a worker deferred for res, in their order, and
// puts their ids in place of the placeholders.
func (r *Reader) resolve(res *lineRes, d *deferred) {
	lo, hi := res.refs[0], res.refs[1]
	if lo == hi {
		return
	}
	ids := d.ids[:0]
	for _, ref := range d.refs[lo:hi] {
		if ref.Raw {
			ids = append(ids, r.strs.ID(ref.B))
		} else {
			ids = append(ids, r.cached(ref.B))
		}
	}
	d.ids = ids
	ev := &res.ev
	if ev.Comm&parse.DeferredID != 0 {
		ev.Comm = ids[int32(ev.Comm&^parse.DeferredID)-lo]
	}
	if ev.OComm&parse.DeferredID != 0 {
		ev.OComm = ids[int32(ev.OComm&^parse.DeferredID)-lo]
	}
	if ev.Kind == timeline.KindMarker && ev.Arg&parse.DeferredID != 0 {
		ev.Arg = int64(ids[int32(ev.Arg&^parse.DeferredID)-lo])
	}
}

// errf returns a ParseError about the current line.
func (r *recParser) errf(record string, cause error, format string, args ...any) error {
	return &parse.ParseError{
		File:   r.name,
		Line:   r.pos.Line,
		Offset: r.pos.Off,
		Record: record,
		Msg:    fmt.Sprintf(format, args...),
		Err:    cause,
	}
}
