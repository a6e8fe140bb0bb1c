package affinity

import (
	"strings"
	"testing"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

func TestParseRules(t *testing.T) {
	in := "# masks\n1234 0-3\n1235: 4,6\nhog-c1-0 1 0.5 1.25\npid 1237's current affinity list: 0-1\n"
	rules, err := ParseRules(strings.NewReader(in), "aff.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 4 {
		t.Fatalf("%d rules, want 4", len(rules))
	}
	if r := rules[0]; r.PID != 1234 || r.CPUs.String() != "0-3" || r.From != timeline.NoTime || r.Line != 2 {
		t.Errorf("rule 0 = %+v", r)
	}
	if r := rules[2]; r.Comm != "hog-c1-0" || r.PID != timeline.NoTID || r.From != 500_000_000 || r.To != 1_250_000_000 {
		t.Errorf("rule 2 = %+v", r)
	}
	if r := rules[3]; r.PID != 1237 || r.CPUs.String() != "0-1" {
		t.Errorf("rule 3 = %+v", r)
	}
	for _, bad := range []struct{ in, msg string }{
		{"1234\n", "aff.txt:1: want"},
		{"0 1\n", "aff.txt:1: want a pid"},
		{"12 zero\n", "aff.txt:1: CPU list"},
		{"1 0\n2 3-1\n", "aff.txt:2:"},
		{"x 0 2.0 1.0\n", "aff.txt:1: TO_S"},
		{"x 0 abc\n", "aff.txt:1: FROM_S"},
		// Found by FuzzParseRules (testdata/fuzz/FuzzParseRules/d6d3374f49353bd8):
		// no pid or comm before the separator made a rule for nobody.
		{":00\n", "aff.txt:1: want a pid or a comm"},
		{"pid 's current affinity list: 0\n", "aff.txt:1: want a pid or a comm"},
		// Found by FuzzParseRules (testdata/fuzz/FuzzParseRules/9313cb5d3021cb11):
		// a name in taskset's pid field was taken as a comm holding ':',
		// which the rule's own written form cannot give back.
		{"pid list:00$O0's affinity list:0000\n", "aff.txt:1: want \"pid PID's current affinity list"},
	} {
		if _, err := ParseRules(strings.NewReader(bad.in), "aff.txt"); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("ParseRules(%q) error = %v, want one containing %q", bad.in, err, bad.msg)
		}
	}
}

// TestOverride: a pinned stretch inside a free task, then a later rule over
// part of it; At reads the mask in force at each instant.
func TestOverride(t *testing.T) {
	m := NewMap(1)
	m.Override(0, 100, 300, topology.NewCPUSet(1), File)
	m.Override(0, 200, timeline.NoTime, topology.NewCPUSet(2, 3), File)
	for _, tc := range []struct {
		t    timeline.Time
		want string
		src  Source
	}{{50, "", Assumed}, {100, "1", File}, {199, "1", File}, {200, "2-3", File}, {300, "2-3", File}, {1000, "2-3", File}} {
		got, src := m.At(0, tc.t)
		if got.String() != tc.want || src != tc.src {
			t.Errorf("At(%d) = %q %v, want %q %v", tc.t, got, src, tc.want, tc.src)
		}
	}
	m2 := NewMap(1)
	m2.Override(0, 100, 300, topology.NewCPUSet(1), File)
	if got, src := m2.At(0, 300); got.String() != "" || src != Assumed {
		t.Errorf("after the range: %q %v, want free", got, src)
	}
	if m2.Source(0) != File {
		t.Errorf("Source = %v, want file", m2.Source(0))
	}
}
