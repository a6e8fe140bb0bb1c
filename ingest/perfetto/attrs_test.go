package perfetto

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// attrsCase is a set of task attribute records covering the encoding's
// corners: an empty mask (every CPU), CPU 8191 (the last word), a mask
// with inner zero words, a negative autogroup nice, an unknown cgroup,
// two records at one time, a pid's records out of time order.
func attrsCase() ([]timeline.AffinityChange, []timeline.GroupChange) {
	aff := []timeline.AffinityChange{
		{At: 100, TID: 5, CPUs: topology.CPURange(0, 3)},
		{At: 150, TID: 6, CPUs: nil},
		{At: 150, TID: 5, CPUs: topology.NewCPUSet(1)},
		{At: 90, TID: 7, CPUs: topology.NewCPUSet(0, 8191)},
		{At: 300, TID: 5, CPUs: topology.NewCPUSet(130, 2000)},
	}
	groups := []timeline.GroupChange{
		{At: 100, TID: 5, Path: "/", Autogroup: 11},
		{At: 120, TID: 5, Path: "/system.slice/a b.service", Weight: 250, Autogroup: 11, AutogroupNice: -7},
		{At: 130, TID: 6},
		{At: 140, TID: 7, Path: "/user.slice", Weight: 10000, Autogroup: 1 << 40, AutogroupNice: 19},
	}
	return aff, groups
}

