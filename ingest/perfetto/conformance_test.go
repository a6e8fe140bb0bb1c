package perfetto

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

const confDir = "../../fixtures/perfetto-conformance"

// confData is one conformance case decoded by the Reader, with the rows
// trace_processor is expected to print.
type confData struct {
	evs    []timeline.Event
	r      *Reader
	strs   *timeline.Strings
	header []string
	rows   [][]string
}

// confCase compares what schedlens decodes from a case's trace with the
// expected rows of the query upstream ran on it.
type confCase struct {
	what  string // what is compared (docs/perfetto.md keeps the same table)
	check func(t *testing.T, d *confData)
}

// tpPrio prints a prio the way trace_processor does: an absent field is 0.
func tpPrio(p int16) string {
	if p < 0 {
		return "0"
	}
	return strconv.Itoa(int(p))
}

// tpState renders an end state the way trace_processor does: R, R+, or the
// letters in the order S D T t X Z P x K W N I, cut to 3 characters.
func tpState(s timeline.State) string {
	if s.Runnable() {
		return s.String()
	}
	order := []struct {
		c string
		s timeline.State
	}{
		{"S", timeline.StateInterrupt}, {"D", timeline.StateUninterr}, {"T", timeline.StateStopped},
		{"t", timeline.StateTraced}, {"X", timeline.StateExitDead}, {"Z", timeline.StateZombie},
		{"P", timeline.StateParked}, {"x", timeline.StateDead}, {"K", timeline.StateWakeKill},
		{"W", timeline.StateWaking}, {"N", timeline.StateNoLoad}, {"I", timeline.StateIdle},
	}
	var b strings.Builder
	for _, o := range order {
		if s&o.s != 0 {
			b.WriteString(o.c)
		}
	}
	if s&timeline.StatePreempted != 0 {
		b.WriteString("+")
	}
	out := b.String()
	if len(out) > 3 {
		out = out[:3]
	}
	return out
}

