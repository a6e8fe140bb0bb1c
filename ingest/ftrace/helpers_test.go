package ftrace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

const realDir = "../../fixtures/real"

var (
	fixtureMu    sync.Mutex
	fixtureCache = map[string][]byte{}
)

// readFixture returns the decompressed bytes of a file under
// fixtures/real, cached for the test binary's life.
func readFixture(tb testing.TB, rel string) []byte {
	tb.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if b, ok := fixtureCache[rel]; ok {
		return b
	}
	path := filepath.Join(realDir, rel)
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("reading fixture: %v", err)
	}
	var out []byte
	switch {
	case strings.HasSuffix(rel, ".gz"):
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			tb.Fatalf("%s: %v", rel, err)
		}
		out, err = io.ReadAll(zr)
		if err != nil {
			tb.Fatalf("%s: %v", rel, err)
		}
	case strings.HasSuffix(rel, ".zst"):
		zr, err := zstd.NewReader(nil)
		if err != nil {
			tb.Fatal(err)
		}
		out, err = zr.DecodeAll(raw, nil)
		zr.Close()
		if err != nil {
			tb.Fatalf("%s: %v", rel, err)
		}
	default:
		out = raw
	}
	fixtureCache[rel] = out
	return out
}

// readHead returns up to n decompressed bytes from the start of a file
// under fixtures/real, as the sniffing front end would see them.
func readHead(tb testing.TB, rel string, n int) []byte {
	tb.Helper()
	f, err := os.Open(filepath.Join(realDir, rel))
	if err != nil {
		tb.Fatalf("reading fixture: %v", err)
	}
	defer f.Close()
	var r io.Reader = f
	switch {
	case strings.HasSuffix(rel, ".gz"):
		zr, err := gzip.NewReader(f)
		if err != nil {
			tb.Fatalf("%s: %v", rel, err)
		}
		r = zr
	case strings.HasSuffix(rel, ".zst"):
		zr, err := zstd.NewReader(f)
		if err != nil {
			tb.Fatalf("%s: %v", rel, err)
		}
		defer zr.Close()
		r = zr
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err != nil {
		tb.Fatalf("%s: %v", rel, err)
	}
	return b
}

// readAll reads every event of data; it fails the test on an error.
func readAll(tb testing.TB, name string, data []byte, opts parse.Options) ([]timeline.Event, *Reader) {
	tb.Helper()
	opts.Name = name
	r, err := NewReader(bytes.NewReader(data), opts)
	if err != nil {
		tb.Fatal(err)
	}
	var evs []timeline.Event
	var ev timeline.Event
	for {
		err := r.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatalf("%s: after %d events: %v", name, len(evs), err)
		}
		evs = append(evs, ev)
	}
	return evs, r
}

// countKinds counts events by kind name; markers count as "marker".
func countKinds(evs []timeline.Event) map[string]int {
	m := map[string]int{}
	for _, e := range evs {
		m[e.Kind.String()]++
	}
	return m
}
