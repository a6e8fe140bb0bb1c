// Package abfixture finds the runs of the A/B fixtures (fixtures/ab): the
// folders side-1/, side-2/, ... of a pair and the trace each holds, as
// fixtures/ab/README.md lays them out. Tests of compare and whatif read the
// corpus through it.
package abfixture

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// TraceNames are the trace files a run folder may hold, in the order they
// are looked for: the first that exists is the run's trace.
var TraceNames = []string{"trace.txt.zst", "trace.txt.gz", "trace.txt", "trace.pftrace.zst", "trace.pftrace", "perf-script.txt.gz", "perf-script.txt"}

// Runs returns the trace paths of dir's side-1/, side-2/, ... folders in
// run order, stopping at the first number missing; a run folder without a
// trace is an error.
func Runs(dir, side string) ([]string, error) {
	var out []string
	for i := 1; ; i++ {
		rd := filepath.Join(dir, side+"-"+strconv.Itoa(i))
		if _, err := os.Stat(rd); err != nil {
			return out, nil
		}
		found := ""
		for _, n := range TraceNames {
			if _, err := os.Stat(filepath.Join(rd, n)); err == nil {
				found = filepath.Join(rd, n)
				break
			}
		}
		if found == "" {
			return nil, fmt.Errorf("%s: no trace (one of %s)", rd, strings.Join(TraceNames, ", "))
		}
		out = append(out, found)
	}
}
