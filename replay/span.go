package replay

import (
	"errors"
	"fmt"

	"github.com/schedlens/schedlens/timeline"
)

// Busy is what a recording shows of the time its tasks ran, which bounds
// the tick work a replay of it does: the engine ticks a CPU only while a
// task runs there (an idle stretch costs nothing however long), every
// TICK_NSEC.
type Busy struct {
	// Events is the number of recorded events.
	Events int `json:"events"`
	// NS is the recorded running time summed over the CPUs (from each
	// CPU's first switch, which names what it runs).
	NS int64 `json:"ns"`
	// The longest stretch between two consecutive events while some CPU
	// ran a task: from the event at From (on CPU, of Kind) to the next at
	// To. A stretch of days between events a millisecond apart is most
	// likely a bad timestamp.
	From, To timeline.Time `json:"-"`
	CPU      int           `json:"-"`
	Kind     timeline.Kind `json:"-"`
}

// busyOf measures tl's Busy in one pass over its events.
func busyOf(tl *timeline.Timeline) Busy {
	b := Busy{Events: tl.Len()}
	busy := make([]bool, max(tl.NCPU, 1))
	nBusy := 0
	for i := range tl.Len() {
		t := tl.Times[i]
		if i > 0 && nBusy > 0 {
			dt := int64(t - tl.Times[i-1])
			b.NS += dt * int64(nBusy)
			if dt > int64(b.To-b.From) {
				b.From, b.To, b.CPU, b.Kind = tl.Times[i-1], t, int(tl.CPUs[i-1]), tl.Kinds[i-1]
			}
		}
		if tl.Kinds[i] != timeline.KindSwitch {
			continue
		}
		cpu := int(tl.CPUs[i])
		if cpu < 0 || cpu >= len(busy) {
			continue
		}
		next := tl.TaskOf[i]
		now := next != timeline.NoTask && int(next) < len(tl.Tasks) && !tl.Tasks[next].Idle
		if now != busy[cpu] {
			busy[cpu] = now
			if now {
				nBusy++
			} else {
				nBusy--
			}
		}
	}
	return b
}

// MaxTicksPerEvent and MinTickBudget bound the tick work of a replay of a
// recording: max(MinTickBudget, MaxTicksPerEvent × recorded events) ticks.
// A real recording ticks far less than that (ftrace-oracle-busy: about 3
// ticks per 100 events); 1e8 ticks is about 40 s of engine time.
const (
	MaxTicksPerEvent = 1000
	MinTickBudget    = 100_000_000
)

// ErrImplausibleSpan is returned when the recording's running time would
// take more ticks to replay than its event count makes plausible.
var ErrImplausibleSpan = errors.New("replay: the recording's span is implausible for its events")

// checkTicks refuses a workload whose recorded running time at tick ns
// per tick exceeds the tick budget of its events, naming the longest
// stretch without an event.
func checkTicks(b Busy, tick int64, hz int) error {
	if b.Events == 0 || tick <= 0 {
		return nil
	}
	ticks := b.NS / tick
	budget := max(int64(MinTickBudget), int64(MaxTicksPerEvent)*int64(b.Events))
	if ticks <= budget {
		return nil
	}
	return fmt.Errorf("%w: its tasks run %.0f s in all over %d events, about %d ticks at %d HZ (at most %d for %d events); "+
		"the longest stretch without an event while a task runs is %.3f s, from the %s event on CPU %d at %s s to the next at %s s: "+
		"a timestamp jump? cut the recording there before replaying it",
		ErrImplausibleSpan, float64(b.NS)/1e9, b.Events, ticks, hz, budget, b.Events,
		float64(b.To-b.From)/1e9, b.Kind, b.CPU, b.From.Seconds(), b.To.Seconds())
}
