package ingest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

const real = "../fixtures/real/"

func TestSniffFixtures(t *testing.T) {
	tests := []struct {
		path, format, compression string
	}{
		{"ftrace-oracle-busy/trace.txt.zst", "ftrace", "zstd"},
		{"ftrace-oracle-busy/report.txt.zst", "trace-cmd", "zstd"},
		{"ftrace-hackbench-cyclictest/trace.txt.gz", "ftrace", "gzip"},
		{"ftrace-pipe-lost/trace.txt.gz", "trace_pipe", "gzip"},
		{"perf-hackbench-cyclictest/perf-script.txt.gz", "perf-script", "gzip"},
		{"perf-hackbench-cyclictest/perf-script-fields.txt.gz", "perf-script", "gzip"},
		{"perfetto-from-ftrace-hackbench-cyclictest/trace.pftrace.zst", "perfetto", "zstd"},
		{"perfetto-tracebox-hackbench-compact/trace.pftrace.zst", "perfetto", "zstd"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			s, err := Open(real+tc.path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Next(eventBuf()); err != nil {
				t.Fatal(err)
			}
			if got := s.Meta().Format; got != tc.format {
				t.Errorf("format = %q, want %q", got, tc.format)
			}
			if s.Compression != tc.compression {
				t.Errorf("compression = %q, want %q", s.Compression, tc.compression)
			}
		})
	}
}

// TestSameContentAnyCompression: the format comes from content, not the
// name, and plain, gzip and zstd give the same timeline.
func TestSameContentAnyCompression(t *testing.T) {
	raw, err := io.ReadAll(mustOpenGz(t, real+"ftrace-pipe-lost/trace.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var gz, zs bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(raw)
	gw.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write(raw)
	zw.Close()
	var lens []int
	for _, data := range [][]byte{raw, gz.Bytes(), zs.Bytes()} {
		ld, err := LoadReader(bytes.NewReader(data), "x.bin", Options{})
		if err != nil {
			t.Fatal(err)
		}
		lens = append(lens, ld.Timeline.Len())
	}
	if lens[0] != lens[1] || lens[1] != lens[2] || lens[0] < 9000 {
		t.Errorf("events plain/gzip/zstd = %v", lens)
	}
}

func mustOpenGz(t *testing.T, path string) io.Reader {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

func TestOpenErrors(t *testing.T) {
	full, err := os.ReadFile(real + "ftrace-pipe-lost/trace.txt.gz")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		data  []byte
		cause error
		msg   string
	}{
		{"empty file", nil, ErrTruncated, "empty file"},
		{"blank lines", []byte("\n\n  \n"), ErrTruncated, "empty file"},
		{"binary garbage", []byte{0x00, 0x01, 0x02, 0xff, 0xfe, 0x10, 0x00}, ErrUnrecognized, "want ftrace text"},
		{"prose", []byte("hello world\nthis is not a trace\n"), ErrUnrecognized, "want ftrace text"},
		{"truncated gzip", full[:len(full)/2], ErrTruncated, "gzip"},
		{"gzip header only", full[:12], ErrTruncated, "gzip"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ld, err := LoadReader(bytes.NewReader(tc.data), "in.txt", Options{})
			if err == nil {
				t.Fatalf("no error; %d events", ld.Timeline.Len())
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *ParseError", err, err)
			}
			if !errors.Is(err, tc.cause) {
				t.Errorf("error %v does not wrap %v", err, tc.cause)
			}
			if !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), "in.txt") {
				t.Errorf("error = %q, want in.txt... containing %q", err, tc.msg)
			}
		})
	}
}

// TestTruncatedGzipFailsLate: a gzip stream cut at 90% hands out every
// event before the cut, then a positioned error (not a clean EOF).
func TestTruncatedGzipFailsLate(t *testing.T) {
	full, err := os.ReadFile(real + "ftrace-hackbench-cyclictest/trace.txt.gz")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStream(bytes.NewReader(full[:len(full)*9/10]), Options{Name: "cut.gz"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	evt := eventBuf()
	for {
		err = s.Next(evt)
		if err != nil {
			break
		}
		n++
	}
	if err == io.EOF {
		t.Fatal("a cut gzip stream read to a clean EOF")
	}
	if n < 40000 {
		t.Errorf("only %d events before the error, want the ~90%% of the file before the cut", n)
	}
	if !strings.Contains(err.Error(), "cut.gz") {
		t.Errorf("error = %v", err)
	}
}
