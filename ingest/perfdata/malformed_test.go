package perfdata

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// checkErr fails unless err is a positioned ParseError inside the input.
func checkErr(t *testing.T, what string, err error, size int) *parse.ParseError {
	t.Helper()
	var perr *parse.ParseError
	if !errors.As(err, &perr) {
		t.Fatalf("%s: error %T %v, want a *parse.ParseError", what, err, err)
	}
	if perr.Offset < 0 || perr.Offset > int64(size) || perr.Record == "" || perr.Msg == "" || perr.Line != 0 {
		t.Fatalf("%s: error not positioned in the %d-byte input: %+v", what, size, perr)
	}
	return perr
}

// readBytes reads data whole, through NewReader errors too.
func readBytes(data []byte, lenient bool) ([]view, *Reader, error) {
	r, err := NewReader(bytes.NewReader(data), parse.Options{Name: "x", Lenient: lenient})
	if err != nil {
		return nil, nil, err
	}
	var evs []view
	var ev timeline.Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			return evs, r, nil
		}
		if err != nil {
			return evs, r, err
		}
		evs = append(evs, viewOf(&ev, r.Strings()))
	}
}

// TestTruncated cuts the captures at many points. A file-mode perf.data
// keeps its feature sections (the event formats) at the end, so any cut
// is an ErrTruncated error naming the section that runs past the end. A
// pipe-mode one is read in order: a cut inside a record is ErrTruncated
// after the events before it; under Lenient those events are handed out
// with a warning.
func TestTruncated(t *testing.T) {
	for _, name := range []string{"z", "lost", "pipe"} {
		data := readZst(t, "testdata/"+name+".data.zst")
		full, _, err := readBytes(data, false)
		if err != nil {
			t.Fatal(err)
		}
		step := len(data)/97 + 1
		for cut := 0; cut < len(data); cut += step {
			evs, _, err := readBytes(data[:cut], false)
			if err == nil {
				if name != "pipe" || cut < 4096 {
					t.Fatalf("%s cut at %d: no error", name, cut)
				}
				continue // a pipe cut at a record boundary ends cleanly
			}
			perr := checkErr(t, name, err, cut)
			if !errors.Is(err, parse.ErrTruncated) {
				t.Fatalf("%s cut at %d: %v, want ErrTruncated", name, cut, err)
			}
			for i := range evs {
				if evs[i] != full[i] {
					t.Fatalf("%s cut at %d: event %d differs from the whole file's", name, cut, i)
				}
			}
			if name == "pipe" && len(evs) > 0 {
				lev, lr, lerr := readBytes(data[:cut], true)
				if lerr != nil || len(lev) < len(evs) || len(lr.Meta().Warnings) == 0 {
					t.Fatalf("%s cut at %d, lenient: %d events (strict %d), err %v, warnings %q", name, cut, len(lev), len(evs), lerr, lr.Meta().Warnings)
				}
			}
			_ = perr
		}
	}
}

// TestBitFlips flips one bit at many places: whatever happens, no panic,
// and an error is positioned.
func TestBitFlips(t *testing.T) {
	for _, name := range []string{"z", "pipe"} {
		orig := readZst(t, "testdata/"+name+".data.zst")
		step := len(orig)/61 + 1
		errs := 0
		for pos := 0; pos < len(orig); pos += step {
			data := append([]byte(nil), orig...)
			data[pos] ^= 1 << (pos % 8)
			for _, lenient := range []bool{false, true} {
				_, _, err := readBytes(data, lenient)
				if err != nil {
					checkErr(t, name, err, len(data))
					errs++
				}
			}
		}
		if errs == 0 {
			t.Errorf("%s: no flip gave an error", name)
		}
	}
}

// TestHeaderErrors: hand-made damage to the file header, each with the
// offset and what was expected.
func TestHeaderErrors(t *testing.T) {
	good := readZst(t, "testdata/z.data.zst")
	for _, tc := range []struct {
		name string
		edit func(b []byte) []byte
		off  int64
		want string
	}{
		{"short", func(b []byte) []byte { return b[:10] }, 0, "want a 16-byte header"},
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }, 0, "want the magic"},
		{"big-endian", func(b []byte) []byte { copy(b, "2ELIFREP"); return b }, 0, "want the magic"},
		{"header size", func(b []byte) []byte { b[8] = 200; return b }, 8, "header size 200, want 104"},
		{"attr size", func(b []byte) []byte { b[16] = 3; return b }, 16, "attr entry size"},
		{"data past end", func(b []byte) []byte { b[47] = 0x7f; return b }, 40, "data section"},
	} {
		data := tc.edit(append([]byte(nil), good...))
		_, _, err := readBytes(data, false)
		perr := checkErr(t, tc.name, err, len(data))
		if perr.Offset != tc.off || !bytes.Contains([]byte(perr.Msg), []byte(tc.want)) {
			t.Errorf("%s: %v; want offset %#x and %q", tc.name, err, tc.off, tc.want)
		}
	}
}
