package perfdata

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// TestZstreamStops: the decoder goroutine of a perf record -z file ends
// when the reader does: at the end of the input, at an error, and at
// Close in the middle. It waited for the next payload without looking at
// its stop signal, so every compressed file read leaked it with its
// buffers (about 1.3 MB each: the fuzzer's worker grew to 23 GB and was
// killed).
func TestZstreamStops(t *testing.T) {
	data := readZst(t, "testdata/z.data.zst")
	base := runtime.NumGoroutine()
	for range 3 {
		if _, _, err := readBytes(data, false); err != nil {
			t.Fatal(err)
		}
	}
	r, err := NewReader(bytes.NewReader(data), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ev timeline.Event
	for range 100 {
		if err := r.Next(&ev); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	// A payload made undecodable: the decoder's error ends the read.
	bad := bytes.Clone(data)
	for i := len(bad) / 3; i < len(bad)/3+64; i++ {
		bad[i] ^= 0x5a
	}
	readBytes(bad, false)
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines left over (before: %d):\n%s", n-base, base, buf[:runtime.Stack(buf, true)])
	}
}
