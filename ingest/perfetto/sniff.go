package perfetto

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/schedlens/schedlens/ingest/parse"
)

// Sniff reports whether head (the first bytes of the decompressed input, up
// to 64 KiB) looks like a Perfetto trace: a run of Trace.packet fields
// (tag 0x0a, a length) each of whose complete packets parses as a sequence
// of well-formed protobuf fields. At least one complete packet must be
// checked, unless the first one is longer than head.
func Sniff(head []byte) bool {
	b := head
	checked := 0
	for len(b) > 0 {
		if b[0] != 0x0a { // field 1 (packet), wire type 2
			return checked > 0
		}
		ln, n := protowire.ConsumeVarint(b[1:])
		if n < 0 {
			return checked > 0
		}
		if ln == 0 || ln > MaxPacketSize {
			return checked > 0
		}
		body := b[1+n:]
		if uint64(len(body)) < ln {
			// The packet runs past head: check what is there.
			return checked > 0 || (len(head) >= 4<<10 && wellFormedPrefix(body))
		}
		if !wellFormed(body[:ln]) {
			return checked > 0
		}
		checked++
		b = body[ln:]
	}
	return checked > 0
}

// wellFormed reports whether msg is a sequence of complete protobuf fields
// with valid numbers and wire types.
func wellFormed(msg []byte) bool {
	for len(msg) > 0 {
		_, n, fe := next(msg)
		if fe != nil {
			return false
		}
		msg = msg[n:]
	}
	return true
}

// wellFormedPrefix is wellFormed for a message cut at the end of head: the
// last field may be incomplete.
func wellFormedPrefix(msg []byte) bool {
	fields := 0
	for len(msg) > 0 {
		_, n, fe := next(msg)
		if fe != nil {
			return fields > 0 && fe.err == parse.ErrTruncated
		}
		fields++
		msg = msg[n:]
	}
	return fields > 0
}
