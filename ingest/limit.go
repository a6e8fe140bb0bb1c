package ingest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// BytesPerEvent is what one loaded event costs in memory, collector
// headroom included: `schedlens tasks` on ftrace-oracle-busy (258,812
// events) peaks at 48 MB resident, 40 MB above the 9 MB of a run that
// loads nothing: 155 bytes an event.
const BytesPerEvent = 160

// ErrTooManyEvents is returned by Load when a trace holds more events
// than Options.MaxEvents (or the limit derived from the memory available).
var ErrTooManyEvents = errors.New("too many events")

// MaxEventsFor is the event limit Load applies when Options.MaxEvents is
// 0: half the memory available at BytesPerEvent an event, leaving the
// other half to what the command computes from them. Available is the
// kernel's MemAvailable (/proc/meminfo), or the memory cgroup's limit when
// that is lower. It returns 0 (no limit) when neither is known, and the
// limit in words for the error.
func MaxEventsFor(meminfo string, cgroupLimit func() (uint64, error)) (int64, string) {
	return maxEventsAt(meminfo, cgroupLimit, BytesPerEvent)
}

// maxEventsAt is MaxEventsFor at perEvent bytes an event.
func maxEventsAt(meminfo string, cgroupLimit func() (uint64, error), perEvent int) (int64, string) {
	avail := memAvailable(meminfo)
	src := "available memory"
	if cgroupLimit != nil {
		if lim, err := cgroupLimit(); err == nil && lim > 0 && (avail == 0 || lim < avail) {
			avail, src = lim, "the memory cgroup's limit"
		}
	}
	if avail == 0 {
		return 0, ""
	}
	n := int64(avail / 2 / uint64(perEvent))
	return n, fmt.Sprintf("the limit for %.1f GB of %s (half of it, at about %d bytes an event)", float64(avail)/1e9, src, perEvent)
}

// AnalysisBytesPerEvent is what a streamed analysis (report, latency,
// idle, misplaced) holds an event, which it does not keep: its collector's
// segments and samples (report on 1.26 GB and 4 GB of ftrace text: 74 and
// 70 bytes an event).
const AnalysisBytesPerEvent = 80

// CheckStreamedAnalysis returns an error wrapping ErrTooManyEvents when a
// streamed analysis of the n events that a summary of path counted would
// hold more than half the memory available (maxEvents 0, as for Load, at
// AnalysisBytesPerEvent an event) or n is over maxEvents (> 0); -1: no
// limit. The summary read holds nothing, so this is where the analysis
// stops before it runs out of memory.
func CheckStreamedAnalysis(path string, n int, maxEvents int64) error {
	limit, why := eventLimit(maxEvents)
	if maxEvents == 0 {
		limit, why = maxEventsAt("/proc/meminfo", memlimit.FromCgroup, AnalysisBytesPerEvent)
	}
	if limit > 0 && int64(n) > limit {
		return fmt.Errorf("%s: %w: %d events, over %d, %s; cut the trace, or raise the limit with --max-events",
			path, ErrTooManyEvents, n, limit, why)
	}
	return nil
}

// defaultMaxEvents is MaxEventsFor this machine.
func defaultMaxEvents() (int64, string) {
	return MaxEventsFor("/proc/meminfo", memlimit.FromCgroup)
}

// memAvailable reads MemAvailable from a /proc/meminfo file, 0 if absent.
func memAvailable(path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// eventLimit resolves Options.MaxEvents: the limit (0: none) and, for the
// error, where it comes from.
func eventLimit(max int64) (int64, string) {
	switch {
	case max < 0:
		return 0, ""
	case max > 0:
		return max, "the limit --max-events sets"
	}
	return defaultMaxEvents()
}
