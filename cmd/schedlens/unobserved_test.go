package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The report's summary and warnings name every CPU that `cpus` finds
// unobserved for 1% of the window or more, with its share.
func TestReportNamesUnobservedCPUs(t *testing.T) {
	trace := fx + "perfetto-tracebox-hackbench-plain/trace.pftrace.zst"
	cpusOut, stderr, code := execute(t, "cpus", "--format", "json", trace)
	if code != 0 {
		t.Fatalf("cpus: exit %d: %s", code, stderr)
	}
	var doc struct {
		Window struct {
			Start int64 `json:"start_ns"`
			End   int64 `json:"end_ns"`
		} `json:"window"`
		CPUs []struct {
			CPU   int   `json:"cpu"`
			Unobs int64 `json:"unobserved_ns"`
		} `json:"cpus"`
	}
	if err := json.Unmarshal([]byte(cpusOut), &doc); err != nil {
		t.Fatal(err)
	}
	text, stderr, code := execute(t, "report", trace)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	js, _, _ := execute(t, "report", "--format", "json", trace)
	warnings := strings.Join(toStrings(decodeJSON(t, js)["warnings"]), "\n")
	_, summary, _ := strings.Cut(text, "\nunobserved    ")
	summary, _, _ = strings.Cut(summary, "\n\n")
	summary = strings.Join(strings.Fields(summary), " ")
	large := 0
	for _, c := range doc.CPUs {
		share := 100 * float64(c.Unobs) / float64(doc.Window.End-doc.Window.Start)
		name := fmt.Sprintf("CPU %d %.1f%%", c.CPU, share)
		if share >= 1 {
			large++
			if !strings.Contains(summary, name) || !strings.Contains(warnings, name) {
				t.Errorf("%s unobserved (cpus) is not in the summary %q or the JSON warnings", name, summary)
			}
		} else if strings.Contains(summary, fmt.Sprintf("CPU %d ", c.CPU)) {
			t.Errorf("CPU %d, %.1f%% unobserved, is named: %q", c.CPU, share, summary)
		}
	}
	if large == 0 {
		t.Fatal("the fixture has no CPU unobserved for 1% of the window: the test checks nothing")
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
