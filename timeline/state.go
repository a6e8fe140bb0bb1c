package timeline

import "strings"

// State is a sched_switch prev_state as a set of flags. The zero State is
// "R": the task was still runnable when it left the CPU.
type State uint16

// prev_state flags. The letters are those of the kernel's
// __trace_sched_switch_state (include/trace/events/sched.h) and of older
// kernels' tables (K, W, x, N), plus trace-cmd's plugin letters.
const (
	StateRunnable  State = 0
	StateInterrupt State = 1 << iota // S: TASK_INTERRUPTIBLE
	StateUninterr                    // D: TASK_UNINTERRUPTIBLE
	StateStopped                     // T: __TASK_STOPPED
	StateTraced                      // t: __TASK_TRACED
	StateExitDead                    // X: EXIT_DEAD
	StateZombie                      // Z: EXIT_ZOMBIE
	StateParked                      // P: TASK_PARKED
	StateIdle                        // I: TASK_IDLE (trace-cmd prints W)
	StateWakeKill                    // K: TASK_WAKEKILL (old kernels)
	StateWaking                      // W: TASK_WAKING (old kernels)
	StateDead                        // x: TASK_DEAD (old kernels)
	StateNoLoad                      // N: TASK_NOLOAD (old kernels)
	StatePreempted                   // "+": preempted while runnable (R+)
)

var stateLetters = []struct {
	c byte
	s State
}{
	{'S', StateInterrupt}, {'D', StateUninterr}, {'T', StateStopped}, {'t', StateTraced},
	{'X', StateExitDead}, {'Z', StateZombie}, {'P', StateParked}, {'I', StateIdle},
	{'K', StateWakeKill}, {'W', StateWaking}, {'x', StateDead}, {'N', StateNoLoad},
}

// ParseState parses a prev_state field: "R", "R+", "S", "D", "D|K", "S|W",
// "I", "X", "Z", and the like. It reports false for anything else.
func ParseState(b []byte) (State, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if b[0] == 'R' {
		switch {
		case len(b) == 1:
			return StateRunnable, true
		case len(b) == 2 && b[1] == '+':
			return StatePreempted, true
		}
		return 0, false
	}
	var s State
	want := true // want a letter next
	for _, c := range b {
		if want {
			found := false
			for _, l := range stateLetters {
				if l.c == c {
					s |= l.s
					found = true
					break
				}
			}
			if !found {
				return 0, false
			}
			want = false
			continue
		}
		if c == '|' {
			want = true
			continue
		}
		if c == '+' { // "D+" never printed by the kernel, but harmless
			s |= StatePreempted
			continue
		}
		// Old kernels print letters without separators ("DK").
		want = true
		found := false
		for _, l := range stateLetters {
			if l.c == c {
				s |= l.s
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
		want = false
	}
	if want {
		return 0, false
	}
	return s, true
}

// Runnable reports whether a task leaving the CPU in state s is still
// runnable (R or R+): a preemption, not a sleep.
func (s State) Runnable() bool { return s&^StatePreempted == 0 }

// Dead reports whether the task exited (X, Z, x).
func (s State) Dead() bool { return s&(StateExitDead|StateZombie|StateDead) != 0 }

// Blocked reports whether the task sleeps uninterruptibly (D), not counting
// TASK_IDLE kernel threads.
func (s State) Blocked() bool { return s&StateUninterr != 0 && s&StateIdle == 0 && s&StateNoLoad == 0 }

// Stopped reports a stopped or traced task (T, t).
func (s State) Stopped() bool { return s&(StateStopped|StateTraced) != 0 }

func (s State) String() string {
	if s.Runnable() {
		if s&StatePreempted != 0 {
			return "R+"
		}
		return "R"
	}
	var parts []string
	for _, l := range stateLetters {
		if s&l.s != 0 {
			parts = append(parts, string(l.c))
		}
	}
	out := strings.Join(parts, "|")
	if s&StatePreempted != 0 {
		out += "+"
	}
	return out
}
