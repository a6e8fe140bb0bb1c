package record

import (
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

// raw is a struct sched_event in Go form, for building test records.
type raw struct {
	ts                    uint64
	lost                  uint32
	cpu                   uint16
	kind, flags           uint8
	pid, tgid, opid, otgd int32
	ctgid, arg, arg2      int32
	state, xstate         uint32
	prio, oprio           int16
	comm, ocomm           string
}

func (r raw) bytes() []byte {
	b := make([]byte, recordSize)
	ne.PutUint64(b[0:], r.ts)
	ne.PutUint32(b[8:], r.lost)
	ne.PutUint16(b[12:], r.cpu)
	b[14], b[15] = r.kind, r.flags
	for i, v := range []int32{r.pid, r.tgid, r.opid, r.otgd, r.ctgid, r.arg, r.arg2} {
		ne.PutUint32(b[16+4*i:], uint32(v))
	}
	ne.PutUint32(b[44:], r.state)
	ne.PutUint32(b[48:], r.xstate)
	ne.PutUint16(b[52:], uint16(r.prio))
	ne.PutUint16(b[54:], uint16(r.oprio))
	copy(b[56:72], r.comm)
	copy(b[72:88], r.ocomm)
	return b
}

// rawAttrs is a struct attrs_event in Go form.
type rawAttrs struct {
	ts      uint64
	lost    uint32
	cpu     uint16
	pid     int32
	cgroup  uint64
	ag      int64
	agNice  int32
	nr      uint16
	words   int // mask words claimed; len(mask) when 0
	mask    []uint64
	trimmed int // bytes cut off the end
}

func (r rawAttrs) bytes() []byte {
	words := r.words
	if words == 0 {
		words = len(r.mask)
	}
	b := make([]byte, attrsHeader+8*len(r.mask))
	ne.PutUint64(b[0:], r.ts)
	ne.PutUint32(b[8:], r.lost)
	ne.PutUint16(b[12:], r.cpu)
	b[14] = evAttrs
	ne.PutUint32(b[16:], uint32(r.pid))
	ne.PutUint32(b[20:], uint32(r.pid))
	ne.PutUint64(b[24:], r.cgroup)
	ne.PutUint64(b[32:], uint64(r.ag))
	ne.PutUint32(b[40:], uint32(r.agNice))
	ne.PutUint16(b[44:], r.nr)
	ne.PutUint16(b[46:], uint16(words))
	for i, w := range r.mask {
		ne.PutUint64(b[attrsHeader+8*i:], w)
	}
	return b[:len(b)-r.trimmed]
}

// TestDecodeAttrs decodes attrs_event records: the mask words (CPU 64w+b
// is bit b of word w, as the kernel's cpumask), trailing zero words
// dropped; and rejects a record whose mask population is not the kernel's
// nr_cpus_allowed, or whose length does not hold its words.
func TestDecodeAttrs(t *testing.T) {
	tests := []struct {
		name    string
		in      rawAttrs
		cpus    string
		wantErr bool
	}{
		{"two CPUs", rawAttrs{ts: 9, lost: 2, cpu: 1, pid: 77, cgroup: 4242, ag: 11, agNice: -3, nr: 2, mask: []uint64{3}}, "0-1", false},
		{"CPU 1023 of 16 words", rawAttrs{ts: 9, pid: 77, nr: 2, mask: append(make([]uint64, 15), 1<<63|1)}, "960,1023", false},
		{"trailing zero words", rawAttrs{ts: 9, pid: 77, nr: 1, mask: []uint64{0, 4, 0, 0}}, "66", false},
		{"CPU 8191", rawAttrs{ts: 9, pid: 77, nr: 1, mask: append(make([]uint64, 127), 1<<63)}, "8191", false},
		{"count disagrees", rawAttrs{ts: 9, pid: 77, nr: 3, mask: []uint64{3}}, "", true},
		{"no words", rawAttrs{ts: 9, pid: 77, nr: 0}, "", true},
		// Found by FuzzDecodeRecord (testdata/fuzz/FuzzDecodeRecord/7728704b3be47e84):
		// an all-zero mask counted 0 was read as the empty set, "every CPU".
		{"no allowed CPU", rawAttrs{ts: 9, pid: 77, nr: 0, mask: []uint64{0, 0}}, "", true},
		{"short", rawAttrs{ts: 9, pid: 77, nr: 2, mask: []uint64{3, 0}, trimmed: 8}, "", true},
		{"too many words", rawAttrs{ts: 9, pid: 77, nr: 1, mask: append(make([]uint64, 128), 1)}, "", true},
		{"header only", rawAttrs{ts: 9, pid: 77, nr: 2, mask: []uint64{3}, trimmed: 16}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d decoded
			err := decodeRecord(tc.in.bytes(), newCommCache(timeline.NewStrings()), &d)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("decoded %+v, want an error", d.attrs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a := d.attrs
			if a == nil {
				t.Fatal("no attrs")
			}
			if got := a.cpus.String(); got != tc.cpus || (len(a.cpus) > 0 && a.cpus[len(a.cpus)-1] == 0) {
				t.Errorf("cpus = %q (%d words), want %q without trailing zero words", got, len(a.cpus), tc.cpus)
			}
			if d.ev.Time != timeline.Time(tc.in.ts) || d.ev.CPU != timeline.CPU(tc.in.cpu) || d.ev.Task != timeline.TID(tc.in.pid) || d.lost != tc.in.lost {
				t.Errorf("time %d cpu %d task %d lost %d, want %d %d %d %d", d.ev.Time, d.ev.CPU, d.ev.Task, d.lost, tc.in.ts, tc.in.cpu, tc.in.pid, tc.in.lost)
			}
			if a.cgroup != tc.in.cgroup || a.autogroup != tc.in.ag || a.autogroupNice != tc.in.agNice {
				t.Errorf("cgroup %d autogroup %d nice %d, want %d %d %d", a.cgroup, a.autogroup, a.autogroupNice, tc.in.cgroup, tc.in.ag, tc.in.agNice)
			}
		})
	}
}

func TestDecodeRecord(t *testing.T) {
	tests := []struct {
		name        string
		in          raw
		want        timeline.Event // comms compared by name below
		comm, ocomm string
		tgid, otgid int32
	}{
		{
			name: "switch preempted",
			in: raw{ts: 575448244000, cpu: 1, kind: evSwitch, flags: flagPreempt | 1, pid: 42, tgid: 40, opid: 7, otgd: 7, ctgid: 7,
				arg: -1, arg2: -1, state: 0x1, prio: 120, oprio: 100, comm: "next", ocomm: "prev"},
			want: timeline.Event{Time: 575448244000, Start: timeline.NoTime, CPU: 1, Kind: timeline.KindSwitch, Ctx: timeline.CtxTask,
				State: timeline.StatePreempted, Task: 42, Other: 7, Prio: 120, OPrio: 100, TGID: 7},
			comm: "next", ocomm: "prev", tgid: 40, otgid: 7,
		},
		{
			name: "switch to idle in D",
			in: raw{ts: 10, cpu: 0, kind: evSwitch, flags: 1, pid: 0, tgid: 0, opid: 9, otgd: 9, ctgid: 9, state: 0x2, prio: 120, oprio: 120,
				comm: "swapper/0", ocomm: "dd"},
			want: timeline.Event{Time: 10, Start: timeline.NoTime, CPU: 0, Kind: timeline.KindSwitch, Ctx: timeline.CtxTask,
				State: timeline.StateUninterr, Task: 0, Other: 9, Prio: 120, OPrio: 120, TGID: 9},
			comm: "swapper/0", ocomm: "dd", tgid: 0, otgid: 9,
		},
		{
			name: "waking from hardirq",
			in: raw{ts: 11, cpu: 1, kind: evWaking, flags: 3, pid: 5, tgid: 5, opid: 0, otgd: 0, ctgid: 0, arg: 1, arg2: -1, prio: 120, oprio: 120,
				comm: "sleeper", ocomm: "swapper/1"},
			want: timeline.Event{Time: 11, Start: timeline.NoTime, CPU: 1, Kind: timeline.KindWaking, Ctx: timeline.CtxHardirq,
				Task: 5, Other: 0, Prio: 120, OPrio: 120, TGID: 0, Arg: 1},
			comm: "sleeper", ocomm: "swapper/1", tgid: 5, otgid: 0,
		},
		{
			name: "wakeup softirq",
			in:   raw{ts: 12, kind: evWakeup, flags: 2, pid: 5, tgid: 5, opid: 3, otgd: 3, ctgid: 3, arg: 0, prio: 120, oprio: 98, comm: "a", ocomm: "ksoftirqd/0"},
			want: timeline.Event{Time: 12, Start: timeline.NoTime, Kind: timeline.KindWakeup, Ctx: timeline.CtxSoftirq, Task: 5, Other: 3, Prio: 120, OPrio: 98, TGID: 3},
			comm: "a", ocomm: "ksoftirqd/0", tgid: 5, otgid: 3,
		},
		{
			name: "wakeup_new",
			in:   raw{ts: 13, kind: evWakeupNew, flags: 1, pid: 6, tgid: 6, opid: 5, otgd: 5, ctgid: 5, arg: 1, prio: 120, oprio: 120, comm: "child", ocomm: "parent"},
			want: timeline.Event{Time: 13, Start: timeline.NoTime, Kind: timeline.KindWakeupNew, Ctx: timeline.CtxTask, Task: 6, Other: 5, Prio: 120, OPrio: 120, TGID: 5, Arg: 1},
			comm: "child", ocomm: "parent", tgid: 6, otgid: 5,
		},
		{
			name: "migrate",
			in:   raw{ts: 14, cpu: 1, kind: evMigrate, flags: 1, pid: 6, tgid: 6, opid: -1, otgd: -1, ctgid: 0, arg: 0, arg2: 1, prio: 120, oprio: -1, comm: "m"},
			want: timeline.Event{Time: 14, Start: timeline.NoTime, CPU: 1, Kind: timeline.KindMigrate, Ctx: timeline.CtxTask, Task: 6, Other: timeline.NoTID, Prio: 120, OPrio: -1, TGID: 0, Arg: 0, Arg2: 1},
			comm: "m", tgid: 6, otgid: -1,
		},
		{
			name: "fork",
			in:   raw{ts: 15, kind: evFork, flags: 1, pid: 8, tgid: 8, opid: 5, otgd: 5, ctgid: 5, prio: 120, oprio: 120, comm: "sh", ocomm: "sh"},
			want: timeline.Event{Time: 15, Start: timeline.NoTime, Kind: timeline.KindFork, Ctx: timeline.CtxTask, Task: 8, Other: 5, Prio: -1, OPrio: -1, TGID: 5},
			comm: "sh", ocomm: "sh", tgid: 8, otgid: 5,
		},
		{
			name: "exit",
			in:   raw{ts: 16, kind: evExit, flags: 1, pid: 8, tgid: 8, opid: -1, otgd: -1, ctgid: 8, prio: 120, oprio: -1, comm: "sh"},
			want: timeline.Event{Time: 16, Start: timeline.NoTime, Kind: timeline.KindExit, Ctx: timeline.CtxTask, Task: 8, Other: timeline.NoTID, Prio: 120, OPrio: -1, TGID: 8},
			comm: "sh", tgid: 8, otgid: -1,
		},
		{
			name: "free from softirq",
			in:   raw{ts: 17, kind: evFree, flags: 2, pid: 8, tgid: 8, opid: -1, otgd: -1, ctgid: 0, prio: 120, oprio: -1, comm: "sh"},
			want: timeline.Event{Time: 17, Start: timeline.NoTime, Kind: timeline.KindFree, Ctx: timeline.CtxSoftirq, Task: 8, Other: timeline.NoTID, Prio: 120, OPrio: -1, TGID: 0},
			comm: "sh", tgid: 8, otgid: -1,
		},
		{
			name: "rename, context unknown",
			in:   raw{ts: 18, kind: evRename, flags: 0, pid: 8, tgid: 8, opid: -1, otgd: -1, ctgid: 8, prio: 120, oprio: -1, comm: "0123456789abcdef", ocomm: "sh"},
			want: timeline.Event{Time: 18, Start: timeline.NoTime, Kind: timeline.KindRename, Ctx: timeline.CtxUnknown, Task: 8, Other: timeline.NoTID, Prio: -1, OPrio: -1, TGID: 8},
			comm: "0123456789abcdef", ocomm: "sh", tgid: 8, otgid: -1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			strs := timeline.NewStrings()
			var d decoded
			if err := decodeRecord(tc.in.bytes(), newCommCache(strs), &d); err != nil {
				t.Fatalf("decodeRecord: %v", err)
			}
			got := d.ev
			if c := strs.Get(got.Comm); c != tc.comm {
				t.Errorf("Comm = %q, want %q", c, tc.comm)
			}
			if c := strs.Get(got.OComm); c != tc.ocomm {
				t.Errorf("OComm = %q, want %q", c, tc.ocomm)
			}
			got.Comm, got.OComm = 0, 0
			if got != tc.want {
				t.Errorf("event = %+v\nwant    %+v", got, tc.want)
			}
			if d.tgid != tc.tgid || d.otgid != tc.otgid {
				t.Errorf("tgid, otgid = %d, %d, want %d, %d", d.tgid, d.otgid, tc.tgid, tc.otgid)
			}
			if d.lost != tc.in.lost {
				t.Errorf("lost = %d, want %d", d.lost, tc.in.lost)
			}
		})
	}
}

func TestDecodeRecordErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"short", raw{kind: evSwitch}.bytes()[:recordSize-1]},
		{"kind 0", raw{kind: 0}.bytes()},
		{"kind 10", raw{kind: 10}.bytes()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d decoded
			if err := decodeRecord(tc.in, newCommCache(timeline.NewStrings()), &d); err == nil {
				t.Errorf("decodeRecord = nil error, want one")
			}
		})
	}
}

func TestDecodeRecordNoAlloc(t *testing.T) {
	cc := newCommCache(timeline.NewStrings())
	b := raw{kind: evSwitch, pid: 1, opid: 2, comm: "hackbench", ocomm: "swapper/0"}.bytes()
	b2 := raw{kind: evSwitch, pid: 4097, opid: 2, comm: "other", ocomm: "swapper/0"}.bytes() // same cache slot as pid 1
	var d decoded
	if err := decodeRecord(b, cc, &d); err != nil {
		t.Fatal(err)
	}
	if err := decodeRecord(b2, cc, &d); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = decodeRecord(b, cc, &d); _ = decodeRecord(b2, cc, &d) }); n != 0 {
		t.Errorf("allocations per record = %v, want 0", n)
	}
}

// FuzzDecodeRecord checks that any bytes decode to an error or to an event
// whose fields are in their ranges.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(raw{ts: 1, kind: evSwitch, flags: flagPreempt | 1, pid: 2, opid: 3, state: 1, comm: "a", ocomm: "b"}.bytes())
	f.Add(raw{ts: 2, kind: evWaking, flags: 3, pid: 2, arg: 1, comm: "x"}.bytes())
	f.Add(raw{ts: 3, kind: evRename, comm: "0123456789abcdefXX", ocomm: "old"}.bytes())
	f.Add(raw{ts: 4, kind: evSwitch, state: 0xffffffff, xstate: 0xffffffff}.bytes())
	f.Add(rawAttrs{ts: 5, pid: 2, cgroup: 1, ag: 3, nr: 2, mask: []uint64{3}}.bytes())
	f.Add(rawAttrs{ts: 6, pid: 2, nr: 1, mask: []uint64{0, 0, 1 << 63}}.bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		strs := timeline.NewStrings()
		var d decoded
		err := decodeRecord(b, newCommCache(strs), &d)
		if err != nil {
			if len(b) >= recordSize && b[14] >= evSwitch && b[14] <= evRename {
				t.Fatalf("valid kind %d rejected: %v", b[14], err)
			}
			return
		}
		if d.attrs != nil {
			m := d.attrs.cpus
			if len(m) == 0 || m[len(m)-1] == 0 || len(m) > maxMaskWords || m.Count() != int(ne.Uint16(b[44:])) {
				t.Fatalf("mask %v from a record counting %d CPUs", m, ne.Uint16(b[44:]))
			}
			return
		}
		ev := d.ev
		if ev.Kind == timeline.KindUnknown || ev.Kind == timeline.KindLost {
			t.Fatalf("Kind = %v", ev.Kind)
		}
		if ev.Ctx > timeline.CtxNMI {
			t.Fatalf("Ctx = %v", ev.Ctx)
		}
		if ev.CPU < 0 || ev.CPU > 0xffff {
			t.Fatalf("CPU = %d", ev.CPU)
		}
		if ev.Kind == timeline.KindSwitch {
			if s := ev.State.String(); s == "" {
				t.Fatalf("empty state")
			} else if back, ok := timeline.ParseState([]byte(s)); !ok || back != ev.State {
				t.Fatalf("State %v does not round-trip (%v %v)", ev.State, back, ok)
			}
		} else if ev.State != 0 {
			t.Fatalf("State %v on %v", ev.State, ev.Kind)
		}
		if len(strs.Get(ev.Comm)) > 16 || len(strs.Get(ev.OComm)) > 16 {
			t.Fatalf("comm longer than TASK_COMM_LEN")
		}
	})
}

