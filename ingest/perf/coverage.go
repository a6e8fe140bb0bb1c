package perf

import (
	"fmt"

	"github.com/schedlens/schedlens/timeline"
)

// coverage states in Meta what the capture proves about its per-CPU
// streams, once the whole input has been read.
//
// perf record's ring buffers do not overwrite in its normal mode (when one
// is full the kernel drops new records and counts them in a PERF_RECORD_LOST
// record), but that does not make every CPU's stream complete from the
// trace's first event: perf enables the events one CPU at a time, moving
// itself to each CPU in turn (evlist__enable with an affinity in
// tools/perf/util/evlist.c), so a CPU starts recording after the one
// before it. In perf-hackbench-cyclictest perf is migrated to CPU 1 at
// 590.907245, and CPU 1's stream begins 6.6 ms later with no switch-in of
// perf: CPU 1 was not recording yet. So a capture without LOST records
// still proves nothing about a CPU whose first record comes late.
// perf record --overwrite (attribute write_backward, shown by --header)
// keeps the newest records and loses the oldest.
func (r *Reader) coverage() {
	m := r.meta
	switch {
	case r.lostLines > 0:
		m.Coverage = timeline.CoverageLost
		m.CoverageNote = fmt.Sprintf("%d PERF_RECORD_LOST records, the first at line %d", r.lostLines, r.firstLost)
	case r.backward:
		m.Coverage = timeline.CoverageLost
		m.CoverageNote = "recorded with perf record --overwrite (write_backward in the header): the ring buffers keep the newest records and lose the oldest"
	default:
		m.Coverage = timeline.CoverageUnknown
		m.CoverageNote = "perf record enables each CPU's events in turn, so a CPU may start recording after the trace's first record"
	}
}
