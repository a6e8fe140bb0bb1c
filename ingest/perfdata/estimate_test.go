package perfdata

import (
	"bytes"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
)

// TestEventEstimate: on real captures the estimate is not below the
// events read, and not far above (the fixture's events are 29611 of 57k
// samples, about half of them sched_stat_runtime); a compressed data
// section is scaled by HEADER_COMPRESSED's ratio; pipe mode has none.
func TestEventEstimate(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		pipe bool
	}{
		{"fixture", readFixture(t), false},
		{"z", readZst(t, "testdata/z.data.zst"), false},
		{"lost", readZst(t, "testdata/lost.data.zst"), false},
		{"pipe", readZst(t, "testdata/pipe.data.zst"), true},
	} {
		r, err := NewReader(bytes.NewReader(tc.data), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		est := r.EventEstimate()
		n := count(t, r, nil)
		switch {
		case tc.pipe && est != 0:
			t.Errorf("%s: estimate %d in pipe mode, want 0", tc.name, est)
		case !tc.pipe && (est < n || est > 3*n):
			t.Errorf("%s: estimate %d events, read %d: want between them and 3 times them", tc.name, est, n)
		}
		t.Logf("%s: estimate %d, events %d", tc.name, est, n)
	}
}
