package record

import "github.com/schedlens/schedlens/timeline"

// Kernel task state bits, include/linux/sched.h (Linux 6.x values; the
// reportable ones have not moved since 4.14).
const (
	taskInterruptible   = 0x0001
	taskUninterruptible = 0x0002
	taskNoload          = 0x0400
	taskRtlockWait      = 0x1000
	taskFrozen          = 0x8000
	taskReport          = 0x007f // S D T t X Z P
	taskReportIdle      = 0x0080 // reported as I
	taskIdle            = taskUninterruptible | taskNoload
)

// reportStates maps the kernel's report index (fls of the reported state,
// 1..8) to timeline states: the letters S D T t X Z P I of sched_switch's
// prev_state.
var reportStates = [...]timeline.State{
	timeline.StateRunnable,
	timeline.StateInterrupt,
	timeline.StateUninterr,
	timeline.StateStopped,
	timeline.StateTraced,
	timeline.StateExitDead,
	timeline.StateZombie,
	timeline.StateParked,
	timeline.StateIdle,
}

// switchState returns the prev_state ftrace would print for a sched_switch
// with the given preempt flag, prev_state argument and prev->exit_state.
// It follows the kernel's __trace_sched_switch_state and
// __task_state_index (include/trace/events/sched.h, include/linux/sched.h):
//
//   - preempted: "R+" whatever the state;
//   - TASK_IDLE (D with NOLOAD): "I";
//   - waiting on an RT lock, or frozen: "D";
//   - else the highest reportable bit of state|exit_state, or "R" for none.
func switchState(preempt bool, state, exitState uint32) timeline.State {
	if preempt {
		return timeline.StatePreempted
	}
	rep := (state | exitState) & taskReport
	if state&taskIdle == taskIdle {
		rep = taskReportIdle
	}
	if state&(taskRtlockWait|taskFrozen) != 0 {
		rep = taskUninterruptible
	}
	idx := 0
	for rep != 0 { // fls
		idx++
		rep >>= 1
	}
	return reportStates[idx]
}
