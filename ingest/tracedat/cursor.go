package tracedat

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/schedlens/schedlens/ingest/parse"
)

// maxBlob bounds one length-prefixed blob (a format file, kallsyms, the
// saved cmdlines, a decompressed section) so that a corrupt length is an
// error, not an allocation of gigabytes.
const maxBlob = 256 << 20

// cursor reads a byte range of the file, or of a section decompressed into
// memory, and positions its errors: a file offset, and for decompressed
// data the section's file offset plus the byte inside the section.
type cursor struct {
	r        *Reader
	ra       io.ReaderAt
	off, end int64  // next byte and end of the range, in ra
	section  string // what is being read, for errors
	inflated bool   // ra is a decompressed section that starts at file offset base
	base     int64
	buf      [8]byte
}

func (c *cursor) errAt(off int64, cause error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	pos := off
	if c.inflated {
		msg = fmt.Sprintf("decompressed byte %d: %s", off, msg)
		pos = c.base
	}
	return &parse.ParseError{File: c.r.name, Offset: pos, Record: c.section, Msg: msg, Err: cause}
}

func (c *cursor) errf(cause error, format string, args ...any) error {
	return c.errAt(c.off, cause, format, args...)
}

// bytes returns the next n bytes (valid until the next call that reads).
func (c *cursor) bytes(n int64, what string) ([]byte, error) {
	if n < 0 || n > maxBlob {
		return nil, c.errf(parse.ErrBadField, "%s: want a length of at most %d bytes, got %d", what, int64(maxBlob), n)
	}
	if c.off+n > c.end {
		return nil, c.errf(parse.ErrTruncated, "%s: want %d bytes, only %d left", what, n, max(c.end-c.off, 0))
	}
	var b []byte
	if n <= 8 {
		b = c.buf[:n]
	} else {
		if int64(cap(c.r.scratch)) < n {
			c.r.scratch = make([]byte, n)
		}
		b = c.r.scratch[:n]
	}
	if _, err := c.ra.ReadAt(b, c.off); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, c.errf(parse.ErrTruncated, "%s: want %d bytes, got end of input", what, n)
		}
		return nil, c.errf(err, "%s: read error: %v", what, err)
	}
	c.off += n
	return b, nil
}

func (c *cursor) skip(n int64, what string) error {
	if n < 0 || c.off+n > c.end {
		return c.errf(parse.ErrTruncated, "%s: want %d bytes, only %d left", what, n, max(c.end-c.off, 0))
	}
	c.off += n
	return nil
}

func (c *cursor) order() binary.ByteOrder { return c.r.order }

func (c *cursor) u16(what string) (uint16, error) {
	b, err := c.bytes(2, what)
	if err != nil {
		return 0, err
	}
	return c.order().Uint16(b), nil
}

func (c *cursor) u32(what string) (uint32, error) {
	b, err := c.bytes(4, what)
	if err != nil {
		return 0, err
	}
	return c.order().Uint32(b), nil
}

func (c *cursor) u64(what string) (uint64, error) {
	b, err := c.bytes(8, what)
	if err != nil {
		return 0, err
	}
	return c.order().Uint64(b), nil
}

// cstring reads a NUL-terminated string of at most 4096 bytes.
func (c *cursor) cstring(what string) (string, error) {
	var out []byte
	start := c.off
	for len(out) <= 4096 {
		n := min(int64(64), c.end-c.off)
		if n <= 0 {
			return "", c.errAt(start, parse.ErrTruncated, "%s: want a NUL-terminated string, got end of input", what)
		}
		var chunk [64]byte
		m, err := c.ra.ReadAt(chunk[:n], c.off)
		if m == 0 && err != nil {
			return "", c.errAt(start, parse.ErrTruncated, "%s: want a NUL-terminated string, got end of input", what)
		}
		for i := 0; i < m; i++ {
			if chunk[i] == 0 {
				out = append(out, chunk[:i]...)
				c.off += int64(i + 1)
				return string(out), nil
			}
		}
		out = append(out, chunk[:m]...)
		c.off += int64(m)
	}
	return "", c.errAt(start, parse.ErrBadField, "%s: want a NUL-terminated string of at most 4096 bytes", what)
}

// expect reads len(want) bytes and checks them.
func (c *cursor) expect(want string, what string) error {
	start := c.off
	b, err := c.bytes(int64(len(want)), what)
	if err != nil {
		return err
	}
	if string(b) != want {
		return c.errAt(start, parse.ErrBadField, "%s: want %q, got %q", what, want, string(b))
	}
	return nil
}
