package perfetto

import (
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/schedlens/schedlens/ingest/parse"
)

// The stream's framing: the top-level Trace fields read one at a time,
// and the errors after which nothing more can be read.

// fatalError wraps a framing error after which the stream cannot be resynced.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// readPacket reads the next top-level Trace.packet from the stream into the
// reused packet buffer. Other top-level fields are skipped.
func (r *Reader) readPacket() ([]byte, int64, error) {
	for {
		start := r.off
		tag, err := r.readVarint()
		if err == io.EOF {
			return nil, start, io.EOF
		}
		if err != nil {
			return nil, start, r.fatal(start, "Trace", "tag", err)
		}
		num, typ := protowire.DecodeTag(tag)
		if num < protowire.MinValidNumber || num > protowire.MaxValidNumber {
			return nil, start, r.fatal(start, "Trace", fmt.Sprintf("invalid field number %d", num), parse.ErrBadField)
		}
		switch typ {
		case protowire.BytesType:
		case protowire.VarintType:
			if _, err := r.readVarint(); err != nil {
				if err == io.EOF {
					err = &truncation{want: -1}
				}
				return nil, start, r.fatal(start, "Trace", fmt.Sprintf("field %d", num), err)
			}
			continue
		case protowire.Fixed32Type, protowire.Fixed64Type:
			n := 4
			if typ == protowire.Fixed64Type {
				n = 8
			}
			if err := r.discard(n); err != nil {
				return nil, start, r.fatal(start, "Trace", fmt.Sprintf("field %d", num), err)
			}
			continue
		default:
			return nil, start, r.fatal(start, "Trace", fmt.Sprintf("field %d: want wire type bytes, got %s", num, wireNames[typ&7]), parse.ErrBadField)
		}
		ln, err := r.readVarint()
		if err != nil {
			if err == io.EOF {
				err = &truncation{want: -1}
			}
			return nil, start, r.fatal(start, "TracePacket", "length", err)
		}
		if ln > MaxPacketSize {
			return nil, start, r.fatal(start, "TracePacket", fmt.Sprintf("length %d exceeds the %d byte limit", ln, MaxPacketSize), parse.ErrBadField)
		}
		if num != fTracePacket {
			if err := r.discard(int(ln)); err != nil {
				return nil, start, r.fatal(start, "Trace", fmt.Sprintf("bytes field %d", num), err)
			}
			continue
		}
		body, err := r.readBody(int(ln))
		if err != nil {
			return nil, start, r.fatal(start, "TracePacket", "bytes field 1", err)
		}
		return body, start, nil
	}
}

// truncation describes input that ended early.
type truncation struct{ want, have int64 }

func (t *truncation) Error() string {
	if t.want < 0 {
		return "input ends inside a varint"
	}
	return fmt.Sprintf("truncated: want %d, have %d", t.want, t.have)
}

// fatal builds the error of a broken frame: what (the field) and the cause.
func (r *Reader) fatal(off int64, record, what string, cause error) error {
	pe := &parse.ParseError{File: r.name, Offset: off, Record: record}
	var tr *truncation
	switch {
	case errors.As(cause, &tr):
		pe.Msg, pe.Err = what+" "+tr.Error(), parse.ErrTruncated
	case cause == parse.ErrBadField || cause == parse.ErrTruncated:
		pe.Msg, pe.Err = what, cause
	case cause == errVarintOverflow:
		pe.Msg, pe.Err = what+": "+cause.Error(), parse.ErrBadField
	default:
		// An I/O error of the underlying reader (a corrupt gzip stream...).
		pe.Msg, pe.Err = what+": "+cause.Error(), cause
	}
	return &fatalError{err: pe}
}

// readVarint reads a base-128 varint from the stream. It returns io.EOF only
// when the input ends before its first byte.
func (r *Reader) readVarint() (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		c, err := r.br.ReadByte()
		if err != nil {
			if i == 0 && err == io.EOF {
				return 0, io.EOF
			}
			if err == io.EOF {
				return 0, &truncation{want: -1}
			}
			return 0, err
		}
		r.off++
		if i == 9 && c > 1 {
			break
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errVarintOverflow
}

var errVarintOverflow = errors.New("variable length integer overflow")

func (r *Reader) discard(n int) error {
	m, err := r.br.Discard(n)
	r.off += int64(m)
	if m < n {
		if err == nil || err == io.EOF {
			return &truncation{want: int64(n), have: int64(m)}
		}
		return err
	}
	return nil
}

// readBody reads exactly n bytes into the reused packet buffer, growing it
// by at most readChunk at a time, so that a length past the end of the
// input never allocates much more than the input.
func (r *Reader) readBody(n int) ([]byte, error) {
	buf := r.pkt[:0]
	for len(buf) < n {
		chunk := n - len(buf)
		if chunk > readChunk && cap(buf) < n {
			chunk = readChunk
		}
		if cap(buf) < len(buf)+chunk {
			nb := make([]byte, len(buf), max(len(buf)+chunk, 2*cap(buf)))
			copy(nb, buf)
			buf = nb
		}
		k, err := io.ReadFull(r.br, buf[len(buf):len(buf)+chunk])
		r.off += int64(k)
		buf = buf[:len(buf)+k]
		if err != nil {
			r.pkt = buf
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, &truncation{want: int64(n), have: int64(len(buf))}
			}
			return nil, err
		}
	}
	r.pkt = buf
	return buf, nil
}
