package perfdata

import (
	"slices"
)

// entry is a record waiting in the round queue: its time, its bytes in the
// arena and its file offset (for errors).
type entry struct {
	time uint64
	off  int    // in the arena
	n    int    // bytes, header included
	at   int64  // file offset of the record (or of its COMPRESSED record)
	seq  uint64 // arrival order, so that equal times keep it
}

// queue orders records the way perf's ordered_events does
// (tools/perf/util/ordered-events.c): records with a time are queued; at
// each PERF_RECORD_FINISHED_ROUND those not later than the highest time
// seen before the previous round's end are handed out in time order,
// arrival order breaking ties; records without a time (or with time 0,
// such as those perf synthesizes at the start) are handed out at once.
// Memory is bounded by what two rounds hold (plus maxQueued as a cap).
type queue struct {
	arena   []byte
	spare   []byte
	pending []entry
	out     []entry // ready, in delivery order
	outPos  int
	seq     uint64

	nextFlush uint64 // hand out up to this time at the next round's end
	maxTime   uint64
}

// maxQueued caps the bytes queued; past it the older half is handed out
// early, as perf does when its queue reaches its size limit.
const maxQueued = 512 << 20

func (q *queue) add(rec []byte, time uint64, at int64, timed bool) {
	e := entry{time: time, off: len(q.arena), n: len(rec), at: at, seq: q.seq}
	q.seq++
	q.arena = append(q.arena, rec...)
	if !timed {
		q.out = append(q.out, e)
		return
	}
	q.maxTime = max(q.maxTime, time)
	q.pending = append(q.pending, e)
	if len(q.arena) > maxQueued && len(q.pending) > 1 {
		q.sortPending()
		half := len(q.pending) / 2
		q.out = append(q.out, q.pending[:half]...)
		q.pending = q.pending[half:]
	}
}

func (q *queue) sortPending() {
	slices.SortStableFunc(q.pending, func(a, b entry) int {
		switch {
		case a.time < b.time:
			return -1
		case a.time > b.time:
			return 1
		}
		return 0
	})
}

// round handles a FINISHED_ROUND.
func (q *queue) round() {
	q.flushTo(q.nextFlush, false)
	q.nextFlush = q.maxTime
}

// flushTo moves pending records with time <= limit (all when all) to out.
func (q *queue) flushTo(limit uint64, all bool) {
	if len(q.pending) == 0 {
		return
	}
	q.sortPending()
	k := len(q.pending)
	if !all {
		k, _ = slices.BinarySearchFunc(q.pending, limit, func(e entry, t uint64) int {
			if e.time <= t {
				return -1
			}
			return 1
		})
	}
	q.out = append(q.out, q.pending[:k]...)
	q.pending = append(q.pending[:0], q.pending[k:]...)
}

// next returns the next ready record, or false.
func (q *queue) next() (entry, []byte, bool) {
	if q.outPos >= len(q.out) {
		return entry{}, nil, false
	}
	e := q.out[q.outPos]
	q.outPos++
	return e, q.arena[e.off : e.off+e.n], true
}

// compact drops the handed-out records from the arena once out is empty.
func (q *queue) compact() {
	if q.outPos < len(q.out) {
		return
	}
	q.out = q.out[:0]
	q.outPos = 0
	na := q.spare[:0]
	for i := range q.pending {
		e := &q.pending[i]
		off := len(na)
		na = append(na, q.arena[e.off:e.off+e.n]...)
		e.off = off
	}
	q.spare = q.arena[:0]
	q.arena = na
}
