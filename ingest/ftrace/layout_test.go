package ftrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// want is an expected event with its strings spelled out.
type want struct {
	kind        timeline.Kind
	time        timeline.Time
	cpu         timeline.CPU
	ctx         timeline.Context
	tgid        int32
	task, other timeline.TID
	comm, ocomm string
	prio, oprio int16
	state       string // prev_state as printed, for switches
	arg, arg2   int64
	marker      string // marker text (Arg is its string id)
}

// event builds the timeline.Event w describes, interning through strs.
func (w want) event(t *testing.T, strs *timeline.Strings) timeline.Event {
	t.Helper()
	var e timeline.Event
	e.Reset()
	e.Kind, e.Time, e.CPU, e.Ctx, e.TGID = w.kind, w.time, w.cpu, w.ctx, w.tgid
	e.Task, e.Other, e.Prio, e.OPrio, e.Arg, e.Arg2 = w.task, w.other, w.prio, w.oprio, w.arg, w.arg2
	if w.comm != "" {
		e.Comm = strs.IDString(w.comm)
	}
	if w.ocomm != "" {
		e.OComm = strs.IDString(w.ocomm)
	}
	if w.state != "" {
		s, ok := timeline.ParseState([]byte(w.state))
		if !ok {
			t.Fatalf("bad state %q in test table", w.state)
		}
		e.State = s
	}
	if w.kind == timeline.KindMarker {
		e.Arg = int64(strs.IDString(w.marker))
	}
	return e
}

// describe prints e with its strings resolved.
func describe(e timeline.Event, strs *timeline.Strings) string {
	return fmt.Sprintf("{%v t=%d cpu=%d ctx=%v tgid=%d task=%d %q prio=%d other=%d %q oprio=%d state=%v arg=%d arg2=%d start=%d}",
		e.Kind, e.Time, e.CPU, e.Ctx, e.TGID, e.Task, strs.Get(e.Comm), e.Prio, e.Other, strs.Get(e.OComm), e.OPrio,
		e.State, e.Arg, e.Arg2, e.Start)
}

