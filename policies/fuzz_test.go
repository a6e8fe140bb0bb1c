package policies

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/topology"
)

// FuzzExtractReplay feeds ftrace text to the whole replay path: load
// (lenient), extract the workload, replay it under mainline 6.18 with one
// of the wake rules. Whatever the input, nothing panics, a workload that extracts
// replays, and the modeled timeline is consistent. Seeds are slices of the
// real captures.
func FuzzExtractReplay(f *testing.F) {
	for _, path := range []string{"../fixtures/real/ftrace-hackbench-quiet/trace.txt.zst", "../fixtures/real/ftrace-oracle-busy/trace.txt.zst"} {
		for _, skip := range []int{0, 20000} {
			f.Add(headLines(f, path, skip, 400))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ld, err := ingest.LoadReader(bytes.NewReader(data), "fuzz.txt", parse.Options{Lenient: true})
		if err != nil || ld.Timeline.Len() == 0 {
			return
		}
		if tl := ld.Timeline; tl.End-tl.Start > 1_000_000_000 {
			return // the replay runs for the trace's span: too long for one input
		}
		topo, err := topology.Resolve(nil, "", "", ld.Timeline.NCPU)
		if err != nil {
			return
		}
		{
			rule := len(data) % 4 // one wake rule per input, so that inputs stay cheap
			w, err := replay.Extract(ld.Timeline, topo)
			if err != nil {
				return
			}
			w.WakeRule = []replay.WakeRule{replay.WakeRecorded, replay.WakeAny, replay.WakeLateAny, replay.WakeOrdered}[rule]
			opts := replay.CalibratedOptions(w)
			opts.MaxEvents = 50_000
			res, err := replay.Simulate(w, topo, MustParse("6.18"), opts)
			if errors.Is(err, replay.ErrTooManyEvents) {
				return
			}
			if err != nil {
				t.Fatalf("rule %d: an extracted workload does not replay: %v", rule, err)
			}
			if n := len(res.Timeline.Inconsistencies()); n > 0 {
				t.Fatalf("rule %d: modeled timeline has %d inconsistencies, first %+v", rule, n, res.Timeline.Inconsistencies()[0])
			}
		}
	})
}

// headLines returns n lines of the zstd text file at path after skipping
// skip lines (the header lines of an ftrace file are kept).
func headLines(f *testing.F, path string, skip, n int) []byte {
	fh, err := os.Open(path)
	if err != nil {
		f.Fatal(err)
	}
	defer fh.Close()
	zr, err := zstd.NewReader(fh)
	if err != nil {
		f.Fatal(err)
	}
	defer zr.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for i := 0; sc.Scan() && n > 0; i++ {
		line := sc.Bytes()
		if (len(line) > 0 && line[0] == '#') || i >= skip {
			out.Write(line)
			out.WriteByte('\n')
			if !(len(line) > 0 && line[0] == '#') {
				n--
			}
		}
	}
	return out.Bytes()
}
