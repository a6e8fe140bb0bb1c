package whatif

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// pairTimeline reads an ftrace text without a CPU-count header in which
// task a (pid 101) runs on CPU 0 and task b (pid 102) on CPU cpuB, each 2 ms
// on, 1 ms asleep, 50 times.
func pairTimeline(t *testing.T, cpuB int) *timeline.Timeline {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("# tracer: nop\n#\n")
	ts := 100.0
	line := func(comm string, pid, cpu int, body string) {
		fmt.Fprintf(&sb, "%16s-%-7d [%03d] d..2. %.6f: %s\n", comm, pid, cpu, ts, body)
	}
	for range 50 {
		for k, cpu := range []int{0, cpuB} {
			comm, pid, idle := string(rune('a'+k)), 101+k, fmt.Sprintf("swapper/%d", cpu)
			line(comm, pid, cpu, fmt.Sprintf("sched_switch: prev_comm=%s prev_pid=%d prev_prio=120 prev_state=S ==> next_comm=%s next_pid=0 next_prio=120", comm, pid, idle))
			ts += 0.001
			line("<idle>", 0, cpu, fmt.Sprintf("sched_waking: comm=%s pid=%d prio=120 target_cpu=%03d", comm, pid, cpu))
			line("<idle>", 0, cpu, fmt.Sprintf("sched_switch: prev_comm=%s prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=%s next_pid=%d next_prio=120", idle, comm, pid))
			ts += 0.002
		}
	}
	ld, err := ingest.LoadReader(strings.NewReader(sb.String()), "pair.txt", parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ld.Timeline
}

// TestReplaySparseCPUs: issue 16 item 2, sparse CPU ids. A trace naming
// CPUs 0 and 4095 and no other replays on the two CPUs it shows, renumbered
// 0 and 1 for the model and reported under 0 and 4095: the same modeled
// schedule, figures and model work as the trace on CPUs 0 and 1. Before, the
// model ran 4096 CPUs: 4094 idle balancing passes and 4494 modeled events
// instead of 400, 3.4 s (CPU 8191 through the command: 12.9 s, quadratic in
// the highest CPU number) and 37.2 MB allocated against 0.27 MB for CPUs
// 0,1. What stays linear in the highest CPU number is reading and measuring
// (per-CPU arrays of the timeline, the assumed topology, the metrics): 7.7
// MB, about 1.8 KB per CPU number, bounded by topology.MaxCPUs.
func TestReplaySparseCPUs(t *testing.T) {
	run := func(cpuB int) (*Run, float64) {
		tl := pairTimeline(t, cpuB)
		if tl.NCPU != cpuB+1 {
			t.Fatalf("CPU %d: the timeline has %d CPUs", cpuB, tl.NCPU)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := Replay(tl, "6.12", Options{Seed: 1})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatalf("CPU %d: %v", cpuB, err)
		}
		return r, float64(after.TotalAlloc - before.TotalAlloc)
	}
	dense, denseAlloc := run(1)
	sparse, sparseAlloc := run(4095)
	t.Logf("CPUs 0,1: %.2f MB; CPUs 0,4095: %.2f MB (ratio %.2f)", denseAlloc/1e6, sparseAlloc/1e6, sparseAlloc/denseAlloc)
	if perCPU := (sparseAlloc - denseAlloc) / 4094; perCPU > 3000 {
		t.Errorf("CPUs 0,4095 allocate %.2f MB, %.0f B per CPU number more than CPUs 0,1: want the model sized by the CPUs present (reading and measuring take about 1.8 KB)", sparseAlloc/1e6, perCPU)
	}
	// The model did the dense run's work, event for event.
	if !reflect.DeepEqual(sparse.Result.Counters, dense.Result.Counters) || sparse.Result.Steps != dense.Result.Steps || sparse.Result.Emitted != dense.Result.Emitted {
		t.Errorf("model work on CPUs 0,4095: %d steps, %d events, counters %v\non CPUs 0,1: %d steps, %d events, counters %v",
			sparse.Result.Steps, sparse.Result.Emitted, sparse.Result.Counters, dense.Result.Steps, dense.Result.Emitted, dense.Result.Counters)
	}

	// The modeled schedule under the trace's CPU numbers: a on 0, b on 4095.
	sim := sparse.Result.Timeline
	if sim.NCPU != 4096 || sim.Topology == nil || sim.Topology.NCPU() != 4096 {
		t.Fatalf("modeled timeline: %d CPUs, topology %v; want the trace's 4096", sim.NCPU, sim.Topology)
	}
	onCPU := map[timeline.TID]map[int16]bool{}
	for i := range sim.Len() {
		if sim.Kinds[i] != timeline.KindSwitch || sim.TaskOf[i] == timeline.NoTask {
			continue
		}
		pid := sim.Tasks[sim.TaskOf[i]].PID
		if onCPU[pid] == nil {
			onCPU[pid] = map[int16]bool{}
		}
		onCPU[pid][sim.CPUs[i]] = true
	}
	if !reflect.DeepEqual(onCPU[101], map[int16]bool{0: true}) || !reflect.DeepEqual(onCPU[102], map[int16]bool{4095: true}) {
		t.Errorf("modeled CPUs: a on %v, b on %v; want a on 0, b on 4095", onCPU[101], onCPU[102])
	}
	// Renumbering is all that differs: the same figures as the dense trace.
	if !reflect.DeepEqual(sparse.Modeled.Overall, dense.Modeled.Overall) || !reflect.DeepEqual(sparse.Modeled.Tasks, dense.Modeled.Tasks) {
		t.Errorf("modeled figures differ:\nCPUs 0,4095: %+v\nCPUs 0,1:    %+v", sparse.Modeled.Overall, dense.Modeled.Overall)
	}
	if sparse.Modeled.Overall.RunNs < 490e6 {
		t.Errorf("modeled run time %d ns, want about 491 ms (100 runs of 2 ms, the window starting 3 ms in)", sparse.Modeled.Overall.RunNs)
	}
	if !slices.ContainsFunc(sparse.Notes, func(n string) bool { return strings.Contains(n, "cpus-present") && strings.Contains(n, "0,4095") }) {
		t.Errorf("notes %q: want the cpus-present assumption naming CPUs 0,4095", sparse.Notes)
	}
	if slices.ContainsFunc(dense.Notes, func(n string) bool { return strings.Contains(n, "cpus-present") }) {
		t.Errorf("CPUs 0,1: notes %q name cpus-present, want none (every CPU shown)", dense.Notes)
	}
}

// TestPresentCPUs: which CPUs of an assumed topology a recording shows.
func TestPresentCPUs(t *testing.T) {
	tl := &timeline.Timeline{NCPU: 16, CPUFirst: make([]timeline.Time, 16)}
	for c := range tl.CPUFirst {
		tl.CPUFirst[c] = timeline.NoTime
	}
	tl.CPUFirst[0], tl.CPUFirst[15] = 5, 7
	w := &replay.Workload{Tasks: []replay.Task{{
		CPU:      3,
		CPUs:     topology.NewCPUSet(0, 9),
		Affinity: []replay.AffinityChange{{CPUs: topology.NewCPUSet(11)}},
		Segments: []replay.Segment{{Wake: replay.Wake{CPU: 5}}, {Wake: replay.Wake{CPU: -1}}},
	}}, Unobserved: []timeline.Gap{{CPU: 12}}}
	topo := topology.Symmetric(16)
	keep, ok := presentCPUs(tl, w, topo)
	if want := "0,3,5,9,11-12,15"; !ok || keep.String() != want {
		t.Errorf("present CPUs %s (%v), want %s", keep, ok, want)
	}
	// A read topology's CPUs exist whether the trace shows them or not.
	read := topology.Symmetric(16)
	read.Source = "file:topology.txt"
	if keep, ok := presentCPUs(tl, w, read); ok {
		t.Errorf("read topology: present CPUs %s, want every CPU kept", keep)
	}
	// A read topology's offline CPUs are dropped unless the trace shows
	// them: 13 and 14 show nothing, 11 is only in an allowed set (a mask
	// keeps an offline CPU), 12 holds a gap, 15 has events.
	for _, c := range []int{11, 12, 13, 14, 15} {
		read.CPUs[c].Offline = true
	}
	if keep, ok := presentCPUs(tl, w, read); !ok || keep.String() != "0-10,12,15" {
		t.Errorf("read topology with CPUs 11-15 offline: present CPUs %s (%v), want 0-10,12,15", keep, ok)
	}
	// Every CPU shown: nothing to renumber.
	for c := range tl.CPUFirst {
		tl.CPUFirst[c] = 1
	}
	if keep, ok := presentCPUs(tl, w, topo); ok {
		t.Errorf("every CPU shown: present CPUs %s, want none to renumber", keep)
	}
}

// TestReplayOfflineCPU: a real recording made with CPU 1 of 2 offline
// (schedlens record; its topology marks CPU 1 offline) is replayed on the
// one CPU it had. Modeled on two, its CPU time was 1.44x the recorded
// (the work ran in parallel) and its runnable time 0.24x.
func TestReplayOfflineCPU(t *testing.T) {
	const path = "../fixtures/ab/pipe-workers-host/cpu1_offline/new-1/trace.pftrace.zst"
	ld, err := ingest.Load(path, ingest.Options{Name: path})
	if err != nil {
		t.Fatal(err)
	}
	if topo := ld.Meta.Topology; topo == nil || topo.NCPU() != 2 || !topo.CPUs[1].Offline || topo.CPUs[0].Offline {
		t.Fatalf("recorded topology %+v: want 2 CPUs, CPU 1 offline", topo)
	}
	r, err := Replay(ld.Timeline, "6.18", Options{Topology: ld.Meta.Topology, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool {
		return strings.Contains(n, "cpus-present") && strings.Contains(n, "CPU 1 was offline")
	}) {
		t.Errorf("notes %q: want the cpus-present assumption naming CPU 1 offline", r.Notes)
	}
	rec, mod := r.Recorded.Overall, r.Modeled.Overall
	if mod.Migrations != 0 {
		t.Errorf("modeled %d migrations on one CPU, want 0", mod.Migrations)
	}
	for _, f := range []struct {
		name     string
		rec, mod float64
	}{{"CPU time", float64(rec.RunNs), float64(mod.RunNs)}, {"runnable time", float64(rec.RunnableNs), float64(mod.RunnableNs)}} {
		if ratio := f.mod / f.rec; ratio < 0.95 || ratio > 1.05 {
			t.Errorf("%s: modeled %.0f ns, recorded %.0f ns (ratio %.3f), want within 5%%", f.name, f.mod, f.rec, ratio)
		}
	}
}
