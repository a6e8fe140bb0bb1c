package perfdata

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// sampleInfo is what a record's sample fields (or sample_id trailer) give.
type sampleInfo struct {
	pid, tid int32
	time     uint64
	cpu      int
	raw      []byte
	rawAt    int // where raw starts in the record
	hasTID   bool
	hasTime  bool
	hasCPU   bool
	hasRaw   bool
}

// attrOf finds the attribute a record belongs to, by its id where the
// records carry one (PERF_SAMPLE_IDENTIFIER first in a sample and last in
// the sample_id trailer, else PERF_SAMPLE_ID at its place), as
// evlist__event2evsel in tools/perf/util/evlist.c does.
func (r *Reader) attrOf(typ uint32, rec []byte, at int64) (*attr, *parse.ParseError) {
	if len(r.attrs) == 0 {
		return nil, r.errorAt(at, recordName(typ), parse.ErrBadField, "a record before any event attribute")
	}
	if len(r.attrs) == 1 {
		return r.attrs[0], nil
	}
	st := r.attrs[0].sampleType
	pos := -1
	switch {
	case typ == recSample && r.sidPos == 0:
		return r.attrs[0], nil
	case typ == recSample:
		pos = r.sidPos
	case typ != recSample && r.attrs[0].flags&flagSampleIDAll == 0:
		return r.attrs[0], nil
	case typ != recSample && st&sampleIdentifier != 0:
		pos = len(rec) - 8
	case typ != recSample && st&sampleID != 0:
		pos = len(rec) - 8
		for _, b := range []uint64{sampleStreamID, sampleCPU, sampleIdentifier} {
			if st&b != 0 {
				pos -= 8
			}
		}
	default:
		return r.attrs[0], nil
	}
	if pos < 8 || pos+8 > len(rec) {
		return nil, r.errorAt(at, recordName(typ), parse.ErrTruncated, "record of %d bytes has no room for its sample id at byte %d", len(rec), pos)
	}
	id := binary.LittleEndian.Uint64(rec[pos:])
	if id == 0 {
		// Records perf synthesizes (COMM, FORK, MMAP of the threads that
		// existed at the start) carry a zeroed sample id.
		return r.attrs[0], nil
	}
	if i := id - r.idBase; i < uint64(len(r.idTab)) && r.idTab[i] != nil {
		return r.idTab[i], nil
	}
	a, ok := r.byID[id]
	if !ok {
		return nil, r.errorAt(at+int64(pos), recordName(typ), parse.ErrBadField, "sample id %d belongs to no event attribute", id)
	}
	return a, nil
}

// sampleIDPos returns where a PERF_RECORD_SAMPLE carries the id that names
// its attribute (PERF_SAMPLE_IDENTIFIER first, else PERF_SAMPLE_ID after
// IP, TID, TIME and ADDR), by the first attribute's sample_type as
// evlist__event2evsel reads it: -1 with no attribute, 0 when the first
// attribute is taken whatever the record holds (one attribute, or no id).
func sampleIDPos(attrs []*attr) int {
	switch {
	case len(attrs) == 0:
		return -1
	case len(attrs) == 1:
		return 0
	}
	st := attrs[0].sampleType
	switch {
	case st&sampleIdentifier != 0:
		return 8
	case st&sampleID != 0:
		pos := 8
		for _, b := range []uint64{sampleIP, sampleTID, sampleTime, sampleAddr} {
			if st&b != 0 {
				pos += 8
			}
		}
		return pos
	}
	return 0
}

// sampleAttr is attrOf for a PERF_RECORD_SAMPLE without the errors: nil
// where attrOf would fail.
func (r *Reader) sampleAttr(rec []byte) *attr {
	p := r.sidPos
	if p == 0 {
		return r.attrs[0]
	}
	if p < 0 || p+8 > len(rec) {
		return nil
	}
	id := binary.LittleEndian.Uint64(rec[p:])
	if id == 0 {
		return r.attrs[0]
	}
	if i := id - r.idBase; i < uint64(len(r.idTab)) {
		return r.idTab[i]
	}
	return r.byID[id]
}

