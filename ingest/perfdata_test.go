package ingest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestPerfDataPaths: a perf.data is sniffed from its content and read the
// same whether it comes zstd-compressed, as a plain file (read in place)
// or as a stream (copied to a temporary file first, its feature sections
// being at the end).
func TestPerfDataPaths(t *testing.T) {
	zpath := "../fixtures/real/perf-hackbench-cyclictest/perf.data.zst"
	raw, err := os.ReadFile(zpath)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := zstd.NewReader(nil)
	data, err := d.DecodeAll(raw, nil)
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "perf.data")
	if err := os.WriteFile(plain, data, 0o644); err != nil {
		t.Fatal(err)
	}
	z, err := Load(zpath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Load(plain, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadReader(bytes.NewReader(data), "stdin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if z.Compression != "zstd" || p.Compression != "" || z.Meta.Format != "perf.data" {
		t.Errorf("compression %q/%q, format %q", z.Compression, p.Compression, z.Meta.Format)
	}
	for _, l := range []*Loaded{p, s} {
		if l.Timeline.Len() != z.Timeline.Len() || l.Timeline.Len() != 29611 || l.Meta.Kernel != "6.18.44-fc-v1045" {
			t.Errorf("%s: %d events (zstd: %d), kernel %q", l.Path, l.Timeline.Len(), z.Timeline.Len(), l.Meta.Kernel)
		}
	}
}
