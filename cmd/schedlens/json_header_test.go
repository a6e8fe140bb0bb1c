package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestJSONHeader: issue 14 item 10. Every --format json output starts with
// schema_version, command, version, trace, window and warnings, in that
// order; the warnings start with those printed on stderr, and neither
// gives one twice.
func TestJSONHeader(t *testing.T) {
	lost := fx + "ftrace-pipe-lost/trace.txt.gz" // lost events, a clipped buffer, inconsistencies
	juno := fx + "qemu-juno-asym/trace.txt.zst"
	head := []string{"schema_version", "command", "version", "trace", "window", "warnings"}
	cases := []struct {
		name     string
		args     []string
		body     string // a key the command had before the header
		warnings bool   // the trace's warnings are expected
	}{
		{"tasks", []string{"tasks", lost}, "tasks", true},
		{"cpus", []string{"cpus", lost}, "cpus", true},
		{"latency", []string{"latency", lost}, "overall", true},
		{"idle", []string{"idle", lost}, "windows", true},
		{"misplaced", []string{"misplaced", lost}, "tasks", true},
		{"report", []string{"report", lost}, "top_tasks", true},
		{"replay", []string{"replay", lost}, "fidelity", true},
		{"whatif", []string{"whatif", "--runs", "2", "--change", "NO_PLACE_LAG", lost}, "metrics", true},
		{"compare", []string{"compare", lost, juno}, "metrics", true},
		{"topology", []string{"topology", "show", "--topology", "juno-r2"}, "cpus", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := execute(t, append(c.args, "--format", "json")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			keys, doc := topKeys(t, stdout)
			if len(keys) < len(head) || !slices.Equal(keys[:len(head)], head) {
				t.Fatalf("top keys %v, want %v first", keys, head)
			}
			if _, ok := doc[c.body]; !ok {
				t.Errorf("key %q lost; keys %v", c.body, keys)
			}
			if v, _ := doc["schema_version"].(float64); v != 1 {
				t.Errorf("schema_version %v, want 1", doc["schema_version"])
			}
			if cmd, _ := doc["command"].(string); !strings.HasPrefix(cmd, "schedlens "+c.args[0]) {
				t.Errorf("command %q", cmd)
			}
			if v, _ := doc["version"].(string); v != Version {
				t.Errorf("version %q, want %q", v, Version)
			}
			var warned []string
			for _, l := range strings.Split(stderr, "\n") {
				if w, ok := strings.CutPrefix(l, "warning: "); ok {
					warned = append(warned, w)
				}
			}
			got := []string{}
			for _, w := range doc["warnings"].([]any) {
				got = append(got, w.(string))
			}
			if c.warnings && len(got) == 0 {
				t.Errorf("no warnings in the JSON; stderr: %s", stderr)
			}
			if c.name == "compare" {
				// Two traces: each warning names its trace.
				for _, w := range got {
					if !strings.HasPrefix(w, lost+": ") && !strings.HasPrefix(w, juno+": ") {
						t.Errorf("compare warning %q does not name its trace", w)
					}
				}
				return
			}
			// The analysis commands add their own warnings (unobserved
			// time, topology guesses) after those of loading.
			if len(got) < len(warned) || !slices.Equal(got[:len(warned)], warned) {
				t.Errorf("JSON warnings\n%q\ndo not start with the stderr warnings\n%q", got, warned)
			}
			for name, ws := range map[string][]string{"stderr": warned, "JSON": got} {
				seen := map[string]bool{}
				for _, w := range ws {
					if seen[w] {
						t.Errorf("%s: warning given twice: %s", name, w)
					}
					seen[w] = true
				}
			}
		})
	}
}

// topKeys returns the top-level keys of a JSON object in document order,
// and the object.
func topKeys(t *testing.T, s string) ([]string, map[string]any) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(s), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%.400s", err, s)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys, doc
}
