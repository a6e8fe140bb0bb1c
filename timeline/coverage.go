package timeline

// Coverage is what a trace proves about its per-CPU streams: whether every
// event each CPU recorded from the start of tracing is in the file. It
// decides what a CPU whose first event comes after the trace's first event
// means: a CPU that was quiet (it ran one task, or idled, and emitted
// nothing), or a CPU whose oldest events were overwritten.
type Coverage uint8

// Coverage values. Readers state them in parse.Meta; Builder.SetCoverage
// passes them on.
const (
	// CoverageUnknown: the trace does not say (trace_pipe and trace-cmd
	// report text have no entry counts; a Perfetto trace without ftrace
	// stats at both ends).
	CoverageUnknown Coverage = iota
	// CoverageComplete: the trace proves that no ring buffer overwrote,
	// dropped or lost an event (the ftrace header's entries-in-buffer equals
	// entries-written, ...).
	CoverageComplete
	// CoverageLost: the trace shows that events were overwritten or lost.
	CoverageLost
)

func (c Coverage) String() string {
	switch c {
	case CoverageComplete:
		return "complete"
	case CoverageLost:
		return "lost"
	}
	return "unknown"
}

// StartRule says how the Builder set Timeline.ValidStart.
type StartRule uint8

// Start rules.
const (
	// StartLatestCPU: ValidStart is the latest first event over the CPUs
	// that have events. Before it some CPU's events may be missing (its
	// buffer was overwritten, or nothing proves it was not), so a CPU that
	// starts late is a clipped gap. It applies unless the trace proves
	// complete coverage.
	StartLatestCPU StartRule = iota
	// StartFirstEvent: ValidStart is the trace's first event. The trace
	// proves every CPU was recorded from the start, so a CPU whose first
	// event comes late was quiet until then: not a gap.
	StartFirstEvent
)

func (r StartRule) String() string {
	if r == StartFirstEvent {
		return "first-event"
	}
	return "latest-cpu-start"
}

// SetCoverage records what the trace proves about its per-CPU streams and
// the evidence, in words, for reports ("the ftrace header counts 59032
// entries written and 59032 kept"). Without a call the coverage is
// CoverageUnknown.
func (b *Builder) SetCoverage(c Coverage, evidence string) {
	b.coverage, b.evidence = c, evidence
}

// observedFromStart decides whether every CPU's stream of tl is complete
// from the trace's first event: the reader proved it (cov, evidence), and no
// lost-event or buffer-start record contradicts it. It sets
// tl.ValidStartRule and tl.ValidStartReason; tl.CPUFirst, Start and
// KindCounts must be set.
func observedFromStart(tl *Timeline, cov Coverage, evidence string) bool {
	late := false
	for _, f := range tl.CPUFirst {
		if f != NoTime && f > tl.Start {
			late = true
		}
	}
	tl.ValidStartRule = StartLatestCPU
	switch {
	case cov == CoverageComplete && tl.KindCounts[KindLost] == 0 && tl.KindCounts[KindBufferStart] == 0:
		tl.ValidStartRule = StartFirstEvent
		tl.ValidStartReason = "every CPU was recorded from the start"
		if evidence != "" {
			tl.ValidStartReason += " (" + evidence + ")"
		}
		if late {
			tl.ValidStartReason += ": a CPU whose first event comes later was quiet until then"
		}
		return true
	case !late:
		tl.ValidStartReason = "every CPU has events from the trace's first event"
	case cov == CoverageComplete:
		tl.ValidStartReason = "the trace has lost-event or buffer-start records: a CPU whose events start late may be missing earlier ones"
	case cov == CoverageLost:
		tl.ValidStartReason = "events were overwritten or lost (" + evidence + "): a CPU whose events start late may be missing earlier ones"
	default:
		tl.ValidStartReason = "nothing proves every CPU was recorded from the start"
		if evidence != "" {
			tl.ValidStartReason += " (" + evidence + ")"
		}
		tl.ValidStartReason += ": a CPU whose events start late may be missing earlier ones"
	}
	return false
}
