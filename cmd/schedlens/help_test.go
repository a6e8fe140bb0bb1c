package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// TestHelpWidth: the --help of every command, and of schedlens itself, is
// within 80 columns (issue 14 item 10), and still lists every flag.
func TestHelpWidth(t *testing.T) {
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, s := range c.Commands() {
			walk(s, append(append([]string{}, path...), s.Name()))
		}
	}
	walk(newRootCmd(), nil)
	// cobra adds completion when the command runs.
	for _, sh := range []string{"", "bash", "zsh", "fish", "powershell"} {
		paths = append(paths, strings.Fields("completion "+sh))
	}
	if len(paths) < 20 {
		t.Fatalf("found %d commands", len(paths))
	}
	for _, p := range paths {
		out, stderr, code := execute(t, append(append([]string{}, p...), "--help")...)
		name := strings.Join(append([]string{"schedlens"}, p...), " ")
		if code != 0 {
			t.Errorf("%s --help: exit %d: %s", name, code, stderr)
			continue
		}
		for i, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > helpWidth {
				t.Errorf("%s --help line %d: %d columns: %q", name, i+1, n, l)
			}
		}
		if !strings.Contains(out, "--help") || !strings.Contains(out, "--cpuprofile") {
			t.Errorf("%s --help lacks its flags:\n%s", name, out)
		}
	}
}
