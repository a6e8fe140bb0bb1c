package perf

import (
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// base returns the view of an event with the sentinels Reset sets, on the
// given CPU and time, for the table below to fill in.
func base(k timeline.Kind, cpu timeline.CPU, t timeline.Time) view {
	return view{Kind: k, CPU: cpu, Time: t, Start: timeline.NoTime, Task: timeline.NoTID,
		Other: timeline.NoTID, Prio: -1, OPrio: -1, TGID: -1}
}

func with(v view, f func(*view)) view { f(&v); return v }

// TestExampleLines parses single real lines and checks every Event field.
// The lines come from the fixture captures (perf-script.txt.gz default
// fields, perf-script-fields.txt.gz with -F comm,tid,pid,cpu,time,event,trace)
// and from testdata/allevents*.txt.gz.
func TestExampleLines(t *testing.T) {
	tests := []struct {
		name string
		line string
		want view
	}{
		{
			name: "default/sched_waking",
			line: "            perf 13341 [000]   590.907234:       sched:sched_waking: comm=migration/0 pid=18 prio=0 target_cpu=000",
			want: with(base(timeline.KindWaking, 0, 590907234000), func(v *view) {
				v.Task, v.Comm, v.Prio, v.Arg = 18, "migration/0", 0, 0
				v.Other, v.OComm = 13341, "perf"
			}),
		},
		{
			name: "fields/sched_waking",
			line: "            perf 13341/13341 [000]   590.907234:       sched:sched_waking: comm=migration/0 pid=18 prio=0 target_cpu=000",
			want: with(base(timeline.KindWaking, 0, 590907234000), func(v *view) {
				v.Task, v.Comm, v.Prio, v.Arg = 18, "migration/0", 0, 0
				v.Other, v.OComm, v.TGID = 13341, "perf", 13341
			}),
		},
		{
			name: "default/sched_switch",
			line: "            perf 13341 [000]   590.907239:       sched:sched_switch: prev_comm=perf prev_pid=13341 prev_prio=120 prev_state=D ==> next_comm=migration/0 next_pid=18 next_prio=0",
			want: with(base(timeline.KindSwitch, 0, 590907239000), func(v *view) {
				v.Other, v.OComm, v.OPrio, v.State = 13341, "perf", 120, timeline.StateUninterr
				v.Task, v.Comm, v.Prio = 18, "migration/0", 0
			}),
		},
		{
			name: "fields/sched_switch preempted",
			line: "             git 13353/13353 [000]   590.937592:       sched:sched_switch: prev_comm=git prev_pid=13353 prev_prio=120 prev_state=R+ ==> next_comm=protoc next_pid=13346 next_prio=120",
			want: with(base(timeline.KindSwitch, 0, 590937592000), func(v *view) {
				v.Other, v.OComm, v.OPrio, v.State = 13353, "git", 120, timeline.StatePreempted
				v.Task, v.Comm, v.Prio, v.TGID = 13346, "protoc", 120, 13353
			}),
		},
		{
			name: "default/sched_migrate_task",
			line: "     migration/0    18 [000]   590.907245: sched:sched_migrate_task: comm=perf pid=13341 prio=120 orig_cpu=0 dest_cpu=1",
			want: with(base(timeline.KindMigrate, 0, 590907245000), func(v *view) {
				v.Task, v.Comm, v.Prio, v.Arg, v.Arg2 = 13341, "perf", 120, 1, 0
			}),
		},
		{
			name: "fields/sched_migrate_task",
			line: "     migration/0    18/18    [000]   590.907245: sched:sched_migrate_task: comm=perf pid=13341 prio=120 orig_cpu=0 dest_cpu=1",
			want: with(base(timeline.KindMigrate, 0, 590907245000), func(v *view) {
				v.Task, v.Comm, v.Prio, v.Arg, v.Arg2, v.TGID = 13341, "perf", 120, 1, 0, 18
			}),
		},
		{
			name: "default/sched_process_fork",
			line: "            bash 13340 [000]   590.915291: sched:sched_process_fork: comm=bash pid=13340 child_comm=bash child_pid=13355",
			want: with(base(timeline.KindFork, 0, 590915291000), func(v *view) {
				v.Other, v.OComm, v.Task, v.Comm = 13340, "bash", 13355, "bash"
			}),
		},
		{
			name: "default/sched_wakeup_new",
			line: "            bash 13340 [000]   590.915303:   sched:sched_wakeup_new: comm=bash pid=13355 prio=120 target_cpu=000",
			want: with(base(timeline.KindWakeupNew, 0, 590915303000), func(v *view) {
				v.Task, v.Comm, v.Prio, v.Arg, v.Other, v.OComm = 13355, "bash", 120, 0, 13340, "bash"
			}),
		},
		{
			name: "default/unknown thread",
			line: "             :-1    -1 [000]   591.431695:       sched:sched_switch: prev_comm=memfd:sealed-91 prev_pid=13334 prev_prio=120 prev_state=X ==> next_comm=memfd:sealed-91 next_pid=13335 next_prio=120",
			want: with(base(timeline.KindSwitch, 0, 591431695000), func(v *view) {
				v.Other, v.OComm, v.OPrio, v.State = 13334, "memfd:sealed-91", 120, timeline.StateExitDead
				v.Task, v.Comm, v.Prio = 13335, "memfd:sealed-91", 120
			}),
		},
		{
			name: "fields/unknown thread",
			line: "             :-1  2844/-1    [000]   591.431695:       sched:sched_switch: prev_comm=memfd:sealed-91 prev_pid=13334 prev_prio=120 prev_state=X ==> next_comm=memfd:sealed-91 next_pid=13335 next_prio=120",
			want: with(base(timeline.KindSwitch, 0, 591431695000), func(v *view) {
				v.Other, v.OComm, v.OPrio, v.State = 13334, "memfd:sealed-91", 120, timeline.StateExitDead
				v.Task, v.Comm, v.Prio, v.TGID = 13335, "memfd:sealed-91", 120, 2844
			}),
		},
		{
			name: "comm with a space",
			line: "     renamed thr  7457 [001]   642.949567:       sched:sched_switch: prev_comm=renamed thr prev_pid=7457 prev_prio=120 prev_state=R ==> next_comm=rcu_preempt next_pid=15 next_prio=120",
			want: with(base(timeline.KindSwitch, 1, 642949567000), func(v *view) {
				v.Other, v.OComm, v.OPrio, v.State = 7457, "renamed thr", 120, timeline.StateRunnable
				v.Task, v.Comm, v.Prio = 15, "rcu_preempt", 120
			}),
		},
		{
			name: "sched_wakeup",
			line: "     migration/0    18 [000]   642.410554:       sched:sched_wakeup: comm=perf pid=7452 prio=120 target_cpu=001",
			want: with(base(timeline.KindWakeup, 0, 642410554000), func(v *view) {
				v.Task, v.Comm, v.Prio, v.Arg, v.Other, v.OComm = 7452, "perf", 120, 1, 18, "migration/0"
			}),
		},
		{
			name: "task_newtask",
			line: "              sh  7453 [000]   642.414567:        task:task_newtask: pid=7455 comm=sh clone_flags=4100 oom_score_adj=0",
			want: with(base(timeline.KindNewTask, 0, 642414567000), func(v *view) {
				v.Task, v.Comm, v.Other = 7455, "sh", 7453
			}),
		},
		{
			name: "task_rename with a space",
			line: "         python3  7457 [001]   642.945864:         task:task_rename: pid=7457 oldcomm=python3 newcomm=renamed thr oom_score_adj=0",
			want: with(base(timeline.KindRename, 1, 642945864000), func(v *view) {
				v.Task, v.Comm, v.OComm = 7457, "renamed thr", "python3"
			}),
		},
		{
			name: "task_rename without pid (Linux 6.13+)",
			line: "         python3  7457 [001]   642.945864:         task:task_rename: oldcomm=python3 newcomm=worker oom_score_adj=0",
			want: with(base(timeline.KindRename, 1, 642945864000), func(v *view) {
				v.Task, v.Comm, v.OComm = 7457, "worker", "python3"
			}),
		},
		{
			name: "cpu_idle enter",
			line: "         swapper     0 [000]   642.410561:           power:cpu_idle: state=1 cpu_id=0",
			want: with(base(timeline.KindIdle, 0, 642410561000), func(v *view) {
				v.Arg, v.Arg2 = 1, 0
			}),
		},
		{
			name: "cpu_idle exit",
			line: "         swapper     0 [001]   642.410663:           power:cpu_idle: state=4294967295 cpu_id=1",
			want: with(base(timeline.KindIdle, 1, 642410663000), func(v *view) {
				v.Arg, v.Arg2 = -1, 1
			}),
		},
		{
			name: "signal_generate",
			line: "         timeout 21607 [000] 42008.346211: signal:signal_generate: sig=15 errno=0 code=0 comm=bash pid=21608 grp=1 res=0",
			want: with(base(timeline.KindSignal, 0, 42008346211000), func(v *view) {
				v.Task, v.Comm, v.Other, v.OComm, v.Arg, v.Arg2 = 21608, "bash", 21607, "timeout", 15, 1<<8
			}),
		},
		{
			name: "sched_process_exec",
			line: "              sh  7453 [000]   642.412358: sched:sched_process_exec: filename=/usr/bin/sh pid=7453 old_pid=7453",
			want: with(base(timeline.KindExec, 0, 642412358000), func(v *view) {
				v.Task, v.Comm, v.Arg2 = 7453, "sh", 7453
			}),
		},
		{
			name: "sched_process_exit",
			line: "           sleep  7455 [001]   642.468661: sched:sched_process_exit: comm=sleep pid=7455 prio=120 group_dead=true",
			want: with(base(timeline.KindExit, 1, 642468661000), func(v *view) {
				v.Task, v.Comm, v.Prio = 7455, "sleep", 120
			}),
		},
		{
			name: "sched_process_free",
			line: "            bash  7458 [000]   642.489505: sched:sched_process_free: comm=true pid=7456 prio=120",
			want: with(base(timeline.KindFree, 0, 642489505000), func(v *view) {
				v.Task, v.Comm, v.Prio = 7456, "true", 120
			}),
		},
		{
			name: "ftrace:print marker",
			line: "            bash  7460 [001]   642.500000:             ftrace:print: tracing_mark_write: oracle_start pid=12 \n",
			want: with(base(timeline.KindMarker, 1, 642500000000), func(v *view) {
				v.Task, v.Other, v.Mark = 7460, 7460, "oracle_start pid=12"
			}),
		},
		{
			name: "ns timestamps, pid/tid, ip and sym",
			line: "            perf  7452/7452  [000]   642.410459613:       sched:sched_wakeup: comm=migration/0 pid=18 prio=0 target_cpu=000 ffffffff813b4545 ttwu_do_activate",
			want: with(base(timeline.KindWakeup, 0, 642410459613), func(v *view) {
				v.Task, v.Comm, v.Prio, v.Arg, v.Other, v.OComm, v.TGID = 18, "migration/0", 0, 0, 7452, "perf", 7452
			}),
		},
		{
			name: "latency layout",
			line: "    perf  7452/7452    1   642.410463:       sched:sched_switch: prev_comm=perf prev_pid=7452 prev_prio=120 prev_state=D ==> next_comm=migration/0 next_pid=18 next_prio=0",
			want: with(base(timeline.KindSwitch, 1, 642410463000), func(v *view) {
				v.Other, v.OComm, v.OPrio, v.State = 7452, "perf", 120, timeline.StateUninterr
				v.Task, v.Comm, v.Prio, v.TGID = 18, "migration/0", 0, 7452
			}),
		},
		{
			name: "misc and period",
			line: "            perf  7452 [000] K       642.410455:          1       sched:sched_waking: comm=migration/0 pid=18 prio=0 target_cpu=000",
			want: with(base(timeline.KindWaking, 0, 642410455000), func(v *view) {
				v.Task, v.Comm, v.Prio, v.Arg, v.Other, v.OComm = 18, "migration/0", 0, 0, 7452, "perf"
			}),
		},
		{
			name: "time of day",
			line: "            perf  7452 [000] 2026-12-02 16:25:46.123456    642.410455:       sched:sched_waking: comm=migration/0 pid=18 prio=0 target_cpu=000",
			want: with(base(timeline.KindWaking, 0, 642410455000), func(v *view) {
				v.Task, v.Comm, v.Prio, v.Arg, v.Other, v.OComm = 18, "migration/0", 0, 0, 7452, "perf"
			}),
		},
		{
			name: "no comm column",
			line: "13341 [000]   590.907234:       sched:sched_waking: comm=migration/0 pid=18 prio=0 target_cpu=000",
			want: with(base(timeline.KindWaking, 0, 590907234000), func(v *view) {
				v.Task, v.Comm, v.Prio, v.Arg, v.Other = 18, "migration/0", 0, 0, 13341
			}),
		},
		{
			name: "numeric comm without tid column",
			line: "            1234 [000]   590.907234:       sched:sched_waking: comm=migration/0 pid=18 prio=0 target_cpu=000",
			want: with(base(timeline.KindWaking, 0, 590907234000), func(v *view) {
				v.Task, v.Comm, v.Prio, v.Arg, v.OComm = 18, "migration/0", 0, 0, "1234"
			}),
		},
		{
			name: "counter clock, no event system, old success field",
			line: "            perf 13341 [002] 123456789:       sched_wakeup: comm=a b pid=18 prio=0 success=1 target_cpu=002",
			want: with(base(timeline.KindWakeup, 2, 123456789), func(v *view) {
				v.Task, v.Comm, v.Prio, v.Arg, v.Other, v.OComm = 18, "a b", 0, 2, 13341, "perf"
			}),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line := tc.line
			if !strings.HasSuffix(line, "\n") {
				line += "\n"
			}
			evs, r, err := readAll(t, []byte(line), parse.Options{Name: "line.txt"})
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if len(evs) != 1 {
				t.Fatalf("got %d events %v, want 1", len(evs), evs)
			}
			if evs[0] != tc.want {
				t.Errorf("\ngot  %v\nwant %v", evs[0], tc.want)
			}
			if r.Meta().Format != "perf-script" {
				t.Errorf("Format = %q, want perf-script", r.Meta().Format)
			}
		})
	}
}

