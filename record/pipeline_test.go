package record

import (
	"io"
	"testing"

	"github.com/schedlens/schedlens/ingest/perfetto"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// hackbenchRecords returns n raw records shaped like a hackbench capture:
// waking, wakeup, switch triples among 40 tasks on 2 CPUs.
func hackbenchRecords(n int) [][]byte {
	out := make([][]byte, 0, n)
	ts := uint64(1e9)
	for i := 0; len(out) < n; i++ {
		cpu := uint16(i % 2)
		a, b := int32(1000+i%40), int32(1000+(i+7)%40)
		ts += 700
		out = append(out, raw{ts: ts, cpu: cpu, kind: evWaking, flags: 1, pid: b, tgid: 1000, opid: a, otgd: 1000, ctgid: 1000, arg: int32(cpu), prio: 120, oprio: 120, comm: "hackbench", ocomm: "hackbench"}.bytes())
		ts += 300
		out = append(out, raw{ts: ts, cpu: cpu, kind: evWakeup, flags: 1, pid: b, tgid: 1000, opid: a, otgd: 1000, ctgid: 1000, arg: int32(cpu), prio: 120, oprio: 120, comm: "hackbench", ocomm: "hackbench"}.bytes())
		ts += 500
		out = append(out, raw{ts: ts, cpu: cpu, kind: evSwitch, flags: 1, pid: b, tgid: 1000, opid: a, otgd: 1000, ctgid: 1000, state: 1, prio: 120, oprio: 120, comm: "hackbench", ocomm: "hackbench"}.bytes())
	}
	return out[:n]
}

// byCPUBatches reorders recs the way draining per-CPU buffers every so
// often does: per chunk of n records, CPU 0's first, then CPU 1's.
func byCPUBatches(recs [][]byte, n int) [][]byte {
	out := make([][]byte, 0, len(recs))
	for lo := 0; lo < len(recs); lo += n {
		chunk := recs[lo:min(lo+n, len(recs))]
		for cpu := uint16(0); cpu < 2; cpu++ {
			for _, r := range chunk {
				if ne.Uint16(r[12:]) == cpu {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// BenchmarkPipeline measures the user-space cost per record: decoding,
// ordering and writing Perfetto (to io.Discard). Records come the way a
// drain hands them out: a batch of each CPU's buffer in turn.
func BenchmarkPipeline(b *testing.B) {
	recs := byCPUBatches(hackbenchRecords(30000), 2000)
	strs := timeline.NewStrings()
	w, err := perfetto.NewWriter(io.Discard, perfetto.WriterOptions{Strings: strs, Topology: topology.Symmetric(2), Kernel: "6.18.0", NCPU: 2})
	if err != nil {
		b.Fatal(err)
	}
	s := newStream(w, strs, 2)
	cc := newCommCache(strs)
	b.SetBytes(int64(recordSize * len(recs)))
	b.ReportAllocs()
	var d decoded
	var shift uint64
	n := 0
	for b.Loop() {
		for _, r := range recs {
			if err := decodeRecord(r, cc, &d); err != nil {
				b.Fatal(err)
			}
			d.ev.Time += timeline.Time(shift)
			s.push(&d)
			n++
			if n%2000 == 0 {
				if err := s.release(d.ev.Time - 100000); err != nil {
					b.Fatal(err)
				}
			}
		}
		shift += 1 << 30
	}
	if err := s.finish(nil); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}
