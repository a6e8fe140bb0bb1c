package perfetto

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/timeline"
)

// stateLayout says how a kernel encodes sched_switch prev_state. Perfetto
// stores the raw integer the tracepoint recorded (SchedSwitchFtraceEvent
// prev_state, CompactSched switch_prev_state), so its meaning depends on the
// kernel version, which the trace carries in SystemInfo.utsname.release.
//
// Kernel facts (include/linux/sched.h and include/trace/events/sched.h):
//
//   - Every version: TASK_RUNNING 0, TASK_INTERRUPTIBLE 0x1 (S),
//     TASK_UNINTERRUPTIBLE 0x2 (D), __TASK_STOPPED 0x4 (T), __TASK_TRACED 0x8
//     (t), EXIT_DEAD 0x10 (X), EXIT_ZOMBIE 0x20 (Z).
//   - 4.14 and later report a single TASK_REPORT bit: TASK_PARKED 0x40 (P),
//     TASK_REPORT_IDLE 0x80 (I, TASK_REPORT+1), and a preempted task gets
//     TASK_REPORT_MAX 0x100 (TASK_REPORT_IDLE << 1), printed "R+". Any bit
//     from 0x200 up cannot occur.
//   - Before 4.14 prev_state is the raw p->state: TASK_DEAD 0x40 (x),
//     TASK_WAKEKILL 0x80 (K), TASK_WAKING 0x100 (W), TASK_PARKED 0x200 (P),
//     TASK_NOLOAD 0x400 (N); 4.8 added TASK_NEW 0x800, so the preempted flag
//     TASK_STATE_MAX is 0x1000 on 4.8..4.13 and 0x800 before 4.8.
type stateLayout uint8

const (
	layoutReport   stateLayout = iota // 4.14+: TASK_REPORT bits, preempt 0x100
	layoutLegacy48                    // 4.8..4.13: raw p->state, preempt 0x1000
	layoutLegacy                      // < 4.8: raw p->state, preempt 0x800
)

// layoutFor returns the prev_state layout of a kernel release string
// ("6.18.44-fc-v1045"). An empty or unparsable release gives the 4.14+
// layout, the one of every kernel still maintained. (trace_processor assumes
// 4.4 instead; the two agree on R, S, D, T, t, X and Z, which is all that
// traces without SystemInfo carry in practice.)
func layoutFor(release string) stateLayout {
	major, minor, ok := parseRelease(release)
	switch {
	case !ok:
		return layoutReport
	case major > 4 || (major == 4 && minor >= 14):
		return layoutReport
	case major == 4 && minor >= 8:
		return layoutLegacy48
	}
	return layoutLegacy
}

// parseRelease reads "MAJOR.MINOR" from the front of a kernel release.
func parseRelease(s string) (major, minor int, ok bool) {
	dot := strings.IndexByte(s, '.')
	if dot <= 0 {
		return 0, 0, false
	}
	major, err := strconv.Atoi(s[:dot])
	if err != nil {
		return 0, 0, false
	}
	rest := s[dot+1:]
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if end == 0 {
		return 0, 0, false
	}
	minor, err = strconv.Atoi(rest[:end])
	if err != nil {
		return 0, 0, false
	}
	return major, minor, true
}

type stateBit struct {
	raw   int64
	state timeline.State
}

var (
	reportBits = []stateBit{
		{0x1, timeline.StateInterrupt}, {0x2, timeline.StateUninterr}, {0x4, timeline.StateStopped},
		{0x8, timeline.StateTraced}, {0x10, timeline.StateExitDead}, {0x20, timeline.StateZombie},
		{0x40, timeline.StateParked}, {0x80, timeline.StateIdle},
	}
	legacyBits = []stateBit{
		{0x1, timeline.StateInterrupt}, {0x2, timeline.StateUninterr}, {0x4, timeline.StateStopped},
		{0x8, timeline.StateTraced}, {0x10, timeline.StateExitDead}, {0x20, timeline.StateZombie},
		{0x40, timeline.StateDead}, {0x80, timeline.StateWakeKill}, {0x100, timeline.StateWaking},
		{0x200, timeline.StateParked}, {0x400, timeline.StateNoLoad},
	}
)

// reportTable maps every raw value of the 4.14+ layout (9 bits) to its
// State, for the hot path.
var reportTable = func() (t [0x200]timeline.State) {
	for raw := range t {
		var s timeline.State
		for _, b := range reportBits {
			if int64(raw)&b.raw != 0 {
				s |= b.state
			}
		}
		if raw&0x100 != 0 {
			s |= timeline.StatePreempted
		}
		t[raw] = s
	}
	return t
}()

func (l stateLayout) bits() ([]stateBit, int64) {
	switch l {
	case layoutLegacy48:
		return legacyBits, 0x1000
	case layoutLegacy:
		return legacyBits, 0x800
	}
	return reportBits, 0x100
}

// decode maps a raw prev_state to a timeline.State. The fast path covers the
// values a 4.14+ kernel reports.
func (l stateLayout) decode(raw int64) (timeline.State, error) {
	if l == layoutReport && raw >= 0 && raw < int64(len(reportTable)) {
		return reportTable[raw], nil
	}
	bits, preempt := l.bits()
	var s timeline.State
	rest := raw
	for _, b := range bits {
		if rest&b.raw != 0 {
			s |= b.state
			rest &^= b.raw
		}
	}
	if rest&preempt != 0 {
		s |= timeline.StatePreempted
		rest &^= preempt
	}
	if rest != 0 {
		return 0, fmt.Errorf("prev_state: want a bitmask of known task states (kernel layout %s), got %#x", l, raw)
	}
	return s, nil
}

// encode maps a timeline.State to the raw prev_state of layout l. A flag the
// layout cannot express is an error.
func (l stateLayout) encode(s timeline.State) (int64, error) {
	bits, preempt := l.bits()
	var raw int64
	rest := s
	for _, b := range bits {
		if rest&b.state != 0 {
			raw |= b.raw
			rest &^= b.state
		}
	}
	if rest&timeline.StatePreempted != 0 {
		raw |= preempt
		rest &^= timeline.StatePreempted
	}
	if rest&timeline.StateWaking != 0 {
		// trace-cmd's report prints W for the kernel's I (TASK_REPORT_IDLE)
		// on 4.14+ kernels, whose report states have no TASK_WAKING: write
		// what the kernel recorded.
		for _, b := range bits {
			if b.state == timeline.StateIdle {
				raw |= b.raw
				rest &^= timeline.StateWaking
				break
			}
		}
	}
	if rest&timeline.StateIdle != 0 && l != layoutReport {
		// Before 4.14 TASK_IDLE is TASK_UNINTERRUPTIBLE|TASK_NOLOAD.
		raw |= 0x2 | 0x400
		rest &^= timeline.StateIdle
	}
	if rest != 0 {
		return 0, fmt.Errorf("prev_state %v has no encoding in kernel layout %s", s, l)
	}
	return raw, nil
}

func (l stateLayout) String() string {
	switch l {
	case layoutLegacy48:
		return "4.8-4.13"
	case layoutLegacy:
		return "<4.8"
	}
	return ">=4.14"
}
