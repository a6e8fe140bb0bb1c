package main

import (
	"strings"
	"testing"
)

// A --pid or --comm that selects no task is a usage error naming the
// trace's closest values, on every command that takes them; a value that
// selects nothing beside others that do is a warning.
func TestFilterMatchingNothing(t *testing.T) {
	trace := fx + "ftrace-hackbench-cyclictest/trace.txt.gz"
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"report", "--comm", "cyclictes"}, []string{"comm cyclictes matches no task", "closest: comm cyclictest"}},
		{[]string{"latency", "--pid", "999999"}, []string{"pid 999999 matches no task", "closest: pid "}},
		{[]string{"tasks", "--comm", "nosuch"}, []string{"comm nosuch matches no task", "closest: comm "}},
		{[]string{"compare", "--comm", "nosuch", trace}, []string{"comm nosuch matches no task"}},
	} {
		out, stderr, code := execute(t, append(c.args, trace)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage); stdout %q", c.args, code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr does not say %q:\n%s", c.args, w, stderr)
			}
		}
	}
	out, stderr, code := execute(t, "latency", "--comm", "nosuch,cyclictest", trace)
	if code != 0 {
		t.Fatalf("one matching comm: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "warning: --pid/--comm: comm nosuch matches no task") || !strings.Contains(out, "cyclictest") {
		t.Errorf("one matching comm: no warning for the other, or no cyclictest rows:\n%s", stderr)
	}
}