func sliceRows(ss []schedSlice, cols func(s schedSlice) []string) [][]string {
	var out [][]string
	for _, s := range ss {
		out = append(out, cols(s))
	}
	return out
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// compareRows compares rows in order.
func compareRows(t *testing.T, got, want [][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d rows, want %d\n got %v\nwant %v", len(got), len(want), got, want)
		return
	}
	for i := range want {
		if strings.Join(got[i], ",") != strings.Join(want[i], ",") {
			t.Errorf("row %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// compareSets compares rows ignoring order (queries with ties in ORDER BY).
func compareSets(t *testing.T, got, want [][]string) {
	t.Helper()
	key := func(rows [][]string) []string {
		var k []string
		for _, r := range rows {
			k = append(k, strings.Join(r, ","))
		}
		sort.Strings(k)
		return k
	}
	g, w := key(got), key(want)
	compareRows(t, [][]string{{strings.Join(g, " | ")}}, [][]string{{strings.Join(w, " | ")}})
}

func column(rows [][]string, cols ...int) [][]string {
	var out [][]string
	for _, r := range rows {
		var o []string
		for _, c := range cols {
			o = append(o, r[c])
		}
		out = append(out, o)
	}
	return out
}

func noCrop() sliceOptions {
	return sliceOptions{dropBefore: timeline.NoTime, rawBefore: timeline.NoTime}
}

// latestDataStart is trace_processor's ftrace_latest_data_start_ns: the
// latest time from which every CPU's data is complete, from the CPUs'
// first previous_bundle_end_timestamp (KindBufferStart.Start here).
func latestDataStart(evs []timeline.Event) timeline.Time {
	t := timeline.NoTime
	for _, e := range evs {
		if e.Kind == timeline.KindBufferStart && e.Start > t {
			t = e.Start
		}
	}
	return t
}

// namesOf returns every comm the events and the process tree give a task.
func namesOf(d *confData) map[timeline.TID]map[string]bool {
	m := map[timeline.TID]map[string]bool{}
	add := func(t timeline.TID, c timeline.CommID) {
		if c == timeline.NoComm {
			return
		}
		if m[t] == nil {
			m[t] = map[string]bool{}
		}
		m[t][d.strs.Get(c)] = true
	}
	for _, e := range d.evs {
		add(e.Task, e.Comm)
		if e.Kind == timeline.KindSwitch || e.Kind == timeline.KindFork {
			add(e.Other, e.OComm)
		}
	}
	for tid, ti := range d.r.Meta().Tasks {
		if ti.Comm != "" {
			if m[tid] == nil {
				m[tid] = map[string]bool{}
			}
			m[tid][ti.Comm] = true
		}
	}
	return m
}

// checkProcessRows checks rows of (tid, pid, pname, tname) against the
// decoded facts: tname is a name the trace gives tid; pname the command
// line of pid's process or a name of pid; pid the thread group the process
// tree gives tid, tid itself (a new process) or the thread group of a task
// that created tid (task_newtask).
func checkProcessRows(t *testing.T, d *confData, rows [][]string, tidC, pidC, pnameC, tnameC int) {
	names := namesOf(d)
	creators := map[timeline.TID][]timeline.TID{}
	for _, e := range d.evs {
		if e.Kind == timeline.KindNewTask {
			creators[e.Task] = append(creators[e.Task], e.Other)
		}
	}
	tasks := d.r.Meta().Tasks
	for _, row := range rows {
		tid := timeline.TID(atoi(t, row[tidC]))
		if tn := row[tnameC]; tn != "[NULL]" && !names[tid][tn] {
			t.Errorf("tid %d: names %v, want one of them %q", tid, names[tid], tn)
		}
		if row[pidC] == "[NULL]" {
			continue
		}
		pid := timeline.TID(atoi(t, row[pidC]))
		ok := pid == tid
		if ti, found := tasks[tid]; found && ti.TGID == int32(pid) {
			ok = true
		}
		// A thread's process is its creator's, up the chain of creators.
		seen := map[timeline.TID]bool{}
		var walk func(x timeline.TID)
		walk = func(x timeline.TID) {
			if seen[x] {
				return
			}
			seen[x] = true
			for _, c := range creators[x] {
				if ti, found := tasks[c]; (found && ti.TGID == int32(pid)) || c == pid {
					ok = true
				}
				walk(c)
			}
		}
		walk(tid)
		if !ok {
			t.Errorf("tid %d: process %d not explained by the process tree or task_newtask", tid, pid)
		}
		if pn := row[pnameC]; pn != "[NULL]" {
			p := d.r.Processes()[pid]
			if !(len(p.Cmdline) > 0 && p.Cmdline[0] == pn) && !names[pid][pn] {
				t.Errorf("pid %d: cmdline %v and names %v, want %q", pid, p.Cmdline, names[pid], pn)
			}
		}
	}
}

func cpuRows(t *testing.T, d *confData, cols ...string) [][]string {
	topo := d.r.Meta().Topology
	if topo == nil {
		t.Fatal("Meta.Topology is nil")
	}
	var out [][]string
	for _, c := range topo.CPUs {
		var row []string
		for _, col := range cols {
			switch col {
			case "cpu":
				row = append(row, strconv.Itoa(c.ID))
			case "cluster_id":
				row = append(row, strconv.Itoa(c.Cluster))
			case "capacity":
				row = append(row, strconv.Itoa(c.Capacity))
			}
		}
		out = append(out, row)
	}
	return out
}

var confCases = map[string]confCase{
	"SmokeSchedEvents__synth_1_smoke": {"sched slices ts, cpu, dur, end_state, priority, tid (first 10 by ts)", func(t *testing.T, d *confData) {
		ss, _ := computeSlices(d.evs, noCrop())
		sort.SliceStable(ss, func(i, j int) bool { return ss[i].ts < ss[j].ts })
		if len(ss) > 10 {
			ss = ss[:10]
		}
		compareRows(t, sliceRows(ss, func(s schedSlice) []string {
			st := "[NULL]"
			if s.ended {
				st = tpState(s.endState)
			}
			return []string{i64(int64(s.ts)), i64(int64(s.cpu)), i64(s.dur), st, tpPrio(s.prio), i64(int64(s.tid))}
		}), d.rows)
	}},
	"TablesSched__synth_1_filter_sched": {"sched slices filtered on cpu, dur and ts: ts, cpu, dur", func(t *testing.T, d *confData) {
		ss, _ := computeSlices(d.evs, noCrop())
		var rows [][]string
		for _, s := range ss {
			if s.cpu == 1 && s.dur > 50 && s.dur <= 100 && s.ts >= 100 && s.ts <= 400 {
				rows = append(rows, []string{i64(int64(s.ts)), i64(int64(s.cpu)), i64(s.dur)})
			}
		}
		compareRows(t, rows, d.rows)
	}},
	"Tables__trace_bounds": {"start_ts (first event); end_ts not compared: it is a cpu_frequency event, which schedlens counts but does not emit", func(t *testing.T, d *confData) {
		first := d.evs[0].Time
		for _, e := range d.evs {
			first = min(first, e.Time)
		}
		compareRows(t, [][]string{{i64(int64(first))}}, column(d.rows, 0))
		if d.r.Meta().Unknown["cpu_frequency"] == 0 {
			t.Errorf("cpu_frequency events not counted in Meta.Unknown")
		}
	}},
	"Parsing__ftrace_with_tracing_start_list_sched_slice_spans": {"sched slices ts, dur, tid after dropping events before TracingServiceEvent.tracing_started (Reader.TracingStarted)", func(t *testing.T, d *confData) {
		if d.r.TracingStarted() == timeline.NoTime {
			t.Fatal("TracingStarted not found")
		}
		ss, _ := computeSlices(d.evs, sliceOptions{dropBefore: d.r.TracingStarted(), rawBefore: timeline.NoTime})
		sort.SliceStable(ss, func(i, j int) bool { return ss[i].ts < ss[j].ts })
		compareRows(t, sliceRows(ss, func(s schedSlice) []string {
			return []string{i64(int64(s.ts)), i64(s.dur), i64(int64(s.tid))}
		}), d.rows)
	}},
	"FtraceCrop__crop_compact_sched_switch": {"compact_sched slices cpu, ts, dur, tid, name; crop at the latest first previous_bundle_end_timestamp (KindBufferStart.Start); first compact switch per CPU seeds only", func(t *testing.T, d *confData) {
		ss, _ := computeSlices(d.evs, sliceOptions{dropBefore: timeline.NoTime, rawBefore: latestDataStart(d.evs)})
		sort.SliceStable(ss, func(i, j int) bool {
			if ss[i].cpu != ss[j].cpu {
				return ss[i].cpu < ss[j].cpu
			}
			return ss[i].ts < ss[j].ts
		})
		compareRows(t, sliceRows(ss, func(s schedSlice) []string {
			return []string{i64(int64(s.cpu)), i64(int64(s.ts)), i64(s.dur), i64(int64(s.tid)), d.strs.Get(s.comm)}
		}), d.rows)
	}},
	"StdlibSched__active_cpu_count": {"CPUs running a non-idle task at each slice start, from the sched slices", func(t *testing.T, d *confData) {
		ss, _ := computeSlices(d.evs, noCrop())
		var starts []timeline.Time
		for _, s := range ss {
			starts = append(starts, s.ts)
		}
		sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
		var rows [][]string
		for i, ts := range starts {
			if i > 0 && starts[i-1] == ts {
				continue
			}
			n := 0
			for _, s := range ss {
				if s.tid != 0 && s.ts <= ts && (s.dur < 0 || ts < s.ts+timeline.Time(s.dur)) {
					n++
				}
			}
			rows = append(rows, []string{i64(int64(ts)), strconv.Itoa(n)})
		}
		compareRows(t, rows, d.rows)
	}},
	"StdlibSched__runnable_thread_count": {"tasks switched out runnable (R, R+) and not yet back in, at each switch", func(t *testing.T, d *confData) {
		runnable := map[timeline.TID]bool{}
		var rows [][]string
		var last timeline.Time = timeline.NoTime
		evs := append([]timeline.Event(nil), d.evs...)
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time < evs[j].Time })
		for i, e := range evs {
			if e.Kind != timeline.KindSwitch {
				continue
			}
			if e.Other != 0 && e.State.Runnable() {
				runnable[e.Other] = true
			}
			delete(runnable, e.Task)
			if i+1 < len(evs) && evs[i+1].Time == e.Time {
				continue
			}
			if e.Time != last {
				rows = append(rows, []string{i64(int64(e.Time)), strconv.Itoa(len(runnable))})
				last = e.Time
			}
		}
		compareRows(t, rows, d.rows)
	}},
	"Parsing__sched_blocked_proto_sched_blocked_reason": {"thread_state D rows: ts, tid (switch-outs in D); io_wait not compared: sched_blocked_reason is not interpreted", func(t *testing.T, d *confData) {
		compareSets(t, dRows(d), column(d.rows, 0, 1))
	}},
	"Parsing__sched_blocked_reason_symbolized_sched_blocked_reason_function": {"thread_state D rows: ts, tid; blocked_function not compared (sched_blocked_reason, kernel symbols)", func(t *testing.T, d *confData) {
		compareSets(t, dRows(d), column(d.rows, 0, 1))
	}},
	"Parsing__sched_blocked_reason_symbolized_to_systrace": {"sched_switch lines of to_ftrace(): cpu, ts, prev/next comm, pid, prio, prev_state letter (sched_blocked_reason lines not compared)", func(t *testing.T, d *confData) {
		re := regexp.MustCompile(`\[(\d+)\] \.\.\.\. ([0-9.]+): sched_switch: (.*)$`)
		var want [][]string
		for _, row := range d.rows {
			if m := re.FindStringSubmatch(row[0]); m != nil {
				cpu, _ := strconv.Atoi(m[1])
				want = append(want, []string{strconv.Itoa(cpu), m[2], m[3]})
			}
		}
		var got [][]string
		for _, e := range d.evs {
			if e.Kind != timeline.KindSwitch {
				continue
			}
			got = append(got, []string{i64(int64(e.CPU)), e.Time.Seconds(), fmt.Sprintf(
				"prev_comm=%s prev_pid=%d prev_prio=%s prev_state=%s ==> next_comm=%s next_pid=%d next_prio=%s",
				d.strs.Get(e.OComm), e.Other, tpPrio(e.OPrio), tpState(e.State), d.strs.Get(e.Comm), e.Task, tpPrio(e.Prio))})
		}
		compareSets(t, got, want)
	}},
	"Parsing__task_newtask_waker_utid": {"waker of each new task's first runnable state = its creator (task_newtask's FtraceEvent.pid), numbered as trace_processor numbers threads", func(t *testing.T, d *confData) {
		utid := map[timeline.TID]int{0: 0}
		id := func(tid timeline.TID) int {
			if u, ok := utid[tid]; ok {
				return u
			}
			utid[tid] = len(utid)
			return utid[tid]
		}
		var rows [][]string
		for _, e := range d.evs {
			if e.Kind == timeline.KindNewTask {
				w := id(e.Other)
				id(e.Task)
				rows = append(rows, []string{strconv.Itoa(w)})
			}
		}
		compareRows(t, rows, d.rows)
	}},
	"LinuxCpu__linux_cpu_idle_stats": {"cpu_idle per CPU and state (raw+1): count, dur, avg_dur; idle_percent not compared (its denominator ends at a cpu_frequency event)", func(t *testing.T, d *confData) {
		type key struct {
			cpu   int64
			state int64
		}
		type acc struct{ n, dur int64 }
		stats := map[key]*acc{}
		open := map[int64]timeline.Event{}
		var keys []key
		for _, e := range d.evs {
			if e.Kind != timeline.KindIdle {
				continue
			}
			if o, ok := open[e.Arg2]; ok {
				k := key{e.Arg2, o.Arg + 1}
				if stats[k] == nil {
					stats[k] = &acc{}
					keys = append(keys, k)
				}
				stats[k].n++
				stats[k].dur += int64(e.Time - o.Time)
				delete(open, e.Arg2)
			}
			if e.Arg >= 0 {
				open[e.Arg2] = e
			}
		}
		var rows [][]string
		for _, k := range keys {
			a := stats[k]
			rows = append(rows, []string{i64(k.cpu), i64(k.state), i64(a.n), i64(a.dur), i64(a.dur / a.n)})
		}
		compareRows(t, rows, column(d.rows, 0, 1, 2, 3, 4))
	}},
	"ProcessTracking__cmdline_is_comm_for_kthreads": {"tid, pid (process tree tgid), thread name (Meta.Tasks), process name (cmdline, which is the comm)", func(t *testing.T, d *confData) {
		checkKthreadRows(t, d)
	}},
	"ProcessTracking__kworker_main_thread_name_redacted": {"tid, pid, thread and process name of a kworker: the workqueue suffix /proc appends to the comm is dropped", func(t *testing.T, d *confData) {
		checkKthreadRows(t, d)
	}},
	"ProcessTracking__main_thread_comm_from_process_tree": {"tid, pid, thread name (Thread entry), process name (cmdline[0])", func(t *testing.T, d *confData) {
		for _, row := range d.rows {
			tid, pid := timeline.TID(atoi(t, row[0])), timeline.TID(atoi(t, row[1]))
			ti := d.r.Meta().Tasks[tid]
			p := d.r.Processes()[pid]
			got := []string{i64(int64(tid)), i64(int64(ti.TGID)), ti.Comm, p.Cmdline[0]}
			compareRows(t, [][]string{got}, [][]string{row})
		}
	}},
	"ProcessTracking__process_age_optionality": {"pid, cmdline (start_ts not decoded)", func(t *testing.T, d *confData) {
		var rows [][]string
		for _, row := range d.rows {
			pid := timeline.TID(atoi(t, row[0]))
			rows = append(rows, []string{row[0], strings.Join(d.r.Processes()[pid].Cmdline, " ")})
		}
		compareRows(t, rows, column(d.rows, 0, 2))
	}},
	"ProcessTracking__process_is_kthread_from_procfs": {"pid, is_kthread, cmdline", func(t *testing.T, d *confData) {
		var rows [][]string
		for _, row := range d.rows {
			pid := timeline.TID(atoi(t, row[0]))
			p := d.r.Processes()[pid]
			k := "0"
			if p.IsKthread {
				k = "1"
			}
			rows = append(rows, []string{row[0], k, strings.Join(p.Cmdline, " ")})
		}
		compareRows(t, rows, d.rows)
	}},
	"Tables__thread_main_thread": {"is_main_thread from the process tree: tid == tgid, another tgid, or unknown (NULL)", func(t *testing.T, d *confData) {
		var rows [][]string
		for _, row := range d.rows {
			tid := timeline.TID(atoi(t, row[0]))
			v := "[NULL]"
			if ti, ok := d.r.Meta().Tasks[tid]; ok && ti.TGID >= 0 {
				v = "0"
				if ti.TGID == int32(tid) {
					v = "1"
				}
			}
			rows = append(rows, []string{row[0], v})
		}
		compareRows(t, rows, d.rows)
	}},
	"ProcessTracking__process_parent_pid_process_parent_pid_tracking_1": {"child -> parent pid from the process tree's ppid or the creator's thread group (task_newtask)", checkParents},
	"ProcessTracking__process_parent_pid_process_parent_pid_tracking_2": {"as _1, with the process tree after the task_newtask", checkParents},
	"ProcessTracking__process_tracking": {"thread names, process names and tid -> pid against the process tree, switch comms and task_newtask", func(t *testing.T, d *confData) {
		checkProcessRows(t, d, d.rows, 0, 1, 2, 3)
	}},
	"ProcessTracking__process_tracking_machine_id": {"as process_tracking; every packet has machine_id 1001, read as the one machine", func(t *testing.T, d *confData) {
		checkProcessRows(t, d, d.rows, 0, 1, 2, 3)
		if n := d.r.Meta().Unknown["packets_of_other_machines"]; n != 0 {
			t.Errorf("%d packets taken for another machine's", n)
		}
	}},
	"ProcessTracking__process_tracking_process_tracking_exec": {"names after task_rename and a later process tree", func(t *testing.T, d *confData) {
		checkProcessRows(t, d, d.rows, 0, 1, 2, 3)
	}},
	"ProcessTracking__process_tracking_process_tracking_short_lived_1": {"names of a short-lived child (task_newtask, sched_process_free)", func(t *testing.T, d *confData) {
		checkProcessRows(t, d, d.rows, 0, 1, 2, 3)
	}},
	"ProcessTracking__process_tracking_process_tracking_short_lived_2": {"names of a short-lived child renamed by task_rename", func(t *testing.T, d *confData) {
		checkProcessRows(t, d, d.rows, 0, 1, 2, 3)
	}},
	"ProcessTracking__process_tracking_reused_thread_print": {"names and processes of a tid reused after sched_process_free", func(t *testing.T, d *confData) {
		checkProcessRows(t, d, d.rows, 0, 1, 2, 3)
	}},
	"Parsing__cpu": {"cpu, cluster_id (by max frequency); processor not kept", func(t *testing.T, d *confData) {
		compareRows(t, cpuRows(t, d, "cpu", "cluster_id"), column(d.rows, 0, 1))
	}},
	"Parsing__cpu_machine_id": {"cpu, cluster_id with machine_id on the cpu_info packet", func(t *testing.T, d *confData) {
		compareRows(t, cpuRows(t, d, "cpu", "cluster_id"), column(d.rows, 0, 1))
	}},
	"Parsing__cpu_capacity_present": {"cpu, cluster_id (by capacity), capacity", func(t *testing.T, d *confData) {
		compareRows(t, cpuRows(t, d, "cpu", "cluster_id", "capacity"), column(d.rows, 0, 1, 2))
	}},
	"Parsing__cpu_capacity_not_present": {"cpu, cluster_id (by frequency); capacity is NULL upstream, 1024 (the topology default) here", func(t *testing.T, d *confData) {
		compareRows(t, cpuRows(t, d, "cpu", "cluster_id"), column(d.rows, 0, 1))
		for _, c := range d.r.Meta().Topology.CPUs {
			if c.Capacity != 1024 {
				t.Errorf("CPU %d capacity %d, want the default 1024", c.ID, c.Capacity)
			}
		}
	}},
	"Tables__machine": {"host machine's release and num_cpus (Meta.Kernel, NCPU); the remote machine's packet is skipped", func(t *testing.T, d *confData) {
		m := d.r.Meta()
		compareRows(t, [][]string{{m.Kernel, strconv.Itoa(m.NCPU)}}, column(d.rows[:1], 4, 7))
		if m.Unknown["packets_of_other_machines"] != 1 {
			t.Errorf("packets of other machines = %d, want 1", m.Unknown["packets_of_other_machines"])
		}
	}},
	"Tables__metadata": {"system_release (Meta.Kernel); the other keys are not decoded", func(t *testing.T, d *confData) {
		for _, row := range d.rows {
			if row[0] == "system_release" && row[1] != d.r.Meta().Kernel {
				t.Errorf("Kernel = %q, want %q", d.r.Meta().Kernel, row[1])
			}
		}
	}},
	"Tables__metadata_schema": {"ftrace_latest_data_start_ns of the host (the latest KindBufferStart.Start); system_name and other machines not compared", func(t *testing.T, d *confData) {
		for _, row := range d.rows {
			if row[0] == "ftrace_latest_data_start_ns" && row[4] == "0" {
				compareRows(t, [][]string{{i64(int64(latestDataStart(d.evs)))}}, [][]string{{row[2]}})
			}
		}
	}},
}

// notApplicable gives the reason each remaining case is not compared.
var notApplicable = map[string]string{
	"Parsing__sched_blocked_systrace_sched_blocked_reason":                 "systrace text input, not Perfetto protobuf (ingest/ftrace's format)",
	"ProcessTracking__unknown_thread_name_tracking":                        "systrace text input, not Perfetto protobuf",
	"Parsing__task_newtask_swapper_by_init":                                "the expected name \"swapper\" is trace_processor's built-in name for tid 0, not in the trace; the task_newtask events themselves are decoded (see TestConformanceDecodes)",
	"ProcessTracking__process_reparent_and_reuse":                          "pid reuse across process tree snapshots: Reader.Processes keeps the latest entry per pid, trace_processor keeps one process per lifetime",
	"ProcessTracking__process_tracking_uid":                                "uid is not decoded (schedlens has no use for it)",
	"Parsing__cpu_features":                                                "CpuInfo features / arm identifiers are not decoded",
	"Parsing__cpu_features_unknown_stat":                                   "CpuInfo features are not decoded",
	"Parsing__cpu_freq":                                                    "available frequencies are not kept in topology.Topology",
	"Parsing__cpu_freq_machine_id":                                         "available frequencies are not kept in topology.Topology",
	"CpuClusters__android_cpu_cluster_type_capacity_not_present":           "Android stdlib little/medium/big classification, not a topology fact",
	"CpuClusters__android_cpu_cluster_type_five_core":                      "Android stdlib little/medium/big classification, not a topology fact",
	"CpuClusters__android_cpu_cluster_type_four_core":                      "Android stdlib little/medium/big classification, not a topology fact",
	"CpuClusters__android_cpu_cluster_type_insufficient_data_to_calculate": "Android stdlib little/medium/big classification, not a topology fact",
	"CpuClusters__android_cpu_cluster_type_no_frequencies":                 "Android stdlib little/medium/big classification, not a topology fact",
	"CpuClusters__android_cpu_cluster_type_one_core":                       "Android stdlib little/medium/big classification, not a topology fact",
	"CpuClusters__android_cpu_cluster_type_three_core":                     "Android stdlib little/medium/big classification, not a topology fact",
	"CpuClusters__android_cpu_cluster_type_two_core":                       "Android stdlib little/medium/big classification, not a topology fact",
}

func checkKthreadRows(t *testing.T, d *confData) {
	for _, row := range d.rows {
		tid, pid := timeline.TID(atoi(t, row[0])), timeline.TID(atoi(t, row[1]))
		ti := d.r.Meta().Tasks[tid]
		pname := d.r.Meta().Tasks[pid].Comm // cmdline_is_comm: the process name is the comm
		got := []string{i64(int64(tid)), i64(int64(ti.TGID)), ti.Comm, pname}
		compareRows(t, [][]string{got}, [][]string{row})
	}
}

func checkParents(t *testing.T, d *confData) {
	tasks := d.r.Meta().Tasks
	for _, row := range d.rows {
		child, parent := timeline.TID(atoi(t, row[0])), timeline.TID(atoi(t, row[1]))
		ok := false
		if p, found := d.r.Processes()[child]; found && p.PPID == parent {
			ok = true
		}
		for _, e := range d.evs {
			if e.Kind == timeline.KindNewTask && e.Task == child {
				if ti, found := tasks[e.Other]; found && ti.TGID == int32(parent) {
					ok = true
				}
			}
		}
		if !ok {
			t.Errorf("process %d: parent %d not found in the process tree or task_newtask", child, parent)
		}
	}
}

// dRows returns (ts, tid) of every switch-out in D, swapper excluded.
func dRows(d *confData) [][]string {
	var rows [][]string
	for _, e := range d.evs {
		if e.Kind == timeline.KindSwitch && e.Other != 0 && tpState(e.State) == "D" {
			rows = append(rows, []string{i64(int64(e.Time)), i64(int64(e.Other))})
		}
	}
	return rows
}

// TestConformance runs every case of fixtures/perfetto-conformance that is
// about sched slices, thread states, wakeups, names or CPU topology against
// the expected rows of upstream's query, and lists why the others are not
// compared. Every case of index.json must be in one of the two tables.
func TestConformance(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(confDir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var index []struct{ Folder string }
	if err := json.Unmarshal(raw, &index); err != nil {
		t.Fatal(err)
	}
	if len(index) == 0 {
		t.Fatal("index.json lists no case")
	}
	for _, c := range index {
		t.Run(c.Folder, func(t *testing.T) {
			cc, ok := confCases[c.Folder]
			if !ok {
				reason, na := notApplicable[c.Folder]
				if !na {
					t.Fatalf("case %s is in neither confCases nor notApplicable", c.Folder)
				}
				t.Skip("not applicable: " + reason)
			}
			dir := filepath.Join(confDir, c.Folder)
			d := &confData{strs: timeline.NewStrings()}
			d.evs, d.r = mustDecode(t, readFixture(t, filepath.Join(dir, "trace.pb")), parse.Options{Name: c.Folder, Strings: d.strs})
			d.header, d.rows = readCSV(t, filepath.Join(dir, "expected.csv"))
			cc.check(t, d)
		})
	}
	for name := range confCases {
		if _, err := os.Stat(filepath.Join(confDir, name)); err != nil {
			t.Errorf("confCases names %s, which is not in the corpus", name)
		}
	}
}

// TestConformanceDecodes checks that every binary trace of the corpus
// decodes without error, including the cases whose query is not compared.
func TestConformanceDecodes(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(confDir, "*", "trace.pb"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no trace.pb under %s (%v)", confDir, err)
	}
	for _, p := range paths {
		evs, r := mustDecode(t, readFixture(t, p), parse.Options{Name: p})
		if strings.Contains(p, "task_newtask_swapper_by_init") {
			if n := kindCounts(evs)[timeline.KindNewTask]; n != 5 {
				t.Errorf("%s: %d task_newtask events, want 5", p, n)
			}
		}
		_ = r
	}
}
