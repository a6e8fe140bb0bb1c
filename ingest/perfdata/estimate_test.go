package perfdata

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
)

// TestEventEstimate: on real captures the estimate is not below the
// events read, and not far above (the fixture's events are 29611 of 57k
// samples, about half of them sched_stat_runtime; sched-only's samples
// are all events, switches larger than wakeups, which an estimate by the
// largest record undercounted); a compressed data section is scaled by
// HEADER_COMPRESSED's ratio, which only approximates this stream's (z:
// about 4 times the count); pipe mode has none.
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
		{"sched-only", readZst(t, "testdata/sched-only.data.zst"), false},
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
		case !tc.pipe && (est < n || est > 5*n):
			t.Errorf("%s: estimate %d events, read %d: want between them and 5 times them", tc.name, est, n)
		}
		t.Logf("%s: estimate %d, events %d", tc.name, est, n)
	}
}

// TestEventEstimateRatioBound: the compression ratio is a number in the
// file; a damaged one (the fuzzer's 78 KB input claimed a ratio that made
// the estimate 320 million events, and ingest reserved gigabytes for them)
// is believed up to maxRatio only.
func TestEventEstimateRatioBound(t *testing.T) {
	r, err := NewReader(bytes.NewReader(readZst(t, "testdata/z.data.zst")), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := r.features[featCompressed]
	if len(b) < 16 {
		t.Fatal("z.data has no HEADER_COMPRESSED")
	}
	real := binary.LittleEndian.Uint32(b[12:])
	est := r.EventEstimate()
	binary.LittleEndian.PutUint32(b[12:], 1)
	one := r.EventEstimate()
	binary.LittleEndian.PutUint32(b[12:], 1<<32-1)
	huge := r.EventEstimate()
	if real > maxRatio || one <= 0 || est < one*int(real)-int(real) || huge > one*maxRatio+maxRatio {
		t.Errorf("ratio %d: estimate %d; ratio 1: %d; ratio 2^32-1: %d, want at most %d", real, est, one, huge, one*maxRatio+maxRatio)
	}
}
