package parse

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// posErr is the error the tests' LineReaders make of an input error.
func posErr(name string, pos LinePos, err error) error {
	return fmt.Errorf("%s: line %d offset %d: %w", name, pos.Line, pos.Off, err)
}

// newLR returns a LineReader of in named "in".
func newLR(in io.Reader, maxLine int64, lenient bool) *LineReader {
	lr := new(LineReader)
	lr.Init(in, "in", maxLine, lenient, posErr)
	return lr
}

type wantLine struct {
	text string
	pos  LinePos
}

// readLines reads every line of lr up to io.EOF or an error.
func readLines(t *testing.T, lr *LineReader) ([]wantLine, error) {
	t.Helper()
	var got []wantLine
	for {
		line, err := lr.Next()
		if err != nil {
			if err2 := func() error { _, e := lr.Next(); return e }(); err2 != err {
				t.Fatalf("after %v, Next returned %v", err, err2)
			}
			return got, err
		}
		got = append(got, wantLine{string(line), *lr.Pos()})
	}
}

func sameLines(t *testing.T, got, want []wantLine) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %q %+v, want %q %+v", i+1, clipS(got[i].text), got[i].pos, clipS(want[i].text), want[i].pos)
		}
	}
}

func clipS(s string) string {
	if len(s) > 20 {
		return s[:20] + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return s
}

// TestLineReader: numbers, offsets, a blank line, CRLF (kept: the formats
// trim it), the last line without a newline.
func TestLineReader(t *testing.T) {
	lr := newLR(strings.NewReader("ab\n\ncd\r\nef"), 100, false)
	got, err := readLines(t, lr)
	if err != io.EOF {
		t.Fatalf("error %v, want io.EOF", err)
	}
	sameLines(t, got, []wantLine{
		{"ab\n", LinePos{Line: 1, Off: 0}},
		{"\n", LinePos{Line: 2, Off: 3}},
		{"cd\r\n", LinePos{Line: 3, Off: 4}},
		{"ef", LinePos{Line: 4, Off: 8, Partial: true}},
	})
	lr = newLR(strings.NewReader(""), 100, false)
	if got, err := readLines(t, lr); len(got) != 0 || err != io.EOF {
		t.Errorf("empty input: %d lines, %v; want none and io.EOF", len(got), err)
	}
}

// TestLineReaderLong: a line longer than the buffer is assembled whole; one
// longer than the limit is handed out empty with its length, read to its
// end when lenient, and ends the input at the limit when strict.
func TestLineReaderLong(t *testing.T) {
	long := strings.Repeat("x", 2*LineBufSize+5) + "\n" // 131,078 bytes
	in := "a\n" + long + "b\n"
	lr := newLR(strings.NewReader(in), 3*LineBufSize, false)
	got, _ := readLines(t, lr)
	sameLines(t, got, []wantLine{
		{"a\n", LinePos{Line: 1}},
		{long, LinePos{Line: 2, Off: 2}},
		{"b\n", LinePos{Line: 3, Off: 2 + int64(len(long))}},
	})

	lr = newLR(strings.NewReader(in), LineBufSize, true)
	got, _ = readLines(t, lr)
	sameLines(t, got, []wantLine{
		{"a\n", LinePos{Line: 1}},
		{"", LinePos{Line: 2, Off: 2, TooLong: int64(len(long))}},
		{"b\n", LinePos{Line: 3, Off: 2 + int64(len(long))}},
	})

	// Strict: the first 64 KiB fill the buffer, the next 64 KiB pass the
	// limit, and the reading stops there.
	lr = newLR(strings.NewReader(in), LineBufSize, false)
	got, err := readLines(t, lr)
	if err != io.EOF {
		t.Fatalf("error %v, want io.EOF after the cut line", err)
	}
	sameLines(t, got, []wantLine{
		{"a\n", LinePos{Line: 1}},
		{"", LinePos{Line: 2, Off: 2, TooLong: 2 * LineBufSize, Cut: true}},
	})

	// Lenient, at the end of the input without a newline.
	lr = newLR(strings.NewReader("a\n"+long[:len(long)-1]), LineBufSize, true)
	got, _ = readLines(t, lr)
	sameLines(t, got, []wantLine{
		{"a\n", LinePos{Line: 1}},
		{"", LinePos{Line: 2, Off: 2, TooLong: int64(len(long) - 1), Partial: true}},
	})
}

// failing hands out data, then err.
type failing struct {
	data []byte
	err  error
}

func (f *failing) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// TestLineReaderError: an input error is made into the reader's error at
// the line being read, and returned from then on.
func TestLineReaderError(t *testing.T) {
	lr := newLR(&failing{data: []byte("ab\ncd"), err: io.ErrUnexpectedEOF}, 100, true)
	got, err := readLines(t, lr)
	sameLines(t, got, []wantLine{{"ab\n", LinePos{Line: 1}}})
	if !errors.Is(err, io.ErrUnexpectedEOF) || err.Error() != "in: line 2 offset 3: unexpected EOF" {
		t.Errorf("error %v, want line 2 offset 3 wrapping io.ErrUnexpectedEOF", err)
	}
	if p := lr.Pos(); p.Line != 2 || p.Off != 3 {
		t.Errorf("Pos = %+v, want line 2 offset 3", p)
	}
}
