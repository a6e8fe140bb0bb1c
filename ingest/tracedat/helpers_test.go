package tracedat_test

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

const fixtureDir = "../../fixtures/real/ftrace-oracle-busy/"

var (
	fixMu    sync.Mutex
	fixCache = map[string][]byte{}
)

// fixture returns a fixture file decompressed, cached across tests.
func fixture(tb testing.TB, name string) []byte {
	tb.Helper()
	fixMu.Lock()
	defer fixMu.Unlock()
	if b, ok := fixCache[name]; ok {
		return b
	}
	raw, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		tb.Fatal(err)
	}
	d, err := zstd.NewReader(nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer d.Close()
	b, err := d.DecodeAll(raw, nil)
	if err != nil {
		tb.Fatal(err)
	}
	fixCache[name] = b
	return b
}

// drain reads every event of rd.
func drain(tb testing.TB, rd parse.Reader) []timeline.Event {
	tb.Helper()
	var evs []timeline.Event
	var ev timeline.Event
	for {
		err := rd.Next(&ev)
		if err == io.EOF {
			return evs
		}
		if err != nil {
			tb.Fatal(err)
		}
		evs = append(evs, ev)
	}
}

// build runs rd into a timeline the way ingest.Load does.
func build(tb testing.TB, rd parse.Reader) (*timeline.Timeline, *parse.Meta) {
	tb.Helper()
	b := timeline.NewBuilder(rd.Strings(), 0)
	for _, ev := range drain(tb, rd) {
		b.Add(ev)
	}
	m := rd.Meta()
	m.Apply(b)
	tl, err := b.Finish()
	if err != nil {
		tb.Fatal(err)
	}
	return tl, m
}
