package metrics

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Affinity maps task ids to the CPUs they may run on, as given by the user
// (--affinity FILE). Tasks not in the map are handled by name (per-CPU
// kernel threads) or assumed free to run anywhere.
type Affinity map[timeline.TID][]int

// AffinitySource says how a task's allowed CPUs were decided.
type AffinitySource uint8

// Affinity sources, in the order the metrics consult them.
const (
	// AffinityAssumed: the trace does not say; the task is assumed free to
	// run on every CPU. An inference.
	AffinityAssumed AffinitySource = iota
	// AffinityFile: the --affinity file lists the task.
	AffinityFile
	// AffinityKthread: a per-CPU kernel thread, pinned to the CPU its name
	// carries (ksoftirqd/N, migration/N, cpuhp/N, rcuc/N, kworker/N:M, ...).
	AffinityKthread
	// AffinityPossiblyPinned: assumed free, but the task ran on a single CPU
	// across many waits while other CPUs it could have used were idle; the
	// windows it is in may come from an affinity mask the trace does not
	// show.
	AffinityPossiblyPinned
)

var affinityNames = [...]string{
	AffinityAssumed:        "assumed-free",
	AffinityFile:           "file",
	AffinityKthread:        "kthread-name",
	AffinityPossiblyPinned: "possibly-pinned",
}

func (a AffinitySource) String() string {
	if int(a) < len(affinityNames) {
		return affinityNames[a]
	}
	return "affinity(" + strconv.Itoa(int(a)) + ")"
}

// MarshalText implements encoding.TextMarshaler with String.
func (a AffinitySource) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// Exactness says how far a figure can be trusted.
type Exactness uint8

// Exactness levels.
const (
	// Exact: measured from events the trace holds.
	Exact Exactness = iota
	// Inferred: depends on something the trace does not record (affinity,
	// utilization, a runqueue CPU taken from where the task later ran).
	Inferred
	// Censored: the interval was cut by the trace end, a lost-event gap, a
	// late buffer start or the window; its length is a lower bound.
	Censored
)

func (e Exactness) String() string {
	switch e {
	case Exact:
		return "exact"
	case Inferred:
		return "inferred"
	case Censored:
		return "censored"
	}
	return "exactness(" + strconv.Itoa(int(e)) + ")"
}

// MarshalText implements encoding.TextMarshaler with String.
func (e Exactness) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// pinnedPrefixes are the per-CPU kernel threads whose name ends in the CPU
// they are bound to (kthread_create_on_cpu / smpboot threads: "ksoftirqd/%u",
// "migration/%u", "cpuhp/%u", "rcuc/%u", "watchdog/%u", "idle_inject/%u").
var pinnedPrefixes = []string{"ksoftirqd/", "migration/", "cpuhp/", "rcuc/", "watchdog/", "idle_inject/"}

// PinnedCPU returns the CPU a per-CPU kernel thread is bound to, from its
// name: "ksoftirqd/3" -> 3, "kworker/3:1", "kworker/3:1H" and
// "kworker/3:1-events" -> 3. Unbound workqueue workers ("kworker/u8:2") and
// other names report false.
func PinnedCPU(comm string) (int, bool) {
	for _, p := range pinnedPrefixes {
		if rest, ok := strings.CutPrefix(comm, p); ok {
			n, err := strconv.Atoi(rest)
			return n, err == nil && n >= 0
		}
	}
	rest, ok := strings.CutPrefix(comm, "kworker/")
	if !ok || rest == "" || rest[0] < '0' || rest[0] > '9' {
		return 0, false // kworker/uN:M is unbound; kworker/R-wq is a rescuer
	}
	// kworker/N:M, then an optional 'H' (highpri pool) and an optional
	// "-wq" or "+wq" suffix naming the workqueue (wq_worker_comm).
	cpu, after, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(cpu)
	if err != nil || n < 0 || after == "" || after[0] < '0' || after[0] > '9' {
		return 0, false
	}
	return n, true
}

// ParseAffinity reads an affinity file: one task per line, a pid and the
// CPU list it may run on, separated by blanks, ':' or '=':
//
//	# pid  cpus
//	1234   0-3
//	1235:  4,6
//	pid 1236's current affinity list: 0-1      (taskset -cp output)
//
// Blank lines and lines starting with '#' are skipped. name is used in
// errors, which give the line number.
func ParseAffinity(r io.Reader, name string) (Affinity, error) {
	aff := Affinity{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		var pidStr, list string
		if rest, ok := strings.CutPrefix(s, "pid "); ok && strings.Contains(rest, "affinity list:") {
			p, l, _ := strings.Cut(rest, "'s")
			_, l, _ = strings.Cut(l, "affinity list:")
			pidStr, list = p, l
		} else {
			i := strings.IndexAny(s, " \t:=")
			if i < 0 {
				return nil, fmt.Errorf("%s:%d: want \"PID CPULIST\", got %q", name, line, s)
			}
			pidStr, list = s[:i], strings.TrimLeft(s[i:], " \t:=")
		}
		pid, err := strconv.ParseInt(strings.TrimSpace(pidStr), 10, 32) // pid_t
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("%s:%d: want a pid from 1 to 2147483647, got %q", name, line, pidStr)
		}
		cpus, err := topology.ParseCPUList(list)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		aff[timeline.TID(pid)] = cpus
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s: a line longer than 1 MiB: not an affinity file", name)
		}
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return aff, nil
}

// cpuMask is a set of CPUs.
type cpuMask []uint64

func newMask(n int) cpuMask { return make(cpuMask, (n+63)/64) }

func (m cpuMask) set(c int) {
	if c >= 0 && c/64 < len(m) {
		m[c/64] |= 1 << (c % 64)
	}
}

func (m cpuMask) has(c int) bool { return c >= 0 && c/64 < len(m) && m[c/64]&(1<<(c%64)) != 0 }

// intersects reports whether m and o share a CPU other than except.
func (m cpuMask) intersectsExcept(o cpuMask, except int) bool {
	for i := range m {
		if i >= len(o) {
			break
		}
		w := m[i] & o[i]
		if except >= 0 && except/64 == i {
			w &^= 1 << (except % 64)
		}
		if w != 0 {
			return true
		}
	}
	return false
}

// onlyBit reports whether m holds exactly the CPU c and nothing else, or
// nothing at all.
func (m cpuMask) subsetOf(c int) bool {
	for i, w := range m {
		if c/64 == i {
			w &^= 1 << (c % 64)
		}
		if w != 0 {
			return false
		}
	}
	return true
}
