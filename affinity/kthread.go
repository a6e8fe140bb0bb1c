package affinity

import (
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/timeline"
)

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

// KthreadCPU reports the CPU task id is bound to when any name it had is a
// per-CPU kernel thread's. A thread of a user process (TGID differs from
// its pid) is never one.
func KthreadCPU(tl *timeline.Timeline, id timeline.TaskID) (int, bool) {
	tk := &tl.Tasks[id]
	if tk.Idle || (tk.TGID > 0 && tk.TGID != int32(tk.PID)) {
		return 0, false
	}
	if cpu, ok := PinnedCPU(tl.Strings.Get(tk.Comm)); ok {
		return cpu, true
	}
	for _, ch := range tk.Comms {
		if cpu, ok := PinnedCPU(tl.Strings.Get(ch.Comm)); ok {
			return cpu, true
		}
	}
	return 0, false
}
