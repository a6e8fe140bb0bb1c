package perfetto

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// readFixture returns the decompressed bytes of a file under the
// repository (.zst and .gz are decompressed).
func readFixture(tb testing.TB, path string) []byte {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("reading fixture: %v", err)
	}
	switch {
	case strings.HasSuffix(path, ".zst"):
		d, err := zstd.NewReader(nil)
		if err != nil {
			tb.Fatal(err)
		}
		defer d.Close()
		out, err := d.DecodeAll(raw, nil)
		if err != nil {
			tb.Fatalf("zstd %s: %v", path, err)
		}
		return out
	case strings.HasSuffix(path, ".gz"):
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			tb.Fatalf("gzip %s: %v", path, err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			tb.Fatalf("gzip %s: %v", path, err)
		}
		return out
	}
	return raw
}

// decodeAll reads every event of data. It stops at the first error.
func decodeAll(data []byte, opts parse.Options) ([]timeline.Event, *Reader, error) {
	r, err := NewReader(bytes.NewReader(data), opts)
	if err != nil {
		return nil, nil, err
	}
	var evs []timeline.Event
	var ev timeline.Event
	for {
		err := r.Next(&ev)
		if errors.Is(err, io.EOF) {
			return evs, r, nil
		}
		if err != nil {
			return evs, r, err
		}
		evs = append(evs, ev)
	}
}

func mustDecode(tb testing.TB, data []byte, opts parse.Options) ([]timeline.Event, *Reader) {
	tb.Helper()
	evs, r, err := decodeAll(data, opts)
	if err != nil {
		tb.Fatalf("decoding %s: %v", opts.Name, err)
	}
	return evs, r
}

func kindCounts(evs []timeline.Event) map[timeline.Kind]int {
	m := map[timeline.Kind]int{}
	for _, e := range evs {
		m[e.Kind]++
	}
	return m
}
