package record

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/schedlens/schedlens/timeline"
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
	default:
		return fmt.Errorf("record kind %d unknown", kind)
	}
	if ev.Other == timeline.NoTID {
		d.otgid = -1
	}
	return nil
}

// cstr returns b up to its first NUL.
func cstr(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}
