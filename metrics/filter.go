package metrics

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/schedlens/schedlens/timeline"
)

// FilterMiss is a --pid or --comm value that selects no task of a trace,
// with the trace's nearest values (closest first).
type FilterMiss struct {
	Value   string   // "pid 999999" or "comm nosuch"
	Closest []string // "pid 4123 (hackbench)", "comm sshd"
}

func (m FilterMiss) String() string {
	if len(m.Closest) == 0 {
		return m.Value + " matches no task"
	}
	return m.Value + " matches no task (closest: " + strings.Join(m.Closest, ", ") + ")"
}

// maxClosest is how many near values a FilterMiss names.
const maxClosest = 5

// Misses returns the values of f that select no task of tl (idle tasks
// excluded, as in Match), and whether f as a whole selects none. A zero
// Filter has no misses.
func (f Filter) Misses(tl *timeline.Timeline) (misses []FilterMiss, none bool) {
	if len(f.PIDs) == 0 && len(f.Comms) == 0 {
		return nil, false
	}
	pids := map[timeline.TID]timeline.TaskID{}
	comms := map[string]bool{}
	for id := range tl.Tasks {
		tk := &tl.Tasks[id]
		if tk.Idle {
			continue
		}
		if _, ok := pids[tk.PID]; !ok {
			pids[tk.PID] = timeline.TaskID(id)
		}
		comms[tl.Strings.Get(tk.Comm)] = true
		for _, c := range tk.Comms {
			comms[tl.Strings.Get(c.Comm)] = true
		}
	}
	delete(comms, "")
	matched := 0
	for _, p := range f.PIDs {
		if _, ok := pids[p]; ok {
			matched++
			continue
		}
		misses = append(misses, FilterMiss{Value: "pid " + strconv.Itoa(int(p)), Closest: closestPIDs(tl, pids, p)})
	}
	for _, c := range f.Comms {
		if comms[c] {
			matched++
			continue
		}
		misses = append(misses, FilterMiss{Value: "comm " + c, Closest: closestComms(comms, c)})
	}
	return misses, matched == 0
}

// Check returns an error naming the nearest pids and comms of the trace
// when f selects no task of tl.
func (f Filter) Check(tl *timeline.Timeline) error {
	misses, none := f.Misses(tl)
	if !none {
		return nil
	}
	parts := make([]string, len(misses))
	for i, m := range misses {
		parts[i] = m.String()
	}
	return fmt.Errorf("the filter selects no task: %s", strings.Join(parts, "; "))
}

// closestPIDs names the trace's pids numerically nearest to p.
func closestPIDs(tl *timeline.Timeline, pids map[timeline.TID]timeline.TaskID, p timeline.TID) []string {
	all := make([]timeline.TID, 0, len(pids))
	for q := range pids {
		all = append(all, q)
	}
	dist := func(q timeline.TID) int64 {
		d := int64(q) - int64(p)
		if d < 0 {
			return -d
		}
		return d
	}
	slices.SortFunc(all, func(a, b timeline.TID) int {
		if da, db := dist(a), dist(b); da != db {
			if da < db {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	var out []string
	for _, q := range all[:min(len(all), maxClosest)] {
		out = append(out, fmt.Sprintf("pid %d (%s)", q, tl.Strings.Get(tl.Tasks[pids[q]].Comm)))
	}
	return out
}

// closestComms names the trace's comms nearest to c: those containing it
// (ignoring case) first, then by edit distance, keeping only those within
// half of the longer name when there are any.
func closestComms(comms map[string]bool, c string) []string {
	lc := strings.ToLower(c)
	type cand struct {
		name string
		sub  bool
		d    int
	}
	var cs, far []cand
	for n := range comms {
		ln := strings.ToLower(n)
		sub := strings.Contains(ln, lc) || len(ln) >= 3 && strings.Contains(lc, ln)
		d := levenshtein.ComputeDistance(lc, ln)
		if !sub && 2*d > max(len(lc), len(ln)) {
			far = append(far, cand{n, sub, d})
			continue
		}
		cs = append(cs, cand{n, sub, d})
	}
	if len(cs) == 0 {
		cs = far // nothing near: the least far
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.sub != b.sub {
			if a.sub {
				return -1
			}
			return 1
		}
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, x := range cs[:min(len(cs), maxClosest)] {
		out = append(out, "comm "+x.name)
	}
	return out
}
