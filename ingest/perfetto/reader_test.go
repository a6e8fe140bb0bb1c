package perfetto

import (
	"errors"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// brief is the part of an event these tests compare.
type brief struct {
	Kind  timeline.Kind
	CPU   timeline.CPU
	Time  timeline.Time
	Start timeline.Time
	Task  timeline.TID
	Other timeline.TID
	Arg   int64
}

func briefs(evs []timeline.Event) []brief {
	var out []brief
	for _, e := range evs {
		out = append(out, brief{e.Kind, e.CPU, e.Time, e.Start, e.Task, e.Other, e.Arg})
	}
	return out
}

func compareBriefs(t *testing.T, got, want []brief) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d\n got %+v\nwant %+v", len(got), len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

const nt = timeline.NoTime

func TestLostAndBufferStart(t *testing.T) {
	trace := cat(
		// CPU 0's first bundle says earlier bundles existed: data is
		// complete from 500 on.
		packet(bundle(0, vf(fBundlePrevBundleEndTS, 500),
			switchEv(1000, "a", 10, 1, "b", 11), switchEv(1100, "b", 11, 0, "a", 10))),
		// A gap before CPU 0's next bundle.
		packet(bundle(0, vf(fBundleLostEvents, 1), vf(fBundlePrevBundleEndTS, 1500),
			switchEv(2000, "a", 10, 0, "b", 11))),
		packet(bundle(1, switchEv(1200, "c", 20, 0, "d", 21))),
		// A gap with no later event on CPU 1; an ftrace error on CPU 0.
		packet(bundle(1, vf(fBundleLostEvents, 1))),
		packet(bundle(0, bf(fBundleError, vf(1, 3000)), switchEv(3000, "b", 11, 0, "a", 10))),
	)
	evs, _ := mustDecode(t, trace, parse.Options{})
	compareBriefs(t, briefs(evs), []brief{
		{timeline.KindBufferStart, 0, 1000, 500, -1, -1, 0},
		{timeline.KindSwitch, 0, 1000, nt, 11, 10, 0},
		{timeline.KindSwitch, 0, 1100, nt, 10, 11, 0},
		{timeline.KindLost, 0, 2000, 1500, -1, -1, -1},
		{timeline.KindSwitch, 0, 2000, nt, 11, 10, 0},
		{timeline.KindSwitch, 1, 1200, nt, 21, 20, 0},
		{timeline.KindLost, 0, 3000, 2000, -1, -1, -1},
		{timeline.KindSwitch, 0, 3000, nt, 10, 11, 0},
		{timeline.KindLost, 1, 1200, 1200, -1, -1, -1},
	})
}

func TestFtraceStatsOverrun(t *testing.T) {
	stats := func(phase uint64, overrun uint64) []byte {
		return packet(bf(fPacketFtraceStats, vf(fStatsPhase, phase),
			bf(fStatsCPUStats, vf(fCPUStatsCPU, 0), vf(fCPUStatsOverrun, overrun)),
			bf(fStatsCPUStats, vf(fCPUStatsCPU, 1), vf(fCPUStatsOverrun, 7))))
	}
	trace := cat(
		stats(statsPhaseStart, 10),
		packet(bundle(0, switchEv(100, "a", 1, 0, "b", 2))),
		packet(bundle(1, switchEv(150, "c", 3, 0, "d", 4))),
		stats(statsPhaseEnd, 25),
	)
	evs, r := mustDecode(t, trace, parse.Options{})
	compareBriefs(t, briefs(evs), []brief{
		{timeline.KindSwitch, 0, 100, nt, 2, 1, 0},
		{timeline.KindSwitch, 1, 150, nt, 4, 3, 0},
		{timeline.KindLost, 0, 100, 100, -1, -1, 15},
	})
	if r.Meta().NCPU != 2 {
		t.Errorf("NCPU = %d, want 2", r.Meta().NCPU)
	}
}

func TestClocks(t *testing.T) {
	sw := switchEv(1000, "a", 1, 0, "b", 2)
	tests := []struct {
		name      string
		trace     []byte
		wantTime  timeline.Time
		wantClock string
		warn      bool
	}{
		{"boot", packet(bundle(0, sw)), 1000, "boot", false},
		{"local with pair", packet(bundle(0, sw, vf(fBundleFtraceClock, ftraceClockLocal),
			vf(fBundleFtraceTimestamp, 5000), vf(fBundleBootTimestamp, 9000))), 5000, "boot", false},
		{"global without pair", packet(bundle(0, sw, vf(fBundleFtraceClock, ftraceClockGlobal))), 1000, "global", true},
		{"primary monotonic", cat(
			packet(bf(fPacketClockSnapshot,
				bf(fSnapClocks, vf(fClockID, clockBoottime), vf(fClockTimestamp, 700)),
				bf(fSnapClocks, vf(fClockID, clockMonotonic), vf(fClockTimestamp, 500)),
				vf(fSnapPrimaryClock, clockMonotonic))),
			packet(bundle(0, sw))), 800, "mono", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, r := mustDecode(t, tc.trace, parse.Options{})
			if len(evs) != 1 || evs[0].Time != tc.wantTime {
				t.Fatalf("events %+v, want one at %d", evs, tc.wantTime)
			}
			m := r.Meta()
			if m.Clock != tc.wantClock || (len(m.Warnings) > 0) != tc.warn {
				t.Errorf("Clock %q warnings %v, want %q (warning: %v)", m.Clock, m.Warnings, tc.wantClock, tc.warn)
			}
		})
	}
}

