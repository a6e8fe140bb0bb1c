package main

import (
	"strings"
	"testing"
)

// Flags that need no trace are checked before the trace is read: with a
// trace path that does not exist, the error is the flag's, not the file's.
func TestFlagsCheckedBeforeTrace(t *testing.T) {
	missing := t.TempDir() + "/no-such-trace.txt"
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report", "--start", "15", "--end", "12"}, 2, "--start 15 is after --end 12"},
		{[]string{"tasks", "--start", "15", "--end", "12"}, 2, "--start 15 is after --end 12"},
		{[]string{"replay", "--start", "15", "--end", "12"}, 2, "--start 15 is after --end 12"},
		{[]string{"compare", "--start", "15", "--end", "12", missing}, 2, "--start 15 is after --end 12"},
		{[]string{"latency", "--start", "1", "--start-marker", "GO"}, 2, "--start and --start-marker"},
		{[]string{"report", "--topology", "no-such-preset"}, 1, "--topology"},
		{[]string{"whatif", "--change", "+resched-ineligible", "--topology", "no-such-preset"}, 1, "--topology"},
		{[]string{"idle", "--affinity", missing + ".aff"}, 1, "--affinity"},
		{[]string{"replay", "--affinity", missing + ".aff"}, 1, "--affinity"},
	} {
		_, stderr, code := execute(t, append(c.args, missing)...)
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "no-such-trace.txt:") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and an error about %q before the trace is opened", c.args, code, stderr, c.code, c.want)
		}
	}
}
