package perfdata

import (
	"bytes"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/internal/readertest"
)

// readOut reads data to its end, with Summary or not, as readertest.Out.
func readOut(tb testing.TB, data []byte, summary bool) readertest.Out {
	tb.Helper()
	r, err := NewReader(bytes.NewReader(data), parse.Options{Name: "x", Summary: summary})
	if err != nil {
		return readertest.Out{Errs: []string{err.Error()}}
	}
	defer r.Close()
	return readertest.Read(tb, r, false)
}

// TestSummaryRead: a read with parse.Options.Summary, which skips the
// payloads' fields, gives each event's time, CPU and kind (a lost
// record's start and count, a marker's text), the CPU count and the
// coverage of the full read, on the fixture and the testdata captures
// (compressed, lost records, scheduler events alone, pipe mode).
func TestSummaryRead(t *testing.T) {
	for _, tc := range testCaptures(t) {
		full := readOut(t, tc.data, false)
		if len(full.Events) == 0 {
			t.Fatalf("%s: no events", tc.name)
		}
		readertest.SameSummary(t, tc.name, full, readOut(t, tc.data, true))
	}
}
