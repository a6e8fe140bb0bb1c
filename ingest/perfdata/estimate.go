package perfdata

import (
	"encoding/binary"

	"github.com/schedlens/schedlens/timeline"
)

// featCompressed is HEADER_COMPRESSED (tools/perf/util/header.h): u32
// version, type, level, ratio, mmap_len (write_compressed in
// tools/perf/util/header.c). It is not decoded into headerInfo, so it
// stays listed among the sections not used.
const featCompressed = 27

// maxRatio bounds the compression ratio EventEstimate believes. perf's
// zstd level 1 (the default of -z) compresses scheduler records 3 to 10
// times; a higher ratio in a file only makes the estimate low, which costs
// some copying as the columns grow.
const maxRatio = 32

// EventEstimate returns how many events the file's data section may hold,
// on the high side, for a caller that sizes its storage before reading (0
// when unknown: pipe mode, or no tracepoint the reader decodes). It
// divides the data section's size by the smallest sample record among the
// tracepoints that become events, so that it is not below the count even
// when every record is an event: records of other events, non-sample
// records, larger events and variable-size parts only make the true count
// lower. (Dividing by the largest, as before, undercounted a capture of
// scheduler events alone by 16%, and the columns then grew once, copying
// all of them.) Capacity reserved beyond the count is never written, so
// it costs address space, not resident memory. A
// compressed data section (perf record -z) is scaled by the compression
// ratio perf recorded in HEADER_COMPRESSED, at most maxRatio: the ratio is
// a number in the file, and a damaged one must not make the caller
// reserve memory for billions of events.
func (r *Reader) EventEstimate() int {
	if r.pipe || r.tracing == nil {
		return 0
	}
	size := r.data
	if b, ok := r.features[featCompressed]; ok {
		if len(b) < 16 {
			return 0
		}
		size *= int64(min(max(binary.LittleEndian.Uint32(b[12:]), 1), maxRatio))
	}
	rec := 0
	for _, a := range r.attrs {
		if a.typ != typeTracepoint || !a.fixed || a.offRaw < 0 {
			continue
		}
		f, ok := r.tracing.formats[a.config]
		if !ok || kindOf(f.sys, f.name) == timeline.KindUnknown {
			continue
		}
		raw := 0
		for _, fl := range f.fields {
			raw = max(raw, fl.off+fl.size)
		}
		// The raw block is a u32 size and the payload, padded to 8 bytes.
		if sz := (a.offRaw + 4 + raw + 7) &^ 7; rec == 0 || sz < rec {
			rec = sz
		}
	}
	if rec == 0 || size <= 0 {
		return 0
	}
	return int(min(size/int64(rec), 1<<31-1))
}
