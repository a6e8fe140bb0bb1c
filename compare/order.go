package compare

import (
	"fmt"
	"slices"
	"time"
)

// RecordingOrder says whether the runs of an A/B were recorded in two
// blocks, every run of one side before every run of the other, which a
// drift of the machine between the blocks (a host that got busier, an
// emulator that ran slower) turns into a difference the test cannot tell
// from the change. It needs the recording time of every run and two or
// more on each side; it returns "" when the sides interleave or a time is
// unknown (zero), else the warning.
func RecordingOrder(base, new []time.Time) string {
	if len(base) < 2 || len(new) < 2 {
		return ""
	}
	if slices.ContainsFunc(base, time.Time.IsZero) || slices.ContainsFunc(new, time.Time.IsZero) {
		return ""
	}
	span := func(ts []time.Time) (time.Time, time.Time) {
		return slices.MinFunc(ts, time.Time.Compare), slices.MaxFunc(ts, time.Time.Compare)
	}
	b0, b1 := span(base)
	n0, n1 := span(new)
	first, second := "base", "new"
	switch {
	case b1.Before(n0):
	case n1.Before(b0):
		first, second = "new", "base"
	default:
		return ""
	}
	f := func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }
	return fmt.Sprintf("the %s runs were all recorded before the %s runs (base %s .. %s, new %s .. %s UTC, from meta.txt): "+
		"a drift of the machine between the two blocks cannot be told from the change; record the sides interleaved (docs/compare.md)",
		first, second, f(b0), f(b1), f(n0), f(n1))
}
