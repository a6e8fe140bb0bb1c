package perfdata

import (
	"errors"
	"testing"

	"github.com/schedlens/schedlens/internal/readertest"
	"github.com/schedlens/schedlens/timeline"
)

// FuzzPerfData checks, on any input, strict and lenient:
//   - no panic, and every error is a *parse.ParseError positioned inside
//     the input, with the record or section and what was expected;
//   - accepted per-CPU times never go backwards;
//   - the events strict mode hands out before its error are the first
//     events lenient mode hands out;
//   - a summary read (parse.Options.Summary) gives the full read's times,
//     CPUs and kinds when that read has no error.
//
// Seeds: the perf-hackbench-cyclictest fixture shrunk to its first 256 KiB
// of records (whole, the 5.9 MB make a fuzzing run crawl), and the
// testdata captures (file mode, compressed, lost events, and pipe mode,
// whole and cut). Run it with -fuzzminimizetime 2x (or so): minimizing
// an interesting input of 100 KB or more at the default 60 s stalls the
// run.
func FuzzPerfData(f *testing.F) {
	f.Add(shrink(f, readFixture(f), 256<<10))
	for _, name := range []string{"z", "lost", "pipe"} {
		data := readZst(f, "testdata/"+name+".data.zst")
		f.Add(data)
		if name == "pipe" {
			f.Add(data[:8192])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		strict, _, strictErr := readBytes(data, false)
		if strictErr != nil {
			checkErr(t, "strict", strictErr, len(data))
		}
		lenient, _, lenientErr := readBytes(data, true)
		if lenientErr != nil {
			checkErr(t, "lenient", lenientErr, len(data))
		}
		if errors.Is(strictErr, nil) && lenientErr == nil && len(strict) != len(lenient) {
			t.Fatalf("strict read %d events without error, lenient %d", len(strict), len(lenient))
		}
		for i := range strict {
			if i >= len(lenient) {
				if lenientErr == nil {
					t.Fatalf("strict gave %d events, lenient only %d", len(strict), len(lenient))
				}
				break
			}
			if strict[i] != lenient[i] {
				t.Fatalf("event %d: strict %+v, lenient %+v", i, strict[i], lenient[i])
			}
		}
		// the first read of a streamed analysis needs no more of it
		readertest.SameSummary(t, "fuzz", readOut(t, data, false), readOut(t, data, true))
		last := map[timeline.CPU]timeline.Time{}
		for i, e := range lenient {
			if l, ok := last[e.CPU]; ok && e.Time < l {
				t.Fatalf("event %d: time %d before CPU %d's previous %d", i, e.Time, e.CPU, l)
			}
			last[e.CPU] = e.Time
		}
	})
}
