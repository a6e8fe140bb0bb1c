package perfdata

import (
	"bytes"

	"github.com/schedlens/schedlens/timeline"
)

// commSlots is the size of commCache's table.
const commSlots = 1024

// commCache interns the comms of tracepoint payloads through a
// direct-mapped table keyed by pid: a task's comm is nearly always the one
// its previous event carried, and comparing the field's bytes (the whole
// char array, NUL and padding too) with those is cheaper than cutting
// them at the NUL and hashing them into Strings' map. A slot holds only
// bytes whose string is already interned, with its id, so the ids, and
// the order in which strings are first interned, are those of calling
// Strings.ID every time. The zero slot is the empty string, whose id is
// always 0.
type commCache struct {
	strs  *timeline.Strings
	slots [commSlots]commSlot
}

type commSlot struct {
	b  [16]byte // TASK_COMM_LEN
	n  uint8
	id timeline.CommID
}

// id returns the id of the string in b up to its first NUL, a comm of
// task pid.
func (c *commCache) id(pid timeline.TID, b []byte) timeline.CommID {
	s := &c.slots[uint32(pid)%commSlots]
	if int(s.n) == len(b) && string(s.b[:s.n]) == string(b) {
		return s.id
	}
	str := b
	if i := bytes.IndexByte(str, 0); i >= 0 {
		str = str[:i]
	}
	id := c.strs.ID(str)
	if len(b) <= len(s.b) {
		s.n = uint8(copy(s.b[:], b))
		s.id = id
	}
	return id
}

// pidMaxLimit is the kernel's PID_MAX_LIMIT on 64-bit
// (include/linux/threads.h): threadNames indexes a slice below it.
const pidMaxLimit = 4 << 20

// threadNames is perf's name for each thread, from COMM and FORK records
// (a thread's entry in perf's machine__findnew_thread): a slice indexed by
// tid, as large as the largest tid seen, and a map for tids outside
// 0..pidMaxLimit.
type threadNames struct {
	ids   []timeline.CommID // id+1 by tid, 0 for none
	other map[int32]timeline.CommID
}

func (t *threadNames) get(tid int32) (timeline.CommID, bool) {
	if uint32(tid) < pidMaxLimit {
		if int(tid) < len(t.ids) && t.ids[tid] != 0 {
			return t.ids[tid] - 1, true
		}
		return 0, false
	}
	c, ok := t.other[tid]
	return c, ok
}

func (t *threadNames) set(tid int32, c timeline.CommID) {
	if uint32(tid) >= pidMaxLimit {
		if t.other == nil {
			t.other = map[int32]timeline.CommID{}
		}
		t.other[tid] = c
		return
	}
	if int(tid) >= len(t.ids) {
		t.ids = append(t.ids, make([]timeline.CommID, int(tid)+1-len(t.ids))...)
	}
	t.ids[tid] = c + 1
}

func (t *threadNames) del(tid int32) {
	if uint32(tid) >= pidMaxLimit {
		delete(t.other, tid)
	} else if int(tid) < len(t.ids) {
		t.ids[tid] = 0
	}
}
