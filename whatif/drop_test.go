package whatif

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/ingest"
)

// TestDropSchedules: a run whose schedule drops its events once measured,
// after a recording measured beforehand with its events dropped, gives
// the figures of a run that keeps both, over the recording's window and
// over the whole run (the modeled run goes on past the recording, so its
// schedule is measured twice and drops its events at the second). Such a
// run keeps its events in a log (replay.Options.Log), walked once for each
// measure, where the other keeps a timeline: on a recording with lost
// events, the stretches it did not observe are gaps of both.
func TestDropSchedules(t *testing.T) {
	for _, tc := range []struct {
		path  string
		whole bool
	}{
		{"../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz", false},
		{"../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz", true},
		{"../fixtures/real/ftrace-overflow/trace.txt.gz", false},
	} {
		path, whole := tc.path, tc.whole
		load := func() *ingest.Loaded {
			ld, err := ingest.Load(path, ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return ld
		}
		keep, drop := load(), load()
		pk, err := Prepare(keep.Timeline, "6.12", Options{WholeRun: whole})
		if err != nil {
			t.Fatal(err)
		}
		want, err := pk.Run(1, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		dopts := Options{WholeRun: whole, DropSchedules: true}
		rec, err := MeasureRecording(drop.Timeline, dopts)
		if err != nil {
			t.Fatal(err)
		}
		pd, err := Prepare(drop.Timeline, "6.12", dopts)
		if err != nil {
			t.Fatal(err)
		}
		pd.DropRecording()
		got, err := pd.Run(1, nil, rec)
		if err != nil {
			t.Fatal(err)
		}
		if !drop.Timeline.Summary() || !got.Result.Timeline.Summary() || want.Result.Timeline.Summary() || keep.Timeline.Summary() {
			t.Fatal("events dropped where they should not be, or kept")
		}
		if gaps := len(want.Result.Timeline.Gaps); !reflect.DeepEqual(got.Result.Timeline.Gaps, want.Result.Timeline.Gaps) ||
			gaps == 0 && path == "../fixtures/real/ftrace-overflow/trace.txt.gz" {
			t.Errorf("%s: the schedules' gaps differ, or none (%d)", path, gaps)
		}
		if got.Result.Events != nil || !reflect.DeepEqual(got.Result.Timeline.Tasks, want.Result.Timeline.Tasks) {
			t.Errorf("%s: the logged schedule's events are kept, or its tasks differ", path)
		}
		if got.Result.Timeline.Len() != want.Result.Timeline.Len() {
			t.Errorf("%s whole %v: the schedule counts %d events, want %d", path, whole, got.Result.Timeline.Len(), want.Result.Timeline.Len())
		}
		if !reflect.DeepEqual(rec, want.Recorded) {
			t.Errorf("%s whole %v: recorded figures differ", path, whole)
		}
		if !reflect.DeepEqual(got.Modeled, want.Modeled) || !reflect.DeepEqual(got.Notes, want.Notes) {
			t.Errorf("%s whole %v: modeled figures differ", path, whole)
		}
		if want.Result.Timeline.End <= want.Window.End {
			t.Error("the modeled run does not go on past the recording: the schedule is measured once, not twice")
		}
		if want.Modeled.Overall.RunNs == 0 {
			t.Error("no modeled run time")
		}
	}
}

// TestDropRecording: a what-if that measures the recording before its runs
// and drops its events gives the report of one that keeps them.
func TestDropRecording(t *testing.T) {
	const path = "../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz"
	c, err := ParseChange("NO_RUN_TO_PARITY")
	if err != nil {
		t.Fatal(err)
	}
	var out [2][]byte
	for i, drop := range []bool{false, true} {
		ld, err := ingest.Load(path, ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := Predict(ld.Timeline, "6.12", []Change{c}, PredictOptions{Seeds: []uint64{1, 2}, Options: Options{DropRecording: drop}})
		if err != nil {
			t.Fatal(err)
		}
		if ld.Timeline.Summary() != drop {
			t.Errorf("DropRecording %v: the recording's events dropped: %v", drop, ld.Timeline.Summary())
		}
		out[i] = render(t, p, "json")
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("the reports differ")
	}
	if len(out[0]) < 1000 {
		t.Errorf("a report of %d bytes", len(out[0]))
	}
}
