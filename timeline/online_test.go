package timeline_test

import (
	"errors"
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/timeline"
)

// TestOnlineResolver: task instances resolved as time-ordered events
// arrive are those Finish resolves from the merged events, on real traces
// of each text format (tasks, their names, pids and lifetimes, and every
// event's two instances).
func TestOnlineResolver(t *testing.T) {
	for _, rel := range []string{
		"ftrace-hackbench-cyclictest/trace.txt.gz",
		"ftrace-overflow/trace.txt.gz",
		"ftrace-oracle-busy/report.txt.zst",
		"perf-hackbench-cyclictest/perf-script.txt.gz",
		"qemu-smt8-hackbench/trace.txt.zst",
	} {
		f, err := os.Open("../fixtures/real/" + rel)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ingest.NewStream(f, ingest.Options{Name: rel})
		if err != nil {
			t.Fatal(err)
		}
		online := timeline.NewBuilder(s.Strings(), 0)
		batch := timeline.NewBuilder(s.Strings(), 0)
		timeline.ResolveInFinish(batch)
		var ev timeline.Event
		for {
			err := s.Next(&ev)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			online.Add(ev)
			batch.Add(ev)
		}
		s.Close()
		f.Close()
		a, err := online.Finish()
		if err != nil {
			t.Fatal(err)
		}
		b, err := batch.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Tasks) < 50 {
			t.Fatalf("%s: only %d tasks", rel, len(a.Tasks))
		}
		if !reflect.DeepEqual(a.Tasks, b.Tasks) || !reflect.DeepEqual(a.TaskOf, b.TaskOf) || !reflect.DeepEqual(a.Other, b.Other) {
			t.Errorf("%s: online and batch resolution differ (%d and %d tasks)", rel, len(a.Tasks), len(b.Tasks))
		}
	}
}
