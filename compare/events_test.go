package compare

import (
	"reflect"
	"testing"

	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
)

// logged returns a summary Timeline of tl's events and the log of them.
func logged(t *testing.T, tl *timeline.Timeline) (*timeline.Timeline, *timeline.EventLog) {
	t.Helper()
	b := timeline.NewSummaryBuilder(tl.Strings, tl.NCPU)
	var log timeline.EventLog
	for i := range tl.Len() {
		ev := tl.Event(i)
		b.Add(ev)
		log.Add(ev)
	}
	sum, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	sum.Topology = tl.Topology
	return sum, &log
}

// TestMeasureEventsSameAsMeasure: a summary and a log of a trace's events,
// measured in one walk, give Measure's Side for the scope with its
// analysis, and the accounting's figures of it (completion included) for
// a scope that is AccountOnly, as Measure gives them; two scopes with
// their analysis are refused.
func TestMeasureEventsSameAsMeasure(t *testing.T) {
	for _, path := range []string{
		"../fixtures/real/ftrace-hackbench-cyclictest/trace.txt.gz",
		"../fixtures/real/qemu-smt8-hackbench/trace.txt.zst",
	} {
		src := loadReal(t, path)
		// Built again from its events, as the replay engine builds a
		// modeled schedule (no reader's proof of coverage).
		b := timeline.NewBuilder(src.Strings, src.NCPU)
		for i := range src.Len() {
			b.Add(src.Event(i))
		}
		tl, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		tl.Topology = src.Topology
		mid := metrics.Window{Start: tl.ValidStart, End: tl.ValidStart + (tl.End-tl.ValidStart)/2}
		want, err := Measure(tl, Options{Window: mid})
		if err != nil {
			t.Fatal(err)
		}
		whole, err := Measure(tl, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sum, log := logged(t, tl)
		got, err := MeasureEvents(sum, log, Options{Window: mid, DropEvents: true}, Options{AccountOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[0], want) {
			t.Errorf("%s: the measured Side differs from Measure's", path)
		}
		if log.Len() != 0 {
			t.Errorf("%s: the log was not dropped", path)
		}
		acc := got[1]
		if acc.Overall.Wakeup.Count != 0 || acc.Overall.WakeupSamples != nil || acc.Window != whole.Window {
			t.Errorf("%s: an AccountOnly Side has latency figures, or another window", path)
		}
		if acc.Overall.RunNs != whole.Overall.RunNs || acc.Overall.CompletionNs != whole.Overall.CompletionNs || len(acc.Tasks) != len(whole.Tasks) {
			t.Errorf("%s: an AccountOnly Side's accounting differs from Measure's", path)
		}
		if measured, err := Measure(tl, Options{AccountOnly: true}); err != nil || !reflect.DeepEqual(measured, acc) {
			t.Errorf("%s: Measure's AccountOnly Side differs from MeasureEvents' (%v)", path, err)
		}
		w2 := *want
		w2.TakeCompletion(whole)
		m2 := *got[0]
		m2.TakeCompletion(acc)
		if !reflect.DeepEqual(m2, w2) {
			t.Errorf("%s: completion taken from an AccountOnly Side differs", path)
		}
		sum2, log2 := logged(t, tl)
		if _, err := MeasureEvents(sum2, log2, Options{}, Options{}); err == nil {
			t.Errorf("%s: two scopes with their analysis measured", path)
		}
	}
}
