package perfetto

import (
	"fmt"
	"strings"

	"github.com/schedlens/schedlens/timeline"
)

// coverage states in Meta what the trace proves about its per-CPU streams,
// once the whole input has been read (after finish turned ftrace stats
// growth into lost records).
//
// traced_probes clears the kernel's ftrace buffers, enables the events for
// every CPU at once and writes FtraceStats at the start and at the end of
// the trace. A CPU's stream is complete from the start when:
//
//   - its overrun, commit_overrun and dropped_events counters did not grow
//     between START_OF_TRACE and END_OF_TRACE (the kernel overwrote or
//     dropped nothing), and both phases are in the file;
//   - no bundle flags lost_events or errors, no packet of its sequence was
//     dropped, and its first bundle does not follow bundles that are
//     missing (previous_bundle_end_timestamp);
//   - the tracing service's TraceStats, when present, counts no chunk
//     overwritten or discarded and no packet lost.
//
// Without TraceStats, the START_OF_TRACE stats stand in for it: they are
// the first packet the ftrace data source writes, so a RING_BUFFER that
// wrapped loses them first.
func (r *Reader) coverage() {
	m := r.meta
	var lost, noStart, noEnd []string
	events := false
	for i := range r.cpus {
		c := &r.cpus[i]
		if c.lostMarked {
			lost = append(lost, fmt.Sprint(i))
		}
		if c.bundles == 0 {
			continue
		}
		events = true
		if !c.haveStart {
			noStart = append(noStart, fmt.Sprint(i))
		}
		if !c.haveEnd {
			noEnd = append(noEnd, fmt.Sprint(i))
		}
	}
	switch {
	case len(lost) > 0:
		m.Coverage = timeline.CoverageLost
		m.CoverageNote = "events lost on CPU " + strings.Join(lost, ", ") + " (lost_events flags, bundle errors, dropped packets or ftrace overrun)"
	case r.lateStarts > 0:
		m.Coverage = timeline.CoverageLost
		m.CoverageNote = fmt.Sprintf("the first bundle of %d CPUs follows bundles that are not in the file", r.lateStarts)
	case len(r.serviceLoss) > 0:
		m.Coverage = timeline.CoverageLost
		m.CoverageNote = "the tracing service lost data: " + strings.Join(r.serviceLoss, ", ")
	case !events:
		m.CoverageNote = "the trace has no ftrace bundles"
	case len(noStart) > 0:
		m.CoverageNote = "no ftrace stats at the start of the trace for CPU " + strings.Join(noStart, ", ")
	case len(noEnd) > 0:
		m.CoverageNote = "no ftrace stats at the end of the trace for CPU " + strings.Join(noEnd, ", ")
	default:
		m.Coverage = timeline.CoverageComplete
		m.CoverageNote = "ftrace stats at the start and end of the trace count no overrun or dropped events, and no bundle flags lost data"
		if r.traceStats {
			m.CoverageNote += "; the tracing service's buffers lost nothing"
		}
	}
}
