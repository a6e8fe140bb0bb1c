package tracedat_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/ingest/tracedat"
	"github.com/schedlens/schedlens/internal/readertest"
	"github.com/schedlens/schedlens/timeline"
)

// readAll reads data to the end and returns the first error (nil at EOF).
func readAll(data []byte) error {
	rd, err := tracedat.NewReader(bytes.NewReader(data), parse.Options{Name: "fuzz.dat"})
	if err != nil {
		return err
	}
	var ev timeline.Event
	for {
		if err := rd.Next(&ev); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// checkPositioned fails unless err is nil or a *parse.ParseError with a
// section and a message saying what was expected.
func checkPositioned(t *testing.T, size int, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var pe *parse.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T %v is not a *parse.ParseError", err, err)
	}
	if pe.Record == "" || pe.Msg == "" || pe.Offset < 0 || pe.Offset > int64(size) || pe.Line != 0 {
		t.Fatalf("error %q: want a section, a message and a byte offset within the %d-byte file", err, size)
	}
}

// FuzzTraceDat: any input gives events or a positioned error, never a
// panic; a summary read (parse.Options.Summary) gives the full read's
// times, CPUs and kinds when that read has no error. Seeded with the fixture, its cuts and bit flips.
func FuzzTraceDat(f *testing.F) {
	data := fixture(f, "trace.dat.zst")
	f.Add(data)
	for _, n := range []int{10, 40, 300, 2100, 1141200, 1142800, 1500000, len(data) - 1} {
		f.Add(data[:n])
	}
	for _, at := range []int{12, 20, 37, 60, 2100, 1141130, 1142050, 1142790, 1822730} {
		b := bytes.Clone(data)
		b[at] ^= 0x10
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkPositioned(t, len(b), readAll(b))
		// the first read of a streamed analysis needs no more of it
		readertest.SameSummary(t, "fuzz", readOut(t, b, false), readOut(t, b, true))
	})
}

// TestCutsAndFlips: the fixture cut at every header part and in the page
// data, and bit-flipped in the header, the option sections, the compressed
// chunks and the first page, gives positioned errors: truncations say
// truncated, with the section and what was expected.
func TestCutsAndFlips(t *testing.T) {
	data := fixture(t, "trace.dat.zst")
	cases := []struct {
		cut     int
		section string
	}{
		{5, "initial header"},
		{14, "initial header"},
		{30, "compression header"},
		{1141200, "options"}, // the options sections come last in v7
		{1500000, "options"},
		{2005200, "options"},
	}
	for _, c := range cases {
		err := readAll(data[:c.cut])
		var pe *parse.ParseError
		if !errors.As(err, &pe) || !errors.Is(err, parse.ErrTruncated) {
			t.Errorf("cut at %d: got %v, want a truncation error", c.cut, err)
			continue
		}
		if pe.Record != c.section {
			t.Errorf("cut at %d: section %q, want %q (%v)", c.cut, pe.Record, c.section, err)
		}
		checkPositioned(t, c.cut, err)
	}
	flips := 0
	for at := 0; at < len(data); at += len(data)/40 + 1 {
		b := bytes.Clone(data)
		b[at] ^= 0x04
		err := readAll(b)
		checkPositioned(t, len(b), err)
		if err != nil {
			flips++
		}
	}
	if flips == 0 {
		t.Error("no bit flip was detected")
	}
	// A version the reader does not know names it.
	b := bytes.Clone(data)
	b[10] = '8'
	if err := readAll(b); err == nil || !bytes.Contains([]byte(err.Error()), []byte(`want "6" or "7", got "8"`)) {
		t.Errorf("version 8: %v", err)
	}
}
