package timeline

import (
	"encoding/binary"
	"fmt"
	"iter"

	"github.com/klauspost/compress/s2"
)

// EventLog keeps events in the order they were added, each in a few bytes:
// variable-length integers, the time as the difference from the event
// before, prios offset by one (a byte from -1 to 126), pids and comms as
// they are. It is for a producer that must hold
// its events until a walk can start (a simulation, whose summary is known
// only when it ends) in less memory than a Builder's columns. Events
// reads every field back as it was added.
//
// The events are written into blocks of 64 KiB, 12 to 20 bytes each.
// Once the log holds rawLogBytes, each full block is compressed (S2,
// github.com/klauspost/compress/s2): a schedule's events then take 7 to
// 11 bytes each, against 34 in a Builder that requires order, for about
// 45 ns more an event written and 25 more read. A log that stays small
// costs no compression.
type EventLog struct {
	blocks  [][]byte // the full blocks, compressed from the raw-th on
	raw     int      // the full blocks kept as written
	cur     []byte   // the block being filled
	held    int      // bytes of the full blocks
	scratch []byte   // where a block is compressed
	n       int
	last    Time // the time of the latest event
}

// logBlock is the size of a block; an event never spans two.
const logBlock = 64 << 10

// rawLogBytes is how much of a log is kept as written, uncompressed.
var rawLogBytes = 16 << 20

// maxEventBytes bounds one encoded event: a header byte, then at most
// thirteen varints of at most ten bytes.
const maxEventBytes = 1 + 13*binary.MaxVarintLen64

// Event header bits: which optional fields follow the kind.
const (
	logStart = 1 << iota // Start != NoTime
	logCtx               // Ctx != 0
	logState             // State != 0
	logOther             // Other, OComm, OPrio
	logArgs              // Arg, Arg2 != 0
	logTGID              // TGID != -1
)

// Add appends ev.
func (l *EventLog) Add(ev Event) {
	if cap(l.cur)-len(l.cur) < maxEventBytes {
		l.seal()
	}
	b := l.cur
	var h byte
	if ev.Start != NoTime {
		h |= logStart
	}
	if ev.Ctx != 0 {
		h |= logCtx
	}
	if ev.State != 0 {
		h |= logState
	}
	if ev.Other != NoTID || ev.OComm != NoComm || ev.OPrio != -1 {
		h |= logOther
	}
	if ev.Arg != 0 || ev.Arg2 != 0 {
		h |= logArgs
	}
	if ev.TGID != -1 {
		h |= logTGID
	}
	prev := l.last
	if l.n == 0 {
		prev = 0
	}
	// Written in place: the block has room for the longest event.
	w := b[len(b) : len(b)+maxEventBytes]
	w[0], w[1] = h, byte(ev.Kind)
	i := 2
	i += binary.PutVarint(w[i:], int64(ev.Time-prev))
	i += binary.PutVarint(w[i:], int64(ev.CPU))
	i += binary.PutVarint(w[i:], int64(ev.Task))
	i += binary.PutUvarint(w[i:], uint64(ev.Comm))
	i += binary.PutUvarint(w[i:], uint64(uint16(ev.Prio)+1)) // -1 to 126 in a byte
	if h&logStart != 0 {
		i += binary.PutVarint(w[i:], int64(ev.Time-ev.Start))
	}
	if h&logCtx != 0 {
		w[i] = byte(ev.Ctx)
		i++
	}
	if h&logState != 0 {
		i += binary.PutUvarint(w[i:], uint64(ev.State))
	}
	if h&logOther != 0 {
		i += binary.PutVarint(w[i:], int64(ev.Other))
		i += binary.PutUvarint(w[i:], uint64(ev.OComm))
		i += binary.PutUvarint(w[i:], uint64(uint16(ev.OPrio)+1))
	}
	if h&logArgs != 0 {
		i += binary.PutVarint(w[i:], ev.Arg)
		i += binary.PutVarint(w[i:], ev.Arg2)
	}
	if h&logTGID != 0 {
		i += binary.PutVarint(w[i:], int64(ev.TGID))
	}
	l.cur = b[:len(b)+i]
	l.n++
	l.last = ev.Time
}