func TestCompressedPackets(t *testing.T) {
	inner := cat(
		packet(vf(fPacketSequenceID, 3), bundle(0, switchEv(100, "a", 1, 0, "b", 2))),
		packet(vf(fPacketSequenceID, 3), bundle(1, wakingEv(120, 5, "b", 2, 1))),
	)
	for _, tc := range []struct {
		name  string
		field []byte
	}{
		{"zlib", bf(fPacketCompressed, deflateZlib(inner))},
		{"raw deflate", bf(fPacketCompressed, deflateRaw(inner))},
		{"zstd", bf(fPacketZstdCompressed, compressZstd(inner))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trace := cat(packet(tc.field), packet(bundle(0, switchEv(200, "b", 2, 1, "a", 1))))
			evs, _ := mustDecode(t, trace, parse.Options{})
			compareBriefs(t, briefs(evs), []brief{
				{timeline.KindSwitch, 0, 100, nt, 2, 1, 0},
				{timeline.KindWaking, 1, 120, nt, 2, 5, 1},
				{timeline.KindSwitch, 0, 200, nt, 1, 2, 0},
			})
		})
	}
	t.Run("nested twice", func(t *testing.T) {
		twice := packet(bf(fPacketCompressed, deflateZlib(packet(bf(fPacketCompressed, deflateZlib(inner))))))
		_, _, err := decodeAll(twice, parse.Options{})
		var pe *parse.ParseError
		if !errors.As(err, &pe) || !strings.Contains(pe.Record, "compressed_packets") {
			t.Fatalf("err = %v, want a ParseError in compressed_packets", err)
		}
	})
}

func TestPrevStateLayouts(t *testing.T) {
	tests := []struct {
		release string
		raw     int64
		want    string // State.String, or "error"
	}{
		{"6.18.44", 0, "R"}, {"6.18.44", 0x100, "R+"}, {"6.18.44", 0x1, "S"}, {"6.18.44", 0x2, "D"},
		{"6.18.44", 0x80, "I"}, {"6.18.44", 0x40, "P"}, {"6.18.44", 0x20, "Z"}, {"6.18.44", 0x10, "X"},
		{"", 0x100, "R+"}, {"6.18.44", 0x200, "error"}, {"6.18.44", -1, "error"},
		{"4.9.0", 0x1000, "R+"}, {"4.9.0", 0x40, "x"}, {"4.9.0", 0x80 | 0x2, "D|K"}, {"4.9.0", 0x402, "D|N"},
		{"4.4.0", 0x800, "R+"}, {"4.4.0", 0x1000, "error"}, {"3.18.1", 0x200, "P"},
	}
	for _, tc := range tests {
		l := layoutFor(tc.release)
		st, err := l.decode(tc.raw)
		got := st.String()
		if err != nil {
			got = "error"
		}
		if got != tc.want {
			t.Errorf("release %q raw %#x: %s, want %s", tc.release, tc.raw, got, tc.want)
		}
		if err == nil {
			back, err := l.encode(st)
			if err != nil || back != tc.raw {
				t.Errorf("release %q: encode(%v) = %#x, %v, want %#x", tc.release, st, back, err, tc.raw)
			}
		}
	}
	// The release in SystemInfo switches the layout for later switches.
	trace := cat(
		packet(bf(fPacketSystemInfo, bf(fSysUtsname, sf(fUtsRelease, "4.9.0")), vf(fSysNumCPUs, 4))),
		packet(bundle(0, switchEv(10, "a", 1, 0x1000, "b", 2))),
	)
	evs, r := mustDecode(t, trace, parse.Options{})
	if evs[0].State != timeline.StatePreempted || r.Meta().Kernel != "4.9.0" || r.Meta().NCPU != 4 {
		t.Errorf("state %v kernel %q ncpu %d, want R+ 4.9.0 4", evs[0].State, r.Meta().Kernel, r.Meta().NCPU)
	}
}

