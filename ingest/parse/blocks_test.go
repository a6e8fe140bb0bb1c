package parse

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// blockRes is what the tests' block parser makes of a line: the line and
// its position as the block yielded them, and the block's line count (X)
// so far, which must start at 0 in every block.
type blockRes struct {
	line wantLine
	nth  int
}

func blockParser() func(b *Block[blockRes, int]) {
	return func(b *Block[blockRes, int]) {
		b.X = 0
		b.Each(func(line []byte, pos LinePos, res *blockRes) {
			*res = blockRes{wantLine{string(line), pos}, b.X}
			b.X++
		})
	}
}

// readBlocks reads every result of p up to its error, checking that each
// block's results count its lines from 0.
func readBlocks(t *testing.T, p *Blocks[blockRes, int]) ([]wantLine, error) {
	t.Helper()
	var got []wantLine
	for {
		res, b, err := p.Next()
		if err != nil {
			if _, _, err2 := p.Next(); err2 != err {
				t.Fatalf("after %v, Next returned %v", err, err2)
			}
			return got, err
		}
		i := 0
		for &b.Res[i] != res {
			i++
		}
		if res.nth != i || b.X != len(b.Res) {
			t.Fatalf("line %d of a block counted %d; block X %d for %d lines", i, res.nth, b.X, len(b.Res))
		}
		got = append(got, res.line)
	}
}

// TestBlocks: parsed in blocks of 1, 2, 3 and 2048 lines on 1 to 3
// workers, the lines and positions come out as one LineReader reads them:
// blank lines, a long line, one over the limit (lenient: skipped whole;
// strict: cut, ending the input), the last line without a newline; and
// an input error after the lines before it.
func TestBlocks(t *testing.T) {
	var in bytes.Buffer
	for i := range 40 {
		switch i % 9 {
		case 3:
			in.WriteString("\n")
		case 5:
			in.WriteString(strings.Repeat("y", LineBufSize+i) + "\n")
		case 7:
			in.WriteString(strings.Repeat("z", 3*LineBufSize) + "\n")
		default:
			fmt.Fprintf(&in, "line %d\n", i)
		}
	}
	in.WriteString("last")
	for _, lenient := range []bool{true, false} {
		want, wantErr := readLines(t, newLR(bytes.NewReader(in.Bytes()), 2*LineBufSize, lenient))
		if n := len(want); lenient && n != 41 || !lenient && n != 8 {
			t.Fatalf("lenient %v: the LineReader read %d lines", lenient, n)
		}
		for _, workers := range []int{1, 2, 3} {
			for _, lines := range []int{1, 2, 3, 0} {
				lr := newLR(bytes.NewReader(in.Bytes()), 2*LineBufSize, lenient)
				got, err := readBlocks(t, StartBlocks(lr, workers, lines, blockParser))
				if err != wantErr {
					t.Errorf("lenient %v, %d workers, %d lines: error %v, want %v", lenient, workers, lines, err, wantErr)
				}
				sameLines(t, got, want)
			}
		}
	}

	data := []byte("a\nb\nc\nd")
	want, wantErr := readLines(t, newLR(&failing{data: data, err: io.ErrUnexpectedEOF}, 100, false))
	if len(want) != 3 || wantErr.Error() != "in: line 4 offset 6: unexpected EOF" {
		t.Fatalf("the LineReader read %d lines, then %v", len(want), wantErr)
	}
	for _, lines := range []int{1, 2, 0} {
		lr := newLR(&failing{data: data, err: io.ErrUnexpectedEOF}, 100, false)
		got, err := readBlocks(t, StartBlocks(lr, 2, lines, blockParser))
		if err == nil || err.Error() != wantErr.Error() {
			t.Errorf("%d lines: error %v, want %v", lines, err, wantErr)
		}
		sameLines(t, got, want)
	}
}

// TestBlocksClose: after Close, Next hands out what is left of the block
// it was in, then ErrClosed; the producer no longer reads.
func TestBlocksClose(t *testing.T) {
	in := strings.Repeat("some line\n", 10000)
	p := StartBlocks(newLR(strings.NewReader(in), 100, false), 2, 100, blockParser)
	for range 10 {
		if _, _, err := p.Next(); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	n := 0
	for {
		_, _, err := p.Next()
		if err == nil {
			n++
			continue
		}
		if err != ErrClosed {
			t.Fatalf("after Close: %v, want ErrClosed", err)
		}
		break
	}
	if n != 90 {
		t.Errorf("%d lines after Close, want the block's other 90", n)
	}
}
