package tracedat_test

import (
	"bytes"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/ingest/tracedat"
	"github.com/schedlens/schedlens/internal/readertest"
)

// readOut reads data to its end, with Summary or not, as readertest.Out.
func readOut(tb testing.TB, data []byte, summary bool) readertest.Out {
	tb.Helper()
	r, err := tracedat.NewReader(bytes.NewReader(data), parse.Options{Name: "x.dat", Summary: summary})
	if err != nil {
		return readertest.Out{Errs: []string{err.Error()}}
	}
	return readertest.Read(tb, r, false)
}

// TestSummaryRead: a read with parse.Options.Summary, which does not
// decode the events' fields, gives each event's time, CPU and kind (a lost
// page's start and count, a marker's text), the CPU count and the coverage
// of the full read, on the fixture (with its trace markers) and the
// testdata files (version 6 and 7, lost pages).
func TestSummaryRead(t *testing.T) {
	files := map[string][]byte{"fixture": fixture(t, "trace.dat.zst")}
	for _, name := range []string{"real-lost.dat.zst", "v6-lost.dat.zst", "v7-none-lost.dat.zst"} {
		files[name] = testdata(t, name)
	}
	for name, data := range files {
		full := readOut(t, data, false)
		if len(full.Events) == 0 {
			t.Fatalf("%s: no events", name)
		}
		readertest.SameSummary(t, name, full, readOut(t, data, true))
	}
}