// TestUncounted checks that uninterpreted events are counted, not emitted.
func TestUncounted(t *testing.T) {
	in := "            perf 13341 [000]   590.907228: sched:sched_stat_runtime: comm=perf pid=13341 runtime=140597 [ns]\n" +
		"            perf 13341 [000]   590.907229:        probe:sched_switch: (ffffffff82265908)\n" +
		"         swapper     0 [000]     0.000000: PERF_RECORD_FORK(1:1):(0:0)\n" +
		"PERF_RECORD_FINISHED_ROUND\n" +
		"\tffffffff82265908 __schedule+0x2f8 ([kernel.kallsyms])\n" +
		"\n"
	evs, r, err := readAll(t, []byte(in), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 0 {
		t.Errorf("got %d events %v, want none", len(evs), evs)
	}
	want := map[string]int64{"sched_stat_runtime": 1, "probe:sched_switch": 1, "PERF_RECORD_FORK": 1, "PERF_RECORD_FINISHED_ROUND": 1}
	for k, n := range want {
		if got := r.Meta().Unknown[k]; got != n {
			t.Errorf("Unknown[%q] = %d, want %d", k, got, n)
		}
	}
	if len(r.Meta().Unknown) != len(want) {
		t.Errorf("Unknown = %v, want %v", r.Meta().Unknown, want)
	}
}

// TestHeader checks what the --header block gives Meta.
func TestHeader(t *testing.T) {
	data := readGz(t, "testdata/allevents-header.txt.gz")
	_, r, err := readAll(t, data, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := r.Meta()
	if m.NCPU != 2 || m.Kernel != "6.18.44-fc-v1045" {
		t.Errorf("NCPU, Kernel = %d, %q; want 2, 6.18.44-fc-v1045", m.NCPU, m.Kernel)
	}
	if len(m.Warnings) != 0 {
		t.Errorf("Warnings = %q, want none: the header states the CPU count", m.Warnings)
	}
}

// TestLost checks how PERF_RECORD_LOST lines become KindLost events.
func TestLost(t *testing.T) {
	in := "            perf  7699 [001]   663.323600:       sched:sched_waking: comm=a pid=1 prio=120 target_cpu=001\n" +
		"            perf  7699 [001]   663.323635: PERF_RECORD_LOST lost 14\n" +
		"       hackbench  7727 [000]   663.323658: PERF_RECORD_LOST lost 9\n" +
		"            perf  7699 [001]   663.323640: sched:sched_stat_runtime: comm=perf pid=7699 runtime=1 [ns]\n" +
		"            perf  7699 [001]   663.323650: PERF_RECORD_LOST lost 1\n" +
		"       hackbench  7727 [000]   663.323700:       sched:sched_waking: comm=b pid=2 prio=120 target_cpu=000\n" +
		"            perf  7699 [001]   663.323710:       sched:sched_waking: comm=c pid=3 prio=120 target_cpu=001\n" +
		"            perf  7699 [001]   663.323720: PERF_RECORD_LOST lost 5\n" +
		"       hackbench  7727 [000]   663.323730:       sched:sched_waking: comm=d pid=4 prio=120 target_cpu=000\n"
	evs, r, err := readAll(t, []byte(in), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type lk struct {
		kind        timeline.Kind
		cpu         timeline.CPU
		time, start timeline.Time
		arg         int64
	}
	want := []lk{
		{timeline.KindWaking, 1, 663323600000, timeline.NoTime, 1},
		{timeline.KindLost, 0, 663323700000, timeline.NoTime, 9},
		{timeline.KindWaking, 0, 663323700000, timeline.NoTime, 0},
		{timeline.KindLost, 1, 663323710000, 663323600000, 15},
		{timeline.KindWaking, 1, 663323710000, timeline.NoTime, 1},
		{timeline.KindWaking, 0, 663323730000, timeline.NoTime, 0},
		{timeline.KindLost, 1, 663323710000, 663323710000, 5},
	}
	if len(evs) != len(want) {
		t.Fatalf("got %d events, want %d:\n%v", len(evs), len(want), evs)
	}
	for i, e := range evs {
		got := lk{e.Kind, e.CPU, e.Time, e.Start, e.Arg}
		if got != want[i] {
			t.Errorf("event %d: got %+v, want %+v", i, got, want[i])
		}
	}
	if r.Meta().NCPU != 2 {
		t.Errorf("NCPU = %d, want 2", r.Meta().NCPU)
	}
}

// TestNCPUInferred checks the inferred CPU count and its warning.
func TestNCPUInferred(t *testing.T) {
	in := "            perf 13341 [005]   590.907234:       sched:sched_waking: comm=a pid=18 prio=0 target_cpu=000\n"
	_, r, err := readAll(t, []byte(in), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := r.Meta()
	if m.NCPU != 6 {
		t.Errorf("NCPU = %d, want 6", m.NCPU)
	}
	if len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "inferred") {
		t.Errorf("Warnings = %q, want one saying the count was inferred", m.Warnings)
	}
}

// TestSniff checks Sniff on perf text and on the neighbouring formats.
func TestSniff(t *testing.T) {
	tests := []struct {
		name string
		head string
		want bool
	}{
		{"default", string(readGz(t, fixtureDefault)[:65536]), true},
		{"fields", string(readGz(t, fixtureFields)[:65536]), true},
		{"header", string(readGz(t, "testdata/allevents-header.txt.gz")[:4096]), true},
		{"latency", string(readGz(t, "testdata/allevents-latency.txt.gz")[:4096]), true},
		{"lost", string(readGz(t, "testdata/lost.txt.gz")[:65536]), true},
		{"ftrace", "# tracer: nop\n#\n            bash-13113   [000] d..2.   575.448244: sched_waking: comm=rcu_preempt pid=15 prio=120 target_cpu=000\n", false},
		{"ftrace no flags", "            bash-13113   [000]   575.448244: sched_waking: comm=rcu_preempt pid=15 prio=120 target_cpu=000\n", false},
		{"trace-cmd", "cpus=2\n            bash-13113 [000]   575.448244: sched_switch:         bash:13113 [120] R ==> rcu_preempt:15 [120]\n", false},
		{"empty", "", false},
		{"binary", "\x00\x01\x02\x03PERFILE2\xff\xfe", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sniff([]byte(tc.head)); got != tc.want {
				t.Errorf("Sniff = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCoverage: a perf script capture never proves its CPUs were recorded
// from its first record (perf enables the CPUs' events in turn); LOST
// records and perf record --overwrite show events lost.
func TestCoverage(t *testing.T) {
	const sample = "            perf  7699 [001]   663.323600:       sched:sched_waking: comm=a pid=1 prio=120 target_cpu=001\n"
	tests := []struct {
		name, in string
		cov      timeline.Coverage
		note     string
	}{
		{"samples only", sample, timeline.CoverageUnknown, "enables each CPU's events in turn"},
		{"a LOST record", sample + "            perf  7699 [001]   663.323635: PERF_RECORD_LOST lost 14\n" + sample,
			timeline.CoverageLost, "1 PERF_RECORD_LOST records, the first at line 2"},
		{"header without write_backward",
			"# ========\n# captured on    : Wed Dec  2 15:06:42 2026\n# event : name = sched:sched_switch, , id = { 12, 13 }, type = 2 (PERF_TYPE_TRACEPOINT), size = 136, config = 0x13d, { sample_period, sample_freq } = 1, sample_type = IP|TID|TIME|CPU|PERIOD|RAW, disabled = 1, inherit = 1\n# ========\n#\n" + sample,
			timeline.CoverageUnknown, "enables each CPU's events in turn"},
		{"perf record --overwrite",
			"# ========\n# captured on    : Wed Dec  2 15:06:42 2026\n# event : name = sched:sched_switch, , id = { 12, 13 }, type = 2 (PERF_TYPE_TRACEPOINT), size = 136, config = 0x13d, { sample_period, sample_freq } = 1, sample_type = IP|TID|TIME|CPU|PERIOD|RAW, disabled = 1, inherit = 1, write_backward = 1\n# ========\n#\n" + sample,
			timeline.CoverageLost, "perf record --overwrite"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, r, err := readAll(t, []byte(tc.in), parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			m := r.Meta()
			if m.Coverage != tc.cov || !strings.Contains(m.CoverageNote, tc.note) {
				t.Errorf("coverage %v %q, want %v with %q", m.Coverage, m.CoverageNote, tc.cov, tc.note)
			}
		})
	}
}
