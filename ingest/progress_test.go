package ingest

import (
	"os"
	"testing"
)

// TestLoadProgress: Options.Progress is told the input's bytes read of its
// size and the events so far; at the end every byte of a compressed input
// and every event of the timeline.
func TestLoadProgress(t *testing.T) {
	for _, path := range []string{
		"../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz",
		"../fixtures/real/perfetto-tracebox-hackbench-compact/trace.pftrace.zst",
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		var calls int
		var lastRead, lastTotal int64
		var lastEvents int
		ld, err := Load(path, Options{Name: path, Progress: func(read, total int64, events int) {
			if read < lastRead || events < lastEvents {
				t.Errorf("%s: progress went back: %d bytes %d events after %d, %d", path, read, events, lastRead, lastEvents)
			}
			calls++
			lastRead, lastTotal, lastEvents = read, total, events
		}})
		if err != nil {
			t.Fatal(err)
		}
		if calls < 1+ld.Timeline.Len()/65536 {
			t.Errorf("%s: %d progress calls for %d events, want one every 65536 and one at the end", path, calls, ld.Timeline.Len())
		}
		if lastRead != fi.Size() || lastTotal != fi.Size() {
			t.Errorf("%s: last progress %d of %d bytes, want %d of %d", path, lastRead, lastTotal, fi.Size(), fi.Size())
		}
		if lastEvents != ld.Timeline.Len() {
			t.Errorf("%s: last progress %d events, the timeline has %d", path, lastEvents, ld.Timeline.Len())
		}
	}
}
