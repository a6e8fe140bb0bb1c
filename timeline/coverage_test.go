package timeline

import (
	"strings"
	"testing"
)

// TestValidStartRule: the Builder takes the trace's first event as the
// valid start only when the reader proved complete coverage and no lost or
// buffer-start record contradicts it; a late CPU is then quiet, not a gap.
func TestValidStartRule(t *testing.T) {
	strs := NewStrings()
	b := evb{strs}
	base := []Event{
		b.sw(1000, 0, 1, "S", 2),
		b.wake(KindWaking, 1500, 0, 2, 1, 0),
		b.sw(2000, 0, 2, "R", 1),
		b.sw(5000, 1, 0, "R", 3),
		b.sw(6000, 1, 3, "S", 0),
	}
	lost := Event{}
	lost.Reset()
	lost.Time, lost.CPU, lost.Kind, lost.Start, lost.Arg = 6000, 1, KindLost, 5000, 4
	start := Event{}
	start.Reset()
	start.Time, start.CPU, start.Kind = 5000, 1, KindBufferStart
	tests := []struct {
		name   string
		cov    Coverage
		extra  []Event
		rule   StartRule
		reason string
	}{
		{"complete", CoverageComplete, nil, StartFirstEvent, "every CPU was recorded from the start (proof): a CPU whose first event comes later was quiet until then"},
		{"complete but a lost record", CoverageComplete, []Event{lost}, StartLatestCPU, "lost-event or buffer-start records"},
		{"complete but a buffer start", CoverageComplete, []Event{start}, StartLatestCPU, "lost-event or buffer-start records"},
		{"lost", CoverageLost, nil, StartLatestCPU, "events were overwritten or lost (proof)"},
		{"unknown", CoverageUnknown, nil, StartLatestCPU, "nothing proves every CPU was recorded from the start (proof)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bl := NewBuilder(strs, 2)
			for _, e := range append(append([]Event(nil), tc.extra...), base...) {
				bl.Add(e)
			}
			bl.SetCoverage(tc.cov, "proof")
			tl, err := bl.Finish()
			if err != nil {
				t.Fatal(err)
			}
			want, gaps := Time(1000), 0
			if tc.rule == StartLatestCPU {
				want, gaps = 5000, 1
			}
			clipped := 0
			for _, g := range tl.Gaps {
				if g.Kind == GapClipped {
					clipped++
				}
			}
			if tl.ValidStart != want || tl.ValidStartRule != tc.rule || !strings.Contains(tl.ValidStartReason, tc.reason) || clipped != gaps {
				t.Errorf("valid start %d by %v (%q), %d clipped gaps; want %d by %v (%q), %d", tl.ValidStart, tl.ValidStartRule,
					tl.ValidStartReason, clipped, want, tc.rule, tc.reason, gaps)
			}
			spans := spansOf(t, tl)
			// CPU 1's idle task is revealed by its first switch: from the
			// trace's first event when CPU 1 was quiet, else from its own.
			quiet := contains(spans, "idle1 running cpu1 [1000,5000]")
			if quiet != (tc.rule == StartFirstEvent) {
				t.Errorf("idle1 running from 1000: %v, want %v; spans %v", quiet, tc.rule == StartFirstEvent, spans)
			}
		})
	}
}
