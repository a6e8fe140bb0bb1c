package metrics

import (
	"strings"
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

func TestPinnedCPU(t *testing.T) {
	tests := []struct {
		comm string
		cpu  int
		ok   bool
	}{
		{"ksoftirqd/3", 3, true},
		{"migration/0", 0, true},
		{"cpuhp/12", 12, true},
		{"rcuc/7", 7, true},
		{"kworker/3:1", 3, true},
		{"kworker/3:1H", 3, true},
		{"kworker/0:2-events", 0, true},
		{"kworker/1:0+mm_percpu_wq", 1, true},
		{"kworker/u8:2", 0, false},
		{"kworker/u8:2-events_unbound", 0, false},
		{"kworker/R-rcu_gp", 0, false},
		{"ksoftirqd/x", 0, false},
		{"rcuop/3", 0, false},
		{"hackbench", 0, false},
	}
	for _, tc := range tests {
		cpu, ok := PinnedCPU(tc.comm)
		if ok != tc.ok || (ok && cpu != tc.cpu) {
			t.Errorf("PinnedCPU(%q) = %d, %v, want %d, %v", tc.comm, cpu, ok, tc.cpu, tc.ok)
		}
	}
}

func TestParseAffinity(t *testing.T) {
	aff, err := ParseAffinity(strings.NewReader("# comment\n\n1234 0-3\n1235: 4,6\n1236=1\npid 1237's current affinity list: 0-1\n"), "aff.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]int{1234: {0, 1, 2, 3}, 1235: {4, 6}, 1236: {1}, 1237: {0, 1}}
	if len(aff) != len(want) {
		t.Fatalf("got %v, want %v", aff, want)
	}
	for pid, cpus := range want {
		got := aff[timeline.TID(pid)]
		if len(got) != len(cpus) {
			t.Errorf("pid %d: got %v, want %v", pid, got, cpus)
			continue
		}
		for i := range cpus {
			if got[i] != cpus[i] {
				t.Errorf("pid %d: got %v, want %v", pid, got, cpus)
			}
		}
	}
	for _, bad := range []struct{ in, msg string }{
		{"1234\n", "aff.txt:1: want \"PID CPULIST\""},
		{"0 1\n", "aff.txt:1: want a pid"},
		{"12 zero\n", "aff.txt:1: CPU list"},
		{"1 0\n2 3-1\n", "aff.txt:2:"},
	} {
		if _, err := ParseAffinity(strings.NewReader(bad.in), "aff.txt"); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("ParseAffinity(%q) error = %v, want one containing %q", bad.in, err, bad.msg)
		}
	}
}

func tidOf(pid int) timeline.TID { return timeline.TID(pid) }