// Each line is copied from a fixture under fixtures/real unless its name
// says "synthetic"; synthetic lines follow the printf formats of the kernel
// (trace_print_context, TP_printk) or of trace-cmd's sched plugin.
func TestLayouts(t *testing.T) {
	const nt = timeline.NoTID
	tests := []struct {
		name   string
		pre    string // lines before the record (headers)
		line   string
		format string
		want   want
	}{
		// ftrace-oracle-busy/trace.txt: tgid column, no irq-info column.
		{"trace tgid sched_waking", "# tracer: nop\n",
			`            bash-13113   (  13113) [000]    575.448244: sched_waking: comm=rcu_preempt pid=15 prio=120 target_cpu=000`, FormatTrace,
			want{kind: timeline.KindWaking, time: 575448244000, cpu: 0, tgid: 13113, task: 15, comm: "rcu_preempt", prio: 120, other: 13113, ocomm: "bash", oprio: -1, arg: 0}},
		{"trace tgid sched_wakeup", "",
			`            bash-13113   (  13113) [000]    575.448257: sched_wakeup: comm=rcu_preempt pid=15 prio=120 target_cpu=000`, FormatPipe,
			want{kind: timeline.KindWakeup, time: 575448257000, tgid: 13113, task: 15, comm: "rcu_preempt", prio: 120, other: 13113, ocomm: "bash", oprio: -1}},
		{"trace tgid sched_switch R", "",
			`            bash-13113   (  13113) [000]    575.448483: sched_switch: prev_comm=bash prev_pid=13113 prev_prio=120 prev_state=R ==> next_comm=rcu_preempt next_pid=15 next_prio=120`, FormatPipe,
			want{kind: timeline.KindSwitch, time: 575448483000, tgid: 13113, other: 13113, ocomm: "bash", oprio: 120, state: "R", task: 15, comm: "rcu_preempt", prio: 120}},
		{"trace tgid sched_switch I", "",
			`     rcu_preempt-15      (     15) [000]    575.448497: sched_switch: prev_comm=rcu_preempt prev_pid=15 prev_prio=120 prev_state=I ==> next_comm=clang++ next_pid=12886 next_prio=120`, FormatPipe,
			want{kind: timeline.KindSwitch, time: 575448497000, tgid: 15, other: 15, ocomm: "rcu_preempt", oprio: 120, state: "I", task: 12886, comm: "clang++", prio: 120}},
		{"trace tgid dashes R+", "",
			`         python3-13095   (-------) [001]    575.454336: sched_switch: prev_comm=python3 prev_pid=13095 prev_prio=120 prev_state=R+ ==> next_comm=clang++ next_pid=12891 next_prio=120`, FormatPipe,
			want{kind: timeline.KindSwitch, time: 575454336000, cpu: 1, tgid: -1, other: 13095, ocomm: "python3", oprio: 120, state: "R+", task: 12891, comm: "clang++", prio: 120}},
		{"trace comm with dash and colon", "",
			` memfd:sealed-91-1419    (   1419) [000]    575.455921: sched_switch: prev_comm=memfd:sealed-91 prev_pid=1419 prev_prio=120 prev_state=S ==> next_comm=bash next_pid=13113 next_prio=120`, FormatPipe,
			want{kind: timeline.KindSwitch, time: 575455921000, tgid: 1419, other: 1419, ocomm: "memfd:sealed-91", oprio: 120, state: "S", task: 13113, comm: "bash", prio: 120}},
		{"trace switch Z", "",
			`         python3-13095   (-------) [001]    575.462122: sched_switch: prev_comm=python3 prev_pid=13095 prev_prio=120 prev_state=Z ==> next_comm=clang++ next_pid=13084 next_prio=120`, FormatPipe,
			want{kind: timeline.KindSwitch, time: 575462122000, cpu: 1, tgid: -1, other: 13095, ocomm: "python3", oprio: 120, state: "Z", task: 13084, comm: "clang++", prio: 120}},
		{"trace switch D", "",
			`         python3-7734    (   7734) [000]    575.463016: sched_switch: prev_comm=python3 prev_pid=7734 prev_prio=120 prev_state=D ==> next_comm=bash next_pid=13113 next_prio=120`, FormatPipe,
			want{kind: timeline.KindSwitch, time: 575463016000, tgid: 7734, other: 7734, ocomm: "python3", oprio: 120, state: "D", task: 13113, comm: "bash", prio: 120}},
		{"trace sched_migrate_task", "",
			`         clang++-13084   (  13084) [001]    575.464241: sched_migrate_task: comm=rcu_preempt pid=15 prio=120 orig_cpu=0 dest_cpu=1`, FormatPipe,
			want{kind: timeline.KindMigrate, time: 575464241000, cpu: 1, tgid: 13084, task: 15, comm: "rcu_preempt", prio: 120, other: nt, oprio: -1, arg: 1, arg2: 0}},
		{"trace task_newtask", "",
			`            bash-13113   (  13113) [000]    575.466840: task_newtask: pid=13116 comm=bash clone_flags=1200000 oom_score_adj=0`, FormatPipe,
			want{kind: timeline.KindNewTask, time: 575466840000, tgid: 13113, task: 13116, comm: "bash", prio: -1, other: 13113, oprio: -1}},
		{"trace sched_process_fork", "",
			`            bash-13113   (  13113) [000]    575.466852: sched_process_fork: comm=bash pid=13113 child_comm=bash child_pid=13116`, FormatPipe,
			want{kind: timeline.KindFork, time: 575466852000, tgid: 13113, task: 13116, comm: "bash", prio: -1, other: 13113, ocomm: "bash", oprio: -1}},
		{"trace sched_wakeup_new", "",
			`            bash-13113   (  13113) [000]    575.466865: sched_wakeup_new: comm=bash pid=13116 prio=120 target_cpu=001`, FormatPipe,
			want{kind: timeline.KindWakeupNew, time: 575466865000, tgid: 13113, task: 13116, comm: "bash", prio: 120, other: 13113, ocomm: "bash", oprio: -1, arg: 1}},
		{"trace task_rename", "",
			`            bash-13116   (  13116) [001]    575.472034: task_rename: pid=13116 oldcomm=bash newcomm=oracle-busy oom_score_adj=0`, FormatPipe,
			want{kind: timeline.KindRename, time: 575472034000, cpu: 1, tgid: 13116, task: 13116, comm: "oracle-busy", ocomm: "bash", prio: -1, other: nt, oprio: -1}},
		{"trace sched_process_exec", "",
			`            bash-13116   (  13116) [001]    575.472457: sched_process_exec: filename=/usr/local/bin/oracle-busy pid=13116 old_pid=13116`, FormatPipe,
			want{kind: timeline.KindExec, time: 575472457000, cpu: 1, tgid: 13116, task: 13116, comm: "bash", prio: -1, other: nt, oprio: -1, arg2: 13116}},
		{"trace sched_process_exit group_dead", "",
			`             seq-13118   (  13118) [001]    575.540367: sched_process_exit: comm=seq pid=13118 prio=120 group_dead=true`, FormatPipe,
			want{kind: timeline.KindExit, time: 575540367000, cpu: 1, tgid: 13118, task: 13118, comm: "seq", prio: 120, other: nt, oprio: -1}},
		{"trace sched_process_free", "",
			`         python3-13117   (  13117) [000]    575.484276: sched_process_free: comm=python3 pid=13095 prio=120`, FormatPipe,
			want{kind: timeline.KindFree, time: 575484276000, tgid: 13117, task: 13095, comm: "python3", prio: 120, other: nt, oprio: -1}},
		{"trace tracing_mark_write", "",
			`            bash-13116   (  13116) [000]    576.223558: tracing_mark_write: oracle_start`, FormatPipe,
			want{kind: timeline.KindMarker, time: 576223558000, tgid: 13116, task: 13116, other: 13116, prio: -1, oprio: -1, marker: "oracle_start"}},
		{"trace kworker prio 100", "",
			`              sh-13121   (  13121) [001]    575.666539: sched_waking: comm=kworker/1:1H pid=44 prio=100 target_cpu=001`, FormatPipe,
			want{kind: timeline.KindWaking, time: 575666539000, cpu: 1, tgid: 13121, task: 44, comm: "kworker/1:1H", prio: 100, other: 13121, ocomm: "sh", oprio: -1, arg: 1}},

		// ftrace-hackbench-cyclictest, ftrace-overflow, qemu-smt8-hackbench:
		// irq-info column, no tgid column.
		{"flags task context", "",
			`         python3-12910   [000] d..2.   571.524370: sched_switch: prev_comm=python3 prev_pid=12910 prev_prio=120 prev_state=R ==> next_comm=clang++ next_pid=12891 next_prio=120`, FormatPipe,
			want{kind: timeline.KindSwitch, time: 571524370000, ctx: timeline.CtxTask, tgid: -1, other: 12910, ocomm: "python3", oprio: 120, state: "R", task: 12891, comm: "clang++", prio: 120}},
		{"flags softirq", "",
			`            bash-12911   [001] dNs3.   571.528229: sched_waking: comm=rcu_preempt pid=15 prio=120 target_cpu=001`, FormatPipe,
			want{kind: timeline.KindWaking, time: 571528229000, cpu: 1, ctx: timeline.CtxSoftirq, tgid: -1, task: 15, comm: "rcu_preempt", prio: 120, other: 12911, ocomm: "bash", oprio: -1, arg: 1}},
		{"flags hardirq h", "",
			`            bash-12911   [001] d.h3.   571.537738: sched_waking: comm=memfd:sealed-91 pid=1419 prio=120 target_cpu=001`, FormatPipe,
			want{kind: timeline.KindWaking, time: 571537738000, cpu: 1, ctx: timeline.CtxHardirq, tgid: -1, task: 1419, comm: "memfd:sealed-91", prio: 120, other: 12911, ocomm: "bash", oprio: -1, arg: 1}},
		{"flags hardirq H", "",
			`         clang++-12886   [001] dNH3.   574.491446: sched_waking: comm=kworker/1:1 pid=41 prio=120 target_cpu=001`, FormatPipe,
			want{kind: timeline.KindWaking, time: 574491446000, cpu: 1, ctx: timeline.CtxHardirq, tgid: -1, task: 41, comm: "kworker/1:1", prio: 120, other: 12886, ocomm: "clang++", oprio: -1, arg: 1}},
		{"flags kworker header", "",
			`    kworker/u8:1-33      [000] d..2.   571.592680: sched_switch: prev_comm=kworker/u8:1 prev_pid=33 prev_prio=120 prev_state=I ==> next_comm=kdamond.0 next_pid=79 next_prio=120`, FormatPipe,
			want{kind: timeline.KindSwitch, time: 571592680000, ctx: timeline.CtxTask, tgid: -1, other: 33, ocomm: "kworker/u8:1", oprio: 120, state: "I", task: 79, comm: "kdamond.0", prio: 120}},
		{"flags exec", "",
			`            bash-12914   [001] .....   571.548725: sched_process_exec: filename=/usr/bin/bash pid=12914 old_pid=12914`, FormatPipe,
			want{kind: timeline.KindExec, time: 571548725000, cpu: 1, ctx: timeline.CtxTask, tgid: -1, task: 12914, comm: "bash", prio: -1, other: nt, oprio: -1, arg2: 12914}},
		{"idle task header", "",
			`          <idle>-0       [001] d.h3.   648.611746: sched_waking: comm=memfd:sealed-91 pid=2877 prio=120 target_cpu=001`, FormatPipe,
			want{kind: timeline.KindWaking, time: 648611746000, cpu: 1, ctx: timeline.CtxHardirq, tgid: -1, task: 2877, comm: "memfd:sealed-91", prio: 120, other: 0, ocomm: "<idle>", oprio: -1, arg: 1}},
		{"header comm differs from prev_comm", "",
			`        readlink-14913   [000] d..2.   655.028421: sched_switch: prev_comm=bash prev_pid=14913 prev_prio=120 prev_state=R+ ==> next_comm=bash next_pid=14907 next_prio=120`, FormatPipe,
			want{kind: timeline.KindSwitch, time: 655028421000, ctx: timeline.CtxTask, tgid: -1, other: 14913, ocomm: "bash", oprio: 120, state: "R+", task: 14907, comm: "bash", prio: 120}},
		{"free in softirq", "",
			` memfd:sealed-91-2877    [001] ..s..   647.944238: sched_process_free: comm=hackbench pid=14601 prio=120`, FormatPipe,
			want{kind: timeline.KindFree, time: 647944238000, cpu: 1, ctx: timeline.CtxSoftirq, tgid: -1, task: 14601, comm: "hackbench", prio: 120, other: nt, oprio: -1}},
		{"cpu_idle enter", "",
			`          <idle>-0       [003] d..1.    10.260668: cpu_idle: state=1 cpu_id=3`, FormatPipe,
			want{kind: timeline.KindIdle, time: 10260668000, cpu: 3, ctx: timeline.CtxTask, tgid: -1, task: nt, other: nt, prio: -1, oprio: -1, arg: 1, arg2: 3}},
		{"cpu_idle exit", "",
			`          <idle>-0       [003] d..1.    10.260457: cpu_idle: state=4294967295 cpu_id=3`, FormatPipe,
			want{kind: timeline.KindIdle, time: 10260457000, cpu: 3, ctx: timeline.CtxTask, tgid: -1, task: nt, other: nt, prio: -1, oprio: -1, arg: -1, arg2: 3}},
		{"signal_generate by timeout", "",
			`         timeout-21607   [000] d..1. 42008.346211: signal_generate: sig=15 errno=0 code=0 comm=bash pid=21608 grp=1 res=0`, FormatPipe,
			want{kind: timeline.KindSignal, time: 42008346211000, ctx: timeline.CtxTask, tgid: -1, task: 21608, comm: "bash", prio: -1, other: 21607, ocomm: "timeout", oprio: -1, arg: 15, arg2: 1 << 8}},
		{"signal_generate ignored, comm with a space", "",
			`         timeout-21607   [000] d..2. 42008.346216: signal_generate: sig=15 errno=0 code=0 comm=Web Content pid=21608 grp=0 res=1`, FormatPipe,
			want{kind: timeline.KindSignal, time: 42008346216000, ctx: timeline.CtxTask, tgid: -1, task: 21608, comm: "Web Content", prio: -1, other: 21607, ocomm: "timeout", oprio: -1, arg: 15, arg2: 1}},
		{"marker with spaces", "",
			`            init-1       [006] .....    10.262613: tracing_mark_write: hackbench_start groups=4 loops=150`, FormatPipe,
			want{kind: timeline.KindMarker, time: 10262613000, cpu: 6, ctx: timeline.CtxTask, tgid: -1, task: 1, other: 1, prio: -1, oprio: -1, marker: "hackbench_start groups=4 loops=150"}},
		{"marker from a kernel without kallsyms", "",
			`            init-1       [003] .....     3.997428: 0xffffffff81117a47: cyclictest_start`, FormatPipe,
			want{kind: timeline.KindMarker, time: 3997428000, cpu: 3, ctx: timeline.CtxTask, tgid: -1, task: 1, other: 1, prio: -1, oprio: -1, marker: "cyclictest_start"}},
		{"marker without kallsyms", "",
			`         cs-tag0-127     [000] .....     4.186793: 0xffffffff811179e7: core_sched_cookie tid=127 cookie=0x7e`, FormatPipe,
			want{kind: timeline.KindMarker, time: 4186793000, ctx: timeline.CtxTask, tgid: -1, task: 127, other: 127, prio: -1, oprio: -1, marker: "core_sched_cookie tid=127 cookie=0x7e"}},
		{"task_rename in qemu", "",
			`       hackbench-275     [000] ...1.    10.272114: task_rename: pid=275 oldcomm=init newcomm=hackbench oom_score_adj=0`, FormatPipe,
			want{kind: timeline.KindRename, time: 10272114000, ctx: timeline.CtxTask, tgid: -1, task: 275, comm: "hackbench", ocomm: "init", prio: -1, other: nt, oprio: -1}},

		// ftrace-oracle-busy/report.txt: trace-cmd report.
		{"trace-cmd sched_waking kernel layout", "cpus=2\n",
			`capture13113:             bash-13113 [000]   575.448244: sched_waking:         comm=rcu_preempt pid=15 prio=120 target_cpu=000`, FormatTraceCmd,
			want{kind: timeline.KindWaking, time: 575448244000, tgid: -1, task: 15, comm: "rcu_preempt", prio: 120, other: 13113, ocomm: "bash", oprio: -1}},
		{"trace-cmd sched_wakeup plugin", "cpus=2\n",
			`capture13113:             bash-13113 [000]   575.448257: sched_wakeup:         rcu_preempt:15 [120] CPU:000`, FormatTraceCmd,
			want{kind: timeline.KindWakeup, time: 575448257000, tgid: -1, task: 15, comm: "rcu_preempt", prio: 120, other: 13113, ocomm: "bash", oprio: -1}},
		{"trace-cmd sched_switch plugin R", "cpus=2\n",
			`capture13113:             bash-13113 [000]   575.448483: sched_switch:         bash:13113 [120] R ==> rcu_preempt:15 [120]`, FormatTraceCmd,
			want{kind: timeline.KindSwitch, time: 575448483000, tgid: -1, other: 13113, ocomm: "bash", oprio: 120, state: "R", task: 15, comm: "rcu_preempt", prio: 120}},
		{"trace-cmd sched_switch plugin W", "cpus=2\n",
			`capture13113:      rcu_preempt-15    [000]   575.448497: sched_switch:         rcu_preempt:15 [120] W ==> clang++:12886 [120]`, FormatTraceCmd,
			want{kind: timeline.KindSwitch, time: 575448497000, tgid: -1, other: 15, ocomm: "rcu_preempt", oprio: 120, state: "W", task: 12886, comm: "clang++", prio: 120}},
		{"trace-cmd sched_switch plugin X", "cpus=2\n",
			`capture13113:          python3-13095 [001]   575.462122: sched_switch:         python3:13095 [120] X ==> clang++:13084 [120]`, FormatTraceCmd,
			want{kind: timeline.KindSwitch, time: 575462122000, cpu: 1, tgid: -1, other: 13095, ocomm: "python3", oprio: 120, state: "X", task: 13084, comm: "clang++", prio: 120}},
		{"trace-cmd comm with colon", "cpus=2\n",
			`capture13113:  memfd:sealed-91-1419  [000]   575.455921: sched_switch:         memfd:sealed-91:1419 [120] S ==> bash:13113 [120]`, FormatTraceCmd,
			want{kind: timeline.KindSwitch, time: 575455921000, tgid: -1, other: 1419, ocomm: "memfd:sealed-91", oprio: 120, state: "S", task: 13113, comm: "bash", prio: 120}},
		{"trace-cmd wakeup plugin comm with colon", "cpus=2\n",
			`capture13113:             bash-13113 [000]   575.455523: sched_wakeup:         memfd:sealed-91:1419 [120] CPU:000`, FormatTraceCmd,
			want{kind: timeline.KindWakeup, time: 575455523000, tgid: -1, task: 1419, comm: "memfd:sealed-91", prio: 120, other: 13113, ocomm: "bash", oprio: -1}},
		{"trace-cmd sched_wakeup_new plugin", "cpus=2\n",
			`capture13113:             bash-13113 [000]   575.466865: sched_wakeup_new:     bash:13116 [120] CPU:001`, FormatTraceCmd,
			want{kind: timeline.KindWakeupNew, time: 575466865000, tgid: -1, task: 13116, comm: "bash", prio: 120, other: 13113, ocomm: "bash", oprio: -1, arg: 1}},
		{"trace-cmd migrate", "cpus=2\n",
			`capture13113:          clang++-13084 [001]   575.464241: sched_migrate_task:   comm=rcu_preempt pid=15 prio=120 orig_cpu=0 dest_cpu=1`, FormatTraceCmd,
			want{kind: timeline.KindMigrate, time: 575464241000, cpu: 1, tgid: -1, task: 15, comm: "rcu_preempt", prio: 120, other: nt, oprio: -1, arg: 1}},
		{"trace-cmd newtask", "cpus=2\n",
			`capture13113:             bash-13113 [000]   575.466840: task_newtask:         pid=13116 comm=bash clone_flags=1200000 oom_score_adj=0`, FormatTraceCmd,
			want{kind: timeline.KindNewTask, time: 575466840000, tgid: -1, task: 13116, comm: "bash", prio: -1, other: 13113, oprio: -1}},
		{"trace-cmd fork", "cpus=2\n",
			`capture13113:             bash-13113 [000]   575.466852: sched_process_fork:   comm=bash pid=13113 child_comm=bash child_pid=13116`, FormatTraceCmd,
			want{kind: timeline.KindFork, time: 575466852000, tgid: -1, task: 13116, comm: "bash", prio: -1, other: 13113, ocomm: "bash", oprio: -1}},
		{"trace-cmd rename", "cpus=2\n",
			`capture13113:             bash-13116 [001]   575.472034: task_rename:          pid=13116 oldcomm=bash newcomm=oracle-busy oom_score_adj=0`, FormatTraceCmd,
			want{kind: timeline.KindRename, time: 575472034000, cpu: 1, tgid: -1, task: 13116, comm: "oracle-busy", ocomm: "bash", prio: -1, other: nt, oprio: -1}},
		{"trace-cmd exec", "cpus=2\n",
			`capture13113:             bash-13116 [001]   575.472457: sched_process_exec:   filename=/usr/local/bin/oracle-busy pid=13116 old_pid=13116`, FormatTraceCmd,
			want{kind: timeline.KindExec, time: 575472457000, cpu: 1, tgid: -1, task: 13116, comm: "bash", prio: -1, other: nt, oprio: -1, arg2: 13116}},
		{"trace-cmd exit", "cpus=2\n",
			`capture13113:              seq-13118 [001]   575.540367: sched_process_exit:   comm=seq pid=13118 prio=120 group_dead=true`, FormatTraceCmd,
			want{kind: timeline.KindExit, time: 575540367000, cpu: 1, tgid: -1, task: 13118, comm: "seq", prio: 120, other: nt, oprio: -1}},
		{"trace-cmd free", "cpus=2\n",
			`capture13113:          python3-13117 [000]   575.484276: sched_process_free:   comm=python3 pid=13095 prio=120`, FormatTraceCmd,
			want{kind: timeline.KindFree, time: 575484276000, tgid: -1, task: 13095, comm: "python3", prio: 120, other: nt, oprio: -1}},
		{"trace-cmd print marker", "cpus=2\n",
			`capture13113:             bash-13116 [000]   576.223558: print:                tracing_mark_write: oracle_start`, FormatTraceCmd,
			want{kind: timeline.KindMarker, time: 576223558000, tgid: -1, task: 13116, other: 13116, prio: -1, oprio: -1, marker: "oracle_start"}},

		// Synthetic lines for layouts the fixtures do not hold.
		{"synthetic comm with space", "",
			`     Web Content-4242    [002] d..2.  1001.000001: sched_switch: prev_comm=Web Content prev_pid=4242 prev_prio=120 prev_state=S ==> next_comm=swapper/2 next_pid=0 next_prio=120`, FormatPipe,
			want{kind: timeline.KindSwitch, time: 1001000001000, cpu: 2, ctx: timeline.CtxTask, tgid: -1, other: 4242, ocomm: "Web Content", oprio: 120, state: "S", task: 0, comm: "swapper/2", prio: 120}},
		{"synthetic kworker comm with workqueue suffix", "",
			` kworker/u8:1-wr-2201    [001] d..2.  1001.000002: sched_waking: comm=Web Content pid=4242 prio=120 target_cpu=002`, FormatPipe,
			want{kind: timeline.KindWaking, time: 1001000002000, cpu: 1, ctx: timeline.CtxTask, tgid: -1, task: 4242, comm: "Web Content", prio: 120, other: 2201, ocomm: "kworker/u8:1-wr", oprio: -1, arg: 2}},
		{"synthetic unknown comm", "",
			`           <...>-1234    [000] d.s3.  1001.000003: sched_waking: comm=ksoftirqd/0 pid=14 prio=120 target_cpu=000`, FormatPipe,
			want{kind: timeline.KindWaking, time: 1001000003000, ctx: timeline.CtxSoftirq, tgid: -1, task: 14, comm: "ksoftirqd/0", prio: 120, other: 1234, oprio: -1}},
		{"synthetic unknown comm exec", "",
			`           <...>-1234    [000] ....  1001.000004: sched_process_exec: filename=/bin/true pid=1234 old_pid=1234`, FormatPipe,
			want{kind: timeline.KindExec, time: 1001000004000, ctx: timeline.CtxTask, tgid: -1, task: 1234, prio: -1, other: nt, oprio: -1, arg2: 1234}},
		{"synthetic old kernel 4 flags and D|K", "",
			`          mysqld-2001  [003] d..3  4455.123456: sched_switch: prev_comm=mysqld prev_pid=2001 prev_prio=120 prev_state=D|K ==> next_comm=swapper/3 next_pid=0 next_prio=120`, FormatPipe,
			want{kind: timeline.KindSwitch, time: 4455123456000, cpu: 3, ctx: timeline.CtxTask, tgid: -1, other: 2001, ocomm: "mysqld", oprio: 120, state: "D|K", task: 0, comm: "swapper/3", prio: 120}},
		{"synthetic old kernel S|W", "",
			`          mysqld-2001  [003] d..3  4455.123457: sched_switch: prev_comm=mysqld prev_pid=2001 prev_prio=120 prev_state=S|W ==> next_comm=swapper/3 next_pid=0 next_prio=120`, FormatPipe,
			want{kind: timeline.KindSwitch, time: 4455123457000, cpu: 3, ctx: timeline.CtxTask, tgid: -1, other: 2001, ocomm: "mysqld", oprio: 120, state: "S|W", task: 0, comm: "swapper/3", prio: 120}},
		{"synthetic old kernel success field", "",
			`          <idle>-0     [001] d.h4  4455.123458: sched_wakeup: comm=mysqld pid=2001 prio=120 success=1 target_cpu=001`, FormatPipe,
			want{kind: timeline.KindWakeup, time: 4455123458000, cpu: 1, ctx: timeline.CtxHardirq, tgid: -1, task: 2001, comm: "mysqld", prio: 120, other: 0, ocomm: "<idle>", oprio: -1, arg: 1}},
		{"synthetic nmi context", "",
			`          <idle>-0     [001] d.z4  4455.123459: sched_waking: comm=perf pid=77 prio=120 target_cpu=001`, FormatPipe,
			want{kind: timeline.KindWaking, time: 4455123459000, cpu: 1, ctx: timeline.CtxNMI, tgid: -1, task: 77, comm: "perf", prio: 120, other: 0, ocomm: "<idle>", oprio: -1, arg: 1}},
		{"synthetic ns timestamp", "",
			`            bash-13113   [000] d..2. 575.448244123: sched_wakeup: comm=rcu_preempt pid=15 prio=120 target_cpu=000`, FormatPipe,
			want{kind: timeline.KindWakeup, time: 575448244123, ctx: timeline.CtxTask, tgid: -1, task: 15, comm: "rcu_preempt", prio: 120, other: 13113, ocomm: "bash", oprio: -1}},
		{"synthetic x86-tsc timestamp", "",
			`            bash-13113   [000] d..2. 1234567890123: sched_wakeup: comm=rcu_preempt pid=15 prio=120 target_cpu=000`, FormatPipe,
			want{kind: timeline.KindWakeup, time: 1234567890123, ctx: timeline.CtxTask, tgid: -1, task: 15, comm: "rcu_preempt", prio: 120, other: 13113, ocomm: "bash", oprio: -1}},
		{"synthetic deadline prio", "",
			`            bash-13113   [000] d..2.   575.448483: sched_switch: prev_comm=bash prev_pid=13113 prev_prio=120 prev_state=R ==> next_comm=dl-task next_pid=900 next_prio=-1`, FormatPipe,
			want{kind: timeline.KindSwitch, time: 575448483000, ctx: timeline.CtxTask, tgid: -1, other: 13113, ocomm: "bash", oprio: 120, state: "R", task: 900, comm: "dl-task", prio: -1}},
		{"synthetic trace-cmd older wakeup plugin", "cpus=2\n",
			`          python3-7734 [000]   575.462027: sched_wakeup:         python3:7734 [120] success=1 CPU:000`, FormatTraceCmd,
			want{kind: timeline.KindWakeup, time: 575462027000, tgid: -1, task: 7734, comm: "python3", prio: 120, other: 7734, ocomm: "python3", oprio: -1}},
		{"synthetic trace-cmd plugin S|W", "cpus=2\n",
			`           mysqld-2001 [003]  4455.123457: sched_switch:         mysqld:2001 [120] S|W ==> swapper/3:0 [120]`, FormatTraceCmd,
			want{kind: timeline.KindSwitch, time: 4455123457000, cpu: 3, tgid: -1, other: 2001, ocomm: "mysqld", oprio: 120, state: "S|W", task: 0, comm: "swapper/3", prio: 120}},
		{"synthetic trace-cmd without cpus header", "",
			`             bash-13113 [000]   575.448483: sched_switch:         bash:13113 [120] R ==> rcu_preempt:15 [120]`, FormatTraceCmd,
			want{kind: timeline.KindSwitch, time: 575448483000, tgid: -1, other: 13113, ocomm: "bash", oprio: 120, state: "R", task: 15, comm: "rcu_preempt", prio: 120}},
		{"synthetic trace-cmd with flags and delta", "cpus=2\n",
			`             bash-13113 [000] d..2.   575.448483: (+226)   sched_switch:         bash:13113 [120] R ==> rcu_preempt:15 [120]`, FormatTraceCmd,
			want{kind: timeline.KindSwitch, time: 575448483000, ctx: timeline.CtxTask, tgid: -1, other: 13113, ocomm: "bash", oprio: 120, state: "R", task: 15, comm: "rcu_preempt", prio: 120}},
		{"synthetic task_rename without pid", "",
			`            bash-13116   [001] .....   575.472034: task_rename: oldcomm=bash newcomm=oracle-busy oom_score_adj=0`, FormatPipe,
			want{kind: timeline.KindRename, time: 575472034000, cpu: 1, ctx: timeline.CtxTask, tgid: -1, task: 13116, comm: "oracle-busy", ocomm: "bash", prio: -1, other: nt, oprio: -1}},
		{"synthetic CRLF line end", "",
			"            bash-13116   (  13116) [000]    576.223558: tracing_mark_write: oracle_end  \r", FormatPipe,
			want{kind: timeline.KindMarker, time: 576223558000, tgid: 13116, task: 13116, other: 13116, prio: -1, oprio: -1, marker: "oracle_end"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			strs := timeline.NewStrings()
			r, err := NewReader(strings.NewReader(tc.pre+tc.line+"\n"), parse.Options{Name: "t.txt", Strings: strs})
			if err != nil {
				t.Fatal(err)
			}
			var got timeline.Event
			if err := r.Next(&got); err != nil {
				t.Fatalf("Next: %v", err)
			}
			w := tc.want.event(t, strs)
			if got != w {
				t.Errorf("event\n got %s\nwant %s", describe(got, strs), describe(w, strs))
			}
			var extra timeline.Event
			if err := r.Next(&extra); !errors.Is(err, io.EOF) {
				t.Errorf("second Next = %v (%s), want io.EOF", err, describe(extra, strs))
			}
			if f := r.Meta().Format; f != tc.format {
				t.Errorf("Meta.Format = %q, want %q", f, tc.format)
			}
		})
	}
}

