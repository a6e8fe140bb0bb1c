package perfetto

import (
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// fBufChunksWritten is BufferStats' uint64 chunks_written = 2: no loss.
const fBufChunksWritten = 2

// TestCoverage: what a Perfetto trace proves about its per-CPU streams
// (Meta.Coverage), from ftrace stats at both ends, loss flags and the
// tracing service's TraceStats.
func TestCoverage(t *testing.T) {
	stats := func(phase, overrun0 uint64) []byte {
		return packet(bf(fPacketFtraceStats, vf(fStatsPhase, phase),
			bf(fStatsCPUStats, vf(fCPUStatsCPU, 0), vf(fCPUStatsOverrun, overrun0)),
			bf(fStatsCPUStats, vf(fCPUStatsCPU, 1), vf(fCPUStatsOverrun, 0))))
	}
	b0 := packet(bundle(0, switchEv(100, "a", 1, 0, "b", 2)))
	b1 := packet(bundle(1, switchEv(150, "c", 3, 0, "d", 4)))
	service := func(fields ...[]byte) []byte {
		return packet(bf(fPacketTraceStats, append([][]byte{bf(fTraceStatsBuffers, vf(fBufChunksOverwritten, 0))}, fields...)...))
	}
	tests := []struct {
		name  string
		trace []byte
		cov   timeline.Coverage
		note  string
	}{
		{"stats at both ends, no growth", cat(stats(statsPhaseStart, 4), b0, b1, stats(statsPhaseEnd, 4)),
			timeline.CoverageComplete, "count no overrun or dropped events"},
		{"and TraceStats clean", cat(stats(statsPhaseStart, 4), b0, b1, stats(statsPhaseEnd, 4), service()),
			timeline.CoverageComplete, "the tracing service's buffers lost nothing"},
		{"overrun grew on CPU 0", cat(stats(statsPhaseStart, 4), b0, b1, stats(statsPhaseEnd, 9)),
			timeline.CoverageLost, "events lost on CPU 0"},
		{"no stats at the start", cat(b0, b1, stats(statsPhaseEnd, 0)),
			timeline.CoverageUnknown, "no ftrace stats at the start of the trace for CPU 0, 1"},
		{"no stats at all", cat(b0, b1),
			timeline.CoverageUnknown, "no ftrace stats at the start"},
		{"lost_events flag", cat(stats(statsPhaseStart, 4), b0, packet(bundle(1, vf(fBundleLostEvents, 1), switchEv(150, "c", 3, 0, "d", 4))), stats(statsPhaseEnd, 4)),
			timeline.CoverageLost, "events lost on CPU 1"},
		{"missing earlier bundles", cat(stats(statsPhaseStart, 4), b0, packet(bundle(1, vf(fBundlePrevBundleEndTS, 120), switchEv(150, "c", 3, 0, "d", 4))), stats(statsPhaseEnd, 4)),
			timeline.CoverageLost, "the first bundle of 1 CPUs follows bundles that are not in the file"},
		{"service buffer overwritten", cat(stats(statsPhaseStart, 4), b0, b1, stats(statsPhaseEnd, 4),
			packet(bf(fPacketTraceStats, bf(fTraceStatsBuffers, vf(fBufChunksWritten, 9)), bf(fTraceStatsBuffers, vf(fBufChunksOverwritten, 3))))),
			timeline.CoverageLost, "buffer 1: 3 chunks overwritten"},
		{"service discarded chunks", cat(stats(statsPhaseStart, 4), b0, b1, stats(statsPhaseEnd, 4), service(vf(fTraceStatsChunksDiscarded, 2))),
			timeline.CoverageLost, "2 chunks discarded before reaching a buffer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, r := mustDecode(t, tc.trace, parse.Options{})
			m := r.Meta()
			if m.Coverage != tc.cov || !strings.Contains(m.CoverageNote, tc.note) {
				t.Errorf("coverage %v %q, want %v with %q", m.Coverage, m.CoverageNote, tc.cov, tc.note)
			}
		})
	}
}

// TestWriterCarriesCoverage: a trace written with Incomplete has no
// START_OF_TRACE stats and reads back as unproven; without it, as complete.
func TestWriterCarriesCoverage(t *testing.T) {
	for _, incomplete := range []bool{false, true} {
		var buf strings.Builder
		w, err := NewWriter(&buf, WriterOptions{NCPU: 2, Incomplete: incomplete})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []timeline.Event{
			{Time: 100, CPU: 0, Kind: timeline.KindSwitch, Task: 2, Other: 1, Prio: 120, OPrio: 120, TGID: -1, Start: timeline.NoTime},
			{Time: 150, CPU: 1, Kind: timeline.KindSwitch, Task: 4, Other: 3, Prio: 120, OPrio: 120, TGID: -1, Start: timeline.NoTime},
		} {
			if err := w.Add(&e); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		_, r := mustDecode(t, []byte(buf.String()), parse.Options{})
		want := timeline.CoverageComplete
		if incomplete {
			want = timeline.CoverageUnknown
		}
		if got := r.Meta().Coverage; got != want {
			t.Errorf("Incomplete=%v: read back as %v (%q), want %v", incomplete, got, r.Meta().CoverageNote, want)
		}
	}
}
