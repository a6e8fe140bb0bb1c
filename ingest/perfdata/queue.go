package perfdata

import (
	"encoding/binary"
	"github.com/schedlens/schedlens/timeline"
	"slices"
)

// entry is a record decoded as far as its sample fields: what delivery
// needs, and the bytes it still has to read (a tracepoint payload, a comm).
type entry struct {
	time  uint64
	at    int64 // file offset of the record (or of its COMPRESSED record)
	spec  *eventSpec
	arg   uint64 // LOST: count
	pid   int32  // sample pid; FORK: parent tid
	tid   int32  // sample tid; COMM, FORK: the thread
	cpu   int32
	typ   uint8
	flags uint8
}

const (
	hasTID = 1 << iota
	hasCPU
	hasTime
)

// qent is an entry as the queue keeps it, 32 bytes: the ordering key, the
// position for errors, and a reference to the rest (pid, tid, arg and the
// payload) in the chunk store; samples of events the reader does not
// interpret keep nothing there. Its CPU is its FIFO's.
type qent struct {
	time  uint64
	at    int64
	seq   uint32
	chunk int32
	off   uint32
	meta  uint32 // typ | flags<<8 | (spec index+1)<<16
}

// oent is a record without a time, with its CPU.
type oent struct {
	qent
	cpu int32
}

const (
	// chunkSize is the unit of the payload store.
	chunkSize = 64 << 10
	// blockLen is the unit of a FIFO, in entries (16 KiB).
	blockLen = 512
	// entBytes is what the queue counts for a record besides its chunk
	// bytes.
	entBytes = 32
	// recHdr is the pid, tid, arg and payload size before a payload in
	// its chunk.
	recHdr = 20
)

// queue orders records the way perf's ordered_events does
// (tools/perf/util/ordered-events.c): records with a time are queued; at
// each PERF_RECORD_FINISHED_ROUND those not later than the highest time
// seen before the previous round's end are handed out in time order,
// arrival order breaking ties; records without a time (or with time 0,
// such as those perf synthesizes at the start) are handed out at once.
// Memory is bounded by what two rounds hold (plus maxQueued as a cap).
//
// Each CPU's ring buffer is written in time order, so the records are
// kept in one FIFO per CPU, normally sorted already, and a round is handed
// out by a k-way merge of them, lazily. FIFOs are made of fixed blocks and
// payloads live in fixed chunks, both reused once every record in them was
// handed out: the memory the queue touches follows what it holds, and
// nothing is copied as it grows.
type queue struct {
	chunks [][]byte
	live   []int   // records not yet handed out, per chunk
	free   []int32 // chunks with no live record
	cur    int32   // chunk being filled, -1 if none
	queued int     // bytes of the records queued: entBytes each, and their chunk bytes

	specs []*eventSpec

	pend     []fifo // by CPU+1; bucket 0: records without a CPU
	blocks   []*[blockLen]qent
	npending int
	heap     []int // buckets of the merge in progress
	merging  bool
	limit    uint64
	all      bool
	maxN     int // records the merge may still hand out, -1 for any

	out    []oent // handed out before anything pending (records without a time)
	outPos int
	// the chunk and offset of the record handed out last, released at
	// the next call
	lastChunk int32
	lastOff   uint32
	hasOut    bool
	seq       uint32

	nextFlush uint64 // hand out up to this time at the next round's end
	maxTime   uint64
}

// fifo is one bucket's records in arrival order, in blocks of blockLen
// entries taken from the queue's free blocks and given back when handed
// out.
type fifo struct {
	blocks   []*[blockLen]qent
	head     int    // the first record's index in blocks[0]
	n        int    // records
	last     uint64 // the last record's time, when n > 0
	unsorted bool
}

// at returns the i-th record.
func (f *fifo) at(i int) *qent {
	i += f.head
	return &f.blocks[i/blockLen][i%blockLen]
}

// push appends a record to f and returns it to be filled in.
func (q *queue) push(f *fifo) *qent {
	i := f.head + f.n
	if i == len(f.blocks)*blockLen {
		if n := len(q.blocks); n > 0 {
			f.blocks = append(f.blocks, q.blocks[n-1])
			q.blocks = q.blocks[:n-1]
		} else {
			f.blocks = append(f.blocks, new([blockLen]qent))
		}
	}
	f.n++
	return &f.blocks[i/blockLen][i%blockLen]
}

