package perf

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/internal/readertest"

	"github.com/klauspost/compress/zstd"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// readWith reads in with the given worker count, block size in lines (0:
// the default), and leniency (readertest.Read).
func readWith(t testing.TB, in []byte, workers, lines int, lenient bool) readertest.Out {
	t.Helper()
	return readFrom(t, bytes.NewReader(in), workers, lines, lenient)
}

func readFrom(t testing.TB, in io.Reader, workers, lines int, lenient bool) readertest.Out {
	t.Helper()
	return readertest.ReadWith(t, &blockLines, readertest.Config{Workers: workers, Lines: lines}, lenient, true,
		func(opts parse.Options) (readertest.Closer, error) {
			opts.Name = "x.txt"
			return NewReader(in, opts)
		})
}

// checkParallel reads in serially and in parallel (readertest.Configs) and
// wants the same read.
func checkParallel(t testing.TB, name string, in []byte) {
	checkParallelWith(t, name, in, readertest.Configs)
}

func checkParallelWith(t testing.TB, name string, in []byte, configs []readertest.Config) {
	t.Helper()
	readertest.Check(t, name, configs, func(c readertest.Config, lenient bool) readertest.Out {
		return readWith(t, in, c.Workers, c.Lines, lenient)
	})
}

// readSummary reads in as the first read of a streamed analysis does
// (parse.Options.Summary) on workers goroutines.
func readSummary(t testing.TB, in []byte, workers int) readertest.Out {
	t.Helper()
	r, err := NewReader(bytes.NewReader(in), parse.Options{Name: "x.txt", Workers: workers, Summary: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return readertest.Read(t, r, false)
}

// readZst returns the decompressed content of a .zst file.
func readZst(tb testing.TB, path string) []byte {
	tb.Helper()
	f, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	zr, err := zstd.NewReader(nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer zr.Close()
	data, err := zr.DecodeAll(f, nil)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return data
}

// TestParallelSameAsSerial: on every perf script text in the repository
// (the real fixtures, this package's captures printed with other options,
// and the perf script twins of ingest/perfdata's captures), parsing on
// several goroutines gives the serial reader's events (comm ids included),
// strings and Meta.
func TestParallelSameAsSerial(t *testing.T) {
	files := []string{
		fixtureDefault, fixtureFields,
		"testdata/allevents.txt.gz", "testdata/allevents-header.txt.gz",
		"testdata/allevents-latency.txt.gz", "testdata/allevents-ns-pidtid-ip.txt.gz",
		"testdata/allevents-period-misc.txt.gz", "testdata/allevents-nocomm.txt.gz",
		"testdata/allevents-nocpu.txt.gz", "testdata/lost.txt.gz",
		"../perfdata/testdata/lost.txt.zst", "../perfdata/testdata/pipe.txt.zst", "../perfdata/testdata/z.txt.zst",
	}
	for _, f := range files {
		var data []byte
		if strings.HasSuffix(f, ".zst") {
			data = readZst(t, f)
		} else {
			data = readGz(t, f)
		}
		for _, lenient := range []bool{false, true} {
			serial := readWith(t, data, 1, 0, lenient)
			if len(serial.Events) < 1000 && !strings.Contains(f, "nocpu") {
				t.Fatalf("%s: %d events, errors %v", f, len(serial.Events), serial.Errs)
			}
			for _, lines := range []int{0, 97} {
				readertest.Same(t, fmt.Sprintf("%s, lenient %v, blocks of %d lines", f, lenient, lines), serial, readWith(t, data, 2, lines, lenient))
			}
			if !lenient {
				readertest.SameSummary(t, f, serial, readSummary(t, data, 2))
			}
		}
	}
}

// parallelCases are inputs whose reading depends on the lines before a
// line: header lines (a warning naming its line), losses held for the
// CPU's next event, the -L warning given once, counts of what is not
// interpreted, times checked per CPU (a backwards line's comms are
// interned all the same), texts interned in first-seen order (a marker's,
// then a switch's next and prev comms).
var parallelCases = []string{
	"# ========\n# os release : 6.1.0\n# nrcpus avail : many\n# nrcpus online : 4\n" +
		"# event : name = sched:sched_switch, write_backward = 1\n# ========\n#\n" + good1 + good2,
	good1 + hdr + "PERF_RECORD_LOST lost 14\n" + hdr + "PERF_RECORD_LOST lost many\n" +
		hdr + "PERF_RECORD_LOST_SAMPLES\n" + good2 +
		"            perf 13341 [000]     4.000000:       sched:sched_waking: comm=c pid=20 prio=0 target_cpu=000\n" +
		"            perf 13341 [001]     5.000000: PERF_RECORD_LOST lost 3\n",
	"PERF_RECORD_FINISHED_ROUND\n" + good1 + hdr + "PERF_RECORD_FORK(1:1):(0:0)\n\tffffffff82265908 __schedule+0x2f8\n\n" +
		hdr + "sched:sched_stat_runtime: comm=perf pid=13341 runtime=1 [ns]\n" +
		hdr + "probe:sched_switch: (ffffffff82265908)\n" + good2,
	"    perf  7452/7452    0   642.410455:       sched:sched_waking: comm=w pid=1 prio=120 target_cpu=000\n" +
		"    perf  7452/7452    1   642.410456:       sched:sched_waking: comm=v pid=2 prio=120 target_cpu=001\n",
	good1 + hdr + "ftrace:print: 0xffffffff: hello marker\n" +
		hdr + "sched:sched_switch: prev_comm=p1 prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=n1 next_pid=6 next_prio=120\n" +
		"            perf 13341 [000]     1.500000: sched:sched_switch: prev_comm=p2 prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=n2 next_pid=8 next_prio=120\n" +
		hdr + "tracing_mark_write: second marker\r\n" + good2,
	good1 + hdr + "sched:sched_switch: prev_comm=p3 prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=n3 next_pid=8 next_prio=120",
	good1 + strings.Repeat("x", maxLine+10),
}

// TestParallelMalformed: every malformed case, strict (with Next asked
// again after its error) and lenient, reads the same in parallel; and so
// does a mix of them in one input, which spreads errors over blocks.
func TestParallelMalformed(t *testing.T) {
	var all bytes.Buffer
	add := func(in string) {
		all.WriteString(in)
		if !strings.HasSuffix(in, "\n") {
			all.WriteString("\n")
		}
	}
	for _, tc := range malformedCases {
		in := good1 + tc.bad
		if !tc.last {
			in += good2
		}
		checkParallel(t, tc.name, []byte(in))
		add(in)
	}
	for i, in := range parallelCases {
		checkParallel(t, fmt.Sprintf("case %d", i), []byte(in))
		add(in)
	}
	checkParallel(t, "all cases", all.Bytes())
}

// TestParallelReadError: an input that fails after some lines gives the
// serial reader's events, then its positioned error, in parallel too.
func TestParallelReadError(t *testing.T) {
	in := []byte(good1 + good2 + "            perf 13341 [001]     4.000000:       sched:sched_wak")
	for _, lenient := range []bool{false, true} {
		serial := readFrom(t, &failingReader{data: in, err: io.ErrUnexpectedEOF}, 1, 0, lenient)
		if len(serial.Events) != 2 || len(serial.Errs) != 3 || !strings.Contains(serial.Errs[0], "x.txt:3: ") {
			t.Fatalf("serial read: %d events, errors %q; want 2 events and x.txt:3 three times", len(serial.Events), serial.Errs)
		}
		for _, lines := range []int{1, 2, 7} {
			readertest.Same(t, fmt.Sprintf("lenient %v, blocks of %d lines", lenient, lines), serial,
				readFrom(t, &failingReader{data: in, err: io.ErrUnexpectedEOF}, 2, lines, lenient))
		}
	}
}

// TestParallelClose: closing a reader in the middle of its input stops its
// goroutines and makes Next fail instead of blocking.
func TestParallelClose(t *testing.T) {
	data := readGz(t, fixtureDefault)
	r, err := NewReader(bytes.NewReader(data), parse.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	readertest.CheckClose(t, r)
}

// TestParallelAllocs: parsing in parallel allocates the goroutines and the
// blocks in flight, which are reused: not per line (the fixture has 54,350
// lines).
func TestParallelAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a whole fixture")
	}
	data := readGz(t, fixtureFields)
	strs := timeline.NewStrings()
	read := func() {
		r, err := NewReader(bytes.NewReader(data), parse.Options{Strings: strs, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		var ev timeline.Event
		for {
			if err := r.Next(&ev); err == io.EOF {
				return
			} else if err != nil {
				t.Fatal(err)
			}
		}
	}
	read()
	if allocs := testing.AllocsPerRun(3, read); allocs > 200 {
		t.Errorf("%.0f allocations for a parallel read, want at most 200", allocs)
	}
}

// TestNoStaleResult: a parse result is reused from line to line (and from
// block to block), and a line sets only its own kind's fields; a line that
// is not a sample must not take the -L layout of a failed line before it.
func TestNoStaleResult(t *testing.T) {
	in := []byte("    perf  7452/7452    0   642.410455:       sched:sched_waking: comm=w pid=x prio=120 target_cpu=000\n" +
		"PERF_RECORD_FINISHED_ROUND\n" + good1)
	for _, c := range []struct{ workers, lines int }{{1, 0}, {2, 1}, {2, 2}} {
		out := readWith(t, in, c.workers, c.lines, true)
		if len(out.Events) != 1 || out.Meta.Skipped != 1 {
			t.Fatalf("%d workers: %d events, %d skipped; want 1 and 1", c.workers, len(out.Events), out.Meta.Skipped)
		}
		for _, w := range out.Meta.Warnings {
			if strings.Contains(w, "-L") {
				t.Errorf("%d workers, blocks of %d lines: warning %q, but no -L line was read", c.workers, c.lines, w)
			}
		}
	}
}
