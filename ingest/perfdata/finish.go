package perfdata

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// finish completes Meta once the input is exhausted.
func (r *Reader) finish() {
	r.eof = true
	r.closeSpool()
	m := r.meta
	if r.pipe && len(r.features) > 0 {
		if perr := r.readInfo(); perr != nil {
			m.Warnings = append(m.Warnings, "pipe-mode feature records: "+perr.Error())
		}
	}
	r.countSpecs()
	r.coverage()
	if r.synthLost != 0 && r.synthLost != r.lostTotal {
		m.Warnings = append(m.Warnings, fmt.Sprintf(
			"perf record's closing LOST_SAMPLES records count %d lost samples, its LOST records %d", r.synthLost, r.lostTotal))
	}
	seen := r.maxCPU + 1
	n := 0
	if r.info != nil {
		n = r.info.nrAvail
		if len(r.info.skipped) > 0 {
			m.Warnings = append(m.Warnings, fmt.Sprintf("%d perf.data feature sections not used: %s",
				len(r.info.skipped), strings.Join(r.info.skipped, ", ")))
		}
		if r.info.topoErr != "" {
			m.Warnings = append(m.Warnings, r.info.topoErr)
		}
		if len(r.info.cmdline) > 0 {
			m.Warnings = append(m.Warnings, "recorded with: "+joinCmdline(r.info.cmdline))
		}
	}
	switch {
	case n > 0:
		m.NCPU = n
		if seen > n {
			m.NCPU = seen
			m.Warnings = append(m.Warnings, fmt.Sprintf(
				"the perf.data header says %d CPUs but records name CPU %d; NCPU set to %d", n, r.maxCPU, seen))
		}
	case seen > 0:
		m.NCPU = seen
		m.Warnings = append(m.Warnings, fmt.Sprintf(
			"the perf.data header does not state the CPU count: NCPU=%d inferred from the highest CPU seen", seen))
	}
	if m.Topology != nil && m.Topology.NCPU() < m.NCPU {
		m.Warnings = append(m.Warnings, fmt.Sprintf("the perf.data CPU topology covers %d CPUs, the trace %d: not used", m.Topology.NCPU(), m.NCPU))
		m.Topology = nil
	}
}

// coverage states what the capture proves about its per-CPU streams: as
// for perf script text (ingest/perf/coverage.go), perf enables the CPUs'
// events in turn, so only lost records or --overwrite decide anything.
func (r *Reader) coverage() {
	m := r.meta
	switch {
	case r.lostRecs > 0:
		m.Coverage = timeline.CoverageLost
		m.CoverageNote = fmt.Sprintf("%d PERF_RECORD_LOST/LOST_SAMPLES records, the first at offset %#x", r.lostRecs, r.firstLost)
	case r.backward:
		m.Coverage = timeline.CoverageLost
		m.CoverageNote = "recorded with perf record --overwrite (write_backward in the event attributes): the ring buffers keep the newest records and lose the oldest"
	default:
		m.Coverage = timeline.CoverageUnknown
		m.CoverageNote = "perf record enables each CPU's events in turn, so a CPU may start recording after the trace's first record"
	}
}

// pipeAttr reads PERF_RECORD_HEADER_ATTR (pipe mode): a perf_event_attr of
// attr.size bytes, then the event's u64 ids to the record's end.
func (r *Reader) pipeAttr(rec []byte, at int64) *parse.ParseError {
	c := &cursor{b: rec, pos: 8, base: at, sec: "PERF_RECORD_HEADER_ATTR", name: r.name}
	if len(rec) < 16 {
		c.fail(parse.ErrTruncated, "want a perf_event_attr, the record has %d bytes", len(rec))
		return c.err
	}
	size := int(binary.LittleEndian.Uint32(rec[12:]))
	if size == 0 {
		size = 64 // PERF_ATTR_SIZE_VER0
	}
	if size > maxAttrSize {
		c.fail(parse.ErrBadField, "attr size %d, at most %d", size, maxAttrSize)
		return c.err
	}
	a := decodeAttr(c, size)
	for c.err == nil && c.pos+8 <= len(rec) {
		a.ids = append(a.ids, c.u64("id"))
	}
	if c.err != nil {
		return c.err
	}
	r.addAttr(a)
	return nil
}

// pipeTracingData reads PERF_RECORD_HEADER_TRACING_DATA (pipe mode): a
// u32 size, and that many bytes of tracing data after the record.
func (r *Reader) pipeTracingData(rec []byte, at int64) *parse.ParseError {
	if len(rec) < 12 {
		return r.errorAt(at, "PERF_RECORD_HEADER_TRACING_DATA", parse.ErrTruncated, "want a u32 size, the record has %d bytes", len(rec))
	}
	n := int(binary.LittleEndian.Uint32(rec[8:]))
	if n > maxSection {
		return r.errorAt(at, "PERF_RECORD_HEADER_TRACING_DATA", parse.ErrBadField, "tracing data of %d bytes, at most %d accepted", n, maxSection)
	}
	if r.dpos < len(r.dbuf) {
		return r.errorAt(at, "PERF_RECORD_HEADER_TRACING_DATA", parse.ErrBadField, "tracing data inside a compressed record")
	}
	b := make([]byte, n)
	start := r.pos
	if m, err := fullRead(r, b); err != nil {
		return r.errorAt(start, "PERF_RECORD_HEADER_TRACING_DATA", parse.ErrTruncated, "want %d bytes of tracing data, the input ends after %d", n, m)
	}
	r.pos += int64(n)
	td, perr := parseTracingData(b, start, r.name)
	if perr != nil {
		return perr
	}
	r.tracing = td
	for _, a := range r.attrs {
		a.spec = nil
	}
	return nil
}

func fullRead(r *Reader, b []byte) (int, error) {
	r.syncSrc()
	n := 0
	for n < len(b) {
		m, err := r.src.Read(b[n:])
		n += m
		if err != nil {
			if n == len(b) {
				return n, nil
			}
			return n, err
		}
	}
	return n, nil
}

// pipeFeature reads PERF_RECORD_HEADER_FEATURE (pipe mode): a u64 feature
// bit and the section's bytes.
func (r *Reader) pipeFeature(rec []byte, at int64) *parse.ParseError {
	if len(rec) < 16 {
		return r.errorAt(at, "PERF_RECORD_HEADER_FEATURE", parse.ErrTruncated, "want a u64 feature id, the record has %d bytes", len(rec))
	}
	bit := binary.LittleEndian.Uint64(rec[8:])
	if bit >= featBits {
		return nil
	}
	b := int(bit)
	if _, ok := r.features[b]; !ok {
		r.featOrd = append(r.featOrd, b)
		sort.Ints(r.featOrd)
	}
	r.features[b] = append([]byte(nil), rec[16:]...)
	r.featOffs[b] = at + 16
	return nil
}

// countSpecs adds the samples of events not interpreted to Meta.Unknown.
func (r *Reader) countSpecs() {
	for _, a := range r.attrs {
		if s := a.spec; s != nil && s.count > 0 {
			r.meta.Unknown[s.name] += s.count
			s.count = 0
		}
	}
}
