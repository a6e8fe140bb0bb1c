package report

import (
	"fmt"
	"strconv"

	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
)

// ownQueue writes the own-queue idle measure: in full (idle), or in the
// report only when some window is a stall (metrics.OwnQueueStallNs) and
// then only those windows.
func (r *writer) ownQueue(detail bool) {
	oq := r.a.Idle.OwnQueue
	if oq == nil || (!detail && oq.Stalls() == 0) {
		return
	}
	r.d.title("Idle with its own queue non-empty")
	d := oq.Durations
	rows := [][2]string{{"own queue", fmt.Sprintf("%s ms (%s of idle) in %d window%s", msf(oq.TotalNs), pct(oq.TotalNs, r.a.Idle.TotalIdleNs), oq.Count, plural(int(oq.Count)))}}
	if d.Count > 0 {
		rows = append(rows, [2]string{"windows", fmt.Sprintf("p50 %s us, p99 %s us, max %s ms (%d complete)", pctl(&d, 0), pctl(&d, 2), msf(d.MaxNs), d.Count)})
	}
	if oq.CensoredWindows > 0 {
		rows = append(rows, [2]string{"censored", fmt.Sprintf("%d windows, %s ms, cut by the window edge, the trace end or a gap", oq.CensoredWindows, msf(oq.CensoredNs))})
	}
	if oq.InferredNs > 0 {
		rows = append(rows, [2]string{"runqueue", fmt.Sprintf("inferred for %s ms (no sched_wakeup: taken from the CPU the task ran on next)", msf(oq.InferredNs))})
	}
	cookies := "not traced (no " + timeline.CookieMarker + " marker)"
	if oq.CookieMarkers > 0 {
		cookies = fmt.Sprintf("from %d %s trace markers", oq.CookieMarkers, timeline.CookieMarker)
	}
	rows = append(rows, [2]string{"cookies", cookies})
	r.d.fields(rows)
	r.d.defs("idle with its own queue: a CPU idles while a task queued on it (woken onto it, migrated or preempted " +
		"there) waits to switch in: an idle CPU's wake-up path, or a CPU forced idle by core scheduling")
	min := oq.ListNs
	if !detail {
		min = metrics.OwnQueueStallNs
	}
	// Narrow enough for 78 columns: comms cut to 10 characters in text.
	comm := func(c string) string {
		if r.d.md {
			return c
		}
		return truncComm(c, 10)
	}
	t := &Table{Header: []string{"start s", "ms", "cpus", "pid", "comm", "sibling ran", "core ms", "cookie", "how"},
		Left: []bool{false, false, false, false, true, true, false, true, true}}
	for _, w := range oq.Windows {
		if w.DurNs < min {
			continue
		}
		cpus, ran, core, cookie := strconv.Itoa(int(w.CPU)), "-", "-", "-"
		if w.Sibling >= 0 {
			cpus += "/" + strconv.Itoa(int(w.Sibling))
			core = msf(w.SiblingIdleNs)
			switch {
			case w.SiblingTask != timeline.NoTask:
				ran = comm(w.SiblingComm)
			case w.SiblingIdle:
				ran = "(idle)"
			default:
				ran = "(unknown)"
			}
			cookie = map[metrics.CookieRelation]string{metrics.CookieSame: "same", metrics.CookieDiffers: "diff"}[w.Cookie]
			if cookie == "" {
				cookie = "-"
			}
		}
		how := map[metrics.Exactness]string{metrics.Exact: "exact", metrics.Inferred: "infer", metrics.Censored: "cut"}[w.Exactness()]
		t.Add(w.Start.Seconds(), msf(w.DurNs), cpus, strconv.Itoa(int(w.PID)), comm(w.Comm), ran, core, cookie, how)
	}
	if len(t.Rows) > 0 {
		if detail {
			r.d.title(fmt.Sprintf("Own-queue idle windows of %s ms or more (in time order)", msf(min)))
		} else {
			r.d.title(fmt.Sprintf("Own-queue idle stalls of %s ms or more", msf(min)))
		}
		r.d.table(t)
		r.d.defs("cpus: the idle CPU / its SMT sibling shown (the first running a task when the window opened)",
			"pid, comm: the task queued longest when the window opened (tasks_queued in JSON: how many were)",
			"sibling ran: the sibling's task when the window opened (pid in JSON), or (idle)",
			"core ms: the part of the window with every sibling idle too",
			"cookie: the queued task's core-scheduling cookie against the sibling's task's: diff (core scheduling "+
				"forbids them on one core at once), same, - (no cookie markers, or the sibling idle)",
			"how: exact, infer(red) runqueue or cut (censored)")
	}
	if !detail {
		return
	}
	r.d.title("Own-queue idle window lengths")
	r.d.pre(histLines("usecs", d.Hist))
	r.d.title("Own-queue idle by CPU")
	ct := &Table{Header: []string{"cpu", "idle ms", "own queue ms", "share", "windows", "longest ms"}}
	for i, c := range oq.ByCPU {
		idle := int64(0)
		if i < len(r.a.Idle.ByCPU) {
			idle = r.a.Idle.ByCPU[i].IdleNs
		}
		ct.Add(strconv.Itoa(int(c.CPU)), msf(idle), msf(c.Ns), pct(c.Ns, idle), strconv.FormatInt(c.Windows, 10), msf(c.MaxNs))
	}
	r.d.table(ct)
}

