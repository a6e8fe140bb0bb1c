package perfetto

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// smallTrace is a real trace cut to its first packets: system info, process
// tree, plain and compact bundles (the compact tracebox recording), plus a
// hand-made plain bundle, so mutations hit every decoder.
func smallTrace(tb testing.TB) []byte {
	data := readFixture(tb, "../../fixtures/real/perfetto-tracebox-oracle-busy/trace.pftrace.zst")
	// Keep whole packets up to ~48 KiB.
	b, n := data, 0
	for len(b) > 0 && n < 48<<10 {
		_, _, tn := protowire.ConsumeTag(b)
		_, m := protowire.ConsumeBytes(b[tn:])
		n += tn + m
		b = b[tn+m:]
	}
	return cat(data[:n], packet(bundle(0,
		switchEv(5e12, "a", 1, 0x100, "b", 2),
		wakingEv(5e12+10, 2, "a", 1, 0),
		fevent(5e12+20, 2, fEvTaskRename, vf(fRenamePid, 2), sf(fRenameOldComm, "b"), sf(fRenameNewComm, "c")),
	)))
}

// mutation is one deterministic corruption of a trace.
type mutation struct {
	name string
	data []byte
	// truncated says the mutation must produce an error (it cuts a packet).
	truncated bool
}

// packetStarts returns the offsets of the top-level packets.
func packetStarts(data []byte) []int {
	var out []int
	for off := 0; off < len(data); {
		out = append(out, off)
		_, _, tn := protowire.ConsumeTag(data[off:])
		_, m := protowire.ConsumeBytes(data[off+tn:])
		if tn < 0 || m < 0 {
			break
		}
		off += tn + m
	}
	return out
}

// mutations returns 50 corruptions of data: truncations at many offsets
// (inside tags, lengths and payloads), flipped bytes, lengths past the
// end, wrong wire types and a deep, bad nesting.
func mutations(data []byte) []mutation {
	var ms []mutation
	starts := packetStarts(data)
	// 15 truncations: inside a packet's tag, its length, its payload.
	for i := 0; len(ms) < 15; i++ {
		k := (i*7 + 1) % len(starts)
		p, end := starts[k], len(data)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		cut := p + 1 + (i*i*131)%(end-p-1) // strictly inside the packet

		ms = append(ms, mutation{fmt.Sprintf("truncate at %d", cut), append([]byte(nil), data[:cut]...), true})
	}
	// 15 flipped bytes at spread offsets.
	for i := 0; i < 15; i++ {
		off := (len(data) / 16) * (i + 1)
		d := append([]byte(nil), data...)
		d[off] ^= 0xff
		ms = append(ms, mutation{fmt.Sprintf("flip byte %d", off), d, false})
	}
	// 10 lengths past the end: a packet's length set to huge values.
	for i := 0; i < 10; i++ {
		p := starts[(i*5+2)%len(starts)]
		d := append([]byte(nil), data[:p+1]...)
		d = protowire.AppendVarint(d, uint64(1)<<(20+uint(i)*4)) // up to 2^56
		d = append(d, data[p+1:]...)
		ms = append(ms, mutation{fmt.Sprintf("length 2^%d at packet %d", 20+i*4, p), d, true})
	}
	// 8 wrong wire types: a known field's tag given another wire type.
	wrong := [][]byte{
		packet(vf(fPacketFtraceEvents, 1)),
		packet(bf(fPacketTimestamp, []byte{1})),
		packet(bundle(0, vf(fBundleEvent, 3))),
		packet(bundle(0, bf(fBundleEvent, vf(fEventTimestamp, 1), vf(fEvSchedSwitch, 3)))),
		packet(bundle(0, bf(fBundleEvent, vf(fEventTimestamp, 1), bf(fEvSchedSwitch, sf(fSwitchPrevPid, "x"))))),
		packet(bundle(0, bf(fBundleCompactSched, vf(fCompactInternTable, 1)))),
		packet(bundle(0, bf(fBundleCompactSched, protowire.AppendTag(nil, fCompactSwitchTimestamp, protowire.Fixed32Type), []byte{1, 2, 3, 4}))),
		packet(protowire.AppendTag(nil, fPacketProcessTree, protowire.EndGroupType)),
	}
	for i, w := range wrong {
		ms = append(ms, mutation{fmt.Sprintf("wrong wire type %d", i), cat(data, w), true})
	}
	// Deep nesting of unknown groups inside a packet, and a compact bundle
	// whose columns disagree.
	deep := []byte{}
	for i := 0; i < 20000; i++ {
		deep = protowire.AppendTag(deep, 1000, protowire.StartGroupType)
	}
	ms = append(ms, mutation{"deep groups", cat(data, packet(deep)), true})
	ms = append(ms, mutation{"unequal columns", cat(data, packet(bundle(0, bf(fBundleCompactSched,
		packed(fCompactSwitchTimestamp, 1, 2), packed(fCompactSwitchNextPid, 3))))), true})
	return ms
}

