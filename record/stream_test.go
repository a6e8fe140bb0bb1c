package record

import (
	"fmt"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// logSink records sink calls as text lines.
type logSink struct {
	strs  *timeline.Strings
	lines []string
}

func (s *logSink) Task(pid timeline.TID, tgid int32, comm string) error {
	s.lines = append(s.lines, fmt.Sprintf("task %d/%d %s", pid, tgid, comm))
	return nil
}

func (s *logSink) Add(ev *timeline.Event) error {
	if ev.Kind == timeline.KindLost {
		s.lines = append(s.lines, fmt.Sprintf("%d cpu%d lost %d start=%d", ev.Time, ev.CPU, ev.Arg, ev.Start))
		return nil
	}
	s.lines = append(s.lines, fmt.Sprintf("%d cpu%d %v %d %s", ev.Time, ev.CPU, ev.Kind, ev.Task, s.strs.Get(ev.Comm)))
	return nil
}

func (s *logSink) AddAffinity(a timeline.AffinityChange) error {
	s.lines = append(s.lines, fmt.Sprintf("%d affinity %d cpus=%s", a.At, a.TID, a.CPUs))
	return nil
}

func (s *logSink) AddGroup(g timeline.GroupChange) error {
	s.lines = append(s.lines, fmt.Sprintf("%d group %d path=%s weight=%d autogroup=%d nice=%d", g.At, g.TID, g.Path, g.Weight, g.Autogroup, g.AutogroupNice))
	return nil
}

// rec builds a decoded switch-in of pid at time ts on cpu.
func rec(strs *timeline.Strings, ts timeline.Time, cpu int, pid int, comm string, lost uint32) decoded {
	var d decoded
	d.ev.Reset()
	d.ev.Time, d.ev.CPU, d.ev.Kind = ts, timeline.CPU(cpu), timeline.KindSwitch
	d.ev.Task, d.ev.Comm = timeline.TID(pid), strs.IDString(comm)
	d.ev.Other, d.ev.OComm = 0, strs.IDString("swapper")
	d.tgid, d.otgid = int32(pid), 0
	d.lost = lost
	return d
}

func TestStream(t *testing.T) {
	const ms = timeline.Time(1e6)
	type step struct {
		push    []decoded
		release timeline.Time // 0: finish with final drop counts
		final   []uint64
	}
	strs := timeline.NewStrings()
	tests := []struct {
		name  string
		steps []step
		want  []string
	}{
		{
			name: "sorted across CPUs, tasks declared once",
			steps: []step{
				{push: []decoded{rec(strs, 100*ms, 0, 5, "a", 0), rec(strs, 90*ms, 1, 6, "b", 0), rec(strs, 110*ms, 0, 5, "a", 0)}, release: 200 * ms},
			},
			want: []string{
				"task 6/6 b", "90000000 cpu1 sched_switch 6 b",
				"task 5/5 a", "100000000 cpu0 sched_switch 5 a",
				"110000000 cpu0 sched_switch 5 a",
			},
		},
		{
			name: "held back until the horizon passes",
			steps: []step{
				{push: []decoded{rec(strs, 100*ms, 0, 5, "a", 0), rec(strs, 150*ms, 0, 5, "a", 0)}, release: 120 * ms},
				{push: []decoded{rec(strs, 140*ms, 0, 7, "c", 0)}, release: 0},
			},
			want: []string{
				"task 5/5 a", "100000000 cpu0 sched_switch 5 a",
				"task 7/7 c", "140000000 cpu0 sched_switch 7 c",
				"150000000 cpu0 sched_switch 5 a",
			},
		},
		{
			name: "merge of five CPUs, ties to the lower CPU",
			steps: []step{
				{push: []decoded{
					rec(strs, 30*ms, 4, 1, "a", 0), rec(strs, 10*ms, 3, 2, "b", 0), rec(strs, 30*ms, 2, 3, "c", 0),
					rec(strs, 20*ms, 1, 4, "d", 0), rec(strs, 40*ms, 1, 4, "d", 0), rec(strs, 35*ms, 1, 4, "d", 0),
				}, release: 0},
			},
			want: []string{
				"task 2/2 b", "10000000 cpu3 sched_switch 2 b",
				"task 4/4 d", "20000000 cpu1 sched_switch 4 d",
				"task 3/3 c", "30000000 cpu2 sched_switch 3 c",
				"task 1/1 a", "30000000 cpu4 sched_switch 1 a",
				"35000000 cpu1 sched_switch 4 d",
				"40000000 cpu1 sched_switch 4 d",
			},
		},
		{
			name: "late record after release is clamped",
			steps: []step{
				{push: []decoded{rec(strs, 100*ms, 0, 5, "a", 0)}, release: 120 * ms},
				{push: []decoded{rec(strs, 90*ms, 0, 7, "c", 0)}, release: 0},
			},
			want: []string{
				"task 5/5 a", "100000000 cpu0 sched_switch 5 a",
				"task 7/7 c", "100000000 cpu0 sched_switch 7 c",
			},
		},
		{
			name: "drops become a lost event before the next record of the CPU",
			steps: []step{
				{push: []decoded{rec(strs, 100*ms, 1, 5, "a", 0), rec(strs, 105*ms, 0, 6, "b", 0), rec(strs, 130*ms, 1, 5, "a", 12)}, release: 0},
			},
			want: []string{
				"task 5/5 a", "100000000 cpu1 sched_switch 5 a",
				"task 6/6 b", "105000000 cpu0 sched_switch 6 b",
				"130000000 cpu1 lost 12 start=100000000",
				"130000000 cpu1 sched_switch 5 a",
			},
		},
		{
			name: "drops before the first record have no start",
			steps: []step{
				{push: []decoded{rec(strs, 100*ms, 0, 5, "a", 3)}, release: 0},
			},
			want: []string{
				"100000000 cpu0 lost 3 start=" + fmt.Sprint(int64(timeline.NoTime)),
				"task 5/5 a", "100000000 cpu0 sched_switch 5 a",
			},
		},
		{
			name: "drops after the last record come at the end",
			steps: []step{
				{push: []decoded{rec(strs, 100*ms, 0, 5, "a", 2), rec(strs, 120*ms, 1, 6, "b", 0)}, release: 0, final: []uint64{7, 1}},
			},
			want: []string{
				"100000000 cpu0 lost 2 start=" + fmt.Sprint(int64(timeline.NoTime)),
				"task 5/5 a", "100000000 cpu0 sched_switch 5 a",
				"task 6/6 b", "120000000 cpu1 sched_switch 6 b",
				"100000000 cpu0 lost 5 start=100000000",
				"120000000 cpu1 lost 1 start=120000000",
			},
		},
		{
			name: "drops on a CPU without records are placed at the end of the trace",
			steps: []step{
				{push: []decoded{rec(strs, 100*ms, 0, 5, "a", 0)}, release: 0, final: []uint64{0, 4}},
			},
			want: []string{
				"task 5/5 a", "100000000 cpu0 sched_switch 5 a",
				"100000000 cpu1 lost 4 start=100000000",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := &logSink{strs: strs}
			s := newStream(sink, strs, 2)
			for _, st := range tc.steps {
				for i := range st.push {
					s.push(&st.push[i])
				}
				var err error
				if st.release == 0 {
					err = s.finish(st.final)
				} else {
					err = s.release(st.release)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			got, want := strings.Join(sink.lines, "\n"), strings.Join(tc.want, "\n")
			if got != want {
				t.Errorf("sink calls:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestStreamFork(t *testing.T) {
	strs := timeline.NewStrings()
	sink := &logSink{strs: strs}
	s := newStream(sink, strs, 1)
	if err := s.declareInitial(10, 10, "sh"); err != nil {
		t.Fatal(err)
	}
	var d decoded
	d.ev.Reset()
	d.ev.Time, d.ev.CPU, d.ev.Kind = 5, 0, timeline.KindFork
	d.ev.Other, d.ev.OComm, d.otgid = 10, strs.IDString("sh"), 10
	d.ev.Task, d.ev.Comm, d.tgid = 11, strs.IDString("sh"), 11
	s.push(&d)
	if err := s.finish(nil); err != nil {
		t.Fatal(err)
	}
	want := "task 10/10 sh\ntask 11/11 sh\n5 cpu0 sched_process_fork 11 sh"
	if got := strings.Join(sink.lines, "\n"); got != want {
		t.Errorf("sink calls:\n%s\nwant:\n%s", got, want)
	}
	if s.tasks != 2 || s.events != 1 {
		t.Errorf("tasks, events = %d, %d, want 2, 1", s.tasks, s.events)
	}
}

func TestHorizon(t *testing.T) {
	strs := timeline.NewStrings()
	s := newStream(&logSink{strs: strs}, strs, 2)
	w := timeline.Time(reorderWindow)
	if h := s.horizon(1000*w, false); h != timeline.NoTime {
		t.Errorf("horizon with nothing read = %d, want NoTime", h)
	}
	a, b := rec(strs, 10*w, 0, 1, "a", 0), rec(strs, 20*w, 1, 2, "b", 0)
	s.push(&a)
	s.push(&b)
	tests := []struct {
		name    string
		emptied bool
		want    timeline.Time
	}{
		{"emptied", true, 99 * w},
		{"behind", false, 9 * w},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.horizon(100*w, tc.emptied); got != tc.want {
				t.Errorf("horizon = %d, want %d", got, tc.want)
			}
		})
	}
}

func BenchmarkStream(b *testing.B) {
	strs := timeline.NewStrings()
	s := newStream(nopSink{}, strs, 2)
	recs := make([]decoded, 4096)
	for i := range recs {
		recs[i] = rec(strs, 0, i%2, 100+i%50, "hackbench", 0)
	}
	b.ReportAllocs()
	var t timeline.Time
	n := 0
	for b.Loop() {
		for i := range recs {
			t += 1000
			recs[i].ev.Time = t
			s.push(&recs[i])
		}
		if err := s.release(t - 100000); err != nil {
			b.Fatal(err)
		}
		n += len(recs)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

type nopSink struct{}

func (nopSink) Task(timeline.TID, int32, string) error    { return nil }
func (nopSink) Add(*timeline.Event) error                 { return nil }
func (nopSink) AddAffinity(timeline.AffinityChange) error { return nil }
func (nopSink) AddGroup(timeline.GroupChange) error       { return nil }

// attrsRec builds a decoded task attribute record.
func attrsRec(ts timeline.Time, cpu, pid int, cgroup uint64, ag int64, nice int32, cpus ...int) decoded {
	var d decoded
	d.ev.Reset()
	d.ev.Time, d.ev.CPU, d.ev.Task = ts, timeline.CPU(cpu), timeline.TID(pid)
	d.tgid, d.otgid = int32(pid), -1
	d.attrs = &taskAttrs{cpus: topology.NewCPUSet(cpus...), cgroup: cgroup, autogroup: ag, autogroupNice: nice}
	return d
}

// fakeGroups names cgroup ids from a table and counts the look-ups.
type fakeGroups struct {
	paths   map[uint64]string
	weights map[uint64]int
	calls   int
}

func (f *fakeGroups) resolve(pid timeline.TID, id uint64) (string, int) {
	f.calls++
	return f.paths[id], f.weights[id]
}

// TestStreamAttrs: a task's first attribute record gives an affinity and a
// group change; a repeat gives nothing; a new mask gives only an affinity
// change, a new cgroup or autogroup only a group change (path and weight
// looked up once per change); the root autogroup (0) and a kernel without
// autogroups (-1) are "none"; after sched_process_free the pid starts
// afresh; records travel in time order with the events of their CPU.
func TestStreamAttrs(t *testing.T) {
	strs := timeline.NewStrings()
	sink := &logSink{strs: strs}
	s := newStream(sink, strs, 2)
	groups := &fakeGroups{paths: map[uint64]string{1: "/", 7: "/work.slice"}, weights: map[uint64]int{7: 250}}
	s.groups = groups
	free := rec(strs, 70, 1, 5, "a", 0)
	free.ev.Kind = timeline.KindFree
	recs := []decoded{
		attrsRec(10, 0, 5, 1, 3, -2, 0, 1),
		rec(strs, 10, 0, 5, "a", 0),
		attrsRec(20, 1, 5, 1, 3, -2, 0, 1), // repeat
		attrsRec(30, 1, 5, 1, 3, -2, 1),    // pinned to CPU 1
		attrsRec(40, 0, 5, 7, 3, -2, 1),    // moved to another cgroup
		attrsRec(50, 0, 5, 7, 0, 0, 1),     // left its autogroup
		attrsRec(55, 0, 6, 0, -1, 0, 130),  // kernel without autogroups, no cgroup id, CPU 130
		attrsRec(60, 1, 5, 7, 0, 0, 1),     // repeat
		free,
		attrsRec(80, 1, 5, 7, 0, 0, 1), // pid reused: first sight again
	}
	for i := range recs {
		s.push(&recs[i])
	}
	if err := s.finish(nil); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"10 affinity 5 cpus=0-1",
		"10 group 5 path=/ weight=0 autogroup=3 nice=-2",
		"task 5/5 a",
		"10 cpu0 sched_switch 5 a",
		"30 affinity 5 cpus=1",
		"40 group 5 path=/work.slice weight=250 autogroup=3 nice=-2",
		"50 group 5 path=/work.slice weight=250 autogroup=0 nice=0",
		"55 affinity 6 cpus=130",
		"55 group 6 path= weight=0 autogroup=0 nice=0",
		"70 cpu1 sched_process_free 5 a",
		"80 affinity 5 cpus=1",
		"80 group 5 path=/work.slice weight=250 autogroup=0 nice=0",
	}
	if got, w := strings.Join(sink.lines, "\n"), strings.Join(want, "\n"); got != w {
		t.Errorf("sink calls:\n%s\nwant:\n%s", got, w)
	}
	if s.affinity != 4 || s.groupsN != 5 || s.events != 2 {
		t.Errorf("affinity, groups, events = %d, %d, %d; want 4, 5, 2", s.affinity, s.groupsN, s.events)
	}
	if groups.calls != 5 {
		t.Errorf("%d cgroup look-ups, want one per group change (5)", groups.calls)
	}
}
