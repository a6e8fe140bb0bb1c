package perfetto

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/internal/readertest"
	"github.com/schedlens/schedlens/timeline"
)

// readWith reads in with the given worker count, block size in packets
// (0: the default), and leniency (readertest.ReadWith).
func readWith(t testing.TB, in []byte, workers, packets int, lenient bool) readertest.Out {
	t.Helper()
	return readertest.ReadWith(t, &blockPackets, readertest.Config{Workers: workers, Lines: packets}, lenient, false,
		func(opts parse.Options) (readertest.Closer, error) {
			opts.Name = "x.pftrace"
			return NewReader(bytes.NewReader(in), opts)
		})
}

// reads returns the reads of in that readertest.Check compares: one per
// config (their lines read as packets) and leniency.
func reads(t testing.TB, in []byte) func(c readertest.Config, lenient bool) readertest.Out {
	return func(c readertest.Config, lenient bool) readertest.Out {
		return readWith(t, in, c.Workers, c.Lines, lenient)
	}
}

// TestParallelSameAsSerial: on every real Perfetto fixture and every
// conformance trace, reading on several goroutines gives the serial
// reader's events (comm ids included), strings, errors and Meta.
func TestParallelSameAsSerial(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(confDir, "*", "trace.pb"))
	if len(paths) < 10 {
		t.Fatalf("%d conformance traces", len(paths))
	}
	paths = append(paths, twinDir+"trace.pftrace.zst", twinDir+"trace-compact.pftrace.zst",
		"../../fixtures/real/perfetto-tracebox-hackbench-compact/trace.pftrace.zst",
		"../../fixtures/real/perfetto-tracebox-hackbench-plain/trace.pftrace.zst",
		"../../fixtures/real/perfetto-tracebox-oracle-busy/trace.pftrace.zst")
	big := 0
	for _, p := range paths {
		data := readFixture(t, p)
		serial := readWith(t, data, 1, 0, false)
		if len(serial.Events) >= 10000 {
			big++
		}
		for _, packets := range []int{0, 1, 5} {
			readertest.Same(t, fmt.Sprintf("%s, blocks of %d packets", p, packets), serial, readWith(t, data, 2, packets, false))
		}
	}
	if big < 5 {
		t.Errorf("%d traces of 10,000 events or more, want the 5 real ones", big)
	}
}

// TestParallelMalformed: the corruptions of TestMalformed, strict (reading
// on after each error) and lenient, read the same in parallel.
func TestParallelMalformed(t *testing.T) {
	for _, m := range mutations(smallTrace(t)) {
		readertest.Check(t, m.name, readertest.Configs, reads(t, m.data))
	}
}

// TestParallelLayoutChange: a SystemInfo whose kernel changes the
// prev_state layout after bundles that workers decoded ahead with the old
// one. The serial read is the oracle: the switch after the SystemInfo is
// read with 4.9's layout (0x1000 is R+ there, an error in 4.14+'s).
func TestParallelLayoutChange(t *testing.T) {
	trace := cat(
		packet(bundle(0, switchEv(10, "a", 1, 0x100, "b", 2))),
		packet(bundle(1, switchEv(11, "c", 3, 0x1, "d", 4))),
		packet(bf(fPacketSystemInfo, bf(fSysUtsname, sf(fUtsRelease, "4.9.0")), vf(fSysNumCPUs, 4))),
		packet(bundle(0, switchEv(20, "b", 2, 0x1000, "a", 1))),
		packet(bundle(1, switchEv(21, "d", 4, 0x1000, "c", 3))),
	)
	serial := readWith(t, trace, 1, 0, false)
	if len(serial.Errs) != 0 || len(serial.Events) != 4 || serial.Events[2].State != timeline.StatePreempted {
		t.Fatalf("serial read: %d events, errors %v", len(serial.Events), serial.Errs)
	}
	for _, packets := range []int{1, 2, 5} {
		readertest.Same(t, fmt.Sprintf("blocks of %d packets", packets), serial, readWith(t, trace, 2, packets, false))
	}
	readertest.Check(t, "layout change", readertest.Configs, reads(t, trace))
}

// TestParallelClose: closing a reader in the middle of its input stops its
// goroutines and makes Next fail instead of blocking.
func TestParallelClose(t *testing.T) {
	data := readFixture(t, twinDir+"trace.pftrace.zst")
	defer func(n int) { blockPackets = n }(blockPackets)
	blockPackets = 1 // CheckClose allows fewer events than a block's lines after Close
	r, err := NewReader(bytes.NewReader(data), parse.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	readertest.CheckClose(t, r)
}
