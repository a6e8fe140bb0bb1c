package perfdata

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/schedlens/schedlens/timeline"
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

// handedOut is what a queue hands out, seen as the reader sees it: the
// records it delivers in order, and per CPU the order of all its records,
// unknown samples among them.
type handedOut struct {
	records []uint64   // ids of the records other than unknown samples
	perCPU  [][]uint64 // by bucket: ids of everything handed out there
}

func (h *handedOut) drain(t *testing.T, q *queue) {
	var e entry
	for {
		_, ok := q.next(&e)
		if !ok {
			return
		}
		b := 0
		if e.flags&hasCPU != 0 || e.typ == 0 {
			b = int(e.cpu) + 1
		}
		for len(h.perCPU) <= b {
			h.perCPU = append(h.perCPU, nil)
		}
		if len(q.carried) != e.nu {
			t.Fatalf("a record carries %d unknown samples, %d handed over", e.nu, len(q.carried))
		}
		for _, u := range q.carried {
			if q.specs[u.spec-1].kind != timeline.KindUnknown {
				t.Fatalf("unknown sample %d of a known event", u.at)
			}
			h.perCPU[b] = append(h.perCPU[b], uint64(u.at))
		}
		switch {
		case e.typ == 0:
		case e.spec.kind == timeline.KindUnknown:
			h.perCPU[b] = append(h.perCPU[b], uint64(e.at))
		default:
			h.perCPU[b] = append(h.perCPU[b], uint64(e.at))
			h.records = append(h.records, uint64(e.at))
		}
	}
}

// TestQueueCarriesUnknown: a queue whose unknown samples ride on their
// CPU's next record hands out the other records in the order of a queue
// that keeps each as a record of its own, and on each CPU every record and
// unknown sample in that order too (all that their delivery depends on),
// with rounds, records back in time (a FIFO out of order takes its unknown
// samples back), records without a CPU, and byte caps low enough that
// merges hand out half of what is queued.
func TestQueueCarriesUnknown(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	carried := 0
	for trial := range 24 {
		carry, plain := newQueue(), newQueue()
		plain.carry = false
		// each queue numbers the specs it meets
		unknown := [2]*eventSpec{{name: "sched:sched_stat_runtime"}, {name: "sched:sched_stat_runtime"}}
		known := [2]*eventSpec{{name: "sched:sched_switch", kind: timeline.KindSwitch}, {name: "sched:sched_switch", kind: timeline.KindSwitch}}
		if trial%3 == 1 {
			carry.maxQueued, plain.maxQueued = 64<<10, 64<<10
		}
		var got, want handedOut
		clock := make([]uint64, 5)
		perRound := []int{20, 300, 4000}[trial%3]
		for id := range uint64(20000 + trial*500) {
			if rng.IntN(perRound) == 0 {
				// the reader reads on once what a round hands out is out
				carry.round()
				plain.round()
				got.drain(t, &carry)
				want.drain(t, &plain)
			}
			b := rng.IntN(len(clock))
			clock[b] += uint64(rng.IntN(1000))
			tm := clock[b] + 1
			if rng.IntN(200) < trial%4 {
				tm -= min(tm-1, uint64(rng.IntN(5000))) // back in time
			}
			e := entry{time: tm, at: int64(id), typ: recSample, spec: unknown[0], flags: hasTime}
			p := []byte(nil)
			isKnown := rng.IntN(2) == 0
			if isKnown {
				e.spec, p = known[0], make([]byte, rng.IntN(100))
			}
			if b > 0 {
				e.cpu, e.flags = int32(b-1), e.flags|hasCPU
			}
			e2 := e
			e2.spec = unknown[1]
			if isKnown {
				e2.spec = known[1]
			}
			carry.add(&e, p, true)
			plain.add(&e2, p, true)
			if carry.ready() {
				got.drain(t, &carry)
			}
			if plain.ready() {
				want.drain(t, &plain)
			}
			carried += len(carry.carried)
		}
		carry.flushAll()
		plain.flushAll()
		got.drain(t, &carry)
		want.drain(t, &plain)
		if !slices.Equal(got.records, want.records) {
			for i := range got.records {
				if got.records[i] != want.records[i] {
					t.Logf("first difference at %d: %d, want %d", i, got.records[i], want.records[i])
					break
				}
			}
			t.Fatalf("trial %d: records handed out in another order (%d and %d)", trial, len(got.records), len(want.records))
		}
		for b := range max(len(got.perCPU), len(want.perCPU)) {
			var g, w []uint64
			if b < len(got.perCPU) {
				g = got.perCPU[b]
			}
			if b < len(want.perCPU) {
				w = want.perCPU[b]
			}
			if !slices.Equal(g, w) {
				t.Fatalf("trial %d: bucket %d handed out %d records in another order than %d", trial, b, len(g), len(w))
			}
		}
	}
	if carried == 0 {
		t.Fatal("no unknown sample rode on a record")
	}
}
