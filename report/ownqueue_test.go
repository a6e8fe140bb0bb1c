package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestOwnQueueSections: on seed 004's before run 2 (a tagged task queued
// 949.9 ms on idle CPU 2 while its sibling idled too), the report shows
// the own-queue stall and idle lists it in every format; on an after run,
// with no window of 100 ms, the report leaves the measure out and idle
// still shows it. Text stays within the mail width.
func TestOwnQueueSections(t *testing.T) {
	render := func(in *Input, sec Section, format string) string {
		t.Helper()
		var buf bytes.Buffer
		if err := Write(&buf, in, sec, format); err != nil {
			t.Fatal(err)
		}
		if format == "text" {
			for i, l := range strings.Split(buf.String(), "\n") {
				if n := len([]rune(l)); n > Width {
					t.Errorf("section %d line %d: %d columns: %q", sec, i+1, n, l)
				}
			}
		}
		return buf.String()
	}
	stall := buildInput(t, "../fixtures/seeds/004/before/run-2/trace.txt.zst", "")
	// The stall's row, by fields (column widths depend on the other rows).
	const row = "5.112648 949.931 2/3 131 coresched rcu_preemp 949.716 diff exact"
	hasRow := func(text string) bool {
		for _, l := range strings.Split(text, "\n") {
			if strings.Join(strings.Fields(l), " ") == row {
				return true
			}
		}
		return false
	}
	rep := render(stall, Full, "text")
	if !strings.Contains(rep, "Own-queue idle stalls of 100.000 ms or more") || !hasRow(rep) {
		t.Errorf("report of before run 2: no own-queue stall row %q:\n%s", row, rep)
	}
	if strings.Count(rep, " exact\n") != 1 {
		t.Errorf("report of before run 2: want only the one stall listed")
	}
	idle := render(stall, IdleSection, "text")
	for _, want := range []string{"own queue  1509.849 ms (19.4% of idle) in 3568 windows", "Own-queue idle by CPU", "Own-queue idle windows of 1.000 ms or more"} {
		if !strings.Contains(idle, want) {
			t.Errorf("idle of before run 2: no %q", want)
		}
	}
	if !hasRow(idle) {
		t.Errorf("idle of before run 2: no stall row %q", row)
	}
	if md := render(stall, IdleSection, "markdown"); !strings.Contains(md, "| 5.112648 | 949.931 |  2/3 | 131 | coresched    | rcu\\_preempt | 949.716 | diff   | exact |") {
		t.Errorf("idle markdown of before run 2: no stall row")
	}
	if h := render(stall, IdleSection, "html"); !strings.Contains(h, "Idle with its own queue non-empty") {
		t.Errorf("idle html of before run 2: no own-queue section")
	}
	var doc struct {
		OwnQueue struct {
			Count   int64 `json:"count"`
			Windows []struct {
				DurNs      int64  `json:"dur_ns"`
				PID        int    `json:"pid"`
				SiblingCPU *int   `json:"sibling_cpu"`
				CoreIdleNs int64  `json:"core_idle_ns"`
				Cookie     string `json:"cookie"`
				Exactness  string `json:"exactness"`
			} `json:"windows"`
		} `json:"own_queue"`
	}
	if err := json.Unmarshal([]byte(render(stall, IdleSection, "json")), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range doc.OwnQueue.Windows {
		if w.DurNs == 949_931_000 && w.PID == 131 && w.SiblingCPU != nil && *w.SiblingCPU == 3 && w.CoreIdleNs == 949_716_000 && w.Cookie == "differs" && w.Exactness == "exact" {
			found = true
		}
	}
	if doc.OwnQueue.Count != 3568 || !found {
		t.Errorf("idle json of before run 2: own_queue count %d, stall found %v", doc.OwnQueue.Count, found)
	}

	quiet := buildInput(t, "../fixtures/seeds/004/after/run-1/trace.txt.zst", "")
	if rep := render(quiet, Full, "text"); strings.Contains(rep, "own queue") {
		t.Errorf("report of after run 1 shows own-queue idle without a stall")
	}
	if idle := render(quiet, IdleSection, "text"); !strings.Contains(idle, "Idle with its own queue non-empty") {
		t.Errorf("idle of after run 1: no own-queue section")
	}
}
