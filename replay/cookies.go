package replay

import (
	"fmt"

	"github.com/schedlens/schedlens/timeline"
)

// CookieMarker starts the trace marker that says a task's core-scheduling
// cookie (timeline.CookieMarker, which parses it).
const CookieMarker = timeline.CookieMarker

// markCookies sets the cookies the trace's markers give: every task
// instance of a marked TID takes the cookie, the last marker of a TID
// wins. It reports how many tasks it tagged and how many markers named a
// TID the workload does not have. A marker that starts with CookieMarker
// and does not parse is an error with its time and CPU.
func markCookies(w *Workload, tl *timeline.Timeline) (tagged, unknown, markers int, err error) {
	cookies, markers, err := tl.Cookies()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("replay: extract: %w", err)
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