// writeAttrsTrace writes a small trace: events on two CPUs, then aff and
// groups.
func writeAttrsTrace(t *testing.T, aff []timeline.AffinityChange, groups []timeline.GroupChange) []byte {
	t.Helper()
	strs := timeline.NewStrings()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Strings: strs, Kernel: "6.12.0", NCPU: 8192})
	if err != nil {
		t.Fatal(err)
	}
	for i, ts := range []timeline.Time{50, 100, 200, 400} {
		ev := timeline.Event{Time: ts, Start: timeline.NoTime, CPU: timeline.CPU(i % 2), Kind: timeline.KindSwitch,
			Task: 5, Other: 0, Comm: strs.IDString("a"), OComm: strs.IDString("swapper"), Prio: 120, OPrio: 120, TGID: -1}
		if err := w.Add(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Task(5, 5, "a"); err != nil {
		t.Fatal(err)
	}
	for _, a := range aff {
		if err := w.AddAffinity(a); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range groups {
		if err := w.AddGroup(g); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTaskAttrsRoundTrip writes affinity and task-group changes and reads
// them back: the reader's Meta has them in file order, equal field by
// field; the loaded Timeline has them in time order (stable); the events
// read are the same as from the trace written without them.
func TestTaskAttrsRoundTrip(t *testing.T) {
	aff, groups := attrsCase()
	data := writeAttrsTrace(t, aff, groups)
	evs, r, err := decodeAll(data, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := r.Meta()
	if !reflect.DeepEqual(m.Affinity, aff) {
		t.Errorf("Affinity read back:\n%v\nwant\n%v", m.Affinity, aff)
	}
	if !reflect.DeepEqual(m.Groups, groups) {
		t.Errorf("Groups read back:\n%+v\nwant\n%+v", m.Groups, groups)
	}
	plain, _, err := decodeAll(writeAttrsTrace(t, nil, nil), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(briefs(evs), briefs(plain)) {
		t.Errorf("events with task attributes %+v, without %+v", briefs(evs), briefs(plain))
	}
}

// TestTaskAttrsBatches: more records than one packet holds are split over
// packets, stamped with their earliest time, on the metadata sequence,
// and read back in order; a record's trailing zero mask words are not
// written (a set has one form).
func TestTaskAttrsBatches(t *testing.T) {
	var aff []timeline.AffinityChange
	var groups []timeline.GroupChange
	for i := range 3*attrsBatch + 7 {
		aff = append(aff, timeline.AffinityChange{At: timeline.Time(1000 - i%500), TID: timeline.TID(i), CPUs: topology.NewCPUSet(i % 70)})
		groups = append(groups, timeline.GroupChange{At: timeline.Time(2000 + i), TID: timeline.TID(i), Path: fmt.Sprintf("/g%d", i%3), Weight: 100})
	}
	data := writeAttrsTrace(t, aff, groups)
	_, r, err := decodeAll(data, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Meta().Affinity, aff) || !reflect.DeepEqual(r.Meta().Groups, groups) {
		t.Fatalf("%d affinity and %d group records read back, want %d and %d, equal", len(r.Meta().Affinity), len(r.Meta().Groups), len(aff), len(groups))
	}
	// Look at the packets themselves.
	var n, records int
	for _, p := range splitPackets(t, data) {
		attrs, seq, ts, ok := attrsPacket(p)
		if !ok {
			continue
		}
		n++
		if seq != seqWriterMeta {
			t.Errorf("task attributes on sequence %d, want %d", seq, seqWriterMeta)
		}
		first := uint64(1 << 63)
		k := 0
		for len(attrs) > 0 {
			num, typ, n := protowire.ConsumeTag(attrs)
			body, m := protowire.ConsumeBytes(attrs[n:])
			if n < 0 || m < 0 || typ != protowire.BytesType {
				t.Fatal("malformed TaskAttrs")
			}
			attrs = attrs[n+m:]
			var ts uint64
			if num == fAttrsAffinity {
				a, fe := decodeAffinity(body)
				if fe != nil {
					t.Fatal(fe.msg)
				}
				ts = a.ts
			} else {
				g, fe := decodeGroup(body)
				if fe != nil {
					t.Fatal(fe.msg)
				}
				ts = g.ts
			}
			first = min(first, ts)
			k++
		}
		if k > attrsBatch {
			t.Errorf("packet of %d records, want at most %d", k, attrsBatch)
		}
		if ts != first {
			t.Errorf("packet timestamp %d, want its earliest record's %d", ts, first)
		}
		records += k
	}
	if want := (2*len(aff) + attrsBatch - 1) / attrsBatch; n != want || records != 2*len(aff) {
		t.Errorf("%d packets of %d records, want %d of %d", n, records, want, 2*len(aff))
	}
}

// splitPackets returns the TracePacket bodies of a trace.
func splitPackets(t *testing.T, data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 || num != fTracePacket || typ != protowire.BytesType {
			t.Fatalf("not a Trace.packet at %d", n)
		}
		body, m := protowire.ConsumeBytes(data[n:])
		if m < 0 {
			t.Fatal("truncated packet")
		}
		out = append(out, body)
		data = data[n+m:]
	}
	return out
}

// attrsPacket returns the TaskAttrs field, sequence and timestamp of a
// packet, ok if it has the field.
func attrsPacket(p []byte) (attrs []byte, seq, ts uint64, ok bool) {
	for len(p) > 0 {
		num, typ, n := protowire.ConsumeTag(p)
		switch {
		case typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(p[n:])
			if num == fPacketSequenceID {
				seq = v
			} else if num == fPacketTimestamp {
				ts = v
			}
			p = p[n+m:]
		case typ == protowire.BytesType:
			b, m := protowire.ConsumeBytes(p[n:])
			if num == fPacketTaskAttrs {
				attrs, ok = b, true
			}
			p = p[n+m:]
		default:
			return nil, 0, 0, false
		}
	}
	return attrs, seq, ts, ok
}

// TestTaskAttrsCanonicalMask: a mask's trailing zero words are not
// written, so one set has one encoding, and it reads back without them.
func TestTaskAttrsCanonicalMask(t *testing.T) {
	long := writeAttrsTrace(t, []timeline.AffinityChange{{At: 1, TID: 2, CPUs: topology.CPUSet{2, 0, 0}}}, nil)
	short := writeAttrsTrace(t, []timeline.AffinityChange{{At: 1, TID: 2, CPUs: topology.CPUSet{2}}}, nil)
	if !bytes.Equal(long, short) {
		t.Errorf("trailing zero words change the encoding")
	}
	_, r, err := decodeAll(cat(long, packet(bf(fPacketTaskAttrs, bf(fAttrsAffinity, vf(fAffTimestamp, 3), vf(fAffTid, 2), packed(fAffCPUMask, 0, 4, 0, 0))))), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Meta().Affinity
	if len(got) != 2 || !reflect.DeepEqual(got[0].CPUs, topology.CPUSet{2}) || !reflect.DeepEqual(got[1].CPUs, topology.CPUSet{0, 4}) {
		t.Errorf("read back %v, want CPU 1 then CPU 66, no trailing zero words", got)
	}
}

// TestTaskAttrsClock: records are on the clock of the ftrace events, so
// they get the same offset when the bundles name another ftrace clock
// (here global, with a boot-time pair 1000 ahead), even when the packet
// comes before the first bundle.
func TestTaskAttrsClock(t *testing.T) {
	attrs := packet(bf(fPacketTaskAttrs, bf(fAttrsAffinity, vf(fAffTimestamp, 500), vf(fAffTid, 3), packed(fAffCPUMask, 2)),
		bf(fAttrsGroup, vf(fGroupTimestamp, 600), vf(fGroupTid, 3), sf(fGroupPath, "/x"))))
	b := packet(bundle(0, vf(fBundleFtraceClock, ftraceClockGlobal), vf(fBundleFtraceTimestamp, 400), vf(fBundleBootTimestamp, 1400),
		switchEv(700, "a", 1, 0, "b", 3)))
	evs, r, err := decodeAll(cat(attrs, b), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Time != 1700 {
		t.Fatalf("events %+v, want one switch at 1700", briefs(evs))
	}
	m := r.Meta()
	if len(m.Affinity) != 1 || m.Affinity[0].At != 1500 || m.Affinity[0].CPUs.String() != "1" {
		t.Errorf("Affinity %v, want CPU 1 from 1500", m.Affinity)
	}
	if len(m.Groups) != 1 || m.Groups[0].At != 1600 || m.Groups[0].Path != "/x" {
		t.Errorf("Groups %+v, want /x from 1600", m.Groups)
	}
}

// TestTaskAttrsMalformed: a broken record is a positioned error naming the
// field; lenient reading skips its packet and keeps the events.
func TestTaskAttrsMalformed(t *testing.T) {
	ev := packet(bundle(0, switchEv(700, "a", 1, 0, "b", 3)))
	aff := func(fields ...[]byte) []byte {
		return packet(vf(fPacketSequenceID, 2), bf(fPacketTaskAttrs, bf(fAttrsAffinity, fields...)))
	}
	grp := func(fields ...[]byte) []byte {
		return packet(vf(fPacketSequenceID, 2), bf(fPacketTaskAttrs, bf(fAttrsGroup, fields...)))
	}
	tooWide := make([]uint64, maxMaskWords+1)
	tooWide[maxMaskWords] = 1
	tests := []struct {
		name, data []byte
		record     string
		msg        string
	}{
		{[]byte("no tid"), aff(vf(fAffTimestamp, 5)), "TracePacket.schedlens_task_attrs.affinity", "want timestamp and tid"},
		{[]byte("mask too wide"), aff(vf(fAffTimestamp, 5), vf(fAffTid, 1), packed(fAffCPUMask, tooWide...)), "TracePacket.schedlens_task_attrs.affinity", "cpu_mask of 129 words"},
		{[]byte("mask fixed64"), aff(vf(fAffTimestamp, 5), vf(fAffTid, 1), protowire.AppendFixed64(protowire.AppendTag(nil, fAffCPUMask, protowire.Fixed64Type), 1)), "TracePacket.schedlens_task_attrs.affinity.cpu_mask", "want wire type bytes, got fixed64"},
		{[]byte("timestamp too big"), aff(vf(fAffTimestamp, 1<<63), vf(fAffTid, 1)), "TracePacket.schedlens_task_attrs.affinity", "timestamp"},
		{[]byte("path varint"), grp(vf(fGroupTimestamp, 5), vf(fGroupTid, 1), vf(fGroupPath, 3)), "TracePacket.schedlens_task_attrs.group.cgroup_path", "want wire type bytes, got varint"},
		{[]byte("weight bytes"), grp(vf(fGroupTimestamp, 5), vf(fGroupTid, 1), sf(fGroupWeight, "x")), "TracePacket.schedlens_task_attrs.group.cpu_weight", "want wire type varint, got bytes"},
		{[]byte("attrs varint"), packet(vf(fPacketTaskAttrs, 1)), "TracePacket.schedlens_task_attrs", "field 9870: want wire type bytes"},
		{[]byte("truncated record"), packet(bf(fPacketTaskAttrs, []byte{byte(fAttrsAffinity<<3 | 2), 9, 1})), "TracePacket.schedlens_task_attrs", "unexpected EOF"},
	}
	for _, tc := range tests {
		t.Run(string(tc.name), func(t *testing.T) {
			data := cat(ev, tc.data, ev)
			_, _, err := decodeAll(data, parse.Options{Name: "x.pftrace"})
			var pe *parse.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v, want a ParseError", err)
			}
			if pe.Offset != int64(len(ev)) || pe.Record != tc.record || !strings.Contains(pe.Error(), tc.msg) {
				t.Errorf("error %q at offset %d in %q; want offset %d, record %q, mentioning %q", pe, pe.Offset, pe.Record, len(ev), tc.record, tc.msg)
			}
			evs, r, err := decodeAll(data, parse.Options{Lenient: true})
			if err != nil || len(evs) != 2 || r.Meta().Skipped != 1 || len(r.Meta().Affinity)+len(r.Meta().Groups) != 0 {
				t.Errorf("lenient: %d events, %d skipped, %v; want 2, 1, no records", len(evs), r.Meta().Skipped, err)
			}
		})
	}
}

// TestTaskAttrsWriterErrors: records the format cannot hold are refused.
func TestTaskAttrsWriterErrors(t *testing.T) {
	w, err := NewWriter(&bytes.Buffer{}, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		w.AddAffinity(timeline.AffinityChange{At: -1, TID: 1}),
		w.AddAffinity(timeline.AffinityChange{At: 1, TID: 1, CPUs: topology.NewCPUSet(MaxCPU + 1)}),
		w.AddGroup(timeline.GroupChange{At: -5, TID: 1}),
		w.AddGroup(timeline.GroupChange{At: 1, TID: 1, Weight: -1}),
		w.AddGroup(timeline.GroupChange{At: 1, TID: 1, AutogroupNice: 1 << 40}),
	} {
		if err == nil {
			t.Errorf("no error")
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.AddAffinity(timeline.AffinityChange{At: 1, TID: 1}); err == nil {
		t.Errorf("AddAffinity after Close: no error")
	}
}

// TestRecordedBeforeAttrs reads testdata/record-v0.pftrace.zst, a
// `schedlens record` capture written before task attributes existed (see
// testdata/README.md): its events are what that recorder reported writing
// (930) and what that version's reader decoded, kind by kind, and it has
// no task attributes.
func TestRecordedBeforeAttrs(t *testing.T) {
	evs, r, err := decodeAll(readFixture(t, "testdata/record-v0.pftrace.zst"), parse.Options{Name: "record-v0.pftrace"})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[timeline.Kind]int{}
	for _, e := range evs {
		kinds[e.Kind]++
	}
	want := map[timeline.Kind]int{
		timeline.KindSwitch: 421, timeline.KindWaking: 230, timeline.KindWakeup: 230, timeline.KindWakeupNew: 8,
		timeline.KindMigrate: 20, timeline.KindFork: 8, timeline.KindRename: 5, timeline.KindExit: 5, timeline.KindFree: 3,
	}
	if len(evs) != 930 || !reflect.DeepEqual(kinds, want) {
		t.Errorf("%d events %v, want 930 %v", len(evs), kinds, want)
	}
	m := r.Meta()
	if m.Kernel != "6.18.44-fc-v1098" || m.NCPU != 2 || len(m.Tasks) != 106 || len(m.Warnings) != 0 {
		t.Errorf("kernel %q, %d CPUs, %d tasks, warnings %q; want 6.18.44-fc-v1098, 2, 106, none", m.Kernel, m.NCPU, len(m.Tasks), m.Warnings)
	}
	if m.Affinity != nil || m.Groups != nil {
		t.Errorf("task attributes %v %v in a trace that has none", m.Affinity, m.Groups)
	}
}
