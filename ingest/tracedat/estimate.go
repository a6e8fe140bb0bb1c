package tracedat

// MinRecordBytes is the smallest ring-buffer record of an event the reader
// interprets: a
// 4-byte header (type_len, time_delta), the 8 bytes of common fields
// (common_type, flags, preempt_count, pid) and power/cpu_idle's two u32
// fields (include/linux/ring_buffer.h, the event formats). Scheduler
// events take 36 to 68 bytes.
const MinRecordBytes = 20

// compressedRatio is how many bytes of pages a byte of a compressed CPU
// buffer is taken to hold: more than trace-cmd's zstd and zlib give on
// scheduler events, so that the estimate stays high.
const compressedRatio = 12

// EventEstimate returns how many events the file's CPU buffers may hold,
// on the high side, for a caller that sizes its storage before reading:
// their bytes (a compressed buffer's times compressedRatio) over the
// smallest record of an interpreted event. Every record an event, and
// each the smallest, the estimate is not below the count; capacity
// reserved beyond the count is never written, so it costs address space,
// not resident memory. Without it the Builder's columns grow by doubling:
// a tenth of `tasks`' time on the oracle-busy trace.dat.
func (r *Reader) EventEstimate() int {
	var n int64
	for _, s := range r.all {
		size := max(s.end-s.off, 0)
		if s.compressed {
			size *= compressedRatio
		}
		n += size
	}
	return int(min(n/MinRecordBytes, 1<<31-1))
}
