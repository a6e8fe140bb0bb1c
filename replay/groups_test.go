package replay

import (
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

func TestGroupWeights(t *testing.T) {
	// sched_weight_from_cgroup: cpu.weight x 1024 / 100, rounded to the
	// nearest; autogroups take sched_prio_to_weight[nice + 20].
	for _, tc := range []struct {
		cpuWeight int
		want      int64
	}{{1, 10}, {50, 512}, {100, 1024}, {150, 1536}, {200, 2048}, {333, 3410}, {10000, 102400}} {
		if got, err := CgroupWeight(tc.cpuWeight); err != nil || got != tc.want {
			t.Errorf("CgroupWeight(%d) = %d, %v, want %d", tc.cpuWeight, got, err, tc.want)
		}
	}
	for _, bad := range []int{0, -5, 10001} {
		if _, err := CgroupWeight(bad); err == nil {
			t.Errorf("CgroupWeight(%d) succeeded, want an error", bad)
		}
	}
	for _, tc := range []struct {
		nice int
		want int64
	}{{-20, 88761}, {-1, 1277}, {0, 1024}, {5, 335}, {19, 15}} {
		if got, err := AutogroupWeight(tc.nice); err != nil || got != tc.want {
			t.Errorf("AutogroupWeight(%d) = %d, %v, want %d", tc.nice, got, err, tc.want)
		}
	}
	for _, bad := range []int{-21, 20} {
		if _, err := AutogroupWeight(bad); err == nil {
			t.Errorf("AutogroupWeight(%d) succeeded, want an error", bad)
		}
	}
}

// groupedTimeline replays six tasks (TIDs 1000..1005) with the test FIFO
// policy: a timeline to extract from.
func groupedTimeline(t *testing.T) *timeline.Timeline {
	t.Helper()
	sp := mustSpec(t, `
topology symmetric 2
task t{i} x6
  run 200us
  sleep 100us
  run 100us
`)
	r, err := Simulate(sp.Workload, sp.Topology, newFIFO(0), Options{HZ: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return r.Timeline
}

func TestExtractGroups(t *testing.T) {
	tl := groupedTimeline(t)
	tl.Groups = []timeline.GroupChange{
		// a cgroup with the cpu controller on wins over the autogroup
		{At: 0, TID: 1000, Path: "/a.slice", Weight: 200, Autogroup: 3},
		// an autogroup
		{At: 0, TID: 1001, Autogroup: 2, AutogroupNice: 5},
		// the cpu controller off: the autogroup
		{At: 0, TID: 1002, Path: "/b.slice", Autogroup: 2, AutogroupNice: 5},
		// neither: the root group
		{At: 0, TID: 1003, Path: "/"},
		// moves from /autogroup-2 to /autogroup-4 later: kept in the first
		{At: 0, TID: 1004, Autogroup: 2, AutogroupNice: 5},
		{At: 200_000, TID: 1004, Autogroup: 4},
		// out of range: clamped to 10000
		{At: 0, TID: 4242, Path: "/big", Weight: 20000},
		// 1005 has no record
	}
	w, err := Extract(tl, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantGroups := []Group{
		{ID: 1, Name: "/a.slice", Weight: 2048},
		{ID: 2, Name: "/autogroup-2", Weight: 335, Autogroup: true},
		{ID: 3, Name: "/autogroup-4", Weight: 1024, Autogroup: true},
		{ID: 4, Name: "/big", Weight: 102400},
	}
	if !reflect.DeepEqual(w.Groups, wantGroups) {
		t.Errorf("groups = %+v, want %+v", w.Groups, wantGroups)
	}

	// sched_autogroup_enabled=0: the autogroups' tasks (1001, 1002, 1004)
	// go to the root group; the cgroups stay, renumbered.
	if moved := w.DropAutogroups(); moved != 3 {
		t.Errorf("DropAutogroups moved %d tasks, want 3", moved)
	}
	wantGroups = []Group{{ID: 1, Name: "/a.slice", Weight: 2048}, {ID: 2, Name: "/big", Weight: 102400}}
	if !reflect.DeepEqual(w.Groups, wantGroups) {
		t.Errorf("groups without autogroups = %+v, want %+v", w.Groups, wantGroups)
	}
	for _, tk := range w.Tasks {
		want := map[timeline.TID]int{1000: 1, 4242: 2}[tk.TID]
		if tk.Group != want {
			t.Errorf("without autogroups task %d (%s): group %d, want %d", tk.TID, tk.Comm, tk.Group, want)
		}
	}
	if err := w.validateGroups(); err != nil {
		t.Errorf("without autogroups: %v", err)
	}
	if moved := w.DropAutogroups(); moved != 0 {
		t.Errorf("a second DropAutogroups moved %d tasks", moved)
	}
	w, _ = Extract(tl, nil)
	wantTask := map[timeline.TID]int{1000: 1, 1001: 2, 1002: 2, 1003: 0, 1004: 2, 1005: 0}
	for _, tk := range w.Tasks {
		if want, ok := wantTask[tk.TID]; ok && tk.Group != want {
			t.Errorf("task %d (%s): group %d, want %d", tk.TID, tk.Comm, tk.Group, want)
		}
		if first := slices.Contains(tk.Flags, AssumeGroupFirstSight); first != (tk.TID == 1004) {
			t.Errorf("task %d: flags %v; want %s only on 1004", tk.TID, tk.Flags, AssumeGroupFirstSight)
		}
	}
	if len(w.Assumptions) < 2 || w.Assumptions[0].Name != AssumeGroups || w.Assumptions[1].Name != AssumeGroupFirstSight {
		t.Fatalf("assumptions %+v, want %s then %s first", w.Assumptions, AssumeGroups, AssumeGroupFirstSight)
	}
	a := w.Assumptions[0]
	for _, part := range []string{"4 groups", "4 tasks in a group", "1 in the root group", "1 with no record", "1 records with a cpu.weight"} {
		if !strings.Contains(a.Detail, part) {
			t.Errorf("assumption %q does not say %q", a.Detail, part)
		}
	}
	if a.Tasks != 4 || w.Assumptions[1].Tasks != 1 {
		t.Errorf("assumption task counts %d, %d, want 4, 1", a.Tasks, w.Assumptions[1].Tasks)
	}
	for _, as := range w.Assumptions {
		if as.Name == AssumeFlatCgroups {
			t.Errorf("workload with groups still assumes %s", AssumeFlatCgroups)
		}
	}
}

func TestExtractWithoutGroups(t *testing.T) {
	w, err := Extract(groupedTimeline(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Groups) != 0 {
		t.Errorf("groups %+v, want none", w.Groups)
	}
	for _, tk := range w.Tasks {
		if tk.Group != 0 {
			t.Errorf("task %d in group %d, want the root group", tk.TID, tk.Group)
		}
	}
	if a := w.Assumptions[0]; a.Name != AssumeFlatCgroups || !strings.Contains(a.Detail, "groups unknown") || !strings.Contains(a.Detail, "every task in the root group") {
		t.Errorf("first assumption %+v, want %s saying groups unknown: every task in the root group", a, AssumeFlatCgroups)
	}
}

func TestSpecGroups(t *testing.T) {
	sp := mustSpec(t, `
group web weight 200
group batch nice 5
group plain
task a group web
  run 1ms
task b{i} x2 group batch
  run 1ms
task c
  run 1ms
`)
	w := sp.Workload
	want := []Group{{ID: 1, Name: "web", Weight: 2048}, {ID: 2, Name: "batch", Weight: 335, Autogroup: true}, {ID: 3, Name: "plain", Weight: 1024}}
	if !reflect.DeepEqual(w.Groups, want) {
		t.Errorf("groups = %+v, want %+v", w.Groups, want)
	}
	for i, g := range []int{1, 2, 2, 0} {
		if w.Tasks[i].Group != g {
			t.Errorf("task %s: group %d, want %d", w.Tasks[i].Comm, w.Tasks[i].Group, g)
		}
	}
	errs := []struct{ name, src, want string }{
		{"undeclared", "task a group x\n  run 1ms\n", `test.spec:1: task a: option group: no group "x" declared`},
		{"twice", "group g\ngroup g nice 1\n", `test.spec:2: group g: declared twice`},
		{"weight-range", "group g weight 0\n", `test.spec:1: group g: cpu.weight 0: want 1..10000`},
		{"weight-high", "group g weight 10001\n", `test.spec:1: group g: cpu.weight 10001: want 1..10000`},
		{"nice-range", "group g nice 20\n", `test.spec:1: group g: autogroup nice 20: want -20..19`},
		{"bad-key", "group g shares 5\n", `test.spec:1: group g: want weight or nice, got "shares"`},
		{"bad-number", "group g weight x\n", `test.spec:1: group g: weight: want a number, got "x"`},
		{"arity", "group g weight\n", `test.spec:1: group: want "group NAME \[weight N \| nice N\]"`},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec(strings.NewReader(tc.src), "test.spec")
			if err == nil || !regexp.MustCompile(tc.want).MatchString(err.Error()) {
				t.Fatalf("ParseSpec error %v, want match for %q", err, tc.want)
			}
			var se *SpecError
			if !errors.As(err, &se) || se.Line < 1 {
				t.Errorf("error %v is not a positioned *SpecError", err)
			}
		})
	}
}

func TestWorkloadJSONGroups(t *testing.T) {
	// Without groups the JSON has no group keys, and JSON written before
	// groups existed reads back with every task in the root group.
	sp := mustSpec(t, "task a\n  run 1ms\n")
	b, err := json.Marshal(sp.Workload)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"group`) {
		t.Errorf("workload without groups marshals group keys: %s", b)
	}
	old := `{"start_ns":0,"end_ns":0,"tasks":[{"tid":1,"tgid":1,"comm":"a","prio":120,"cpu":-1,"segments":[{"wake":{"kind":"start","cpu":-1},"work":5}],"end":"exit"}]}`
	var w Workload
	if err := json.Unmarshal([]byte(old), &w); err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(0); err != nil || w.Tasks[0].Group != 0 || len(w.Groups) != 0 {
		t.Errorf("old JSON: Validate %v, task group %d, %d groups; want nil, 0, 0", err, w.Tasks[0].Group, len(w.Groups))
	}
	// With groups it round-trips.
	sp = mustSpec(t, "group g weight 300\ntask a group g\n  run 1ms\n")
	b, err = json.Marshal(sp.Workload)
	if err != nil {
		t.Fatal(err)
	}
	var back Workload
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, sp.Workload) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", back, *sp.Workload)
	}
	if !strings.Contains(string(b), `"groups":[{"id":1,"name":"g","weight":3072}]`) || !strings.Contains(string(b), `"group":1`) {
		t.Errorf("JSON does not carry the group: %s", b)
	}
}

