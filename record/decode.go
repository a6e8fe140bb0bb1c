package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// recordSize is sizeof(struct sched_event) in bpf/sched.bpf.c, which
// asserts the offsets read here.
const recordSize = 88

// Record kinds, the EV_* values of bpf/sched.bpf.c.
const (
	evSwitch    = 1
	evWaking    = 2
	evWakeup    = 3
	evWakeupNew = 4
	evMigrate   = 5
	evFork      = 6
	evExit      = 7
	evFree      = 8
	evRename    = 9
	evAttrs     = 10 // struct attrs_event
	evSignal    = 11
)

// attrsHeader is the size of struct attrs_event before its mask words;
// maxMaskWords is MAX_MASK_WORDS (bpf/sched.bpf.c).
const (
	attrsHeader  = 48
	maxMaskWords = 128
)

const (
	flagCtxMask = 0x07
	flagPreempt = 0x08
)

// decoded is one record as an event plus what the sink's process tree
// needs besides it.
type decoded struct {
	ev    timeline.Event
	tgid  int32  // thread group of ev.Task, -1 if unknown
	otgid int32  // thread group of ev.Other, -1 if unknown
	lost  uint32 // records dropped on ev.CPU before this one, cumulative
	// attrs is set for an attrs_event record: ev then holds only its
	// Time, CPU and Task, and is not an event of the trace.
	attrs *taskAttrs
}

// taskAttrs is what an attrs_event says about task ev.Task.
type taskAttrs struct {
	cpus          topology.CPUSet // allowed CPUs, no trailing zero words
	cgroup        uint64          // cgroup v2 id, 0 if unknown
	autogroup     int64           // autogroup id, 0 none, -1 unknown
	autogroupNice int32
}

var ne = binary.NativeEndian

var wakeKinds = [...]timeline.Kind{evWaking: timeline.KindWaking, evWakeup: timeline.KindWakeup, evWakeupNew: timeline.KindWakeupNew}

// commCache remembers, per task id (hashed), the comm last seen with it and
// its interned id, so that the common case costs a 16-byte comparison
// instead of a locked map lookup in timeline.Strings.
type commCache struct {
	strs  *timeline.Strings
	slots [1 << 12]commSlot
}

type commSlot struct {
	pid int32
	n   uint8
	b   [16]byte
	id  timeline.CommID
}

func newCommCache(strs *timeline.Strings) *commCache {
	c := &commCache{strs: strs}
	for i := range c.slots {
		c.slots[i].pid = -1
	}
	return c
}

// id returns the interned id of comm, the name of task pid.
func (c *commCache) id(pid int32, comm []byte) timeline.CommID {
	if len(comm) > len(commSlot{}.b) {
		return c.strs.ID(comm)
	}
	s := &c.slots[uint32(pid)%uint32(len(c.slots))]
	if s.pid == pid && int(s.n) == len(comm) && string(s.b[:s.n]) == string(comm) {
		return s.id
	}
	s.id = c.strs.ID(comm)
	s.pid, s.n = pid, uint8(copy(s.b[:], comm))
	return s.id
}

