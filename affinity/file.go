package affinity

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Rule is one line of an affinity file: the tasks it names (a pid, or
// every task that had a comm) may run on CPUs over [From, To).
type Rule struct {
	PID  timeline.TID    // NoTID when the rule names a comm
	Comm string          // "" when the rule names a pid
	CPUs topology.CPUSet // never empty
	From timeline.Time   // NoTime: from the task's start
	To   timeline.Time   // NoTime: to its end
	Line int             // line number in the file, for messages
}

// ParseRules reads an affinity file. Each line is
//
//	PID_OR_COMM CPULIST [FROM_S [TO_S]]
//
// where PID_OR_COMM is a pid (all digits) or a comm (every task that had
// that comm; a comm has no blanks), CPULIST a kernel CPU list ("0-3,8"),
// and FROM_S, TO_S seconds on the trace clock as the trace prints them
// ("576.223558"). The separators may be blanks, ':' or '=' after the first
// field ("1234: 0-3"), and `taskset -cp` output ("pid 1234's current
// affinity list: 0-3") is accepted. '#' starts a comment. Later lines win
// where they overlap. name is used in errors, which give the line.
func ParseRules(r io.Reader, name string) ([]Rule, error) {
	var rules []Rule
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		s := sc.Text()
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
		}
		var who string
		var rest []string
		if after, ok := strings.CutPrefix(s, "pid "); ok && strings.Contains(after, "affinity list:") {
			p, l, _ := strings.Cut(after, "'s")
			_, l, _ = strings.Cut(l, "affinity list:")
			who, rest = strings.TrimSpace(p), []string{strings.TrimSpace(l)}
			if who != "" && !isDigits(who) {
				// taskset -cp prints a pid; a name here (which may hold
				// the separators) is not its output.
				return nil, bad("want \"pid PID's current affinity list: CPULIST\" (taskset -cp), got %q", s)
			}
		} else {
			i := strings.IndexAny(s, " \t:=")
			if i < 0 {
				return nil, bad("want \"PID_OR_COMM CPULIST [FROM_S [TO_S]]\", got %q", s)
			}
			who = s[:i]
			rest = strings.Fields(strings.TrimLeft(s[i:], " \t:="))
		}
		if len(rest) == 0 || len(rest) > 3 {
			return nil, bad("want \"PID_OR_COMM CPULIST [FROM_S [TO_S]]\", got %q", s)
		}
		if who == "" {
			return nil, bad("want a pid or a comm before the CPU list, got %q", s)
		}
		rl := Rule{PID: timeline.NoTID, From: timeline.NoTime, To: timeline.NoTime, Line: line}
		if isDigits(who) {
			pid, err := strconv.ParseInt(who, 10, 32) // pid_t
			if err != nil || pid <= 0 {
				return nil, bad("want a pid from 1 to 2147483647, got %q", who)
			}
			rl.PID = timeline.TID(pid)
		} else {
			rl.Comm = who
		}
		cpus, err := topology.ParseCPUList(rest[0])
		if err != nil {
			return nil, bad("%v", err)
		}
		rl.CPUs = topology.NewCPUSet(cpus...)
		if len(rest) > 1 {
			if rl.From, err = timeline.ParseSeconds(rest[1]); err != nil {
				return nil, bad("FROM_S: %v", err)
			}
		}
		if len(rest) > 2 {
			if rl.To, err = timeline.ParseSeconds(rest[2]); err != nil {
				return nil, bad("TO_S: %v", err)
			}
			if rl.To <= rl.From {
				return nil, bad("TO_S %s is not after FROM_S %s", rest[2], rest[1])
			}
		}
		rules = append(rules, rl)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s: a line longer than 1 MiB: not an affinity file", name)
		}
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return rules, nil
}

// ReadRules reads the affinity file at path (ParseRules).
func ReadRules(path string) ([]Rule, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return ParseRules(fh, path)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
