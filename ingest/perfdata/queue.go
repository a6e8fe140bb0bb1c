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
	typ   uint8 // 0: no record, only the unknown samples it carries
	flags uint8
	nu    int // unknown samples it carries (queue.carried), handed out before it
	// mapped: the payload is where the record lies in the queue's mapped
	// data section (queue.setMapped), pay bytes into the record
	mapped bool
	pay    uint16
}

const (
	hasTID = 1 << iota
	hasCPU
	hasTime
	inMap // qent: the payload is read where the record lies (see qent)
)

// qent is an entry as the queue keeps it, 40 bytes: the ordering key, the
// position for errors, the unknown samples it carries, and a reference to
// the rest (pid, tid, arg and the payload) in the chunk store; samples of
// events the reader does not interpret keep nothing there. Its CPU is its
// FIFO's.
//
// A sample read from the mapped data section (inMap in its flags) keeps
// no copy: its payload is read at delivery where the record lies, off&0xffff
// bytes into it and off>>16 long, and its pid and tid are in chunk and tid.
type qent struct {
	time  uint64
	at    int64
	seq   uint32
	chunk int32 // the chunk of pid, tid, arg and payload; -1 none; the pid when inMap
	off   uint32
	meta  uint32 // typ | flags<<8 | (spec index+1)<<16; 0: a carrier of unknown samples alone
	nu    uint32 // unknown samples handed out just before it (see uent)
	tid   int32  // when inMap
}

// uent is a sample of an event the reader does not interpret (one of its
// CPU's, timed), which the queue keeps beside its CPU's FIFO rather than
// in it: all its delivery does is check and set its CPU's last record
// time and count it, which concerns only that CPU's records, and these are
// handed out in FIFO order while the FIFO is sorted. So it rides on the
// next record queued on its CPU (qent.nu counts them), which hands it out
// just before itself; a merge that begins first gives the ones still
// waiting a carrier of their own, at the time of the last of them. A FIFO
// that turns out of order, and a merge that hands out only part of what
// is queued, take them back into the FIFO as records of their own
// (explode), so that the sort and the count see what perf's queue does.
type uent struct {
	time uint64
	at   int64
	seq  uint32
	spec uint32 // spec index+1
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
// Samples of events the reader does not interpret ride on their CPU's next
// record instead of taking a place in the merge (see uent).
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
	heap     []hent // buckets of the merge in progress, by their first record
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
	lastReal  bool // the record handed out last was one (not a bare carrier)
	lastAt    int64
	// lastMapped: its payload is in place (inMap), not in a chunk
	lastMapped bool
	seq        uint32
	// carried: the unknown samples the record handed out last carries,
	// valid until the next fill
	carried []uent

	nextFlush uint64 // hand out up to this time at the next round's end
	maxTime   uint64

	// carry: unknown samples ride on records (uent); without it each is a
	// record of its own, as in perf's queue
	carry     bool
	maxQueued int

	// the mapped data section (see qent), from file offset mapAt
	mapData []byte
	mapAt   int64
}

// setMapped gives the queue the mapped data section, whose first byte is
// at file offset at, for the payloads it keeps in place.
func (q *queue) setMapped(data []byte, at int64) { q.mapData, q.mapAt = data, at }

// oldest returns the file offset of the earliest record (by its place in
// the file) still queued in place, or -1 for none: what of the mapped
// section must stay present. Each FIFO's records are in file order unless
// a sort moved them, so its first one stands for it.
func (q *queue) oldest() int64 {
	o := int64(-1)
	for b := range q.pend {
		if f := &q.pend[b]; f.n > 0 {
			if at := f.at(0).at; o < 0 || at < o {
				o = at
			}
		}
	}
	return o
}

// fifo is one bucket's records in arrival order, in blocks of blockLen
// entries taken from the queue's free blocks and given back when handed
// out.
type fifo struct {
	blocks   []*[blockLen]qent
	head     int    // the first record's index in blocks[0]
	n        int    // records
	last     uint64 // the last record's time (unknown samples too), when live
	unsorted bool
	// the unknown samples carried by the records or waiting for one, in
	// arrival order from uhead; the last upend of them wait
	unk   []uent
	uhead int
	upend int
}

// live reports whether f holds anything not handed out.
func (f *fifo) live() bool { return f.n > 0 || f.upend > 0 }

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

