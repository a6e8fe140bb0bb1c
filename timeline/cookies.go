package timeline

import (
	"fmt"
	"strconv"
	"strings"
)

// CookieMarker starts the trace marker that says a task's core-scheduling
// cookie: "core_sched_cookie tid=TID cookie=0xHEX" (the cookie as
// prctl(PR_SCHED_CORE, PR_SCHED_CORE_GET) reports it; 0 is untagged).
// The sched tracepoints do not carry cookies, so a workload that tags its
// tasks writes one such marker per task (tools/kernel-lab/src/coresched.c).
const CookieMarker = "core_sched_cookie"

// Cookies returns the core-scheduling cookies the trace's markers give, by
// TID (the last marker of a TID wins), and how many such markers there
// are. A marker that starts with CookieMarker and does not parse is an
// error with its time and CPU.
func (tl *Timeline) Cookies() (map[TID]uint64, int, error) {
	cookies := map[TID]uint64{}
	markers := 0
	for _, m := range tl.Markers() {
		rest, ok := strings.CutPrefix(m.Text, CookieMarker+" ")
		if !ok {
			continue
		}
		tid, cookie, err := parseCookieMarker(rest)
		if err != nil {
			return nil, 0, fmt.Errorf("marker at %.6f s on CPU %d: %q: %v (want %s tid=N cookie=0xHEX)",
				float64(m.Time)/1e9, m.CPU, m.Text, err, CookieMarker)
		}
		cookies[tid] = cookie
		markers++
	}
	return cookies, markers, nil
}

func parseCookieMarker(s string) (TID, uint64, error) {
	var tid TID
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
			tid, haveTID = TID(n), true
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
