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
