package ftrace

import (
	"fmt"

	"github.com/schedlens/schedlens/timeline"
)

// coverage states in Meta what the trace proves about events overwritten or
// lost, once the whole input has been read.
//
// The tracefs `trace` header "# entries-in-buffer/entries-written: A/B" sums
// over the CPUs the events still in each ring buffer (A) and those plus the
// ones overwritten (B = A + overrun, get_total_entries_cpu in
// kernel/trace/trace.c): A == B proves that no buffer overwrote an event
// since it was last cleared, so each CPU's stream is complete from the start
// of tracing. trace_pipe and trace-cmd report text carry no such counts. A
// lost-event line or a "buffer started" line (the kernel prints those only
// after an overrun) shows the opposite.
func (r *Reader) coverage() {
	m := r.meta
	m.Coverage, m.CoverageNote = coverageOf(m.EntriesInBuffer, m.EntriesWritten, r.lostLines, r.firstLost, r.bufStarts, m.Format)
}

// coverageOf is the coverage, and the note that says why, of a trace with
// in and written entries by its header (in < 0: no header), lostLines
// lost-event lines (the first at firstLost) and bufStarts buffer-start
// lines, in format.
func coverageOf(in, written int64, lostLines int, firstLost string, bufStarts int, format string) (timeline.Coverage, string) {
	switch {
	case lostLines > 0:
		return timeline.CoverageLost, fmt.Sprintf("%d lost-event lines, the first at %s", lostLines, firstLost)
	case in >= 0 && written > in:
		return timeline.CoverageLost, fmt.Sprintf("the ftrace header counts %d entries written and %d kept: %d were overwritten", written, in, written-in)
	case bufStarts > 0:
		return timeline.CoverageLost, fmt.Sprintf("%d CPU buffers are marked as started late (##### CPU N buffer started ####)", bufStarts)
	case in >= 0 && written == in:
		return timeline.CoverageComplete, fmt.Sprintf("the ftrace header counts %d entries written and %d kept, none overwritten, and no event was lost", written, in)
	case format == FormatTraceCmd:
		return timeline.CoverageUnknown, "trace-cmd report text carries no entry counts"
	case format == FormatPipe:
		return timeline.CoverageUnknown, "trace_pipe text carries no entry counts"
	}
	return timeline.CoverageUnknown, "the trace has no entries-in-buffer/entries-written header"
}
