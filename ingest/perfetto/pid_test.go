package perfetto

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/schedlens/schedlens/ingest/parse"
)

// TestPidOutOfRange: issue 16 item 8. A pid that is no int32 from 0 up
// (2^40, 2^64-5) is a positioned error, as in the ftrace reader, in every
// field that carries one. Before, 2^64-5 became -5 (the task vanished) and
// 2^40 became 0 (the idle task). -1, the writer's "absent", still reads.
func TestPidOutOfRange(t *testing.T) {
	bad := []uint64{1 << 40, 1<<64 - 5, 1 << 31}
	for _, v := range bad {
		for _, c := range []struct {
			name string
			ev   []byte
		}{
			{"next_pid", switchEv(5e12, "a", 1, 0x100, "b", int64(v))},
			{"prev_pid", switchEv(5e12, "a", int64(v), 0x100, "b", 2)},
			{"waking pid", wakingEv(5e12, 1, "b", int64(v), 0)},
		} {
			data := cat(packet(bundle(0, switchEv(4e12, "a", 1, 0, "b", 2))), packet(bundle(0, c.ev)))
			_, _, err := decodeAll(data, parse.Options{Name: "t.pftrace"})
			var pe *parse.ParseError
			if !errors.As(err, &pe) || pe.Offset <= 0 || !strings.Contains(err.Error(), "want 0 to 2147483647") {
				t.Errorf("%s %d: got %v, want a positioned error", c.name, v, err)
			}
			evs, r, err := decodeAll(data, parse.Options{Name: "t.pftrace", Lenient: true})
			if err != nil || r.Meta().Skipped == 0 {
				t.Errorf("%s %d with lenient: %v, skipped %d", c.name, v, err, r.Meta().Skipped)
			}
			for _, e := range evs {
				if e.Task == -5 || e.Other == -5 || e.Time == 5e12 && (e.Task == 0 || e.Other == 0) {
					t.Errorf("%s %d: read as %+v", c.name, v, e)
				}
			}
		}
	}
	// -1 (absent prev) still reads.
	data := packet(bundle(0, switchEv(5e12, "a", -1, 0, "b", 2)))
	if _, _, err := decodeAll(data, parse.Options{}); err != nil {
		t.Errorf("prev_pid -1: %v", err)
	}
}

// TestSniffCorruptPacket: issue 16 item 8. A trace whose first packets
// are well formed is recognised even when a later packet in the sniffed
// head is corrupt, so the reader reports the bad packet at its offset.
// Before, the sniffer said "not Perfetto" and the user got "want ftrace
// text, ... got \"\"" with no offset.
func TestSniffCorruptPacket(t *testing.T) {
	data := smallTrace(t)
	starts := packetStarts(data)
	if len(starts) < 4 || starts[3] > 64<<10 {
		t.Fatalf("want 4 packets in the first 64 KiB, got starts %v", starts[:min(4, len(starts))])
	}
	for _, k := range []int{1, 3} {
		d := append([]byte(nil), data...)
		// The first field of packet k's body: tag with wire type 7 (none).
		_, n := protowire.ConsumeVarint(d[starts[k]+1:])
		d[starts[k]+1+n] = 0x07
		if !Sniff(d[:min(len(d), 64<<10)]) {
			t.Errorf("packet %d corrupt: Sniff says not Perfetto", k)
		}
		_, _, err := decodeAll(d, parse.Options{Name: "t.pftrace"})
		var pe *parse.ParseError
		if !errors.As(err, &pe) || pe.Offset < int64(starts[k]) || pe.Offset > int64(starts[k+1]) {
			t.Errorf("packet %d at %#x corrupt: got %v, want an error at its offset", k, starts[k], err)
		}
	}
	// The first packet corrupt: nothing proves Perfetto, and a text file
	// starting with a blank line must not be taken for it.
	if Sniff([]byte("\n# tracer: nop\n#\n")) {
		t.Error("text starting with a blank line sniffed as Perfetto")
	}
}