func BenchmarkDecodeRecord(b *testing.B) {
	cc := newCommCache(timeline.NewStrings())
	recs := [][]byte{
		raw{ts: 1, kind: evWaking, flags: 1, pid: 2, opid: 3, arg: 1, prio: 120, oprio: 120, comm: "hackbench", ocomm: "hackbench"}.bytes(),
		raw{ts: 2, kind: evWakeup, flags: 1, pid: 2, opid: 3, arg: 1, prio: 120, oprio: 120, comm: "hackbench", ocomm: "hackbench"}.bytes(),
		raw{ts: 3, kind: evSwitch, flags: 1, pid: 2, opid: 3, state: 1, prio: 120, oprio: 120, comm: "hackbench", ocomm: "hackbench"}.bytes(),
	}
	b.SetBytes(recordSize)
	b.ReportAllocs()
	var d decoded
	n := 0
	for b.Loop() {
		if err := decodeRecord(recs[n%len(recs)], cc, &d); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

func TestCommCache(t *testing.T) {
	strs := timeline.NewStrings()
	cc := newCommCache(strs)
	tests := []struct {
		pid  int32
		comm string
	}{
		{1, "init"}, {1, "init"}, {4097, "clash"}, {1, "init"}, {1, "renamed"}, {-1, "x"}, {0, "swapper/0"}, {0, "swapper/1"},
		{7, "0123456789abcdef0"}, // longer than TASK_COMM_LEN: bypasses the cache
	}
	for i, tc := range tests {
		id := cc.id(tc.pid, []byte(tc.comm))
		if got := strs.Get(id); got != tc.comm {
			t.Errorf("step %d: id(%d, %q) resolves to %q", i, tc.pid, tc.comm, got)
		}
	}
}
