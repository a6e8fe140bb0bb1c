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
	in, written := m.EntriesInBuffer, m.EntriesWritten
	switch {
	case r.lostLines > 0:
		m.Coverage = timeline.CoverageLost
		m.CoverageNote = fmt.Sprintf("%d lost-event lines, the first at %s", r.lostLines, r.firstLost)
	case in >= 0 && written > in:
		m.Coverage = timeline.CoverageLost
		m.CoverageNote = fmt.Sprintf("the ftrace header counts %d entries written and %d kept: %d were overwritten", written, in, written-in)
	case r.bufStarts > 0:
		m.Coverage = timeline.CoverageLost
		m.CoverageNote = fmt.Sprintf("%d CPU buffers are marked as started late (##### CPU N buffer started ####)", r.bufStarts)
	case in >= 0 && written == in:
		m.Coverage = timeline.CoverageComplete
		m.CoverageNote = fmt.Sprintf("the ftrace header counts %d entries written and %d kept, none overwritten, and no event was lost", written, in)
	case m.Format == FormatTraceCmd:
		m.CoverageNote = "trace-cmd report text carries no entry counts"
	case m.Format == FormatPipe:
		m.CoverageNote = "trace_pipe text carries no entry counts"
	default:
		m.CoverageNote = "the trace has no entries-in-buffer/entries-written header"
	}
}