// fastSample decodes a PERF_RECORD_SAMPLE of the common kind into e, as
// decode does, and returns the payload to keep: its attribute found, with
// TIME, CPU and RAW at fixed offsets and its spec known (after its first
// sample), the CPU and time in range and the RAW block inside the record.
// ok false leaves any other to decode, which says what is wrong with it.
func (r *Reader) fastSample(rec []byte, at int64, e *entry) (payload []byte, ok bool) {
	a := r.sampleAttr(rec)
	if a == nil || !a.fast || a.spec == nil {
		return nil, false
	}
	le := binary.LittleEndian
	p := a.offRaw + 4
	if p > len(rec) {
		return nil, false
	}
	n := int(le.Uint32(rec[a.offRaw:]))
	cpu := le.Uint32(rec[a.offCPU:])
	t := le.Uint64(rec[a.offTime:])
	if n > len(rec)-p || cpu > maxCPU || t > math.MaxInt64 {
		return nil, false
	}
	// Field by field: a struct literal is built aside and copied, which
	// stalls on store forwarding.
	e.time, e.at, e.spec, e.cpu = t, at, a.spec, int32(cpu)
	e.typ, e.flags, e.arg = recSample, hasCPU|hasTime, 0
	e.pid, e.tid = 0, 0
	if a.offTID >= 0 {
		e.pid = int32(le.Uint32(rec[a.offTID:]))
		e.tid = int32(le.Uint32(rec[a.offTID+4:]))
		e.flags |= hasTID
	}
	if a.spec.kind == timeline.KindUnknown {
		return nil, true
	}
	e.pay = uint16(p)
	return rec[p : p+n], true
}

// parseSample decodes a PERF_RECORD_SAMPLE's fields up to PERF_SAMPLE_RAW
// in the kernel's order (perf_output_sample in kernel/events/core.c, the
// layout comment at PERF_RECORD_SAMPLE in include/uapi/linux/perf_event.h):
// IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD, READ,
// CALLCHAIN, RAW.
func (r *Reader) parseSample(a *attr, rec []byte, at int64) (sampleInfo, *parse.ParseError) {
	if a.fixed && a.offRaw >= 0 && a.offRaw+4 <= len(rec) {
		// The common layout, at offsets worked out once per attribute.
		var s sampleInfo
		le := binary.LittleEndian
		if a.offTID >= 0 {
			s.pid = int32(le.Uint32(rec[a.offTID:]))
			s.tid = int32(le.Uint32(rec[a.offTID+4:]))
			s.hasTID = true
		}
		if a.offTime >= 0 {
			s.time = le.Uint64(rec[a.offTime:])
			s.hasTime = true
		}
		if a.offCPU >= 0 {
			s.cpu = int(le.Uint32(rec[a.offCPU:]))
			s.hasCPU = true
		}
		p := a.offRaw + 4
		if n := int(le.Uint32(rec[a.offRaw:])); n <= len(rec)-p {
			s.raw, s.rawAt = rec[p:p+n], p
			s.hasRaw = true
			return s, nil
		}
		// A raw size past the record: the slow path says what is wrong.
	}
	var s sampleInfo
	st := a.sampleType
	p := 8
	short := func(what string, n int) *parse.ParseError {
		return r.errorAt(at+int64(p), "PERF_RECORD_SAMPLE", parse.ErrTruncated,
			"%s: want %d bytes at byte %d, the record has %d", what, n, p, len(rec))
	}
	skip := func(bit uint64, what string) *parse.ParseError {
		if st&bit == 0 {
			return nil
		}
		if p+8 > len(rec) {
			return short(what, 8)
		}
		p += 8
		return nil
	}
	if e := skip(sampleIdentifier, "identifier"); e != nil {
		return s, e
	}
	if e := skip(sampleIP, "ip"); e != nil {
		return s, e
	}
	if st&sampleTID != 0 {
		if p+8 > len(rec) {
			return s, short("pid, tid", 8)
		}
		s.pid = int32(binary.LittleEndian.Uint32(rec[p:]))
		s.tid = int32(binary.LittleEndian.Uint32(rec[p+4:]))
		s.hasTID = true
		p += 8
	}
	if st&sampleTime != 0 {
		if p+8 > len(rec) {
			return s, short("time", 8)
		}
		s.time = binary.LittleEndian.Uint64(rec[p:])
		s.hasTime = true
		p += 8
	}
	for _, f := range []struct {
		bit  uint64
		what string
	}{{sampleAddr, "addr"}, {sampleID, "id"}, {sampleStreamID, "stream_id"}} {
		if e := skip(f.bit, f.what); e != nil {
			return s, e
		}
	}
	if st&sampleCPU != 0 {
		if p+8 > len(rec) {
			return s, short("cpu", 8)
		}
		s.cpu = int(binary.LittleEndian.Uint32(rec[p:]))
		s.hasCPU = true
		p += 8
	}
	if e := skip(samplePeriod, "period"); e != nil {
		return s, e
	}
	if st&sampleRead != 0 {
		// struct read_format (perf_event.h): with PERF_FORMAT_GROUP nr,
		// [time_enabled], [time_running], then nr {value, [id], [lost]};
		// else value, [time_enabled], [time_running], [id], [lost].
		rf := a.readFormat
		per := 8
		if rf&readID != 0 {
			per += 8
		}
		if rf&readLost != 0 {
			per += 8
		}
		hdr := 0
		if rf&readTotalTimeEnabled != 0 {
			hdr += 8
		}
		if rf&readTotalTimeRunning != 0 {
			hdr += 8
		}
		n := hdr + per
		if rf&readGroup != 0 {
			if p+8 > len(rec) {
				return s, short("read_format nr", 8)
			}
			nr := binary.LittleEndian.Uint64(rec[p:])
			if nr > uint64(len(rec)) {
				return s, short("read_format values", len(rec))
			}
			n = 8 + hdr + int(nr)*per
		}
		if p+n > len(rec) {
			return s, short("read_format", n)
		}
		p += n
	}
	if st&sampleCallchain != 0 {
		if p+8 > len(rec) {
			return s, short("callchain nr", 8)
		}
		nr := binary.LittleEndian.Uint64(rec[p:])
		if nr > uint64(len(rec))/8 || p+8+int(nr)*8 > len(rec) {
			return s, short("callchain", 8+int(min(nr, uint64(len(rec))))*8)
		}
		p += 8 + int(nr)*8
	}
	if st&sampleRaw != 0 {
		if p+4 > len(rec) {
			return s, short("raw size", 4)
		}
		n := int(binary.LittleEndian.Uint32(rec[p:]))
		p += 4
		if n > len(rec)-p {
			return s, short("raw data", n)
		}
		s.raw, s.rawAt = rec[p:p+n], p
		s.hasRaw = true
	}
	return s, nil
}

