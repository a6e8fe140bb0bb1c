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
// (include/linux/threads.h): threadNames keeps the tids below it in a
// table.
const pidMaxLimit = 4 << 20

// namePage is the unit of threadNames' table, in tids.
const namePage = 4096

// threadNames is perf's name for each thread, from COMM and FORK records
// (a thread's entry in perf's machine__findnew_thread): a table indexed by
// tid, in pages of namePage tids made when a tid in them is first named
// (tids are dense, but may run into the millions where pid_max is
// raised), and a map for tids outside 0..pidMaxLimit.
type threadNames struct {
	pages []*[namePage]timeline.CommID // id+1 by tid, 0 for none
	other map[int32]timeline.CommID
}

func (t *threadNames) get(tid int32) (timeline.CommID, bool) {
	if uint32(tid) >= pidMaxLimit {
		c, ok := t.other[tid]
		return c, ok
	}
	if p := int(tid / namePage); p < len(t.pages) && t.pages[p] != nil {
		if c := t.pages[p][tid%namePage]; c != 0 {
			return c - 1, true
		}
	}
	return 0, false
}

func (t *threadNames) set(tid int32, c timeline.CommID) {
	if uint32(tid) >= pidMaxLimit {
		if t.other == nil {
			t.other = map[int32]timeline.CommID{}
		}
		t.other[tid] = c
		return
	}
	p := int(tid / namePage)
	if p >= len(t.pages) {
		t.pages = append(t.pages, make([]*[namePage]timeline.CommID, p+1-len(t.pages))...)
	}
	if t.pages[p] == nil {
		t.pages[p] = new([namePage]timeline.CommID)
	}
	t.pages[p][tid%namePage] = c + 1
}

func (t *threadNames) del(tid int32) {
	if uint32(tid) >= pidMaxLimit {
		delete(t.other, tid)
	} else if p := int(tid / namePage); p < len(t.pages) && t.pages[p] != nil {
		t.pages[p][tid%namePage] = 0
	}
}