// TestHeaders checks the non-record lines: Meta from the headers, the
// lost and buffer-start records emitted before their CPU's next event.
func TestHeaders(t *testing.T) {
	const in = `# tracer: nop
#
# entries-in-buffer/entries-written: 40517/145878   #P:2
#
       hackbench-14557   [000] d..3.   647.913766: sched_waking: comm=hackbench pid=14538 prio=120 target_cpu=001
##### CPU 1 buffer started ####
       hackbench-14480   [001] d..3.   647.913772: sched_waking: comm=hackbench pid=14466 prio=120 target_cpu=001
CPU:0 [LOST 7132 EVENTS]
CPU:1 [LOST 10 EVENTS]
CPU:1 [LOST 5 EVENTS]
       hackbench-14961   [000] d..2.   656.806473: sched_switch: prev_comm=hackbench prev_pid=14961 prev_prio=120 prev_state=S ==> next_comm=hackbench next_pid=14963 next_prio=120
       hackbench-14963   [000] d..2.   656.806598: sched_stat_runtime: comm=hackbench pid=14963 runtime=1000 [ns]
CPU:0 [LOST 3 EVENTS]
`
	strs := timeline.NewStrings()
	evs, r := readAll(t, "h.txt", []byte(in), parse.Options{Strings: strs})
	type kt struct {
		kind  timeline.Kind
		cpu   timeline.CPU
		time  timeline.Time
		start timeline.Time
		arg   int64
	}
	wants := []kt{
		{timeline.KindWaking, 0, 647913766000, timeline.NoTime, 1},
		{timeline.KindBufferStart, 1, 647913772000, timeline.NoTime, 0},
		{timeline.KindWaking, 1, 647913772000, timeline.NoTime, 1},
		{timeline.KindLost, 0, 656806473000, 647913766000, 7132},
		{timeline.KindSwitch, 0, 656806473000, timeline.NoTime, 0},
		// CPU 0's second lost line follows an uninterpreted event: it is
		// still pending at EOF, at the CPU's last record time.
		{timeline.KindLost, 0, 656806598000, 656806598000, 3},
		// CPU 1's two lost lines add up; no later CPU 1 record.
		{timeline.KindLost, 1, 647913772000, 647913772000, 15},
	}
	if len(evs) != len(wants) {
		for _, e := range evs {
			t.Logf("%s", describe(e, strs))
		}
		t.Fatalf("got %d events, want %d", len(evs), len(wants))
	}
	for i, w := range wants {
		e := evs[i]
		got := kt{e.Kind, e.CPU, e.Time, e.Start, e.Arg}
		if got != w {
			t.Errorf("event %d: got %+v, want %+v", i, got, w)
		}
	}
	m := r.Meta()
	if m.Format != FormatTrace || m.NCPU != 2 || m.EntriesInBuffer != 40517 || m.EntriesWritten != 145878 {
		t.Errorf("Meta = format %q ncpu %d entries %d/%d, want ftrace 2 40517/145878", m.Format, m.NCPU, m.EntriesInBuffer, m.EntriesWritten)
	}
	if len(m.Warnings) != 1 {
		t.Errorf("Meta.Warnings = %q, want one overwrite warning", m.Warnings)
	}
	if m.Unknown["sched_stat_runtime"] != 1 || len(m.Unknown) != 1 {
		t.Errorf("Meta.Unknown = %v, want sched_stat_runtime:1", m.Unknown)
	}
}

