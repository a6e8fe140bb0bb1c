//go:build !linux

package perfdata

import (
	"os"

	"github.com/schedlens/schedlens/ingest/parse"
)

// mapping is the mapped data section of mmap_linux.go; elsewhere the
// reader reads the file.
type mapping struct{ data []byte }

func mapData(*os.File, int64, int64) *mapping                    { return nil }
func (m *mapping) due(int) bool                                  { return false }
func (m *mapping) progress(int, int)                             {}
func (m *mapping) close()                                        {}
func (m *mapping) guard(*error, func() *parse.ParseError) func() { return func() {} }
func (m *mapping) fileSize() int64                               { return -1 }