func TestValidateGroups(t *testing.T) {
	base := func() *Workload {
		return &Workload{
			Groups: []Group{{ID: 1, Name: "/a", Weight: 1024}, {ID: 2, Name: "/b", Weight: 2}},
			Tasks:  []Task{{TID: 1, Comm: "a", Prio: 120, CPU: -1, Group: 2, Segments: []Segment{{Wake: Wake{Kind: WakeStart, CPU: -1}, Work: 10}}}},
		}
	}
	tests := []struct {
		name  string
		edit  func(w *Workload)
		error string
	}{
		{"ok", func(w *Workload) {}, ""},
		{"id-order", func(w *Workload) { w.Groups[1].ID = 5 }, "id 5, want 2"},
		{"no-name", func(w *Workload) { w.Groups[0].Name = "" }, "group 1: no name"},
		{"dup-name", func(w *Workload) { w.Groups[1].Name = "/a" }, `name "/a" already used by group 1`},
		{"weight-low", func(w *Workload) { w.Groups[1].Weight = 1 }, "weight 1, want 2..262144"},
		{"weight-high", func(w *Workload) { w.Groups[0].Weight = 1 << 19 }, "weight 524288"},
		{"task-group-range", func(w *Workload) { w.Tasks[0].Group = 3 }, "group 3, the workload has 2 groups"},
		{"task-group-negative", func(w *Workload) { w.Tasks[0].Group = -1 }, "group -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := base()
			tc.edit(w)
			err := w.Validate(0)
			switch {
			case tc.error == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tc.error != "" && (err == nil || !strings.Contains(err.Error(), tc.error)):
				t.Errorf("Validate = %v, want an error containing %q", err, tc.error)
			}
		})
	}
}
