package perfdata

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// refQueue is perf's ordered_events rule written plainly
// (tools/perf/util/ordered-events.c): records without a time go out at
// once; at each FINISHED_ROUND the queued records not later than the
// latest time seen before the previous round's end go out in time order,
// arrival breaking ties; at the end, all of them.
type refQueue struct {
	pend      []refRec
	nextFlush uint64
	maxTime   uint64
}

type refRec struct {
	time uint64
	id   uint64
}

func (q *refQueue) add(r refRec, timed bool) []refRec {
	if !timed {
		return []refRec{r}
	}
	q.pend = append(q.pend, r)
	q.maxTime = max(q.maxTime, r.time)
	return nil
}

func (q *refQueue) flush(limit uint64, all bool) []refRec {
	slices.SortStableFunc(q.pend, func(a, b refRec) int {
		switch {
		case a.time < b.time:
			return -1
		case a.time > b.time:
			return 1
		}
		return 0
	})
	n := 0
	for n < len(q.pend) && (all || q.pend[n].time <= limit) {
		n++
	}
	out := slices.Clone(q.pend[:n])
	q.pend = q.pend[n:]
	return out
}

func (q *refQueue) round() []refRec {
	out := q.flush(q.nextFlush, false)
	q.nextFlush = q.maxTime
	return out
}

// TestQueueOrder feeds the queue and refQueue the same random records
// (a few CPUs and records without one, each CPU's times mostly rising,
// some going back, some records without a time, payloads of every size)
// and rounds, and wants the same records out in the same order, with
// their fields (the CPU too) and payloads, through FIFOs that take blocks
// and give them back, and payloads that fill chunks and reuse them.
func TestQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		q := newQueue()
		var ref refQueue
		var got, want []refRec
		cpus := []int32{0} // by id
		payload := func(id uint64) []byte {
			p := make([]byte, id%700)
			for i := range p {
				p[i] = byte(id) + byte(i)
			}
			return p
		}
		drain := func() {
			var e entry
			for {
				p, ok := q.next(&e)
				if !ok {
					return
				}
				id := e.arg
				if e.at != int64(id) || e.tid != int32(id) || e.cpu != cpus[id] || string(p) != string(payload(id)) {
					t.Fatalf("trial %d: record %d came out as %+v with %d payload bytes", trial, id, e, len(p))
				}
				got = append(got, refRec{e.time, id})
			}
		}
		clock := make([]uint64, 5)
		var id uint64
		// Rounds of ~50 records up to ~5000 a CPU, so that FIFOs span
		// several blocks.
		perRound := []int{50, 500, 5000, 20000}[trial%4]
		for range 5000 + trial*1000 {
			switch x := rng.IntN(100); {
			case rng.IntN(perRound) == 0:
				want = append(want, ref.round()...)
				q.round()
			default:
				id++
				b := rng.IntN(len(clock))
				clock[b] += uint64(rng.IntN(1000))
				tm := clock[b]
				if x < 8 {
					tm -= min(tm, uint64(rng.IntN(5000))) // back in time
				}
				timed := x >= 4 && tm != 0
				e := entry{time: tm, at: int64(id), arg: id, tid: int32(id), typ: recComm, flags: hasTime}
				if b > 0 {
					e.cpu, e.flags = int32(b-1), e.flags|hasCPU
				}
				cpus = append(cpus, e.cpu)
				if !timed {
					e.time, e.flags = 0, e.flags&^hasTime
				}
				want = append(want, ref.add(refRec{e.time, id}, timed)...)
				q.add(&e, payload(id), timed)
			}
			if q.ready() {
				drain()
			}
		}
		want = append(want, ref.flush(0, true)...)
		q.flushAll()
		drain()
		if !slices.Equal(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("trial %d: record %d out: got %+v, want %+v (%d and %d records)", trial, i, got[i], want[i], len(got), len(want))
				}
			}
			t.Fatalf("trial %d: %d records out, want %d", trial, len(got), len(want))
		}
	}
}