// pop drops f's first record.
func (q *queue) pop(f *fifo) {
	f.head++
	f.n--
	switch {
	case f.head == blockLen:
		q.blocks = append(q.blocks, f.blocks[0])
		f.blocks = f.blocks[:copy(f.blocks, f.blocks[1:])]
		f.head = 0
	case f.n == 0:
		f.head = 0
	}
}

// sort orders f's records by time, arrival breaking ties.
func (f *fifo) sort() {
	e := make([]qent, f.n)
	for i := range e {
		e[i] = *f.at(i)
	}
	slices.SortStableFunc(e, func(x, y qent) int {
		switch {
		case x.time < y.time:
			return -1
		case x.time > y.time:
			return 1
		}
		return 0
	})
	for i := range e {
		*f.at(i) = e[i]
	}
	f.last = e[len(e)-1].time
	f.unsorted = false
}

// maxQueued caps the bytes queued; past it the older half is handed out
// early, as perf does when its queue reaches its size limit.
const maxQueued = 512 << 20

func newQueue() queue { return queue{cur: -1} }

// specIndex registers a spec and returns its index.
func (q *queue) specIndex(s *eventSpec) int {
	if s.idx == 0 {
		q.specs = append(q.specs, s)
		s.idx = len(q.specs)
	}
	return s.idx
}

// store writes e's pid, tid, arg and payload p into the chunks.
func (q *queue) store(e *entry, p []byte, qe *qent) {
	need := recHdr + len(p)
	if q.cur < 0 || len(q.chunks[q.cur])+need > cap(q.chunks[q.cur]) {
		if q.cur >= 0 && q.live[q.cur] == 0 {
			q.free = append(q.free, q.cur)
		}
		q.cur = q.newChunk(need)
	}
	c := q.chunks[q.cur]
	n := len(c)
	qe.chunk, qe.off = q.cur, uint32(n)
	c = c[:n+need]
	h := c[n : n+recHdr]
	le := binary.LittleEndian
	le.PutUint32(h, uint32(e.pid))
	le.PutUint32(h[4:], uint32(e.tid))
	le.PutUint64(h[8:], e.arg)
	le.PutUint32(h[16:], uint32(len(p)))
	copy(c[n+recHdr:], p)
	q.chunks[q.cur] = c
	q.live[q.cur]++
	q.queued += need
}

func (q *queue) newChunk(need int) int32 {
	for i, id := range q.free {
		if cap(q.chunks[id]) >= need {
			q.free = append(q.free[:i], q.free[i+1:]...)
			q.chunks[id] = q.chunks[id][:0]
			return id
		}
	}
	q.chunks = append(q.chunks, make([]byte, 0, max(chunkSize, need)))
	q.live = append(q.live, 0)
	return int32(len(q.chunks) - 1)
}

// release marks a handed-out record's bytes free.
func (q *queue) release(chunk int32, off uint32) {
	q.queued -= entBytes
	if chunk < 0 {
		return
	}
	q.queued -= recHdr + int(binary.LittleEndian.Uint32(q.chunks[chunk][off+16:]))
	if q.live[chunk]--; q.live[chunk] == 0 && chunk != q.cur {
		q.free = append(q.free, chunk)
	}
}

// add queues e with its payload p; timed says whether it has a time to be
// ordered by. The entry is written in place, field by field (a qent built
// aside and copied in costs a store-forwarding stall per record).
func (q *queue) add(e *entry, p []byte, timed bool) {
	var qe *qent
	if timed {
		q.maxTime = max(q.maxTime, e.time)
		b := 0
		if e.flags&hasCPU != 0 {
			b = int(e.cpu) + 1
		}
		for len(q.pend) <= b {
			q.pend = append(q.pend, fifo{})
		}
		f := &q.pend[b]
		if f.n > 0 && f.last > e.time {
			f.unsorted = true
		}
		f.last = e.time
		qe = q.push(f)
		q.npending++
	} else {
		q.out = append(q.out, oent{cpu: e.cpu})
		qe = &q.out[len(q.out)-1].qent
	}
	q.queued += entBytes
	qe.time, qe.at, qe.seq = e.time, e.at, q.seq
	qe.chunk, qe.off, qe.meta = -1, 0, uint32(e.typ)|uint32(e.flags)<<8
	q.seq++
	if e.spec != nil {
		qe.meta |= uint32(q.specIndex(e.spec)) << 16
	}
	if e.typ != recSample || e.spec == nil || e.spec.kind != timeline.KindUnknown {
		q.store(e, p, qe)
	}
	if timed && q.queued > maxQueued && q.npending > 1 && !q.merging {
		q.startMerge(0, true, q.npending/2)
	}
}

