package compare

import (
	"math"
	"testing"

	"github.com/schedlens/schedlens/metrics"
)

func TestCellRatio(t *testing.T) {
	for _, tc := range []struct {
		base, new int64
		ratio     float64
		ok        bool
		change    float64
	}{
		{100, 150, 1.5, true, 50},
		{200, 50, 0.25, true, -75},
		{0, 0, 1, true, 0},
		{0, 7, math.Inf(1), false, 0},
		{7, 0, 0, true, -100},
	} {
		c := Cell{Base: tc.base, New: tc.new}
		r, ok := c.Ratio()
		p, _ := c.ChangePct()
		if ok != tc.ok || r != tc.ratio || ok && p != tc.change {
			t.Errorf("%d -> %d: ratio %v %v change %v, want %v %v %v", tc.base, tc.new, r, ok, p, tc.ratio, tc.ok, tc.change)
		}
	}
}

// TestCompareScopes: scopes are matched by name; one that a single run
// has shows zeros on the other side; tasks pair by pid and comm.
func TestCompareScopes(t *testing.T) {
	a := &Side{Overall: Figures{RunNs: 10},
		Comms:   []ScopeFigures{{"comm:x", Figures{RunNs: 6}}, {"comm:y", Figures{RunNs: 4}}},
		Classes: []ScopeFigures{{"class:nice 0", Figures{RunNs: 10}}},
		Tasks:   []TaskFigures{{PID: 5, Comm: "x", Figures: Figures{RunNs: 6}}, {PID: 6, Comm: "y", Figures: Figures{RunNs: 4}}}}
	b := &Side{Overall: Figures{RunNs: 12},
		Comms:   []ScopeFigures{{"comm:z", Figures{RunNs: 2}}, {"comm:x", Figures{RunNs: 10}}},
		Classes: []ScopeFigures{{"class:nice 0", Figures{RunNs: 12}}},
		Tasks:   []TaskFigures{{PID: 6, Comm: "renamed", Figures: Figures{RunNs: 2}}, {PID: 5, Comm: "x", Figures: Figures{RunNs: 10}}}}
	c := Compare(a, b, "A", "B")
	var got []string
	for _, s := range c.Scopes {
		got = append(got, s.Scope)
	}
	want := []string{"overall", "class:nice 0", "comm:x", "comm:y", "comm:z"}
	if len(got) != len(want) {
		t.Fatalf("scopes %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("scopes %v, want %v", got, want)
		}
	}
	if y := c.Scope("comm:y"); !y.InBase || y.InNew || y.Cell(RunNs) != (Cell{RunNs, 4, 0}) {
		t.Errorf("comm:y %+v", y)
	}
	if z := c.Scope("comm:z"); z.InBase || !z.InNew || z.Cell(RunNs) != (Cell{RunNs, 0, 2}) {
		t.Errorf("comm:z %+v", z)
	}
	if x := c.Scope("comm:x").Cell(RunNs); x != (Cell{RunNs, 6, 10}) {
		t.Errorf("comm:x %+v", x)
	}
	if len(c.Tasks) != 1 || c.Tasks[0].PID != 5 || c.Tasks[0].New.RunNs != 10 {
		t.Errorf("tasks %+v, want pid 5 only (pid 6 changed its comm)", c.Tasks)
	}
	if len(c.Scope(Overall).Cells) != len(Metrics) {
		t.Errorf("%d cells, want one per metric", len(c.Scope(Overall).Cells))
	}
}

// hist returns a wakeup distribution with n samples in each log2 bucket.
func hist(n ...int64) metrics.Dist {
	d := metrics.Dist{Hist: n}
	for _, v := range n {
		d.Count += v
	}
	return d
}

func TestJudge(t *testing.T) {
	base := Figures{RunNs: 1000, RunnableNs: 400, Wakeup: hist(10), Migrations: 20, Preemptions: 40, ContextSwitches: 100}
	base.Wakeup.P50Ns = 100
	judge := func(mod func(f *Figures)) Verdict {
		f := base
		mod(&f)
		return Judge(Compare(&Side{Overall: base}, &Side{Overall: f}, "recorded", "modeled"))
	}
	pass := func(v Verdict) (out []bool) {
		for _, c := range v.Criteria {
			out = append(out, c.Pass)
		}
		return
	}
	for _, tc := range []struct {
		name    string
		mod     func(f *Figures)
		verdict string
		pass    [6]bool
	}{
		{"same", func(f *Figures) {}, Faithful, [6]bool{true, true, true, true, true, true}},
		{"cpu +5% passes", func(f *Figures) { f.RunNs = 1050 }, Faithful, [6]bool{true, true, true, true, true, true}},
		{"cpu -5.1% fails", func(f *Figures) { f.RunNs = 949 }, NotFaithful, [6]bool{false, true, true, true, true, true}},
		{"runnable -25% passes", func(f *Figures) { f.RunnableNs = 300 }, Faithful, [6]bool{true, true, true, true, true, true}},
		{"runnable +25.25% fails", func(f *Figures) { f.RunnableNs = 501 }, PartlyFaithful, [6]bool{true, false, true, true, true, true}},
		{"p50 x2, CDF 0.10 passes", func(f *Figures) { f.Wakeup = hist(9, 1); f.Wakeup.P50Ns = 200 }, Faithful,
			[6]bool{true, true, true, true, true, true}},
		{"p50 x2, CDF 0.11 fails", func(f *Figures) { f.Wakeup = hist(89, 11); f.Wakeup.P50Ns = 200 }, PartlyFaithful,
			[6]bool{true, true, false, true, true, true}},
		{"p50 +20%, CDF 1 passes", func(f *Figures) { f.Wakeup = hist(0, 5); f.Wakeup.P50Ns = 120 }, Faithful,
			[6]bool{true, true, true, true, true, true}},
		{"cpu and half pass", func(f *Figures) { f.Migrations, f.Preemptions, f.ContextSwitches = 30, 60, 200 }, PartlyFaithful,
			[6]bool{true, true, true, false, false, false}},
		{"cpu and 2 of 6", func(f *Figures) { f.RunnableNs, f.Migrations, f.Preemptions, f.ContextSwitches = 0, 30, 60, 200 }, NotFaithful,
			[6]bool{true, false, true, false, false, false}},
		{"5 of 6 without cpu", func(f *Figures) { f.RunNs = 2000 }, NotFaithful, [6]bool{false, true, true, true, true, true}},
	} {
		v := judge(tc.mod)
		if got := pass(v); v.Verdict != tc.verdict || len(got) != 6 || [6]bool(got) != tc.pass {
			t.Errorf("%s: %s %v, want %s %v", tc.name, v.Verdict, got, tc.verdict, tc.pass)
		}
	}
	// Nothing to compare: none on either side passes, some on one side
	// only fails.
	zero := Figures{RunNs: 1000}
	v := Judge(Compare(&Side{Overall: zero}, &Side{Overall: zero}, "recorded", "modeled"))
	if v.Verdict != Faithful || v.Criteria[2].Detail != "no wakeups in either run" || v.Criteria[3].Detail != "none in either run" {
		t.Errorf("empty runs: %+v", v)
	}
	one := zero
	one.Migrations = 3
	v = Judge(Compare(&Side{Overall: zero}, &Side{Overall: one}, "recorded", "modeled"))
	if v.Criteria[3].Pass || v.Verdict != PartlyFaithful || v.Passed != 5 || v.Criteria[3].Measured() != "-" {
		t.Errorf("migrations 0 -> 3: %+v", v.Criteria[3])
	}
}