// checkPositioned decodes data and checks that the only possible error is
// a *parse.ParseError inside the input, with a record path, and that no
// event follows an error.
func checkPositioned(t *testing.T, data []byte, lenient bool) (int, error) {
	t.Helper()
	r, _ := NewReader(strings.NewReader(string(data)), parse.Options{Name: "m.pftrace", Lenient: lenient})
	var ev timeline.Event
	n := 0
	for {
		err := r.Next(&ev)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			var pe *parse.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *parse.ParseError", err, err)
			}
			if pe.Offset < 0 || pe.Offset > int64(len(data)) || !strings.HasPrefix(pe.Record, "Trace") || pe.File != "m.pftrace" || pe.Line != 0 {
				t.Errorf("error %q: offset %d (input %d bytes), record %q, file %q, line %d", err, pe.Offset, len(data), pe.Record, pe.File, pe.Line)
			}
			if !errors.Is(err, parse.ErrTruncated) && !errors.Is(err, parse.ErrBadField) && !errors.Is(err, parse.ErrBackwards) {
				t.Errorf("error %q wraps no parse sentinel", err)
			}
			if err := r.Next(&ev); !errors.Is(err, io.EOF) {
				t.Errorf("Next after an error = %v, want io.EOF", err)
			}
			return n, err
		}
		if lenient == false && ev.CPU < 0 {
			t.Errorf("event with CPU %d", ev.CPU)
		}
		n++
	}
}

// TestMalformed feeds 50 deterministic corruptions of a real trace: each
// gives a positioned error or decodes cleanly, never panics; the ones that
// cut a packet or break a known field must give an error. Lenient mode
// never returns an error.
func TestMalformed(t *testing.T) {
	data := smallTrace(t)
	clean, err := checkPositioned(t, data, false)
	if err != nil || clean == 0 {
		t.Fatalf("the uncorrupted trace: %d events, %v", clean, err)
	}
	ms := mutations(data)
	if len(ms) != 50 {
		t.Fatalf("%d mutations, want 50", len(ms))
	}
	errs := 0
	for _, m := range ms {
		t.Run(m.name, func(t *testing.T) {
			_, err := checkPositioned(t, m.data, false)
			if err != nil {
				errs++
			}
			if m.truncated && err == nil {
				t.Errorf("no error, want one")
			}
			if _, err := checkPositioned(t, m.data, true); err != nil {
				t.Errorf("lenient: %v", err)
			}
		})
	}
	t.Logf("%d of %d mutations gave a positioned error", errs, len(ms))
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		name, trace, want string
	}{
		{"truncated packet", string(cat([]byte{0x0a, 0x10}, []byte("abc"))), "m.pftrace: offset 0x0: TracePacket: bytes field 1 truncated: want 16, have 3"},
		{"bad switch prev_state", string(packet(bundle(0, switchEv(10, "a", 1, 0x4000, "b", 2)))),
			"m.pftrace: offset 0x0: TracePacket.ftrace_events.event.sched_switch.prev_state: prev_state: want a bitmask of known task states (kernel layout >=4.14), got 0x4000"},
		{"wrong wire type", string(packet(bundle(0, vf(fBundleEvent, 3)))),
			"m.pftrace: offset 0x0: TracePacket.ftrace_events.event: field 2: want wire type bytes, got varint"},
		{"comm index", string(packet(bundle(3, bf(fBundleCompactSched, packed(fCompactSwitchTimestamp, 1), packed(fCompactSwitchPrevState, 0),
			packed(fCompactSwitchNextPid, 1), packed(fCompactSwitchNextPrio, 1), packed(fCompactSwitchNextComm, 4))))),
			"m.pftrace: offset 0x0: TracePacket.ftrace_events.compact_sched: switch_next_comm_index[0] = 4, intern_table has 0 entries"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := checkPositioned(t, []byte(tc.trace), false)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}
