package tracedat_test

import (
	"runtime"
	"testing"
)

// TestMemoryBounded: reading the fixture (13.5 MB of ring-buffer pages in
// zstd chunks, 258812 events) allocates a bounded amount, the header's
// format section plus one chunk per CPU, not the pages: under 8 MiB in
// all, and no more than reading the 40-page v6-lost cut plus 4 MiB.
func TestMemoryBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool does not keep what it is given back: the totals measure the detector")
	}
	big, small := fixture(t, "trace.dat.zst"), testdata(t, "v6-lost.dat.zst")
	alloc := func(b []byte) uint64 {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		if err := readAll(b); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc - m0.TotalAlloc
	}
	a, s := alloc(big), alloc(small)
	if a > 8<<20 || a > s+4<<20 {
		t.Errorf("reading %d bytes allocated %d bytes (the 40-page cut %d): memory grows with the file", len(big), a, s)
	}
	t.Logf("allocated %d bytes for the fixture, %d for the cut", a, s)
}
