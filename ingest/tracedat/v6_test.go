package tracedat_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/schedlens/schedlens/ingest/ftrace"
	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/ingest/tracedat"
	"github.com/schedlens/schedlens/timeline"
)

func testdata(t *testing.T, name string) []byte {
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := zstd.NewReader(nil)
	defer d.Close()
	b, err := d.DecodeAll(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestV6Lost reads testdata/v6-lost.dat: ftrace-oracle-busy converted to
// version 6 by `trace-cmd convert --file-version 6` (uncompressed pages),
// cut to its first 40 pages per CPU by testdata/trim.py, with page 10 of
// CPU 0 flagged RB_MISSED_EVENTS|RB_MISSED_STORED and a count of 123, and
// page 5 of CPU 1 flagged RB_MISSED_EVENTS only. The oracle is trace-cmd
// 3.1.6's own report of that file (testdata/v6-lost.report.txt), which
// prints "CPU:0 [123 EVENTS DROPPED]" and "CPU:1 [EVENTS DROPPED]": every
// event, lost records included, equals the ftrace reader's of that text.
//
// testdata/v7-none-lost.dat is the same file converted back to version 7
// without compression (sections and pages stored as is); trace-cmd reports
// it with the same text, and so must this reader.
func TestV6Lost(t *testing.T) {
	for _, name := range []string{"v6-lost.dat.zst", "v7-none-lost.dat.zst"} {
		t.Run(name, func(t *testing.T) { checkLost(t, name) })
	}
}

func checkLost(t *testing.T, name string) {
	strs := timeline.NewStrings()
	bin, err := tracedat.NewReader(bytes.NewReader(testdata(t, name)), parse.Options{Name: name, Strings: strs})
	if err != nil {
		t.Fatal(err)
	}
	txt, err := ftrace.NewReader(bytes.NewReader(testdata(t, "v6-lost.report.txt.zst")), parse.Options{Name: "v6-lost.report.txt", Strings: strs})
	if err != nil {
		t.Fatal(err)
	}
	be, te := drain(t, bin), drain(t, txt)
	if len(be) != len(te) {
		t.Fatalf("trace.dat %d events, report %d", len(be), len(te))
	}
	lost := map[timeline.CPU]int64{}
	for i := range be {
		if got := asText(be[i]); got != te[i] {
			t.Fatalf("event %d:\n trace.dat %+v\n report    %+v", i, got, te[i])
		}
		if be[i].Kind == timeline.KindLost {
			lost[be[i].CPU] = be[i].Arg
			if be[i].Start == timeline.NoTime || be[i].Start > be[i].Time {
				t.Errorf("lost record %+v: want the gap to start at the CPU's previous event", be[i])
			}
		}
	}
	if len(lost) != 2 || lost[0] != 123 || lost[1] != -1 {
		t.Errorf("lost records %v, want CPU 0: 123, CPU 1: -1 (count not stored)", lost)
	}
	m := bin.Meta()
	if m.Coverage != timeline.CoverageLost || m.Clock != "local" || m.Kernel != "6.18.44-fc-v1045" || m.NCPU != 2 {
		t.Errorf("meta coverage %v (%s) clock %q kernel %q ncpu %d", m.Coverage, m.CoverageNote, m.Clock, m.Kernel, m.NCPU)
	}
}

// TestTruncatedV6: a v6 file cut inside CPU 1's pages hands out every
// event before the cut, then a positioned truncation error; under
// --lenient it reads to the end, counts the cut as a skipped record and
// ends CPU 1 with a lost-events gap, CPU 0 complete.
func TestTruncatedV6(t *testing.T) {
	full := testdata(t, "v6-lost.dat.zst")
	cut := full[:len(full)-5000]
	all := func(b []byte, lenient bool) ([]timeline.Event, *tracedat.Reader, error) {
		rd, err := tracedat.NewReader(bytes.NewReader(b), parse.Options{Name: "cut.dat", Lenient: lenient})
		if err != nil {
			t.Fatal(err)
		}
		var evs []timeline.Event
		var ev timeline.Event
		for {
			err := rd.Next(&ev)
			if err != nil {
				if err.Error() == "EOF" {
					err = nil
				}
				return evs, rd, err
			}
			evs = append(evs, ev)
		}
	}
	ref, _, err := all(full, false)
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err := all(cut, false)
	var pe *parse.ParseError
	// The cut falls 3192 bytes into a page: the error is at that page.
	if !errors.As(err, &pe) || !errors.Is(err, parse.ErrTruncated) || pe.Offset != int64(len(cut)-3192) || pe.Record != "CPU 1 ring buffer" {
		t.Fatalf("cut file: %v; want a truncation of CPU 1's pages at offset %d", err, len(cut)-3192)
	}
	if len(evs) == 0 || len(evs) >= len(ref) {
		t.Errorf("cut file handed out %d events before the error, full file %d", len(evs), len(ref))
	}
	evs, rd, err := all(cut, true)
	if err != nil {
		t.Fatalf("lenient: %v", err)
	}
	count := func(evs []timeline.Event, cpu timeline.CPU) (n int) {
		for _, e := range evs {
			if e.CPU == cpu && e.Kind != timeline.KindLost {
				n++
			}
		}
		return n
	}
	if count(evs, 0) != count(ref, 0) || count(evs, 1) >= count(ref, 1) {
		t.Errorf("lenient: CPU 0 %d of %d events, CPU 1 %d of %d", count(evs, 0), count(ref, 0), count(evs, 1), count(ref, 1))
	}
	if last := evs[len(evs)-1]; last.Kind != timeline.KindLost || last.CPU != 1 || last.Arg != -1 || rd.Meta().Skipped != 1 {
		t.Errorf("lenient: last event %+v, skipped %d; want CPU 1's lost gap of unknown size and one skip", last, rd.Meta().Skipped)
	}
}

// TestLenientFlips: bytes flipped in the pages of the uncompressed v6 file
// never stop a lenient read: each damaged page or record is skipped and
// counted, and the read reaches the end.
func TestLenientFlips(t *testing.T) {
	data := testdata(t, "v6-lost.dat.zst")
	pages := len(data) - 80*4096 // the 2 x 40 pages are the file's tail
	skipped := 0
	for at := pages; at < len(data); at += 4096*3 + 517 {
		b := bytes.Clone(data)
		b[at] ^= 0xff
		b[at+9] ^= 0x80
		rd, err := tracedat.NewReader(bytes.NewReader(b), parse.Options{Name: "flip.dat", Lenient: true})
		if err != nil {
			t.Fatalf("flip at %d: %v", at, err)
		}
		var ev timeline.Event
		for {
			err := rd.Next(&ev)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("flip at %d: lenient read stopped: %v", at, err)
			}
		}
		skipped += int(rd.Meta().Skipped)
	}
	if skipped == 0 {
		t.Error("no flip was noticed")
	}
}

// TestRealLost reads testdata/real-lost.dat: a real capture with lost
// events (tools/capture-ftrace.sh with a 128 KiB buffer per CPU in a
// tracefs instance, hackbench -g 2 -l 200 on 2 CPUs, `trace-cmd extract`,
// 3.1.6), converted to version 6 uncompressed by `trace-cmd convert
// --file-version 6 --compression none`, with its kallsyms section blanked
// to the same length (5.4 MB of symbols; this reader does not use them;
// the CPU data offsets stay). The kernel overwrote the oldest pages of both
// CPUs: CPU 1's first page stores its count (7143), CPU 0's is flagged
// without one, and on this 64-bit kernel both flags arrive sign-extended
// in the 64-bit commit (0xffffffffc00...). The oracles are trace-cmd's own:
// `trace-cmd report --stat` (testdata/real-lost.stat.txt: the capture
// buffer's per-CPU "overrun") and `trace-cmd report`
// (real-lost.report.txt: "CPU:1 [7143 EVENTS DROPPED]", "CPU:0 [EVENTS
// DROPPED]"). The lost count of each CPU equals --stat's overrun (CPU 0's
// from the CPUSTAT option, as the page has none), and every event but
// that count equals the text's.
func TestRealLost(t *testing.T) {
	strs := timeline.NewStrings()
	bin, err := tracedat.NewReader(bytes.NewReader(testdata(t, "real-lost.dat.zst")), parse.Options{Name: "real-lost.dat", Strings: strs})
	if err != nil {
		t.Fatal(err)
	}
	txt, err := ftrace.NewReader(bytes.NewReader(testdata(t, "real-lost.report.txt.zst")), parse.Options{Name: "real-lost.report.txt", Strings: strs})
	if err != nil {
		t.Fatal(err)
	}
	be, te := drain(t, bin), drain(t, txt)
	// The oracle: the overrun of each CPU of the capture buffer.
	stat, err := os.ReadFile("testdata/real-lost.stat.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := map[timeline.CPU]int64{}
	inCapture, cpu := false, timeline.CPU(-1)
	for _, l := range strings.Split(string(stat), "\n") {
		switch {
		case strings.HasPrefix(l, "Buffer: capture"):
			inCapture = true
		case inCapture && strings.HasPrefix(l, "CPU: "):
			n, _ := strconv.Atoi(strings.TrimPrefix(l, "CPU: "))
			cpu = timeline.CPU(n)
		case inCapture && strings.HasPrefix(l, "overrun: "):
			n, _ := strconv.ParseInt(strings.TrimPrefix(l, "overrun: "), 10, 64)
			want[cpu] = n
		}
	}
	if len(want) != 2 || want[0] != 33830 || want[1] != 7143 {
		t.Fatalf("oracle overruns %v", want)
	}
	lostOf := func(evs []timeline.Event) map[timeline.CPU]int64 {
		out := map[timeline.CPU]int64{}
		for _, e := range evs {
			if e.Kind == timeline.KindLost {
				out[e.CPU] += e.Arg
			}
		}
		return out
	}
	if got := lostOf(be); got[0] != want[0] || got[1] != want[1] {
		t.Errorf("trace.dat lost per CPU %v, trace-cmd report --stat's overrun %v", got, want)
	}
	if got := lostOf(te); got[0] != -1 || got[1] != want[1] {
		t.Errorf("report text lost per CPU %v, want CPU 0 unknown (-1) and CPU 1 %d", got, want[1])
	}
	if len(be) != len(te) {
		t.Fatalf("%d events from trace.dat, %d from its report", len(be), len(te))
	}
	for i := range be {
		b, x := asText(be[i]), te[i]
		if b.Kind == timeline.KindLost && b.CPU == 0 {
			b.Arg = x.Arg // CPU 0's count: the binary has it, the text not
		}
		if b != x {
			t.Fatalf("event %d:\n trace.dat %+v\n report    %+v", i, b, x)
		}
	}
}
