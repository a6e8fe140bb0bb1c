package record

import (
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

func TestSwitchState(t *testing.T) {
	tests := []struct {
		name      string
		preempt   bool
		state     uint32
		exitState uint32
		want      string
	}{
		{"running", false, 0, 0, "R"},
		{"preempted", true, 0, 0, "R+"},
		{"preempt wins over sleep", true, taskInterruptible, 0, "R+"},
		{"sleeping", false, 0x1, 0, "S"},
		{"disk", false, 0x2, 0, "D"},
		{"killable sleep is D", false, 0x2 | 0x100, 0, "D"}, // TASK_KILLABLE
		{"stopped", false, 0x4, 0, "T"},
		{"traced", false, 0x8, 0, "t"},
		{"dead task exit_state", false, 0x80, 0x10, "X"}, // TASK_DEAD with EXIT_DEAD
		{"zombie", false, 0x80, 0x20, "Z"},
		{"parked", false, 0x40, 0, "P"},
		{"idle kthread", false, taskIdle, 0, "I"},
		{"idle freezable", false, taskIdle | 0x100, 0, "I"},
		{"rtlock wait", false, taskRtlockWait, 0, "D"},
		{"frozen", false, taskFrozen | taskInterruptible, 0, "D"},
		{"TASK_DEAD alone reports R", false, 0x80, 0, "R"},
		{"TASK_WAKING alone reports R", false, 0x200, 0, "R"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := switchState(tc.preempt, tc.state, tc.exitState)
			want, ok := timeline.ParseState([]byte(tc.want))
			if !ok {
				t.Fatalf("bad want %q", tc.want)
			}
			if got != want {
				t.Errorf("switchState(%v, %#x, %#x) = %v, want %v", tc.preempt, tc.state, tc.exitState, got, want)
			}
		})
	}
}
