package compare

import (
	"testing"

	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// want is a figure set worked by hand, in µs where it is a time.
type want struct {
	run, runnable, count, p50, p90, p99, max, mean, preempt, migr, switches, iwr, completion int64
}

func (w want) check(t *testing.T, scope string, f *Figures) {
	t.Helper()
	if f == nil {
		t.Errorf("%s: missing", scope)
		return
	}
	got := want{f.RunNs, f.RunnableNs, f.Wakeup.Count, f.Wakeup.P50Ns, f.Wakeup.P90Ns, f.Wakeup.P99Ns, f.Wakeup.MaxNs, f.Wakeup.MeanNs,
		f.Preemptions, f.Migrations, f.ContextSwitches, f.IdleWithRunnableNs, f.CompletionNs}
	exp := w
	for _, p := range []*int64{&exp.run, &exp.runnable, &exp.p50, &exp.p90, &exp.p99, &exp.max, &exp.iwr, &exp.completion} {
		*p *= 1000
	}
	if got != exp {
		t.Errorf("%s:\n got %+v\nwant %+v (ns)", scope, got, exp)
	}
}

func measureHand(t *testing.T, lines []string, flt metrics.Filter) *Side {
	t.Helper()
	tl := build(t, 2, handNames, handPrios, lines...)
	s, err := Measure(tl, Options{Topology: topology.Symmetric(2), Filter: flt})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMeasureHandWorked checks every figure of every scope against the
// case worked by hand in build_test.go.
func TestMeasureHandWorked(t *testing.T) {
	s := measureHand(t, handRec, metrics.Filter{})
	if s.Window != (metrics.Window{Start: 0, End: 960_000}) || s.Restricted {
		t.Errorf("window %+v, restricted %v", s.Window, s.Restricted)
	}
	// mean 75/4 = 18.75 µs
	want{975, 115, 4, 10, 40, 40, 40, 0, 1, 1, 12, 50, 960}.withMean(18_750).check(t, Overall, &s.Overall)
	app := want{935, 105, 3, 20, 40, 40, 40, 0, 1, 1, 6, 40, 960}.withMean(21_666)
	irqd := want{40, 10, 1, 10, 10, 10, 10, 0, 0, 0, 1, 10, 150}.withMean(10_000)
	app.check(t, "comm:app", s.Scope("comm:app"))
	irqd.check(t, "comm:irqd", s.Scope("comm:irqd"))
	app.check(t, "class:nice 0", s.Scope("class:nice 0"))
	irqd.check(t, "class:rt 50", s.Scope("class:rt 50"))
	if len(s.Comms) != 2 || s.Comms[0].Scope != "comm:app" || len(s.Classes) != 2 || s.Classes[1].Scope != "class:rt 50" {
		t.Errorf("scopes out of order: %v %v", s.Comms, s.Classes)
	}
	// Per task: app 1 first (run + runnable 660), then app 2 (380), irqd.
	if len(s.Tasks) != 3 {
		t.Fatalf("%d tasks, want 3", len(s.Tasks))
	}
	want{600, 60, 1, 20, 20, 20, 20, 0, 1, 0, 3, 40, 960}.withMean(20_000).check(t, "task 1", &s.Tasks[0].Figures)
	want{335, 45, 2, 5, 40, 40, 40, 0, 0, 1, 3, 0, 800}.withMean(22_500).check(t, "task 2", &s.Tasks[1].Figures)
	if s.Tasks[0].PID != 1 || s.Tasks[1].PID != 2 || s.Tasks[2].PID != 3 || s.Tasks[2].Comm != "irqd" {
		t.Errorf("tasks %+v", s.Tasks)
	}
	// The overall wakeup distribution is metrics' own; the sum of the
	// scopes' samples must give the same.
	var all []int64
	for _, tk := range s.Tasks {
		all = append(all, tk.Wakeup.Count)
	}
	if all[0]+all[1]+all[2] != s.Overall.Wakeup.Count {
		t.Errorf("task samples %v do not add up to %d", all, s.Overall.Wakeup.Count)
	}
}

func (w want) withMean(ns int64) want {
	w.mean = ns
	return w
}

// TestMeasureRestricted: a filter restricts every overall figure to the
// selected tasks; context switches become their switch-ins.
func TestMeasureRestricted(t *testing.T) {
	s := measureHand(t, handRec, metrics.Filter{Comms: []string{"irqd"}})
	if !s.Restricted || len(s.Tasks) != 1 || len(s.Comms) != 1 {
		t.Errorf("restricted %v, tasks %+v, comms %v", s.Restricted, s.Tasks, s.Comms)
	}
	want{40, 10, 1, 10, 10, 10, 10, 0, 0, 0, 1, 10, 150}.withMean(10_000).check(t, "overall, comm irqd", &s.Overall)
	s = measureHand(t, handRec, metrics.Filter{PIDs: []timeline.TID{2}})
	want{335, 45, 2, 5, 40, 40, 40, 0, 0, 1, 3, 0, 800}.withMean(22_500).check(t, "overall, pid 2", &s.Overall)
}

// TestCompletionOpenAtEnd: a task still running, or waiting, when the
// window ends has not completed: its scope completes at the window end.
func TestCompletionOpenAtEnd(t *testing.T) {
	tl := build(t, 2, map[int]string{1: "a", 2: "b", 3: "c"}, nil,
		"0 0 switch 0 R 1",
		"0 1 switch 0 R 3",
		"100 0 waking 2 1 0",
		"100 0 wakeup 2 0",
		"200 0 switch 1 S 0",
		"300 0 switch 0 R 2",
		"400 0 switch 2 S 0",
		"450 0 waking 1 0 0 hardirq",
		"500 1 switch 3 S 0",
	)
	s, err := Measure(tl, Options{Topology: topology.Symmetric(2)})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Scope("comm:b").CompletionNs; c != 400_000 {
		t.Errorf("b completes at %d ns, want 400000", c)
	}
	if c := s.Scope("comm:a").CompletionNs; c != 500_000 {
		t.Errorf("a (woken at the end) completes at %d ns, want the window end 500000", c)
	}
	// A window that ends while b runs.
	s, err = Measure(tl, Options{Window: metrics.Window{Start: 50_000, End: 350_000}, Topology: topology.Symmetric(2)})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := s.Scope("comm:a").CompletionNs, s.Scope("comm:b").CompletionNs; a != 150_000 || b != 300_000 {
		t.Errorf("window 50-350: a %d, b %d, want 150000 and 300000", a, b)
	}
}

func TestTakeCompletion(t *testing.T) {
	s := &Side{Overall: Figures{RunNs: 5, CompletionNs: 10},
		Comms:   []ScopeFigures{{Scope: CommScope("a"), Figures: Figures{CompletionNs: 10}}, {Scope: CommScope("b"), Figures: Figures{CompletionNs: 7}}},
		Classes: []ScopeFigures{{Scope: ClassScope("nice 0"), Figures: Figures{CompletionNs: 10}}},
		Tasks:   []TaskFigures{{PID: 1, Comm: "a", Figures: Figures{CompletionNs: 10}}, {PID: 2, Comm: "b", Figures: Figures{CompletionNs: 7}}}}
	o := &Side{Overall: Figures{RunNs: 9, CompletionNs: 14},
		Comms:   []ScopeFigures{{Scope: CommScope("a"), Figures: Figures{CompletionNs: 14}}},
		Classes: []ScopeFigures{{Scope: ClassScope("nice 0"), Figures: Figures{CompletionNs: 14}}},
		Tasks:   []TaskFigures{{PID: 1, Comm: "a", Figures: Figures{CompletionNs: 14}}}}
	s.TakeCompletion(o)
	if s.Overall.CompletionNs != 14 || s.Overall.RunNs != 5 {
		t.Errorf("overall = %+v, want completion 14 and run 5 kept", s.Overall)
	}
	if s.Comms[0].CompletionNs != 14 || s.Comms[1].CompletionNs != 7 || s.Classes[0].CompletionNs != 14 {
		t.Errorf("scopes = %+v %+v", s.Comms, s.Classes)
	}
	if s.Tasks[0].CompletionNs != 14 || s.Tasks[1].CompletionNs != 7 {
		t.Errorf("tasks = %+v", s.Tasks)
	}
}