// TestTraceCmdNonRecords checks trace-cmd's lost-event lines (printed by
// tracecmd/trace-read.c trace_show_data), its other info lines and the
// instance prefix on them.
func TestTraceCmdNonRecords(t *testing.T) {
	const in = `version = 7
CPU 3 is empty
cpus=4
capture:             bash-13113 [000]   575.448244: sched_waking:         comm=rcu_preempt pid=15 prio=120 target_cpu=000
CPU:0 [12 EVENTS DROPPED]
capture: CPU:1 [EVENTS DROPPED]
CPU:0 [SUBBUFFER START]
capture:             bash-13113 [000]   575.448257: sched_wakeup:         rcu_preempt:15 [120] CPU:000
capture:             bash-13113 [001]   575.448300: sched_wakeup:         rcu_preempt:15 [120] CPU:000
`
	strs := timeline.NewStrings()
	evs, r := readAll(t, "r.txt", []byte(in), parse.Options{Strings: strs})
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%v cpu=%d t=%d start=%d arg=%d", e.Kind, e.CPU, e.Time, e.Start, e.Arg))
	}
	wantS := []string{
		"sched_waking cpu=0 t=575448244000 start=-9223372036854775808 arg=0",
		"lost cpu=0 t=575448257000 start=575448244000 arg=12",
		"sched_wakeup cpu=0 t=575448257000 start=-9223372036854775808 arg=0",
		"lost cpu=1 t=575448300000 start=-9223372036854775808 arg=-1",
		"sched_wakeup cpu=1 t=575448300000 start=-9223372036854775808 arg=0",
	}
	if strings.Join(got, "\n") != strings.Join(wantS, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantS, "\n"))
	}
	if m := r.Meta(); m.Format != FormatTraceCmd || m.NCPU != 4 {
		t.Errorf("Meta = %q ncpu %d, want trace-cmd 4", m.Format, m.NCPU)
	}
}

