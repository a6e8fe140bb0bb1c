// Package golden compares test output with golden files: one -update flag
// and one way to show the first differing line, for every package whose
// tests pin rendered output.
package golden

import (
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Update rewrites the golden files instead of comparing (go test -update;
// review the diff like code).
var Update = flag.Bool("update", false, "rewrite the golden files (review the diff like code)")

// Check compares got with the golden file at path, or rewrites the file
// under -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the package's tests with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden; got:\n%s", path, FirstDiff(string(got), string(want)))
	}
}

// FirstDiff shows the first differing line of got and want.
func FirstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return "(same lines)"
}