// round handles a FINISHED_ROUND.
func (q *queue) round() {
	q.startMerge(q.nextFlush, false, -1)
	q.nextFlush = q.maxTime
}

// flushAll hands out everything pending.
func (q *queue) flushAll() { q.startMerge(0, true, -1) }

func less(a, b *qent) bool {
	return a.time < b.time || a.time == b.time && a.seq < b.seq
}

func (q *queue) headOf(i int) *qent {
	f := &q.pend[q.heap[i]]
	return &f.blocks[0][f.head]
}

func (q *queue) down(i int) {
	for {
		m, l, r := i, 2*i+1, 2*i+2
		if l < len(q.heap) && less(q.headOf(l), q.headOf(m)) {
			m = l
		}
		if r < len(q.heap) && less(q.headOf(r), q.headOf(m)) {
			m = r
		}
		if m == i {
			return
		}
		q.heap[i], q.heap[m] = q.heap[m], q.heap[i]
		i = m
	}
}

func (q *queue) qualifies(f *fifo) bool {
	return f.n > 0 && (q.all || f.blocks[0][f.head].time <= q.limit)
}

// startMerge begins handing out pending records with time <= limit (all
// when all), at most maxN of them when maxN >= 0, in (time, arrival)
// order.
func (q *queue) startMerge(limit uint64, all bool, maxN int) {
	if q.npending == 0 {
		return
	}
	q.limit, q.all, q.maxN = limit, all, maxN
	q.heap = q.heap[:0]
	for b := range q.pend {
		f := &q.pend[b]
		if f.unsorted {
			f.sort()
		}
		if q.qualifies(f) {
			q.heap = append(q.heap, b)
		}
	}
	for i := len(q.heap)/2 - 1; i >= 0; i-- {
		q.down(i)
	}
	q.merging = len(q.heap) > 0
}

// ready reports whether a record waits to be handed out.
func (q *queue) ready() bool { return q.outPos < len(q.out) || q.merging }

// next returns the next ready record and its payload (valid until the next
// call), or false.
func (q *queue) next(e *entry) ([]byte, bool) {
	if q.hasOut {
		q.release(q.lastChunk, q.lastOff)
		q.hasOut = false
	}
	// Fields are copied one by one, before the FIFOs move (endMerge).
	switch {
	case q.outPos < len(q.out):
		o := &q.out[q.outPos]
		q.take(&o.qent, o.cpu, e)
		q.outPos++
		if q.outPos == len(q.out) {
			q.out, q.outPos = q.out[:0], 0
		}
	case q.merging:
		b := q.heap[0]
		f := &q.pend[b]
		// bucket 0's records have no CPU, which decode leaves 0
		q.take(&f.blocks[0][f.head], int32(max(b-1, 0)), e)
		q.pop(f)
		q.npending--
		if q.maxN > 0 {
			q.maxN--
		}
		if q.qualifies(f) {
			q.down(0)
		} else {
			last := len(q.heap) - 1
			q.heap[0] = q.heap[last]
			q.heap = q.heap[:last]
			q.down(0)
		}
		if len(q.heap) == 0 || q.maxN == 0 {
			q.merging = false
		}
	default:
		return nil, false
	}
	q.hasOut = true
	if q.lastChunk < 0 {
		return nil, true
	}
	c := q.chunks[q.lastChunk][q.lastOff:]
	n := binary.LittleEndian.Uint32(c[16:])
	return c[20 : 20+n], true
}

// take copies what delivery needs of qe into e, and notes qe's chunk and
// offset for release.
func (q *queue) take(qe *qent, cpu int32, e *entry) {
	e.time, e.at, e.cpu = qe.time, qe.at, cpu
	e.typ, e.flags = uint8(qe.meta), uint8(qe.meta>>8)
	e.spec = nil
	if s := qe.meta >> 16; s > 0 {
		e.spec = q.specs[s-1]
	}
	e.pid, e.tid, e.arg = 0, 0, 0
	q.lastChunk, q.lastOff = qe.chunk, qe.off
	if qe.chunk >= 0 {
		c := q.chunks[qe.chunk][qe.off:]
		le := binary.LittleEndian
		e.pid = int32(le.Uint32(c))
		e.tid = int32(le.Uint32(c[4:]))
		e.arg = le.Uint64(c[8:])
	}
}
