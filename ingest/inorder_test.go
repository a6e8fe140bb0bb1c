package ingest

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

// TestLoadInOrder: a text trace file (or perf.data) is loaded into a Builder that
// requires time order (it keeps 16 bytes an event less), and one whose
// events are out of order is read again into one that merges them; either
// way the Timeline is the one a load of the same bytes from a reader (no
// second read possible, so no such Builder) gives.
func TestLoadInOrder(t *testing.T) {
	raw, err := os.ReadFile(real + "ftrace-hackbench-cyclictest/trace.txt.gz")
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := decompressTo(&text, raw); err != nil {
		t.Fatal(err)
	}
	// Two adjacent records of different CPUs swapped, late in the file.
	lines := bytes.SplitAfter(text.Bytes(), []byte("\n"))
	swapped := false
	for i := len(lines) * 9 / 10; i+1 < len(lines) && !swapped; i++ {
		a, b := lines[i], lines[i+1]
		ta, tb := stamp.Find(a), stamp.Find(b)
		if bytes.Contains(a, []byte("[000]")) && bytes.Contains(b, []byte("[001]")) && ta != nil && tb != nil && !bytes.Equal(ta, tb) {
			lines[i], lines[i+1] = b, a
			swapped = true
		}
	}
	if !swapped {
		t.Fatal("no records to swap")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"ordered.txt", text.Bytes()},
		{"unordered.txt", bytes.Join(lines, nil)},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Load(path, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want, err := LoadReader(bytes.NewReader(tc.data), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := loadFile(path, Options{}, true); (err != nil) != (tc.name == "unordered.txt") {
			t.Errorf("%s: a load that requires order: %v", tc.name, err)
		}
		if !sameTimeline(got.Timeline, want.Timeline) || !reflect.DeepEqual(got.Meta, want.Meta) {
			t.Errorf("%s: the loaded Timeline differs from a reader's", tc.name)
		}
	}
	// perf.data, whose reader hands out the records in time order.
	path := real + "perf-hackbench-cyclictest/perf.data.zst"
	if _, err := loadFile(path, Options{}, true); err != nil {
		t.Fatalf("perf.data: a load that requires order: %v", err)
	}
	got, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := LoadReader(bytes.NewReader(data), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !sameTimeline(got.Timeline, want.Timeline) {
		t.Error("perf.data: the loaded Timeline differs from a reader's")
	}
}

// stamp finds an ftrace record's timestamp.
var stamp = regexp.MustCompile(` [0-9]+\.[0-9]+: `)

// sameTimeline compares two Timelines' events, tasks and figures.
func sameTimeline(a, b *timeline.Timeline) bool {
	fig := func(tl *timeline.Timeline) []any {
		return []any{tl.Times, tl.CPUs, tl.Kinds, tl.Ctxs, tl.States, tl.Prios, tl.Comms, tl.Args, tl.Args2, tl.Tasks, tl.TaskOf, tl.Other,
			tl.Start, tl.End, tl.ValidStart, tl.CPUFirst, tl.CPULast, tl.Gaps, tl.KindCounts, tl.HasWaking, tl.Markers(), tl.Inconsistencies()}
	}
	return reflect.DeepEqual(fig(a), fig(b))
}