// TestCompactSched checks the compact decoding: delta timestamps, intern
// table, merge order with plain events, the prev side from the CPU's
// running task across bundles, waking flags.
func TestCompactSched(t *testing.T) {
	cs := func(fields ...[]byte) []byte { return bf(fBundleCompactSched, fields...) }
	trace := cat(
		packet(bundle(2, cs(
			sf(fCompactInternTable, "one"), sf(fCompactInternTable, "two"),
			packed(fCompactSwitchTimestamp, 100, 50, 50), // 100, 150, 200
			packed(fCompactSwitchPrevState, 0, 1, 0x100),
			packed(fCompactSwitchNextPid, 7, 8, 7),
			packed(fCompactSwitchNextPrio, 120, 100, 120),
			packed(fCompactSwitchNextComm, 0, 1, 0),
			packed(fCompactWakingTimestamp, 150, 50), // 150, 200
			packed(fCompactWakingPid, 9, 8),
			packed(fCompactWakingTargetCPU, 2, 3),
			packed(fCompactWakingPrio, 120, 100),
			packed(fCompactWakingComm, 1, 1),
			packed(fCompactWakingCommonFlag, traceFlagHardirq), // shorter than the other columns
		), fevent(150, 7, fEvSchedWakeup, sf(fWakeComm, "two"), vf(fWakePid, 8), vf(fWakeTargetCPU, 2)))),
		packet(bundle(2, cs(sf(fCompactInternTable, "two"),
			packed(fCompactSwitchTimestamp, 300), packed(fCompactSwitchPrevState, 2),
			packed(fCompactSwitchNextPid, 8), packed(fCompactSwitchNextPrio, 100), packed(fCompactSwitchNextComm, 0)))),
	)
	strs := timeline.NewStrings()
	evs, _ := mustDecode(t, trace, parse.Options{Strings: strs})
	type row struct {
		Kind        timeline.Kind
		Time        timeline.Time
		Task, Other timeline.TID
		Comm, OComm string
		Prio, OPrio int16
		State       string
		Ctx         timeline.Context
		Arg         int64
	}
	var got []row
	for _, e := range evs {
		got = append(got, row{e.Kind, e.Time, e.Task, e.Other, strs.Get(e.Comm), strs.Get(e.OComm), e.Prio, e.OPrio, e.State.String(), e.Ctx, e.Arg})
	}
	u := timeline.CtxUnknown
	want := []row{
		{timeline.KindSwitch, 100, 7, -1, "one", "", 120, -1, "R", u, 0},
		{timeline.KindWaking, 150, 9, -1, "two", "", 120, -1, "R", timeline.CtxHardirq, 2},
		{timeline.KindWakeup, 150, 8, 7, "two", "one", -1, -1, "R", u, 2},
		{timeline.KindSwitch, 150, 8, 7, "two", "one", 100, 120, "S", u, 0},
		{timeline.KindWaking, 200, 8, -1, "two", "", 100, -1, "R", u, 3},
		{timeline.KindSwitch, 200, 7, 8, "one", "two", 120, 100, "R+", u, 0},
		{timeline.KindSwitch, 300, 8, 7, "two", "one", 100, 120, "D", u, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestSequences(t *testing.T) {
	trace := cat(
		packet(vf(fPacketSequenceID, 5), vf(fPacketSequenceFlags, seqIncrementalStateCleared), bundle(0, switchEv(10, "a", 1, 0, "b", 2))),
		packet(vf(fPacketSequenceID, 6), bundle(1, switchEv(12, "c", 3, 0, "d", 4))),
		// A packet of sequence 5 was lost: CPU 0 (carried by 5) has a gap.
		packet(vf(fPacketSequenceID, 5), vf(fPacketPreviousDropped, 1), vf(fPacketSequenceFlags, seqNeedsIncrementalState),
			bundle(0, switchEv(20, "b", 2, 0, "a", 1))),
		packet(vf(fPacketSequenceID, 6), bundle(1, switchEv(22, "d", 4, 0, "c", 3))),
		// Sequence 7 needs state it never got.
		packet(vf(fPacketSequenceID, 7), vf(fPacketSequenceFlags, seqNeedsIncrementalState), bf(fPacketInternedData, sf(1, "x"))),
	)
	evs, r := mustDecode(t, trace, parse.Options{})
	compareBriefs(t, briefs(evs), []brief{
		{timeline.KindSwitch, 0, 10, nt, 2, 1, 0},
		{timeline.KindSwitch, 1, 12, nt, 4, 3, 0},
		{timeline.KindLost, 0, 20, 10, -1, -1, -1},
		{timeline.KindSwitch, 0, 20, nt, 1, 2, 0},
		{timeline.KindSwitch, 1, 22, nt, 3, 4, 0},
	})
	if w := r.Meta().Warnings; len(w) != 1 || !strings.Contains(w[0], "2 packets need incremental state") {
		t.Errorf("warnings %q, want one about 2 packets (seq 5 after its drop, seq 7) without incremental state", w)
	}
}

func TestPlainEvents(t *testing.T) {
	trace := packet(bundle(1,
		fevent(10, 5, fEvMigrateTask, sf(fMigrateComm, "m"), vf(fMigratePid, 6), vf(fMigratePrio, 110), vf(fMigrateOrigCPU, 0), vf(fMigrateDestCPU, 1)),
		fevent(11, 5, fEvProcessFork, sf(fForkParentComm, "p"), vf(fForkParentPid, 5), sf(fForkChildComm, "p"), vf(fForkChildPid, 12)),
		fevent(12, 5, fEvTaskNewtask, vf(fNewtaskPid, 13), sf(fNewtaskComm, "p"), vf(fNewtaskCloneFlags, 0x10000)),
		fevent(13, 12, fEvTaskRename, vf(fRenamePid, 12), sf(fRenameOldComm, "p"), sf(fRenameNewComm, "q")),
		fevent(14, 12, fEvProcessExec, sf(fExecFilename, "/usr/bin/a-very-long-program-name"), vf(fExecPid, 12), vf(fExecOldPid, 12)),
		fevent(15, 12, fEvProcessExit, sf(fExitComm, "q"), vf(fExitPid, 12), vf(fExitTgid, 12), vf(fExitPrio, 120)),
		fevent(16, 0, fEvProcessFree, sf(fFreeComm, "q"), vf(fFreePid, 12), vf(fFreePrio, 120)),
		fevent(17, 0, fEvCPUIdle, vf(fIdleState, 4294967295), vf(fIdleCPUID, 1)),
		fevent(18, 0, fEvCPUIdle, vf(fIdleState, 2), vf(fIdleCPUID, 1)),
		fevent(19, 44, fEvPrint, vf(fPrintIP, 1), sf(fPrintBuf, "oracle_start\n")),
		fevent(20, 0, 11, vf(1, 1000), vf(2, 1)), // cpu_frequency: counted only
		fevent(21, 0, 999, vf(1, 1)),             // an event this reader has no name for
	))
	strs := timeline.NewStrings()
	evs, r := mustDecode(t, trace, parse.Options{Strings: strs})
	got := make([]string, 0, len(evs))
	for _, e := range evs {
		got = append(got, strings.Join([]string{e.Kind.String(), strs.Get(e.Comm), strs.Get(e.OComm)}, "/"))
	}
	want := []string{"sched_migrate_task/m/", "sched_process_fork/p/p", "task_newtask/p/", "task_rename/q/p",
		"sched_process_exec/a-very-long-pro/", "sched_process_exit/q/", "sched_process_free/q/", "cpu_idle//", "cpu_idle//", "marker//"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	check := func(i int, field string, got, want int64) {
		t.Helper()
		if got != want {
			t.Errorf("%v %s = %d, want %d", evs[i].Kind, field, got, want)
		}
	}
	check(0, "Arg (dest)", evs[0].Arg, 1)
	check(0, "Arg2 (orig)", evs[0].Arg2, 0)
	check(0, "Prio", int64(evs[0].Prio), 110)
	check(1, "Other (parent)", int64(evs[1].Other), 5)
	check(1, "Task (child)", int64(evs[1].Task), 12)
	check(2, "Other (creator)", int64(evs[2].Other), 5)
	check(4, "Arg2 (old pid)", evs[4].Arg2, 12)
	check(5, "TGID", int64(evs[5].TGID), 12)
	check(7, "Arg (exit idle)", evs[7].Arg, -1)
	check(7, "Arg2 (cpu)", evs[7].Arg2, 1)
	check(8, "Arg (state)", evs[8].Arg, 2)
	check(9, "Task", int64(evs[9].Task), 44)
	if s := strs.Get(timeline.CommID(evs[9].Arg)); s != "oracle_start" {
		t.Errorf("marker text %q, want oracle_start", s)
	}
	if u := r.Meta().Unknown; u["cpu_frequency"] != 1 || u["ftrace_event_999"] != 1 {
		t.Errorf("Unknown = %v, want cpu_frequency 1, ftrace_event_999 1", u)
	}
}

func TestBackwards(t *testing.T) {
	trace := cat(
		packet(bundle(0, switchEv(100, "a", 1, 0, "b", 2), switchEv(200, "b", 2, 0, "a", 1))),
		packet(bundle(0, switchEv(300, "a", 1, 0, "b", 2), switchEv(150, "b", 2, 0, "a", 1), switchEv(400, "b", 2, 0, "a", 1))),
	)
	evs, _, err := decodeAll(trace, parse.Options{Name: "t.pftrace"})
	var pe *parse.ParseError
	if !errors.As(err, &pe) || !errors.Is(err, parse.ErrBackwards) {
		t.Fatalf("err = %v, want a ParseError wrapping ErrBackwards", err)
	}
	if pe.Offset == 0 || pe.Record != "TracePacket.ftrace_events.event.sched_switch" || pe.File != "t.pftrace" {
		t.Errorf("error at offset %d record %q file %q, want the second packet, TracePacket.ftrace_events.event.sched_switch, t.pftrace", pe.Offset, pe.Record, pe.File)
	}
	if len(evs) != 3 {
		t.Errorf("%d events before the error, want 3", len(evs))
	}
	evs, r, err := decodeAll(trace, parse.Options{Lenient: true})
	if err != nil || len(evs) != 4 || r.Meta().Skipped != 1 {
		t.Errorf("lenient: %d events, err %v, skipped %d; want 4, nil, 1", len(evs), err, r.Meta().Skipped)
	}
}

func TestSniff(t *testing.T) {
	head := func(b []byte) []byte { return b[:min(len(b), 64<<10)] }
	for _, p := range []string{twinDir + "trace.pftrace.zst", twinDir + "trace-compact.pftrace.zst",
		"../../fixtures/real/perfetto-tracebox-oracle-busy/trace.pftrace.zst",
		confDir + "/SmokeSchedEvents__synth_1_smoke/trace.pb"} {
		if !Sniff(head(readFixture(t, p))) {
			t.Errorf("Sniff(%s) = false, want true", p)
		}
	}
	for _, p := range []string{twinText, "../../fixtures/real/ftrace-pipe-lost/trace.txt.gz",
		"../../fixtures/real/perf-hackbench-cyclictest/perf-script.txt.gz", confDir + "/index.json"} {
		if Sniff(head(readFixture(t, p))) {
			t.Errorf("Sniff(%s) = true, want false", p)
		}
	}
	for _, b := range [][]byte{nil, {0x0a}, {0x0a, 0x00}, []byte("\n# tracer: nop\n"), {0x0a, 0x02, 0x08}} {
		if Sniff(b) {
			t.Errorf("Sniff(%q) = true, want false", b)
		}
	}
}

// TestLostOnSilentCPU: a lost record on a CPU that never has an event is
// emitted at the end with the trace's last time.
func TestLostOnSilentCPU(t *testing.T) {
	trace := cat(
		packet(bundle(0, switchEv(100, "a", 1, 0, "b", 2), switchEv(300, "b", 2, 0, "a", 1))),
		packet(bundle(3, vf(fBundleLostEvents, 1))),
	)
	evs, r := mustDecode(t, trace, parse.Options{})
	compareBriefs(t, briefs(evs), []brief{
		{timeline.KindSwitch, 0, 100, nt, 2, 1, 0},
		{timeline.KindSwitch, 0, 300, nt, 1, 2, 0},
		{timeline.KindLost, 3, 300, 300, -1, -1, -1},
	})
	if r.Meta().NCPU != 4 {
		t.Errorf("NCPU = %d, want 4 (highest CPU + 1)", r.Meta().NCPU)
	}
}
