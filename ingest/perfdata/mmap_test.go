//go:build linux

package perfdata

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
)

// tempData writes perf.data bytes to a file of their own.
func tempData(t *testing.T, data []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "perf.data")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestMappedSameAsRead: a perf.data file whose data section is mapped
// gives the events and Meta of the same bytes read from a reader, on the
// fixture, a capture with lost records and one with compressed records,
// with the step of the pages goroutine small enough to be taken many
// times, and unmaps it at the end.
func TestMappedSameAsRead(t *testing.T) {
	defer func(old int) { mapStep = old }(mapStep)
	mapStep = 16 << 10
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"fixture", readFixture(t)},
		{"lost", readZst(t, "testdata/lost.data.zst")},
		{"z", readZst(t, "testdata/z.data.zst")},
	} {
		want, wr, werr := readData(t, tc.data, parse.Options{Name: "x"})
		if werr != nil {
			t.Fatal(werr)
		}
		r, err := NewReader(tempData(t, tc.data), parse.Options{Name: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if r.mapped == nil {
			t.Fatalf("%s: the data section was not mapped", tc.name)
		}
		got, err := readAll(t, r)
		if err != nil || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(r.Meta(), wr.Meta()) {
			t.Errorf("%s: mapped, %d events (error %v), want %d", tc.name, len(got), err, len(want))
		}
		if r.mapped != nil {
			t.Errorf("%s: the mapping outlived the read", tc.name)
		}
	}
}

// TestMappedFileCutShort: a file cut short while its mapped records are
// read is a positioned ErrTruncated error, not a crash.
func TestMappedFileCutShort(t *testing.T) {
	data := readFixture(t)
	f := tempData(t, data)
	r, err := NewReader(f, parse.Options{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if r.mapped == nil {
		t.Fatal("the data section was not mapped")
	}
	// at a page boundary, so that the pages after it are gone from the
	// mapping: the record that crosses it faults
	const cut = 8 << 10
	if err := os.Truncate(f.Name(), cut); err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, r)
	var perr *parse.ParseError
	if !errors.As(err, &perr) || !errors.Is(err, parse.ErrTruncated) || perr.File != "x" || perr.Offset > cut || perr.Offset < cut-4096 {
		t.Fatalf("got %v, want an ErrTruncated error at the record that crosses offset %#x", err, cut)
	}
	t.Log(err)
	r.Close()
}
