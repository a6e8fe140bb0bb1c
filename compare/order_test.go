package compare

import (
	"strings"
	"testing"
	"time"
)

// TestRecordingOrder: two blocks are flagged whichever side came first;
// interleaved runs, a side of one run and an unknown time are not.
func TestRecordingOrder(t *testing.T) {
	at := func(min int) time.Time { return time.Date(2026, 12, 3, 13, min, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name      string
		base, new []time.Time
		want      string // "" for no warning
	}{
		{"base first", []time.Time{at(1), at(2)}, []time.Time{at(3), at(4)}, "the base runs were all recorded before the new runs (base 2026-12-03 13:01:00 .. 2026-12-03 13:02:00, new 2026-12-03 13:03:00"},
		{"new first", []time.Time{at(5), at(6)}, []time.Time{at(1), at(2)}, "the new runs were all recorded before the base runs"},
		{"interleaved", []time.Time{at(1), at(3)}, []time.Time{at(2), at(4)}, ""},
		{"one run", []time.Time{at(1)}, []time.Time{at(2), at(3)}, ""},
		{"unknown", []time.Time{at(1), {}}, []time.Time{at(3), at(4)}, ""},
	} {
		got := RecordingOrder(tc.base, tc.new)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
