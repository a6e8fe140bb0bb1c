package affinity

import "testing"

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
