package perfdata

import (
	"encoding/binary"
	"fmt"

	"github.com/schedlens/schedlens/ingest/parse"
)

// cursor reads little-endian values from b, whose first byte is at file
// offset base, for the section named sec. The first failure is kept in err
// and later reads return zero values, so a decoder checks once at the end.
type cursor struct {
	b    []byte
	pos  int
	base int64
	sec  string
	name string // file name for errors
	err  *parse.ParseError
}

func (c *cursor) off() int64 { return c.base + int64(c.pos) }

func (c *cursor) fail(sentinel error, format string, args ...any) {
	if c.err == nil {
		c.err = &parse.ParseError{File: c.name, Offset: c.off(), Record: c.sec,
			Msg: fmt.Sprintf(format, args...), Err: sentinel}
	}
}

// need reports whether n more bytes are there, failing with what was
// wanted otherwise.
func (c *cursor) need(n int, what string) bool {
	if c.err != nil {
		return false
	}
	if n < 0 || len(c.b)-c.pos < n {
		c.fail(parse.ErrTruncated, "%s: want %d bytes, have %d", what, n, len(c.b)-c.pos)
		return false
	}
	return true
}

func (c *cursor) u32(what string) uint32 {
	if !c.need(4, what) {
		return 0
	}
	v := binary.LittleEndian.Uint32(c.b[c.pos:])
	c.pos += 4
	return v
}

func (c *cursor) u64(what string) uint64 {
	if !c.need(8, what) {
		return 0
	}
	v := binary.LittleEndian.Uint64(c.b[c.pos:])
	c.pos += 8
	return v
}

func (c *cursor) bytes(n int, what string) []byte {
	if !c.need(n, what) {
		return nil
	}
	v := c.b[c.pos : c.pos+n]
	c.pos += n
	return v
}

// size reads a u64 length and checks it fits in what is left.
func (c *cursor) size(what string) int {
	at := c.pos
	v := c.u64(what + " size")
	if c.err != nil {
		return 0
	}
	if v > uint64(len(c.b)-c.pos) {
		c.pos = at
		c.fail(parse.ErrTruncated, "%s size %d: only %d bytes left in the section", what, v, len(c.b)-c.pos-8)
		return 0
	}
	return int(v)
}

// cstr reads a NUL-terminated string.
func (c *cursor) cstr(what string) string {
	if c.err != nil {
		return ""
	}
	for i := c.pos; i < len(c.b); i++ {
		if c.b[i] == 0 {
			s := string(c.b[c.pos:i])
			c.pos = i + 1
			return s
		}
	}
	c.fail(parse.ErrTruncated, "%s: want a NUL-terminated string, the section ends first", what)
	return ""
}

// perfString reads a perf header string: a u32 length (padding included)
// and that many bytes, NUL-padded (do_write_string in
// tools/perf/util/header.c).
func (c *cursor) perfString(what string) string {
	n := c.u32(what + " length")
	if c.err != nil {
		return ""
	}
	if uint64(n) > uint64(len(c.b)-c.pos) {
		c.pos -= 4
		c.fail(parse.ErrTruncated, "%s: length %d, only %d bytes left in the section", what, n, len(c.b)-c.pos-4)
		return ""
	}
	b := c.b[c.pos : c.pos+int(n)]
	c.pos += int(n)
	for i, x := range b {
		if x == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
