package parse

import (
	"bufio"
	"io"
)

// LineBufSize is the LineReader's buffer: a line up to this size is handed
// out in place; a longer one is assembled in a buffer of its own.
const LineBufSize = 64 << 10

// LinePos is where a line of text input is, for errors and for the rules
// about a line that is too long or is the input's last one without a
// newline.
type LinePos struct {
	Line    int   // 1-based number of the line
	Off     int64 // byte offset of its first byte
	TooLong int64 // its length when over the reader's limit (its bytes are not kept), else 0
	Cut     bool  // too long and not read to its end (a strict reader stops there)
	Partial bool  // the input's last line, with no newline
}

// LineReader splits text input into lines and knows where each is. A line
// longer than its limit is not kept: Next hands it out empty, with
// Pos().TooLong set. A strict reader stops reading such a line as soon as
// the limit is passed (Pos().Cut; the input ends there, since the error
// ends the reading and a line of gigabytes should not be read to its end to
// say so); a lenient one reads it to its newline, in bounded memory, to
// skip it.
type LineReader struct {
	br      *bufio.Reader
	name    string
	max     int64
	lenient bool
	readErr func(name string, pos LinePos, err error) error

	pos     LinePos // of the line Next returned last, or failed to read
	nextOff int64   // byte offset of the next line
	long    []byte
	eof     bool  // the input is exhausted
	err     error // a sticky input error
}

// Init makes r a LineReader of in, which accepts lines of at most maxLine
// bytes (newline included). readErr makes the error Next returns when in
// fails, from the input's name (for errors), the position of the line
// being read and in's error. (A reader keeps its LineReader in itself:
// Init, and a readErr that captures nothing, allocate no more than the
// buffer.)
func (r *LineReader) Init(in io.Reader, name string, maxLine int64, lenient bool, readErr func(name string, pos LinePos, err error) error) {
	*r = LineReader{br: bufio.NewReaderSize(in, LineBufSize), name: name, max: maxLine, lenient: lenient, readErr: readErr}
}

// Head returns what the input's first read gave (a buffer's worth of a
// file at most), without taking it: for a look at a header before the
// lines are read. Call it before the first Next; it waits for no more
// than that one read.
func (r *LineReader) Head() []byte {
	r.br.Peek(1)
	b, _ := r.br.Peek(r.br.Buffered())
	return b
}

// Pos returns the position of the line Next returned last (or failed to
// read). It is the LineReader's own: valid until the following Next, not
// to be changed.
func (r *LineReader) Pos() *LinePos { return &r.pos }

// nextPos returns the position of the line Next will read.
func (r *LineReader) nextPos() LinePos { return LinePos{Line: r.pos.Line + 1, Off: r.nextOff} }

// Next returns the next line with its newline (the input's last line may
// have none: Pos().Partial), valid until the following call. At the end of
// the input it returns io.EOF; when the input fails, readErr's error, and
// the same error on every later call.
func (r *LineReader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.eof || r.pos.Cut {
		return nil, io.EOF
	}
	line, err := r.br.ReadSlice('\n')
	n := int64(len(line))
	r.pos.TooLong = 0
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], line...)
		for err == bufio.ErrBufferFull {
			if n > r.max && !r.lenient {
				r.pos.Cut = true
				err = nil
				break
			}
			line, err = r.br.ReadSlice('\n')
			n += int64(len(line))
			if n <= r.max {
				r.long = append(r.long, line...)
			}
		}
		if n > r.max {
			r.pos.TooLong = n
			r.long = r.long[:0]
		}
		line = r.long
	}
	r.pos.Line++
	r.pos.Off = r.nextOff
	r.nextOff += n
	r.pos.Partial = false
	if err != nil {
		if err != io.EOF {
			r.err = r.readErr(r.name, r.pos, err)
			return nil, r.err
		}
		r.eof = true
		if n == 0 {
			r.pos.Line--
			return nil, io.EOF
		}
		r.pos.Partial = true
	}
	return line, nil
}
