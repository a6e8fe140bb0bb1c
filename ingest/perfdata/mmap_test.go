//go:build linux

package perfdata

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
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

// TestMappedFileCutWhileQueued: a file cut short after records were
// queued, whose payloads are read where they lay when they are delivered,
// is a positioned ErrTruncated error past the cut, not a crash; with
// Options.Lenient the read goes on, the records that lay past the cut are
// skipped and counted, and one warning says so. The same through Next and
// NextBatch. The events before the cut are the serial read's.
func TestMappedFileCutWhileQueued(t *testing.T) {
	data := readFixture(t)
	want, _, err := readData(t, data, parse.Options{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	const before = 3000 // events read before the cut
	for _, batch := range []bool{false, true} {
		for _, lenient := range []bool{false, true} {
			f := tempData(t, data)
			r, err := NewReader(f, parse.Options{Name: "x", Lenient: lenient})
			if err != nil {
				t.Fatal(err)
			}
			if r.mapped == nil {
				t.Fatal("the data section was not mapped")
			}
			var got []view
			var ev timeline.Event
			for len(got) < before {
				if err := r.Next(&ev); err != nil {
					t.Fatal(err)
				}
				got = append(got, viewOf(&ev, r.Strings()))
			}
			// past the header and the feature-free start of the data,
			// at a page boundary: the queued records after it are gone
			cut := (r.q.mapAt + 64<<10) &^ 4095
			if err := os.Truncate(f.Name(), cut); err != nil {
				t.Fatal(err)
			}
			evs := make([]timeline.Event, 512)
			for err == nil {
				if batch {
					var n int
					n, err = r.NextBatch(evs)
					for i := range n {
						got = append(got, viewOf(&evs[i], r.Strings()))
					}
					continue
				}
				if err = r.Next(&ev); err == nil {
					got = append(got, viewOf(&ev, r.Strings()))
				}
			}
			name := fmt.Sprintf("batch %v, lenient %v", batch, lenient)
			var perr *parse.ParseError
			switch {
			case !lenient && (!errors.As(err, &perr) || !errors.Is(err, parse.ErrTruncated) || perr.Offset < cut):
				t.Fatalf("%s: got %v, want an ErrTruncated error at a record past offset %#x", name, err, cut)
			case lenient && err != io.EOF:
				t.Fatalf("%s: got %v, want the read to go on to its end", name, err)
			case lenient && (r.Meta().Skipped < 2 || strings.Count(strings.Join(r.Meta().Warnings, "\n"), "cut off") != 1):
				t.Fatalf("%s: %d skipped, warnings %q: want the records past the cut skipped, and one warning", name, r.Meta().Skipped, r.Meta().Warnings)
			case lenient && !strings.Contains(fmt.Sprint(r.Meta().SkippedErrors), "queued before, is gone"):
				// after the first fault, the others are skipped unread
				t.Fatalf("%s: skipped %v: want the records past the cut skipped without a fault each", name, r.Meta().SkippedErrors)
			}
			if len(got) < before || len(got) >= len(want) || !reflect.DeepEqual(got[:before], want[:before]) {
				t.Errorf("%s: %d events, want the first %d of %d as the serial read gives them, and fewer than all", name, len(got), before, len(want))
			}
			t.Logf("%s: %d events, %v", name, len(got), err)
			r.Close()
		}
	}
}

// FuzzMappedSameAsRead: on any input, the file read mapped (records and
// payloads read in place, samples queued where they lie, with the pages
// goroutine's step small) gives the events, Meta and error of the same
// bytes read as a stream, strict and lenient. Seeds as FuzzPerfData's
// (file mode only: a pipe is never mapped).
func FuzzMappedSameAsRead(f *testing.F) {
	defer func(old int) { mapStep = old }(mapStep)
	mapStep = 16 << 10
	f.Add(shrink(f, readFixture(f), 128<<10))
	for _, name := range []string{"z", "lost"} {
		f.Add(readZst(f, "testdata/"+name+".data.zst"))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "perf.data")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, lenient := range []bool{false, true} {
			opts := parse.Options{Name: "x", Lenient: lenient}
			want, wr, werr := readData(t, data, opts)
			fh, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewReader(fh, opts)
			if (err == nil) != (wr != nil) || err != nil && err.Error() != fmt.Sprint(werr) {
				fh.Close()
				t.Fatalf("lenient %v: opening mapped: %v, as a stream: %v", lenient, err, werr)
			}
			if err != nil {
				fh.Close()
				continue
			}
			got, gerr := readAll(t, r)
			fh.Close()
			if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(r.Meta(), wr.Meta()) {
				t.Fatalf("lenient %v (mapped %v): %d events, error %v; as a stream %d events, error %v",
					lenient, r.mapped != nil, len(got), gerr, len(want), werr)
			}
		}
	})
}
