package tracedat

import (
	"fmt"
	"strings"

	"github.com/schedlens/schedlens/timeline"
)

// coverage states in Meta what the file proves about events overwritten or
// lost. A page whose commit carries RB_MISSED_EVENTS shows a loss. The
// CPUSTAT options are each CPU's per_cpu/cpuN/stats when the trace was
// extracted (tracing_stats_read, kernel/trace/trace.c): "overrun" counts
// events overwritten, "commit overrun" and "dropped events" events the
// buffer refused, and "read events" the events consumed from the buffer
// since it was reset. When for every CPU of every buffer with data the
// three losses are 0 and the file holds exactly "read events" events, the
// file has every event each CPU recorded since tracing began: the
// first-event rule applies. trace-cmd report text prints none of this.
func (r *Reader) coverage() {
	m := r.meta
	if r.lostPages > 0 {
		m.Coverage = timeline.CoverageLost
		m.CoverageNote = fmt.Sprintf("%d ring-buffer pages are flagged with missed events, the first on %s", r.lostPages, r.firstLost)
		return
	}
	var total int64
	nstat := 0
	for _, b := range r.buffers {
		if !b.hasData() {
			continue
		}
		got := map[int]int64{}
		for _, s := range r.all {
			if s.buf == b {
				got[int(s.cpu)] += s.events
			}
		}
		for _, cd := range b.cpus {
			if cd.size == 0 {
				continue
			}
			st, ok := b.stats[cd.cpu]
			where := fmt.Sprintf("buffer %q CPU %d", b.name, cd.cpu)
			if b.name == "" {
				where = fmt.Sprintf("CPU %d", cd.cpu)
			}
			switch {
			case !ok || st.overrun < 0 || st.read < 0:
				m.CoverageNote = "the file has no kernel buffer statistics (CPUSTAT) for " + where
				return
			case st.overrun > 0 || st.commitOverrun > 0 || st.dropped > 0:
				m.Coverage = timeline.CoverageLost
				m.CoverageNote = fmt.Sprintf("the kernel's statistics for %s count %d overwritten, %d commit-overrun and %d dropped events", where, st.overrun, max(st.commitOverrun, 0), max(st.dropped, 0))
				return
			case st.read != got[cd.cpu]:
				m.CoverageNote = fmt.Sprintf("the kernel's statistics for %s count %d events read, the file holds %d: some were consumed elsewhere or not saved", where, st.read, got[cd.cpu])
				return
			}
			total += got[cd.cpu]
			nstat++
		}
	}
	var names []string
	for _, b := range r.buffers {
		if b.hasData() {
			names = append(names, fmt.Sprintf("%q", b.name))
		}
	}
	m.Coverage = timeline.CoverageComplete
	m.CoverageNote = fmt.Sprintf("the kernel's buffer statistics (buffer %s, %d CPUs) count no overwritten or dropped event and %d events read, all in the file, and no page is flagged with missed events",
		strings.Join(names, ", "), nstat, total)
}

// hasData reports whether some CPU of b has pages in the file.
func (b *buffer) hasData() bool {
	for _, cd := range b.cpus {
		if cd.size > 0 {
			return true
		}
	}
	return false
}
