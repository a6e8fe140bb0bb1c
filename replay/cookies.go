package replay

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/timeline"
)

// CookieMarker starts the trace marker that says a task's core-scheduling
// cookie: "core_sched_cookie tid=TID cookie=0xHEX" (the cookie as
// prctl(PR_SCHED_CORE, PR_SCHED_CORE_GET) reports it; 0 is untagged).
// The sched tracepoints do not carry cookies, so a workload that tags its
// tasks writes one such marker per task (tools/kernel-lab/src/coresched.c).
const CookieMarker = "core_sched_cookie"

// markCookies sets the cookies the trace's markers give: every task
// instance of a marked TID takes the cookie, the last marker of a TID
// wins. It reports how many tasks it tagged and how many markers named a
// TID the workload does not have. A marker that starts with CookieMarker
// and does not parse is an error with its time and CPU.
func markCookies(w *Workload, tl *timeline.Timeline) (tagged, unknown, markers int, err error) {
	cookies := map[timeline.TID]uint64{}
	for _, m := range tl.Markers() {
		rest, ok := strings.CutPrefix(m.Text, CookieMarker+" ")
		if !ok {
			continue
		}
		tid, cookie, perr := parseCookieMarker(rest)
		if perr != nil {
			return 0, 0, 0, fmt.Errorf("replay: extract: marker at %.6f s on CPU %d: %q: %v (want %s tid=N cookie=0xHEX)",
				float64(m.Time)/1e9, m.CPU, m.Text, perr, CookieMarker)
		}
		cookies[tid] = cookie
		markers++
	}
	seen := map[timeline.TID]bool{}
	for i := range w.Tasks {
		tk := &w.Tasks[i]
		if c, ok := cookies[tk.TID]; ok {
			tk.Cookie = c
			seen[tk.TID] = true
			if c != 0 {
				tagged++
			}
		}
	}
	for tid := range cookies {
		if !seen[tid] {
			unknown++
		}
	}
	return tagged, unknown, markers, nil
}

func parseCookieMarker(s string) (timeline.TID, uint64, error) {
	var tid timeline.TID
	var cookie uint64
	var haveTID, haveCookie bool
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return 0, 0, fmt.Errorf("field %q is not key=value", f)
		}
		switch k {
		case "tid":
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n <= 0 {
				return 0, 0, fmt.Errorf("tid %q is not a positive number", v)
			}
			tid, haveTID = timeline.TID(n), true
		case "cookie":
			n, err := strconv.ParseUint(v, 0, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("cookie %q is not a number", v)
			}
			cookie, haveCookie = n, true
		}
	}
	if !haveTID || !haveCookie {
		return 0, 0, fmt.Errorf("tid= or cookie= missing")
	}
	return tid, cookie, nil
}

// cookieAssumption is what the workload assumes about cookies, once the
// markers are read.
func cookieAssumption(tagged, unknown, markers int) Assumption {
	if markers == 0 {
		return Assumption{Name: AssumeNoCookies, Detail: "core-scheduling cookies are not traced: none assumed"}
	}
	d := fmt.Sprintf("core-scheduling cookies from %d %s trace markers: %d tasks tagged, every unmarked task untagged, a cookie taken for the task's whole life", markers, CookieMarker, tagged)
	if unknown > 0 {
		d += fmt.Sprintf("; %d markers name a task that did not run in the recording", unknown)
	}
	return Assumption{Name: AssumeCookieMarkers, Detail: d, Tasks: tagged}
}