// trailer decodes the sample_id block at the end of a non-sample record.
func (r *Reader) trailer(a *attr, typ uint32, rec []byte, body int, at int64) (sampleInfo, *parse.ParseError) {
	var s sampleInfo
	n := a.idTrailerSize()
	if len(rec)-n < 8+body {
		return s, r.errorAt(at, recordName(typ), parse.ErrTruncated,
			"record of %d bytes: want %d bytes of body and %d of sample_id", len(rec), body, n)
	}
	if n == 0 {
		return s, nil
	}
	p := len(rec) - n
	st := a.sampleType
	if st&sampleTID != 0 {
		s.pid = int32(binary.LittleEndian.Uint32(rec[p:]))
		s.tid = int32(binary.LittleEndian.Uint32(rec[p+4:]))
		s.hasTID = true
		p += 8
	}
	if st&sampleTime != 0 {
		s.time = binary.LittleEndian.Uint64(rec[p:])
		s.hasTime = true
		p += 8
	}
	if st&sampleID != 0 {
		p += 8
	}
	if st&sampleStreamID != 0 {
		p += 8
	}
	if st&sampleCPU != 0 {
		s.cpu = int(binary.LittleEndian.Uint32(rec[p:]))
		s.hasCPU = true
	}
	return s, nil
}

// bodySize is the fixed part of each non-sample record the reader reads
// (struct perf_record_comm, _fork, _lost, _lost_samples in
// tools/lib/perf/include/perf/event.h); COMM's name is at least 8 bytes.
func bodySize(typ uint32) int {
	switch typ {
	case recComm:
		return 8 + 8
	case recFork, recExit:
		return 24
	case recLost:
		return 16
	case recLostSamples:
		return 8
	}
	return 0
}

// info decodes a queued record's sample fields or trailer.
func (r *Reader) recordInfo(typ uint32, rec []byte, at int64) (*attr, sampleInfo, *parse.ParseError) {
	a, perr := r.attrOf(typ, rec, at)
	if perr != nil {
		return nil, sampleInfo{}, perr
	}
	if typ == recSample {
		s, perr := r.parseSample(a, rec, at)
		return a, s, perr
	}
	s, perr := r.trailer(a, typ, rec, bodySize(typ), at)
	return a, s, perr
}

