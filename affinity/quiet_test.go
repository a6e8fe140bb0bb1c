package affinity

import (
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/internal/fuzzsched"
	"github.com/schedlens/schedlens/timeline"
)

// withDecideEvery runs f with decideEvery set to n.
func withDecideEvery(n int, f func()) {
	old := decideEvery
	decideEvery = n
	defer func() { decideEvery = old }()
	f()
}

// inferWith is Infer with decideEvery set to n.
func inferWith(tl *timeline.Timeline, n int) (ch [][]Change, infs []Inference) {
	withDecideEvery(n, func() { ch, infs = Infer(tl, nil, InferOptions{}) })
	return ch, infs
}

// TestQuietWaitsSameInference: counting the quiet long waits instead of
// logging them, deciding after every long wait or every 64, infers what
// logging every one does, on real traces: pinned threads (the ping-pong
// capture), asymmetric CPUs, lost events, a busy machine and an idle one.
// On the busy one nearly every long wait is quiet.
func TestQuietWaitsSameInference(t *testing.T) {
	for _, tc := range []struct {
		rel  string
		busy bool
	}{
		{"real/qemu-smt8-pingpong/trace.txt.zst", false},
		{"real/qemu-juno-asym/trace.txt.zst", false},
		{"real/ftrace-pipe-lost/trace.txt.gz", false},
		{"real/ftrace-oracle-busy/trace.txt.zst", true},
		{"real/ftrace-hackbench-cyclictest/trace.txt.gz", false},
		{"seeds/004/before/run-2/trace.txt.zst", false},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			ld, err := ingest.Load("../fixtures/"+tc.rel, ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			tl := ld.Timeline
			wantCh, wantInf := inferWith(tl, 0)
			for _, n := range []int{1, 64} {
				ch, infs := inferWith(tl, n)
				if !reflect.DeepEqual(ch, wantCh) || !reflect.DeepEqual(infs, wantInf) {
					t.Errorf("deciding every %d: %d inferences, want %d (%v)", n, len(infs), len(wantInf), infs)
				}
			}
			if tc.rel == "real/qemu-smt8-pingpong/trace.txt.zst" && len(wantInf) == 0 {
				t.Error("no inference on the pinned capture")
			}
			logged, total := 0, 0
			withDecideEvery(64, func() {
				in := NewInferrer(tl, InferOptions{})
				tl.Walk(in.Span)
				in.decideWaits(timeline.Time(1<<63 - 1))
				for i := range in.logs {
					logged += in.logs[i].waits.Len()
					total += int(in.logs[i].total)
				}
			})
			t.Logf("%d of %d long waits logged", logged, total)
			if tc.busy && (total == 0 || 4*logged > total) {
				t.Errorf("%d of %d long waits logged: want under a quarter on a busy machine", logged, total)
			}
		})
	}
}

// FuzzInferQuiet: on any event stream (fuzzsched.Events), counting the
// quiet long waits infers what logging every one does. The options make
// 1 us waits long and 1 us idle enough, so that short streams decide.
func FuzzInferQuiet(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 2, 1, 3, 1, 2, 1, 0, 1, 0, 1, 0, 2, 0, 5})
	for _, rel := range []string{"real/qemu-smt8-pingpong/trace.txt.zst", "real/ftrace-pipe-lost/trace.txt.gz"} {
		ld, err := ingest.Load("../fixtures/"+rel, ingest.Options{})
		if err != nil {
			f.Fatal(err)
		}
		if b := fuzzsched.Encode(ld.Timeline); len(b) > 6*400 {
			f.Add(b[:6*400])
		} else {
			f.Add(b)
		}
	}
	o := InferOptions{MinWait: 1000, MinIdle: 1000, MinWaits: 2}
	f.Fuzz(func(t *testing.T, data []byte) {
		tl := fuzzsched.Build(data)
		if tl == nil {
			return
		}
		var wantCh, ch [][]Change
		var wantInf, infs []Inference
		withDecideEvery(0, func() { wantCh, wantInf = Infer(tl, nil, o) })
		withDecideEvery(1, func() { ch, infs = Infer(tl, nil, o) })
		if !reflect.DeepEqual(ch, wantCh) || !reflect.DeepEqual(infs, wantInf) {
			t.Fatalf("inferences %v, want %v", infs, wantInf)
		}
	})
}