// seal moves the block being filled, if any, to the full blocks, as it is
// while they hold less than rawLogBytes, else compressed (in a slice of its
// own size), and makes room for the next.
func (l *EventLog) seal() {
	if l.cur == nil {
		l.cur = make([]byte, 0, logBlock)
		return
	}
	if len(l.cur) == 0 {
		return
	}
	if l.raw == len(l.blocks) && l.held+len(l.cur) <= rawLogBytes {
		l.blocks = append(l.blocks, l.cur)
		l.raw++
		l.held += cap(l.cur)
		l.cur = make([]byte, 0, logBlock)
		return
	}
	c := s2.Encode(l.scratch[:cap(l.scratch)], l.cur)
	l.scratch = c
	c = append(make([]byte, 0, len(c)), c...)
	l.blocks = append(l.blocks, c)
	l.held += len(c)
	l.cur = l.cur[:0]
}

// Drop lets go of the events, once nothing will read them again.
func (l *EventLog) Drop() { *l = EventLog{} }

// Len returns how many events the log holds.
func (l *EventLog) Len() int { return l.n }

// Bytes returns the memory the log's blocks take.
func (l *EventLog) Bytes() int { return l.held + cap(l.cur) }

// Events yields the events in the order they were added, each in the same
// Event (valid until the next), with every field as Add was given it.
func (l *EventLog) Events() iter.Seq[*Event] {
	return func(yield func(*Event) bool) {
		var ev Event
		t := Time(0)
		var buf []byte
		for k := 0; k <= len(l.blocks); k++ {
			b := l.cur
			if k < l.raw {
				b = l.blocks[k]
			} else if k < len(l.blocks) {
				var err error
				if buf, err = s2.Decode(buf[:cap(buf)], l.blocks[k]); err != nil {
					panic(fmt.Sprintf("timeline: EventLog: block %d does not decompress: %v", k, err))
				}
				b = buf
			}
			d := logDecoder{b: b}
			for d.pos < len(b) {
				d.event(&ev, t)
				if d.bad {
					panic(fmt.Sprintf("timeline: EventLog: event at byte %d of a block does not decode", d.pos))
				}
				t = ev.Time
				if !yield(&ev) {
					return
				}
			}
		}
	}
}

// logDecoder reads events back from one block.
type logDecoder struct {
	b   []byte
	pos int
	bad bool
}

func (d *logDecoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1) // zigzag, as binary.Varint
}

func (d *logDecoder) uvarint() uint64 {
	// Most take one to three bytes: read those inline.
	if b := d.b[d.pos:]; len(b) >= 3 {
		switch {
		case b[0] < 0x80:
			d.pos++
			return uint64(b[0])
		case b[1] < 0x80:
			d.pos += 2
			return uint64(b[0]&0x7f) | uint64(b[1])<<7
		case b[2] < 0x80:
			d.pos += 3
			return uint64(b[0]&0x7f) | uint64(b[1]&0x7f)<<7 | uint64(b[2])<<14
		}
	}
	v, n := binary.Uvarint(d.b[d.pos:])
	if n <= 0 {
		d.bad, n = true, len(d.b)-d.pos
	}
	d.pos += n
	return v
}

func (d *logDecoder) byte() byte {
	if d.pos >= len(d.b) {
		d.bad = true
		return 0
	}
	d.pos++
	return d.b[d.pos-1]
}

// event decodes the next event into ev; prev is the time of the one
// before (0 for the first).
func (d *logDecoder) event(ev *Event, prev Time) {
	h := d.byte()
	*ev = Event{Kind: Kind(d.byte()), Start: NoTime, Other: NoTID, OComm: NoComm, OPrio: -1, TGID: -1}
	ev.Time = prev + Time(d.varint())
	ev.CPU = CPU(d.varint())
	ev.Task = TID(d.varint())
	ev.Comm = CommID(d.uvarint())
	ev.Prio = int16(uint16(d.uvarint()) - 1)
	if h&logStart != 0 {
		ev.Start = ev.Time - Time(d.varint())
	}
	if h&logCtx != 0 {
		ev.Ctx = Context(d.byte())
	}
	if h&logState != 0 {
		ev.State = State(d.uvarint())
	}
	if h&logOther != 0 {
		ev.Other = TID(d.varint())
		ev.OComm = CommID(d.uvarint())
		ev.OPrio = int16(uint16(d.uvarint()) - 1)
	}
	if h&logArgs != 0 {
		ev.Arg = d.varint()
		ev.Arg2 = d.varint()
	}
	if h&logTGID != 0 {
		ev.TGID = int32(d.varint())
	}
}