func newQueue() queue { return queue{cur: -1, carry: true, maxQueued: maxQueued} }

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
		if f.live() && f.last > e.time {
			q.explode(f)
			f.unsorted = true
		}
		f.last = e.time
		if b > 0 && q.carry && !f.unsorted && e.typ == recSample && e.spec != nil && e.spec.kind == timeline.KindUnknown {
			q.addUnknown(f, e)
			return
		}
		qe = q.push(f)
		qe.nu = uint32(f.upend)
		f.upend = 0
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
	switch {
	case e.mapped:
		// in place: counted as if stored, so that maxQueued is met where it was
		qe.chunk, qe.tid, qe.off = e.pid, e.tid, uint32(e.pay)|uint32(len(p))<<16
		qe.meta |= inMap << 8
		q.queued += recHdr + len(p)
	case e.typ != recSample || e.spec == nil || e.spec.kind != timeline.KindUnknown:
		q.store(e, p, qe)
	}
	if timed && q.queued > q.maxQueued && q.npending > 1 && !q.merging {
		q.startMerge(0, true, q.npending/2)
	}
}

// addUnknown keeps e, a sample of an event the reader does not interpret,
// beside f until a record carries it (see uent).
func (q *queue) addUnknown(f *fifo, e *entry) {
	if f.uhead == len(f.unk) {
		f.unk, f.uhead = f.unk[:0], 0
	} else if f.uhead >= 1024 && f.uhead > len(f.unk)/2 {
		f.unk = f.unk[:copy(f.unk, f.unk[f.uhead:])]
		f.uhead = 0
	}
	f.unk = append(f.unk, uent{time: e.time, at: e.at, seq: q.seq, spec: uint32(q.specIndex(e.spec))})
	f.upend++
	q.seq++
	q.npending++
	q.queued += entBytes
	if q.queued > q.maxQueued && q.npending > 1 && !q.merging {
		q.startMerge(0, true, q.npending/2)
	}
}

// explode takes f's unknown samples back into f as records of their own,
// each before the record that carried it, those still waiting at the end.
func (q *queue) explode(f *fifo) {
	if f.uhead == len(f.unk) {
		return
	}
	all := make([]qent, 0, f.n+len(f.unk)-f.uhead)
	u := f.uhead
	bare := func(x uent) qent {
		return qent{time: x.time, at: x.at, seq: x.seq, chunk: -1,
			meta: recSample | (hasCPU|hasTime)<<8 | x.spec<<16}
	}
	for i := 0; i < f.n; i++ {
		qe := *f.at(i)
		for ; qe.nu > 0; qe.nu-- {
			all = append(all, bare(f.unk[u]))
			u++
		}
		if qe.meta != 0 {
			all = append(all, qe)
		}
	}
	for ; u < len(f.unk); u++ {
		all = append(all, bare(f.unk[u]))
	}
	q.blocks = append(q.blocks, f.blocks...)
	f.blocks, f.head, f.n = f.blocks[:0], 0, 0
	for _, qe := range all {
		*q.push(f) = qe
	}
	f.unk, f.uhead, f.upend = f.unk[:0], 0, 0
}

// round handles a FINISHED_ROUND.
func (q *queue) round() {
	q.startMerge(q.nextFlush, false, -1)
	q.nextFlush = q.maxTime
}

// flushAll hands out everything pending.
func (q *queue) flushAll() { q.startMerge(0, true, -1) }

// hent is a bucket in the merge's heap with the key of its first record,
// kept beside it so that the heap is ordered without reaching into the
// FIFOs.
type hent struct {
	time uint64
	seq  uint32
	b    int32
}

func less(a, b *hent) bool {
	return a.time < b.time || a.time == b.time && a.seq < b.seq
}

// heapEnt is bucket b in the heap, keyed by its first record.
func (q *queue) heapEnt(b int) hent {
	f := &q.pend[b]
	h := &f.blocks[0][f.head]
	return hent{time: h.time, seq: h.seq, b: int32(b)}
}

