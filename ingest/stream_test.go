package ingest

import (
	"os"
	"testing"

	"github.com/schedlens/schedlens/ingest/tracedat"
)

// TestWorthStreaming: a file streams when its events, estimated from its
// size, would take over a quarter of the memory available; a compressed
// file counts at 8x its size; a trace.dat's events at 20 bytes, not 100;
// without a memory figure, from 512 MiB.
func TestWorthStreaming(t *testing.T) {
	const gib = 1 << 30
	half := int64(22*gib) / 2 / BytesPerEvent // a 24 GB machine with 22 GB available
	for _, c := range []struct {
		size       int64
		compressed bool
		per        int64
		halfMem    int64
		want       bool
	}{
		{gib, false, 100, half, false},                            // 10.7 M events, 1.7 GB loaded
		{4 * gib, false, 100, half, true},                         // 43 M events, 6.9 GB: over 5.5 GB
		{gib / 2, true, 100, half, true},                          // 4 GiB of text
		{gib / 8, true, 100, half, false},                         // 1 GiB of text
		{gib, false, 20, half, true},                              // a 1 GiB trace.dat: 54 M events
		{gib / 8, false, 20, half, false},                         //
		{600 << 20, false, 100, 0, true},                          // memory not known
		{400 << 20, false, 100, 0, false},                         //
		{gib, false, 100, int64(2*gib) / 2 / BytesPerEvent, true}, // a 2 GB machine
	} {
		if got := worthStreaming(c.size, c.compressed, c.per, c.halfMem); got != c.want {
			t.Errorf("size %d, compressed %v, %d bytes an event, half the memory %d events: %v, want %v", c.size, c.compressed, c.per, c.halfMem, got, c.want)
		}
	}
	if WorthStreaming("-") || WorthStreaming("/nonexistent") || WorthStreaming("/dev/null") {
		t.Error("standard input, a missing file or a device is worth streaming")
	}
	// A compressed file that states its content size is taken at it, a
	// trace.dat told from its decompressed magic number.
	for _, c := range []struct {
		path    string
		content int64 // zstd -lv's "Decompressed Size"
		dat     bool
	}{
		{"../fixtures/real/ftrace-oracle-busy/trace.dat.zst", 2005408, true},
		{"../fixtures/real/qemu-smt8-hackbench/trace.txt.zst", 6387370, false},
	} {
		if size, compressed, dat, ok := fileSize(c.path); !ok || compressed || size != c.content || dat != c.dat {
			t.Errorf("%s: size %d, compressed %v, trace.dat %v; want %d, false, %v", c.path, size, compressed, dat, c.content, c.dat)
		}
	}
	path := t.TempDir() + "/t.dat"
	if err := os.WriteFile(path, []byte(tracedat.Magic+"rest"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, dat, ok := fileSize(path); !ok || !dat {
		t.Error("a trace.dat not told from its magic number")
	}
}
