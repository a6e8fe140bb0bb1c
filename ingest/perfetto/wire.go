package perfetto

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// fieldError is a decoding error inside one packet: path is the message path
// below TracePacket ("ftrace_events.event.sched_switch"), filled in as the
// error travels up. The packet layer turns it into a *parse.ParseError.
type fieldError struct {
	path string
	msg  string
	err  error // parse.ErrTruncated, parse.ErrBadField, parse.ErrBackwards
}

func (e *fieldError) Error() string { return e.path + ": " + e.msg }

// in prefixes the error's path with the name of the enclosing field.
func (e *fieldError) in(name string) *fieldError {
	if e.path == "" {
		e.path = name
	} else {
		e.path = name + "." + e.path
	}
	return e
}

// pidOf checks a pid, tid or tgid field (int32 on the wire, uint32 in an
// FtraceEvent's header): 0 to MaxInt32, the range the ftrace reader
// accepts, or -1 (NoTID: the writer's "absent", as for a switch's unknown
// prev). Any other value (2^40, or 2^64-5, which an int32 would read as
// -5) is an error rather than a truncated pid: truncated, 2^40 would be
// 0, the idle task.
func pidOf(v uint64, name string) (timeline.TID, *fieldError) {
	x := int64(v)
	if x == -1 {
		return timeline.NoTID, nil
	}
	if x < 0 || x > math.MaxInt32 {
		return 0, badField("%s %d: want 0 to %d", name, x, math.MaxInt32)
	}
	return timeline.TID(x), nil
}

func badField(format string, args ...any) *fieldError {
	return &fieldError{msg: fmt.Sprintf(format, args...), err: parse.ErrBadField}
}

// wireError converts a negative protowire length into a fieldError.
func wireError(n int, what string) *fieldError {
	err := protowire.ParseError(n)
	cause := parse.ErrBadField
	if errors.Is(err, io.ErrUnexpectedEOF) {
		cause = parse.ErrTruncated
	}
	return &fieldError{msg: what + ": " + err.Error(), err: cause}
}

// field is one decoded protobuf field. For varint, fixed32 and fixed64 wire
// types the value is in v; for length-delimited fields the payload is in b
// (a sub-slice of the message, not a copy).
type field struct {
	num protowire.Number
	typ protowire.Type
	v   uint64
	b   []byte
}

// next decodes the field at the start of msg and returns it with the number
// of bytes it used. Groups (deprecated) are skipped as a whole: their payload
// is not returned. n is 0 with a non-nil error for malformed input.
func next(msg []byte) (f field, n int, fe *fieldError) {
	var tn int
	if len(msg) > 0 && msg[0] < 0x80 {
		f.num, f.typ, tn = protowire.Number(msg[0]>>3), protowire.Type(msg[0]&7), 1
		if f.num == 0 {
			return f, 0, badField("invalid field number 0")
		}
	} else {
		f.num, f.typ, tn = protowire.ConsumeTag(msg)
		if tn < 0 {
			return f, 0, wireError(tn, "tag")
		}
	}
	rest := msg[tn:]
	var m int
	switch f.typ {
	case protowire.VarintType:
		if len(rest) > 0 && rest[0] < 0x80 {
			f.v, m = uint64(rest[0]), 1
		} else {
			f.v, m = protowire.ConsumeVarint(rest)
		}
	case protowire.Fixed32Type:
		var v uint32
		v, m = protowire.ConsumeFixed32(rest)
		f.v = uint64(v)
	case protowire.Fixed64Type:
		f.v, m = protowire.ConsumeFixed64(rest)
	case protowire.BytesType:
		f.b, m = protowire.ConsumeBytes(rest)
	case protowire.StartGroupType:
		m = protowire.ConsumeFieldValue(f.num, f.typ, rest)
	default:
		return f, 0, badField("field %d: unexpected wire type %d", f.num, f.typ)
	}
	if m < 0 {
		return f, 0, wireError(m, fmt.Sprintf("field %d", f.num))
	}
	return f, tn + m, nil
}

var wireNames = [...]string{"varint", "fixed64", "bytes", "start-group", "end-group", "fixed32", "type 6", "type 7"}

// want checks that f has wire type t.
func (f *field) want(t protowire.Type, name string) *fieldError {
	if f.typ == t {
		return nil
	}
	return &fieldError{path: name, msg: fmt.Sprintf("field %d: want wire type %s, got %s", f.num, wireNames[t&7], wireNames[f.typ&7]), err: parse.ErrBadField}
}

// appendPacked appends the values of a repeated varint field to dst. The
// field may come packed (one length-delimited run) or unpacked (one varint
// per occurrence); parsers must accept both. The packed path is the hot
// loop of compact_sched decoding: most columns hold one-byte values
// (states, prios, comm indices, CPUs), timestamps deltas and pids two to
// four bytes, so those lengths are decoded inline.
func appendPacked(dst []uint64, f *field, name string) ([]uint64, *fieldError) {
	switch f.typ {
	case protowire.VarintType:
		return append(dst, f.v), nil
	case protowire.BytesType:
	default:
		return dst, f.want(protowire.BytesType, name)
	}
	b := f.b
	start := len(dst)
	dst = slices.Grow(dst, len(b)) // at most one value per byte
	out := dst[start : start+len(b)]
	k := 0
	for i := 0; i < len(b); {
		c := uint64(b[i])
		switch {
		case c < 0x80:
			i++
		case i+1 < len(b) && b[i+1] < 0x80:
			c = c&0x7f | uint64(b[i+1])<<7
			i += 2
		case i+2 < len(b) && b[i+2] < 0x80:
			c = c&0x7f | uint64(b[i+1]&0x7f)<<7 | uint64(b[i+2])<<14
			i += 3
		case i+3 < len(b) && b[i+3] < 0x80:
			c = c&0x7f | uint64(b[i+1]&0x7f)<<7 | uint64(b[i+2]&0x7f)<<14 | uint64(b[i+3])<<21
			i += 4
		default:
			v, n := protowire.ConsumeVarint(b[i:])
			if n < 0 {
				return dst[:start+k], wireError(n, "packed "+name).in(name)
			}
			c = v
			i += n
		}
		out[k] = c
		k++
	}
	return dst[:start+k], nil
}
