package ftrace

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/internal/readertest"

	"github.com/schedlens/schedlens/ingest/parse"
)

// readWith reads in with the given worker count, block size in lines (0:
// the default), and leniency (readertest.Read).
func readWith(t testing.TB, in []byte, workers, lines int, lenient bool) readertest.Out {
	t.Helper()
	return readertest.ReadWith(t, &blockLines, readertest.Config{Workers: workers, Lines: lines}, lenient, false,
		func(opts parse.Options) (readertest.Closer, error) {
			opts.Name = "x.txt"
			return NewReader(bytes.NewReader(in), opts)
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

// TestParallelSameAsSerial: on every real text fixture, parsing on several
// goroutines gives the serial reader's events (comm ids included),
// strings and Meta.
func TestParallelSameAsSerial(t *testing.T) {
	for _, rel := range []string{
		"ftrace-hackbench-cyclictest/trace.txt.gz",
		"ftrace-oracle-busy/trace.txt.zst",
		"ftrace-oracle-busy/report.txt.zst",
		"ftrace-overflow/trace.txt.gz",
		"ftrace-pipe-lost/trace.txt.gz",
		"qemu-smt8-hackbench/trace.txt.zst",
	} {
		data := readFixture(t, rel)
		serial := readWith(t, data, 1, 0, false)
		if len(serial.Events) < 1000 || len(serial.Errs) != 0 {
			t.Fatalf("%s: %d events, errors %v", rel, len(serial.Events), serial.Errs)
		}
		for _, lines := range []int{0, 97} {
			readertest.Same(t, fmt.Sprintf("%s, blocks of %d lines", rel, lines), serial, readWith(t, data, 2, lines, false))
		}
		readertest.SameSummary(t, rel, serial, readSummary(t, data, 2))
	}
}

// TestParallelMalformed: every malformed case, strict (with the reading
// going on after each error) and lenient, reads the same in parallel; and
// so does a mix of them in one input, which spreads errors over blocks.
func TestParallelMalformed(t *testing.T) {
	var all bytes.Buffer
	for i, in := range []string{
		good1 + hdr + "sched_waking: comm=cat pid=200 pri\n" + good2,
		good1 + "            bash-100   [000] d..2.     0.500000: sched_switch: prev_comm=bash prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=cat next_pid=200 next_prio=120\n" + good2,
		"# tracer: nop\n" + good1 + "##### CPU 1 buffer started ####\n" + good2,
		good1 + "CPU:0 [LOST 3 EVENTS]\n" + good2 + "CPU:x [LOST 3 EVENTS]\n",
		"cpus=2\n" + tcGood1 + tcHdr + "sched_switch:         bash:100 [120] Q ==> cat:200 [120]\n" + tcGood2,
		"cpus=2\n" + tcGood1 + "capture: CPU:1 [EVENTS DROPPED]\n" + tcGood2,
		good1 + "            bash-100 \x00\x00 [000] d..2.     1.500000: sched_switch: x\n" + good2,
		good1 + hdr + "sched_stat_runtime: comm=bash pid=100 runtime=1 [ns]\n" + good2,
		good1 + hdr + "tracing_mark_write: hello\n" + good2,
		good1 + strings.Repeat("#", MaxLine+10) + "\n" + good2,
		good1 + hdr + "sched_switch: prev_comm=bash prev_pid=100 prev_pr",
	} {
		checkParallel(t, fmt.Sprintf("case %d", i), []byte(in))
		all.WriteString(in)
		if !strings.HasSuffix(in, "\n") {
			all.WriteString("\n")
		}
	}
	checkParallel(t, "all cases", all.Bytes())
}

// TestParallelClose: closing a reader in the middle of its input stops its
// goroutines and makes Next fail instead of blocking.
func TestParallelClose(t *testing.T) {
	data := readFixture(t, "ftrace-hackbench-cyclictest/trace.txt.gz")
	r, err := NewReader(bytes.NewReader(data), parse.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	readertest.CheckClose(t, r)
}
