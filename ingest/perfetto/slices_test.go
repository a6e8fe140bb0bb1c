package perfetto

import (
	"encoding/csv"
	"os"
	"strconv"
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

// schedSlice is one row of trace_processor's sched table, computed from an
// event stream the way trace_processor builds it (see
// fixtures/perfetto-conformance/README.md): a switch opens a slice for its
// next task and closes the CPU's pending slice if that slice's task is the
// switch's prev; otherwise the pending slice stays open (dur -1) and counts
// as a mismatched switch. A switch whose prev is unknown (the first compact
// switch of a CPU) only seeds the CPU's state.
type schedSlice struct {
	cpu      timeline.CPU
	ts       timeline.Time
	dur      int64 // -1 while open
	tid      timeline.TID
	comm     timeline.CommID
	prio     int16
	endState timeline.State
	ended    bool
}

// sliceOptions are trace_processor's cropping rules.
type sliceOptions struct {
	// dropBefore drops events before it entirely (TracingServiceEvent
	// tracing_started); NoTime for none.
	dropBefore timeline.Time
	// rawBefore: switches before it only update the CPU's running task
	// (ftrace_latest_data_start_ns); NoTime for none.
	rawBefore timeline.Time
}

type sliceStats struct {
	mismatched int // switches whose prev is not the CPU's running task
	// missed: the tasks on both sides of a mismatched switch (the one the
	// CPU was running and the switch's prev).
	missed   map[timeline.TID]bool
	seedOnly int // switches with an unknown prev
}

func computeSlices(evs []timeline.Event, o sliceOptions) ([]schedSlice, sliceStats) {
	var out []schedSlice
	var st sliceStats
	pending := map[timeline.CPU]int{} // index in out
	for _, e := range evs {
		if e.Kind != timeline.KindSwitch {
			continue
		}
		if o.dropBefore != timeline.NoTime && e.Time < o.dropBefore {
			continue
		}
		if o.rawBefore != timeline.NoTime && e.Time < o.rawBefore {
			continue
		}
		if e.Other == timeline.NoTID {
			st.seedOnly++
			continue
		}
		if i, ok := pending[e.CPU]; ok {
			if out[i].tid == e.Other {
				out[i].dur = int64(e.Time - out[i].ts)
				out[i].endState, out[i].ended = e.State, true
			} else {
				st.mismatched++
				if st.missed == nil {
					st.missed = map[timeline.TID]bool{}
				}
				st.missed[out[i].tid], st.missed[e.Other] = true, true
			}
		}
		out = append(out, schedSlice{cpu: e.CPU, ts: e.Time, dur: -1, tid: e.Task, comm: e.Comm, prio: e.Prio})
		pending[e.CPU] = len(out) - 1
	}
	return out, st
}

// readCSV reads a trace_processor CSV (quoted header, "[NULL]" for NULL).
func readCSV(tb testing.TB, path string) (header []string, rows [][]string) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatalf("reading %s: %v", path, err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		tb.Fatalf("parsing %s: %v", path, err)
	}
	if len(recs) == 0 {
		tb.Fatalf("%s: empty", path)
	}
	return recs[0], recs[1:]
}

func atoi(tb testing.TB, s string) int64 {
	tb.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		tb.Fatalf("want an integer, got %q", s)
	}
	return v
}
