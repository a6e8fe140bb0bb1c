package main

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The per-CPU timeline of the HTML report, on the default window, draws
// each CPU busy for the share of the window `cpus` says it was busy. Bins
// are coloured by what dominated them, so the drawn share may differ by a
// few bins' worth.
func TestHTMLTimelineAgreesWithCPUs(t *testing.T) {
	for _, trace := range []string{fx + "qemu-juno-asym/trace.txt.zst", fx + "ftrace-hackbench-cyclictest/trace.txt.gz"} {
		page, stderr, code := execute(t, "report", "--format", "html", trace)
		if code != 0 {
			t.Fatalf("report: exit %d: %s", code, stderr)
		}
		cpusOut, stderr, code := execute(t, "cpus", "--format", "json", trace)
		if code != 0 {
			t.Fatalf("cpus: exit %d: %s", code, stderr)
		}
		var doc struct {
			CPUs []struct {
				CPU    int   `json:"cpu"`
				BusyNs int64 `json:"busy_ns"`
			} `json:"cpus"`
			Win struct {
				Start int64 `json:"start_ns"`
				End   int64 `json:"end_ns"`
			} `json:"window"`
		}
		if err := json.Unmarshal([]byte(cpusOut), &doc); err != nil {
			t.Fatal(err)
		}
		drawn := timelineBusy(t, page)
		if len(drawn) != len(doc.CPUs) {
			t.Fatalf("%s: timeline has %d CPU rows, cpus %d", trace, len(drawn), len(doc.CPUs))
		}
		span := float64(doc.Win.End - doc.Win.Start)
		for _, c := range doc.CPUs {
			want := 100 * float64(c.BusyNs) / span
			if got := drawn[c.CPU]; math.Abs(got-want) > 3 {
				t.Errorf("%s CPU %d: timeline draws %.1f%% busy, cpus says %.1f%%", trace, c.CPU, got, want)
			}
		}
	}
}

var (
	svgTimeline = regexp.MustCompile(`(?s)<svg [^>]*aria-label="per-CPU timeline"[^>]*>(.*?)</svg>`)
	svgElem     = regexp.MustCompile(`<text x="4" y="\d+">CPU (\d+)</text>|<rect x="([\d.]+)" y="\d+" width="([\d.]+)" height="\d+" fill="(#[0-9a-f]+)"/>`)
	svgPlot     = regexp.MustCompile(`data-plot="([^"]*)"`)
)

// timelineBusy returns, per CPU row of the page's timeline SVG, the
// percentage of the plot width drawn as busy (dark blue).
func timelineBusy(t *testing.T, page string) []float64 {
	t.Helper()
	m := svgTimeline.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no per-CPU timeline SVG in the page")
	}
	open := page[strings.Index(page, m[0]):]
	var left, top, plot, height float64
	if _, err := fmt.Sscanf(svgPlot.FindStringSubmatch(open[:strings.Index(open, ">")])[1], "%g %g %g %g", &left, &top, &plot, &height); err != nil {
		t.Fatalf("the timeline's data-plot: %v", err)
	}
	var out []float64
	for _, e := range svgElem.FindAllStringSubmatch(m[1], -1) {
		if e[1] != "" {
			out = append(out, 0)
			continue
		}
		if len(out) == 0 {
			t.Fatal("a rect before the first CPU label")
		}
		if e[4] == "#1f4e79" {
			width, _ := strconv.ParseFloat(e[3], 64)
			out[len(out)-1] += 100 * (width - 0.05) / plot
		}
	}
	return out
}