func TestSniff(t *testing.T) {
	head := func(rel string) []byte { return readHead(t, rel, 64<<10) }
	tests := []struct {
		name string
		head []byte
		want bool
	}{
		{"ftrace trace tgid", head("ftrace-oracle-busy/trace.txt.zst"), true},
		{"trace-cmd report", head("ftrace-oracle-busy/report.txt.zst"), true},
		{"ftrace irq-info", head("ftrace-hackbench-cyclictest/trace.txt.gz"), true},
		{"trace_pipe", head("ftrace-pipe-lost/trace.txt.gz"), true},
		{"perf script", head("perf-hackbench-cyclictest/perf-script.txt.gz"), false},
		{"perf script fields", head("perf-hackbench-cyclictest/perf-script-fields.txt.gz"), false},
		{"perfetto protobuf", head("perfetto-tracebox-oracle-busy/trace.pftrace.zst"), false},
		{"trace_pipe lost first", []byte("CPU:0 [LOST 3 EVENTS]\n            bash-1 [000] 1.000000: sched_switch: x\n"), true},
		{"empty", nil, false},
		{"comments only", []byte("# hello\n#\n"), false},
		{"text", []byte("hello world\n"), false},
		{"binary", []byte{0x0a, 0x8f, 0x01, 0x00, 0x12, '[', '1', ']'}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sniff(tc.head); got != tc.want {
				t.Errorf("Sniff = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLongLine reads a record longer than the bufio buffer.
func TestLongLine(t *testing.T) {
	text := strings.Repeat("x", 3*bufSize+17)
	in := "            bash-1     [000] .....   1.000000: tracing_mark_write: " + text + "\n" +
		"            bash-1     [000] .....   1.000001: tracing_mark_write: short\n"
	strs := timeline.NewStrings()
	evs, _ := readAll(t, "long.txt", []byte(in), parse.Options{Strings: strs})
	if len(evs) != 2 {
		t.Fatalf("got %d events, want 2", len(evs))
	}
	if got := strs.Get(timeline.CommID(evs[0].Arg)); got != text {
		t.Errorf("long marker: got %d bytes, want %d", len(got), len(text))
	}
	if got := strs.Get(timeline.CommID(evs[1].Arg)); got != "short" {
		t.Errorf("marker after long line = %q, want short", got)
	}
}

// TestSteadyStateAllocs checks that Next allocates nothing per event once
// the comms are known.
func TestSteadyStateAllocs(t *testing.T) {
	for _, rel := range []string{"ftrace-oracle-busy/trace.txt.zst", "ftrace-oracle-busy/report.txt.zst", "qemu-smt8-hackbench/trace.txt.zst"} {
		t.Run(rel, func(t *testing.T) {
			data := readFixture(t, rel)
			strs := timeline.NewStrings()
			readAll(t, rel, data, parse.Options{Strings: strs}) // learn the strings
			r, err := NewReader(bytes.NewReader(data), parse.Options{Strings: strs})
			if err != nil {
				t.Fatal(err)
			}
			var ev timeline.Event
			for i := 0; i < 5000; i++ { // fill the comm cache
				if err := r.Next(&ev); err != nil {
					t.Fatal(err)
				}
			}
			allocs := testing.AllocsPerRun(20000, func() {
				if err := r.Next(&ev); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("allocs per event = %v, want 0", allocs)
			}
		})
	}
}