func (q *queue) down(i int) {
	h := q.heap
	for {
		m, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && less(&h[l], &h[m]) {
			m = l
		}
		if r < len(h) && less(&h[r], &h[m]) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// qualifies reports whether f's first record is to be handed out in the
// merge in progress, or the first unknown sample it carries.
func (q *queue) qualifies(f *fifo) bool {
	if f.n == 0 {
		return false
	}
	h := &f.blocks[0][f.head]
	return q.all || h.time <= q.limit || h.nu > 0 && f.unk[f.uhead].time <= q.limit
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
		switch {
		case maxN >= 0:
			// a count of records to hand out: each is one
			q.explode(f)
		case f.upend > 0:
			// a carrier for the unknown samples still waiting
			x := &f.unk[len(f.unk)-1]
			*q.push(f) = qent{time: x.time, at: x.at, seq: x.seq, chunk: -1, nu: uint32(f.upend)}
			f.upend = 0
		}
		if f.unsorted {
			f.sort()
		}
		if q.qualifies(f) {
			q.heap = append(q.heap, q.heapEnt(b))
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
		switch {
		case q.lastMapped:
			q.queued -= entBytes + recHdr + int(q.lastOff>>16)
		case q.lastReal:
			q.release(q.lastChunk, q.lastOff)
		}
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
		b := int(q.heap[0].b)
		f := &q.pend[b]
		// bucket 0's records have no CPU, which decode leaves 0
		qe := &f.blocks[0][f.head]
		if !q.all && qe.time > q.limit {
			// Only unknown samples the record carries are due: they go
			// now, as perf's queue hands them out, and the record stays.
			q.takeCarried(f, qe, int32(b-1), e)
			q.dropHead()
			return nil, true
		}
		q.take(qe, int32(max(b-1, 0)), e)
		if nu := int(qe.nu); nu > 0 {
			q.carried = f.unk[f.uhead : f.uhead+nu]
			f.uhead += nu
			q.npending -= nu
			q.queued -= nu * entBytes
		}
		q.pop(f)
		if q.lastReal {
			q.npending--
		}
		if q.maxN > 0 {
			q.maxN--
		}
		if q.qualifies(f) {
			q.heap[0] = q.heapEnt(b)
			q.down(0)
		} else {
			q.dropHead()
		}
		if q.maxN == 0 {
			q.merging = false
		}
	default:
		return nil, false
	}
	q.hasOut = true
	if q.lastMapped {
		n := int(q.lastOff >> 16)
		if n == 0 {
			return nil, true
		}
		p := int(q.lastAt-q.mapAt) + int(q.lastOff&0xffff)
		return q.mapData[p : p+n], true
	}
	if q.lastChunk < 0 || !q.lastReal {
		return nil, true
	}
	c := q.chunks[q.lastChunk][q.lastOff:]
	n := binary.LittleEndian.Uint32(c[16:])
	return c[20 : 20+n], true
}

// dropHead takes the FIFO at the top of the merge's heap out of it.
func (q *queue) dropHead() {
	last := len(q.heap) - 1
	q.heap[0] = q.heap[last]
	q.heap = q.heap[:last]
	q.down(0)
	if len(q.heap) == 0 {
		q.merging = false
	}
}

// takeCarried hands out, as a bare carrier (typ 0) of CPU cpu, the unknown
// samples that f's first record qe carries up to the merge's limit, and
// leaves it the rest.
func (q *queue) takeCarried(f *fifo, qe *qent, cpu int32, e *entry) {
	k := 0
	for k < int(qe.nu) && f.unk[f.uhead+k].time <= q.limit {
		k++
	}
	*e = entry{time: qe.time, at: qe.at, cpu: cpu, nu: k}
	q.carried = f.unk[f.uhead : f.uhead+k]
	f.uhead += k
	qe.nu -= uint32(k)
	q.npending -= k
	q.queued -= k * entBytes
	q.lastReal, q.lastMapped = false, false
	q.hasOut = true
}

// take copies what delivery needs of qe into e, and notes qe's chunk and
// offset for release.
func (q *queue) take(qe *qent, cpu int32, e *entry) {
	e.time, e.at, e.cpu = qe.time, qe.at, cpu
	e.typ, e.flags = uint8(qe.meta), uint8(qe.meta>>8)
	e.nu = int(qe.nu)
	q.carried = nil
	q.lastReal = qe.meta != 0
	e.spec = nil
	if s := qe.meta >> 16; s > 0 {
		e.spec = q.specs[s-1]
	}
	e.pid, e.tid, e.arg = 0, 0, 0
	q.lastChunk, q.lastOff, q.lastAt = qe.chunk, qe.off, qe.at
	q.lastMapped = e.flags&inMap != 0
	if q.lastMapped {
		e.pid, e.tid = qe.chunk, qe.tid
		e.flags &^= inMap
		return
	}
	if qe.chunk >= 0 {
		c := q.chunks[qe.chunk][qe.off:]
		le := binary.LittleEndian
		e.pid = int32(le.Uint32(c))
		e.tid = int32(le.Uint32(c[4:]))
		e.arg = le.Uint64(c[8:])
	}
}
