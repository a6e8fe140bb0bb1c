package timeline

import "testing"

// TestFrontier works a walk by hand: CPU 1 has no events and is not
// followed; the frontier is the earliest latest running span end of CPUs
// 0 and 2, and only running spans move it.
func TestFrontier(t *testing.T) {
	tl := &Timeline{NCPU: 3, CPUFirst: []Time{10, NoTime, 20}}
	f := NewFrontier(tl)
	steps := []struct {
		s    Span
		want Time
	}{
		{Span{State: SpanRunning, CPU: 0, Start: 10, End: 50}, NoTime}, // CPU 2 has ended no span
		{Span{State: SpanWoken, CPU: 2, Start: 20, End: 70}, NoTime},   // a wait is not CPU 2's span
		{Span{State: SpanRunning, CPU: 2, Start: 20, End: 40}, 40},
		{Span{State: SpanRunning, CPU: 2, Start: 40, End: 90}, 50},
		{Span{State: SpanRunning, CPU: 0, Start: 50, End: 60}, 60},
		{Span{State: SpanRunning, CPU: 0, Start: 30, End: 35}, 60}, // never moves back
	}
	for i, st := range steps {
		f.Span(&st.s)
		if got := f.Time(); got != st.want {
			t.Fatalf("step %d: Time() = %d, want %d", i, got, st.want)
		}
	}
	if got := NewFrontier(&Timeline{NCPU: 2, CPUFirst: []Time{NoTime, NoTime}}).Time(); got != NoTime {
		t.Errorf("no CPU with events: Time() = %d, want NoTime", got)
	}
}
