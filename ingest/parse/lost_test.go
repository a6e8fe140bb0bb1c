package parse

import (
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

// TestLostCPUs works the lost-record bookkeeping by hand: losses add up
// until the CPU's next event, an unknown count makes the sum unknown, and
// what is left at the end is flushed at the CPU's last record.
func TestLostCPUs(t *testing.T) {
	var l LostCPUs
	var ev timeline.Event
	if l.Last() != timeline.NoTime || l.Flush(&ev) {
		t.Fatal("empty tracker: want no last time and nothing to flush")
	}
	l.See(0, 100)
	l.Add(0, 5, 150)
	l.Add(0, 7, 160)
	l.See(1, 120)
	l.Add(1, 3, 170)
	l.Add(1, -1, 180)
	l.Add(2, 4, 190) // a CPU with no record
	if l.Take(1, 200, &ev); ev.Kind != timeline.KindLost || ev.CPU != 1 || ev.Time != 200 || ev.Start != 120 || ev.Arg != -1 {
		t.Errorf("Take(1) = %+v, want lost at 200 from 120, count unknown", ev)
	}
	if l.Take(1, 210, &ev) {
		t.Error("Take(1) twice: want the loss handed out once")
	}
	var got []timeline.Event
	for l.Flush(&ev) {
		got = append(got, ev)
	}
	if len(got) != 2 || got[0].CPU != 0 || got[0].Time != 100 || got[0].Arg != 12 || got[1].CPU != 2 || got[1].Time != 120 || got[1].Arg != 4 {
		t.Errorf("Flush = %+v, want CPU 0 at 100 with 12, CPU 2 at the last record 120 with 4", got)
	}
}
