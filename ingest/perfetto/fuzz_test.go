package perfetto

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/internal/readertest"
	"github.com/schedlens/schedlens/timeline"
)

// headPackets returns the whole packets of data within its first n bytes.
func headPackets(data []byte, n int) []byte {
	end := 0
	for _, s := range packetStarts(data) {
		if s > n {
			break
		}
		end = s
	}
	return data[:end]
}

// fuzzRun decodes data and checks the reader's invariants; it returns the
// events handed out.
func fuzzRun(t *testing.T, data []byte, lenient bool) []timeline.Event {
	r, err := NewReader(bytes.NewReader(data), parse.Options{Name: "f", Lenient: lenient})
	if err != nil {
		t.Fatal(err)
	}
	var evs []timeline.Event
	var ev timeline.Event
	for {
		err := r.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if lenient {
				t.Fatalf("lenient Next returned %v", err)
			}
			var pe *parse.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is a %T, want *parse.ParseError", err, err)
			}
			if pe.Offset < 0 || pe.Offset > int64(len(data)) || !strings.HasPrefix(pe.Record, "Trace") {
				t.Fatalf("error %q: offset %d of %d bytes, record %q", err, pe.Offset, len(data), pe.Record)
			}
			if err := r.Next(&ev); !errors.Is(err, io.EOF) {
				t.Fatalf("Next after an error = %v, want io.EOF", err)
			}
			break
		}
		evs = append(evs, ev)
	}
	// Invariants of what was handed out.
	last := map[timeline.CPU]timeline.Time{}
	for i, e := range evs {
		if e.CPU < 0 || e.CPU > MaxCPU {
			t.Fatalf("event %d: CPU %d", i, e.CPU)
		}
		if !e.Kind.Known() {
			t.Fatalf("event %d: kind %v", i, e.Kind)
		}
		if l, ok := last[e.CPU]; ok && e.Time < l {
			t.Fatalf("event %d on CPU %d at %d, before the CPU's previous event at %d", i, e.CPU, e.Time, l)
		}
		last[e.CPU] = e.Time
		if e.Kind == timeline.KindLost || e.Kind == timeline.KindBufferStart {
			// Emitted just before the CPU's next event, with its time, or
			// at the end with Time = Start.
			next := -1
			for j := i + 1; j < len(evs); j++ {
				if evs[j].CPU == e.CPU && evs[j].Kind != timeline.KindLost && evs[j].Kind != timeline.KindBufferStart {
					next = j
					break
				}
			}
			if next >= 0 && evs[next].Time != e.Time {
				t.Fatalf("event %d: %v at %d, the CPU's next event is at %d", i, e.Kind, e.Time, evs[next].Time)
			}
		}
		if e.Kind != timeline.KindLost && e.Kind != timeline.KindBufferStart && e.Start != timeline.NoTime {
			t.Fatalf("event %d: %v with Start %d", i, e.Kind, e.Start)
		}
	}
	m := r.Meta()
	if m.NCPU < 0 || m.Format != "perfetto" {
		t.Fatalf("Meta NCPU %d Format %q", m.NCPU, m.Format)
	}
	for _, a := range m.Affinity {
		if c := a.CPUs; len(c) > maxMaskWords || len(c) > 0 && c[len(c)-1] == 0 {
			t.Fatalf("affinity mask %v: more than %d words, or trailing zero words", c, maxMaskWords)
		}
	}
	return evs
}

// FuzzPerfetto fuzzes the packet decoder. Beyond not panicking: reading in
// parallel reads the same (readertest.Check); errors are positioned
// ParseErrors inside the input and end the stream; a CPU's times
// never go backwards; lost and buffer-start records carry their next
// event's time; lenient mode never fails and hands out at least the events
// strict mode does, in the same order.
func FuzzPerfetto(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(confDir, "*", "trace.pb"))
	for _, p := range paths {
		f.Add(readFixture(f, p))
	}
	for _, p := range []string{twinDir + "trace.pftrace.zst", twinDir + "trace-compact.pftrace.zst",
		"../../fixtures/real/perfetto-tracebox-hackbench-compact/trace.pftrace.zst",
		"../../fixtures/real/perfetto-tracebox-hackbench-plain/trace.pftrace.zst",
		"../../fixtures/real/perfetto-tracebox-oracle-busy/trace.pftrace.zst"} {
		f.Add(headPackets(readFixture(f, p), 8<<10))
	}
	inner := packet(bundle(1, wakingEv(120, 5, "b", 2, 1)))
	f.Add(cat(packet(bundle(0, vf(fBundlePrevBundleEndTS, 50), switchEv(100, "a", 1, 0, "b", 2))),
		packet(bf(fPacketCompressed, deflateZlib(inner))),
		packet(bundle(0, vf(fBundleLostEvents, 1), bf(fBundleCompactSched, sf(fCompactInternTable, "x"),
			packed(fCompactSwitchTimestamp, 200, 5), packed(fCompactSwitchPrevState, 1, 0x100), packed(fCompactSwitchNextPid, 3, 4),
			packed(fCompactSwitchNextPrio, 120, 120), packed(fCompactSwitchNextComm, 0, 0),
			packed(fCompactWakingTimestamp, 201), packed(fCompactWakingPid, 9), packed(fCompactWakingTargetCPU, 0),
			packed(fCompactWakingPrio, 120), packed(fCompactWakingComm, 0))))))
	f.Add(packet(protowire.AppendTag(nil, 5, protowire.StartGroupType)))
	f.Add(cat(packet(bf(fPacketMachine, sf(fMachineClock, "mono"), sf(fMachineSysctl, "kernel.sched_autogroup_enabled=0"), sf(fMachineSysctl, "x"))),
		packet(bundle(0, switchEv(100, "a", 1, 0, "b", 2)))))
	f.Add(cat(packet(bf(fPacketTaskAttrs, bf(fAttrsAffinity, vf(fAffTimestamp, 90), vf(fAffTid, 2), packed(fAffCPUMask, 3, 0, 1)),
		bf(fAttrsGroup, vf(fGroupTimestamp, 95), vf(fGroupTid, 2), sf(fGroupPath, "/a"), vf(fGroupWeight, 100), vf(fGroupAutogroup, 4),
			vf(fGroupAutogroupNice, uint64(1<<64-3))))), packet(bundle(0, switchEv(100, "a", 1, 0, "b", 2)))))
	f.Fuzz(func(t *testing.T, data []byte) {
		readertest.Check(t, "fuzz", []readertest.Config{{Workers: 2, Lines: 1}, {Workers: 3, Lines: 2}}, reads(t, data))
		strict := fuzzRun(t, data, false)
		lenient := fuzzRun(t, data, true)
		if len(lenient) < len(strict) {
			t.Fatalf("lenient: %d events, strict %d", len(lenient), len(strict))
		}
		for i := range strict {
			if strict[i] != lenient[i] {
				t.Fatalf("event %d: strict %+v, lenient %+v", i, strict[i], lenient[i])
			}
		}
	})
}
