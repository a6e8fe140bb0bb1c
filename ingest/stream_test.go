package ingest

import "testing"

// TestWorthStreaming: a file streams when its events, estimated from its
// size, would take over a quarter of the memory available; a compressed
// file counts at 8x its size; without a memory figure, from 512 MiB.
func TestWorthStreaming(t *testing.T) {
	const gib = 1 << 30
	half := int64(22*gib) / 2 / BytesPerEvent // a 24 GB machine with 22 GB available
	for _, c := range []struct {
		size       int64
		compressed bool
		halfMem    int64
		want       bool
	}{
		{gib, false, half, false},                            // 10.7 M events, 1.7 GB loaded
		{4 * gib, false, half, true},                         // 43 M events, 6.9 GB: over 5.5 GB
		{gib / 2, true, half, true},                          // 4 GiB of text
		{gib / 8, true, half, false},                         // 1 GiB of text
		{600 << 20, false, 0, true},                          // memory not known
		{400 << 20, false, 0, false},                         //
		{gib, false, int64(2*gib) / 2 / BytesPerEvent, true}, // a 2 GB machine
	} {
		if got := worthStreaming(c.size, c.compressed, c.halfMem); got != c.want {
			t.Errorf("size %d, compressed %v, half the memory %d events: %v, want %v", c.size, c.compressed, c.halfMem, got, c.want)
		}
	}
	if WorthStreaming("-") || WorthStreaming("/nonexistent") || WorthStreaming("/dev/null") {
		t.Error("standard input, a missing file or a device is worth streaming")
	}
}