// decode reads a record's sample fields (or sample_id trailer) and the
// part of its body delivery needs into an entry, and returns the payload to
// keep with it. ok false means the record needs no delivery.
func (r *Reader) decode(typ uint32, rec []byte, at int64) (e entry, payload []byte, ok bool, perr *parse.ParseError) {
	a, s, perr := r.recordInfo(typ, rec, at)
	if perr != nil {
		return e, nil, false, perr
	}
	e = entry{typ: uint8(typ), at: at, time: s.time, cpu: int32(min(s.cpu, maxCPU+1)), pid: s.pid, tid: s.tid}
	if s.hasTID {
		e.flags |= hasTID
	}
	if s.hasCPU {
		e.flags |= hasCPU
	}
	if s.hasTime {
		e.flags |= hasTime
	}
	le := binary.LittleEndian
	switch typ {
	case recComm:
		// perf_record_comm: u32 pid, tid; char comm[] (NUL-padded).
		e.tid = int32(le.Uint32(rec[12:]))
		name := rec[16 : len(rec)-a.idTrailerSize()]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		return e, name, true, nil
	case recFork:
		// perf_record_fork: u32 pid, ppid, tid, ptid; u64 time.
		e.tid = int32(le.Uint32(rec[16:]))
		e.pid = int32(le.Uint32(rec[20:]))
		return e, nil, true, nil
	case recExit:
		return e, nil, false, nil
	case recLost:
		e.arg = le.Uint64(rec[16:])
		return e, nil, true, nil
	case recLostSamples:
		e.arg = le.Uint64(rec[8:])
		return e, nil, true, nil
	}
	// PERF_RECORD_SAMPLE
	if !s.hasCPU || !s.hasTime {
		return e, nil, false, r.errorAt(at, "PERF_RECORD_SAMPLE", parse.ErrBadField,
			"sample_type %#x: want PERF_SAMPLE_TIME and PERF_SAMPLE_CPU", a.sampleType)
	}
	if s.cpu < 0 || s.cpu > maxCPU {
		return e, nil, false, r.errorAt(at, "PERF_RECORD_SAMPLE", parse.ErrBadField, "cpu %d, want 0..%d", s.cpu, maxCPU)
	}
	if s.time > math.MaxInt64 {
		return e, nil, false, r.errorAt(at, "PERF_RECORD_SAMPLE", parse.ErrBadField, "time %d out of range", s.time)
	}
	spec, perr := r.specOf(a, at)
	if perr != nil {
		return e, nil, false, perr
	}
	e.spec = spec
	if spec.kind == timeline.KindUnknown {
		return e, nil, true, nil
	}
	if !s.hasRaw {
		return e, nil, false, r.errorAt(at, "PERF_RECORD_SAMPLE", parse.ErrBadField, "%s sample without PERF_SAMPLE_RAW", spec.name)
	}
	e.pay = uint16(s.rawAt)
	return e, s.raw, true, nil
}

// deliver handles a record in delivery order. It reports whether ev holds
// an event to hand out.
func (r *Reader) deliver(e *entry, p []byte, ev *timeline.Event) (bool, *parse.ParseError) {
	switch e.typ {
	case recComm:
		r.threads.set(e.tid, r.strs.ID(p))
		return false, nil
	case recFork:
		// The child takes its parent's name when perf knows it
		// (thread__fork in tools/perf/util/thread.c); a reused tid starts
		// afresh.
		r.threads.del(e.tid)
		if c, ok := r.threads.get(e.pid); ok {
			r.threads.set(e.tid, c)
		}
		return false, nil
	case recLost, recLostSamples:
		n := int64(min(e.arg, 1<<62))
		if e.typ == recLostSamples && (e.flags&hasTime == 0 || e.time == 0) {
			// perf record synthesizes these at the end from each event's
			// read_format LOST counter (record__read_lost_samples in
			// tools/perf/builtin-record.c): per-event totals that repeat
			// what the LOST records said, with no time or CPU.
			r.synthLost += n
			return false, nil
		}
		r.lost(e, n)
		return false, nil
	}
	// PERF_RECORD_SAMPLE
	t := timeline.Time(e.time)
	cpu := int(e.cpu)
	spec := e.spec
	if spec.kind == timeline.KindUnknown {
		return false, r.deliverUnknown(cpu, t, e.at, spec)
	}
	if perr := r.checkOrder(cpu, t, e.at); perr != nil {
		return false, perr
	}
	ev.Reset()
	ev.Time = t
	ev.CPU = timeline.CPU(cpu)
	if r.opts.Summary && spec.kind != timeline.KindMarker {
		// The first read of a streamed analysis: time, CPU and kind
		// (parse.Options.Summary); the second read decodes the fields.
		ev.Kind = spec.kind
		r.see(cpu, t)
		return true, nil
	}
	sc := sampleCtx{tid: timeline.NoTID, comm: timeline.NoComm}
	if e.flags&hasTID != 0 {
		ev.TGID = e.pid
		sc.tid = timeline.TID(e.tid)
		if spec.ctxComm {
			if c, ok := r.threads.get(e.tid); ok {
				sc.comm = c
			}
		}
	}
	if msg := spec.fill(p, sc, &r.comms, ev); msg != "" {
		ev.Reset()
		return false, r.errorAt(e.at, spec.name, parse.ErrBadField, "%s", msg)
	}
	ev.Kind = spec.kind
	r.see(cpu, t)
	return true, nil
}

