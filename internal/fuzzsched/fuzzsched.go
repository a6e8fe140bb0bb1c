// Package fuzzsched turns fuzzed bytes into scheduler events and
// timelines, for the fuzz targets of the packages that measure them.
package fuzzsched

import (
	"fmt"

	"github.com/schedlens/schedlens/timeline"
)

// Events decodes bytes into scheduler events, 6 bytes each: kind,
// CPU, task, other, prev state, time step. Tasks are pids 0..7 on 4 CPUs,
// so a short input exercises many interleavings.
func Events(data []byte, strs *timeline.Strings) []timeline.Event {
	kinds := []timeline.Kind{timeline.KindSwitch, timeline.KindSwitch, timeline.KindSwitch, timeline.KindWaking,
		timeline.KindWakeup, timeline.KindWakeupNew, timeline.KindMigrate, timeline.KindLost, timeline.KindFork, timeline.KindExit}
	states := []string{"R", "R+", "S", "D", "I", "X", "T"}
	var evs []timeline.Event
	var now timeline.Time
	for len(data) >= 6 {
		b := data[:6]
		data = data[6:]
		var e timeline.Event
		e.Reset()
		now += timeline.Time(b[5]) * 1000
		e.Time = now
		e.Kind = kinds[int(b[0])%len(kinds)]
		e.CPU = timeline.CPU(b[1] % 4)
		e.Task = timeline.TID(b[2] % 8)
		e.Other = timeline.TID(b[3] % 8)
		e.Comm = strs.IDString(fmt.Sprintf("t%d", e.Task))
		e.OComm = strs.IDString(fmt.Sprintf("t%d", e.Other))
		e.Prio = int16(100 + b[4]%40)
		switch e.Kind {
		case timeline.KindSwitch:
			st, _ := timeline.ParseState([]byte(states[int(b[4])%len(states)]))
			e.State = st
		case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew:
			e.Arg = int64(b[4] % 4)
			e.Ctx = timeline.Context(b[4] % 4)
		case timeline.KindMigrate:
			e.Arg, e.Arg2 = int64(b[4]%4), int64(e.CPU)
		case timeline.KindLost:
			e.Arg = int64(b[4])
			e.Start = now - timeline.Time(b[3])*1000
		}
		if e.Task == 0 && e.Kind != timeline.KindSwitch && e.Kind != timeline.KindLost {
			e.Task = 1
		}
		evs = append(evs, e)
	}
	return evs
}

// Encode is the inverse of Events for the events it can express,
// to seed the fuzzer from the scenarios.
func Encode(tl *timeline.Timeline) []byte {
	idx := map[timeline.Kind]byte{timeline.KindSwitch: 0, timeline.KindWaking: 3, timeline.KindWakeup: 4,
		timeline.KindWakeupNew: 5, timeline.KindMigrate: 6, timeline.KindLost: 7, timeline.KindFork: 8, timeline.KindExit: 9}
	var out []byte
	var last timeline.Time
	for i := 0; i < tl.Len(); i++ {
		e := tl.Event(i)
		k, ok := idx[e.Kind]
		if !ok {
			continue
		}
		step := min(max(int64(e.Time-last)/1000, 0), 255)
		last = e.Time
		arg := byte(e.Arg)
		if e.Kind == timeline.KindSwitch {
			arg = map[string]byte{"R": 0, "R+": 1, "S": 2, "D": 3, "I": 4, "X": 5, "T": 6}[e.State.String()]
		}
		out = append(out, k, byte(e.CPU), byte(max(e.Task, 0)), byte(max(e.Other, 0)), arg, byte(step))
	}
	return out
}

// Build builds the timeline of fuzzed bytes (Events), nil if
// it has no event or does not build.
func Build(data []byte) *timeline.Timeline {
	strs := timeline.NewStrings()
	b := timeline.NewBuilder(strs, 4)
	for _, e := range Events(data, strs) {
		b.Add(e)
	}
	tl, err := b.Finish()
	if err != nil || tl.Len() == 0 {
		return nil
	}
	return tl
}