// OwnQueueCPUJSON is the per-CPU view of own-queue idle.
type OwnQueueCPUJSON struct {
	CPU     timeline.CPU `json:"cpu"`
	Windows int64        `json:"windows"`
	Ns      int64        `json:"own_queue_ns"`
	MaxNs   int64        `json:"max_ns"`
}

// OwnQueueWindowJSON is one listed own-queue idle window.
type OwnQueueWindowJSON struct {
	CPU           timeline.CPU  `json:"cpu"`
	StartNs       int64         `json:"start_ns"`
	DurNs         int64         `json:"dur_ns"`
	PID           timeline.TID  `json:"pid"`
	Comm          string        `json:"comm"`
	Queued        int           `json:"tasks_queued"`
	SiblingCPU    *timeline.CPU `json:"sibling_cpu"`
	SiblingPID    *timeline.TID `json:"sibling_pid"`
	SiblingComm   string        `json:"sibling_comm,omitempty"`
	SiblingIdle   bool          `json:"sibling_idle"`
	CoreIdleNs    int64         `json:"core_idle_ns"`
	Cookie        string        `json:"cookie"`
	QueueInferred bool          `json:"queue_inferred"`
	Censored      bool          `json:"censored"`
	Exactness     string        `json:"exactness"`
}

// OwnQueueJSON is the "own_queue" object of the idle object.
type OwnQueueJSON struct {
	Definition      string               `json:"definition"`
	ListNs          int64                `json:"list_ns"`
	Count           int64                `json:"count"`
	TotalNs         int64                `json:"total_ns"`
	CensoredWindows int64                `json:"censored_windows"`
	CensoredNs      int64                `json:"censored_ns"`
	InferredNs      int64                `json:"inferred_queue_ns"`
	CookieMarkers   int                  `json:"cookie_markers"`
	Durations       DistJSON             `json:"durations"`
	ByCPU           []OwnQueueCPUJSON    `json:"by_cpu"`
	Windows         []OwnQueueWindowJSON `json:"windows"`
}

// NewOwnQueueJSON builds the own_queue object.
func NewOwnQueueJSON(oq *metrics.OwnQueue) OwnQueueJSON {
	out := OwnQueueJSON{Definition: metrics.DefOwnQueue, ListNs: oq.ListNs, Count: oq.Count, TotalNs: oq.TotalNs,
		CensoredWindows: oq.CensoredWindows, CensoredNs: oq.CensoredNs, InferredNs: oq.InferredNs, CookieMarkers: oq.CookieMarkers,
		Durations: distJSON(oq.Durations), ByCPU: []OwnQueueCPUJSON{}, Windows: []OwnQueueWindowJSON{}}
	for _, c := range oq.ByCPU {
		out.ByCPU = append(out.ByCPU, OwnQueueCPUJSON{c.CPU, c.Windows, c.Ns, c.MaxNs})
	}
	for _, w := range oq.Windows {
		x := OwnQueueWindowJSON{CPU: w.CPU, StartNs: int64(w.Start), DurNs: w.DurNs, PID: w.PID, Comm: w.Comm, Queued: w.Waiting,
			SiblingIdle: w.SiblingIdle, CoreIdleNs: w.SiblingIdleNs, Cookie: w.Cookie.String(), QueueInferred: w.QueueInferred,
			Censored: w.Censored, Exactness: w.Exactness().String()}
		if w.Sibling >= 0 {
			c := w.Sibling
			x.SiblingCPU = &c
		}
		if w.SiblingTask != timeline.NoTask {
			p := w.SiblingPID
			x.SiblingPID, x.SiblingComm = &p, w.SiblingComm
		}
		out.Windows = append(out.Windows, x)
	}
	return out
}