// checkOrder fails a sample at t on cpu (at offset at) that is before the
// CPU's previous record.
func (r *Reader) checkOrder(cpu int, t timeline.Time, at int64) *parse.ParseError {
	if last := r.cpuLost.LastOf(cpu); last != timeline.NoTime && t < last {
		return r.errorAt(at, "PERF_RECORD_SAMPLE", parse.ErrBackwards,
			"time %d on CPU %d is before the CPU's previous record at %d", t, cpu, last)
	}
	return nil
}

// deliverUnknown hands out a sample of an event the reader does not
// interpret: it counts, and its time is its CPU's latest record.
func (r *Reader) deliverUnknown(cpu int, t timeline.Time, at int64, spec *eventSpec) *parse.ParseError {
	if perr := r.checkOrder(cpu, t, at); perr != nil {
		return perr
	}
	r.see(cpu, t)
	spec.count++ // into Meta.Unknown at the end
	return nil
}

// specOf returns how to decode an attribute's samples.
func (r *Reader) specOf(a *attr, at int64) (*eventSpec, *parse.ParseError) {
	if a.spec != nil {
		return a.spec, nil
	}
	if a.typ == typeTracepoint {
		if r.tracing == nil {
			return nil, r.errorAt(at, "PERF_RECORD_SAMPLE", parse.ErrBadField,
				"a tracepoint sample, and the file has no HEADER_TRACING_DATA with the event formats")
		}
		f, ok := r.tracing.formats[a.config]
		if !ok {
			return nil, r.errorAt(at, "PERF_RECORD_SAMPLE", parse.ErrBadField,
				"tracepoint id %d (attr config) has no event format in HEADER_TRACING_DATA", a.config)
		}
		spec, perr := newSpec(f, r.name)
		if perr != nil {
			return nil, perr
		}
		if spec.kind == timeline.KindUnknown && kindOf("sched", f.name) != timeline.KindUnknown {
			spec.name = f.sys + ":" + f.name
		}
		a.spec = spec
		return spec, nil
	}
	name := a.name
	if name == "" {
		name = fmt.Sprintf("event type %d config %#x", a.typ, a.config)
	}
	a.spec = &eventSpec{kind: timeline.KindUnknown, name: name}
	return a.spec, nil
}

func (r *Reader) see(cpu int, t timeline.Time) {
	r.growCPU(cpu)
	r.cpuLost.See(cpu, t)
}

func (r *Reader) growCPU(cpu int) {
	if cpu > r.maxCPU {
		r.maxCPU = cpu
	}
}

// lost records a LOST or LOST_SAMPLES record against its CPU; the gap is
// handed out before that CPU's next event, as the text reader does.
func (r *Reader) lost(e *entry, n int64) {
	r.lostTotal += n
	if r.lostRecs++; r.lostRecs == 1 {
		r.firstLost = e.at
	}
	cpu := int(e.cpu)
	if e.flags&hasCPU == 0 || cpu < 0 || cpu > maxCPU {
		cpu = 0
		r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf("offset %#x: lost-event record without a CPU, put on CPU 0", e.at))
	}
	r.growCPU(cpu)
	r.cpuLost.Add(cpu, n, timeline.Time(min(e.time, math.MaxInt64)))
}

// commit hands out a pending loss of ev's CPU before ev itself.
func (r *Reader) commit(ev *timeline.Event) {
	if r.lostRecs == 0 {
		return // no loss was read, none is pending
	}
	held := *ev
	if r.cpuLost.Take(int(ev.CPU), ev.Time, ev) {
		r.held, r.hasHeld = held, true
	}
}

// flush hands out the losses still pending at the end, then io.EOF.
func (r *Reader) flush(ev *timeline.Event) error {
	if r.cpuLost.Flush(ev) {
		return nil
	}
	ev.Reset()
	return io.EOF
}
