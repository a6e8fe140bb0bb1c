package readertest

import (
	"os"
	"testing"
)

// BenchFile returns the path of the trace file the environment variable
// env names, for a benchmark of a large capture kept outside the
// repository: it skips b when env is unset, and counts the file's size
// per operation (MB/s) and the allocations.
func BenchFile(b *testing.B, env string) string {
	path := os.Getenv(env)
	if path == "" {
		b.Skipf("%s names no file", env)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	return path
}