// decodeRecord fills d from one sched_event record. Comms are interned
// through cc; a known comm costs no allocation.
func decodeRecord(b []byte, cc *commCache, d *decoded) error {
	d.attrs = nil
	if len(b) > 14 && b[14] == evAttrs {
		return decodeAttrs(b, d)
	}
	if len(b) < recordSize {
		return fmt.Errorf("record of %d bytes, want %d", len(b), recordSize)
	}
	ev := &d.ev
	ev.Reset()
	ev.Time = timeline.Time(ne.Uint64(b[0:]))
	d.lost = ne.Uint32(b[8:])
	ev.CPU = timeline.CPU(ne.Uint16(b[12:]))
	kind := b[14]
	flags := b[15]
	ev.Ctx = timeline.Context(flags & flagCtxMask)
	if ev.Ctx > timeline.CtxNMI {
		ev.Ctx = timeline.CtxUnknown
	}
	pid := int32(ne.Uint32(b[16:]))
	d.tgid = int32(ne.Uint32(b[20:]))
	opid := int32(ne.Uint32(b[24:]))
	d.otgid = int32(ne.Uint32(b[28:]))
	ev.TGID = int32(ne.Uint32(b[32:]))
	arg := int32(ne.Uint32(b[36:]))
	arg2 := int32(ne.Uint32(b[40:]))
	state := ne.Uint32(b[44:])
	xstate := ne.Uint32(b[48:])
	prio := int16(ne.Uint16(b[52:]))
	oprio := int16(ne.Uint16(b[54:]))
	comm := cstr(b[56:72])
	ocomm := cstr(b[72:88])

	ev.Task = timeline.TID(pid)
	ev.Comm = cc.id(pid, comm)
	switch kind {
	case evSwitch:
		ev.Kind = timeline.KindSwitch
		ev.Other, ev.OComm = timeline.TID(opid), cc.id(opid, ocomm)
		ev.Prio, ev.OPrio = prio, oprio
		ev.State = switchState(flags&flagPreempt != 0, state, xstate)
	case evWaking, evWakeup, evWakeupNew:
		ev.Kind = wakeKinds[kind]
		ev.Other, ev.OComm = timeline.TID(opid), cc.id(opid, ocomm)
		ev.Prio, ev.OPrio = prio, oprio
		ev.Arg = int64(arg)
	case evMigrate:
		ev.Kind = timeline.KindMigrate
		ev.Prio = prio
		ev.Arg, ev.Arg2 = int64(arg), int64(arg2)
	case evFork:
		ev.Kind = timeline.KindFork
		ev.Other, ev.OComm = timeline.TID(opid), cc.id(opid, ocomm)
	case evExit, evFree:
		ev.Kind = timeline.KindExit
		if kind == evFree {
			ev.Kind = timeline.KindFree
		}
		ev.Prio = prio
	case evRename:
		ev.Kind = timeline.KindRename
		ev.OComm = cc.id(opid, ocomm)
	case evSignal:
		ev.Kind = timeline.KindSignal
		ev.Other, ev.OComm = timeline.TID(opid), cc.id(opid, ocomm)
		ev.Arg, ev.Arg2 = int64(arg), int64(arg2)
	default:
		return fmt.Errorf("record kind %d unknown", kind)
	}
	if ev.Other == timeline.NoTID {
		d.otgid = -1
	}
	return nil
}

// decodeAttrs fills d from one attrs_event record: the header, then the
// allowed-CPU mask, whose population must equal the kernel's
// nr_cpus_allowed (a mask cut short cannot pass for a smaller one).
func decodeAttrs(b []byte, d *decoded) error {
	if len(b) < attrsHeader {
		return fmt.Errorf("attrs record of %d bytes, want at least %d", len(b), attrsHeader)
	}
	words := int(ne.Uint16(b[46:]))
	if words == 0 || words > maxMaskWords || len(b) < attrsHeader+8*words {
		return fmt.Errorf("attrs record of %d bytes with %d mask words, want 1 to %d words and %d bytes", len(b), words, maxMaskWords, attrsHeader+8*words)
	}
	ev := &d.ev
	ev.Reset()
	ev.Time = timeline.Time(ne.Uint64(b[0:]))
	d.lost = ne.Uint32(b[8:])
	ev.CPU = timeline.CPU(ne.Uint16(b[12:]))
	ev.Task = timeline.TID(int32(ne.Uint32(b[16:])))
	d.tgid = int32(ne.Uint32(b[20:]))
	d.otgid = -1
	a := &taskAttrs{
		cgroup:        ne.Uint64(b[24:]),
		autogroup:     int64(ne.Uint64(b[32:])),
		autogroupNice: int32(ne.Uint32(b[40:])),
	}
	nr := int(ne.Uint16(b[44:]))
	mask := make(topology.CPUSet, words)
	n := 0
	for i := range mask {
		mask[i] = ne.Uint64(b[attrsHeader+8*i:])
		n += bits.OnesCount64(mask[i])
	}
	if n != nr {
		return fmt.Errorf("attrs record of task %d: %d CPUs in the %d-word mask, the kernel counts %d", ev.Task, n, words, nr)
	}
	if nr == 0 {
		// An empty set reads as "every CPU"; a task has at least one.
		return fmt.Errorf("attrs record of task %d: no allowed CPU in the %d-word mask, want at least one", ev.Task, words)
	}
	for len(mask) > 0 && mask[len(mask)-1] == 0 {
		mask = mask[:len(mask)-1]
	}
	a.cpus = mask
	d.attrs = a
	return nil
}

// cstr returns b up to its first NUL.
func cstr(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}
