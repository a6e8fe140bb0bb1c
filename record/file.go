package record

import (
	"context"
	"fmt"
	"io"

	"github.com/schedlens/schedlens/ingest/perfetto"
	"github.com/schedlens/schedlens/outfile"
)

// FileOptions configure the trace file WriteFile writes.
type FileOptions struct {
	// CompactSched writes sched_switch and sched_waking in Perfetto's
	// compact_sched encoding: smaller, but without the prev side of
	// switches and the waker of wakings.
	CompactSched bool
}

// WriteFile runs the recording (see Run) into a Perfetto trace at path,
// created by outfile.Create: a regular file is written beside path and
// renamed over it only once complete and synced, so path never holds a
// partial trace and keeps its mode; a device or FIFO is written in place;
// "-" is stdout. On error an existing file at path is left as it was.
func (r *Recorder) WriteFile(ctx context.Context, path string, stdout io.Writer, fo FileOptions, ready func() error) (st Stats, err error) {
	f, err := outfile.Create(path, outfile.Options{Stdout: stdout})
	if err != nil {
		return st, fmt.Errorf("creating the trace file: %w", err)
	}
	defer f.Abort()
	w, err := perfetto.NewWriter(f, perfetto.WriterOptions{
		CompactSched: fo.CompactSched,
		Strings:      r.strs,
		Topology:     r.sys.Topology,
		Kernel:       r.sys.Kernel,
		NCPU:         r.sys.NCPU,
		Sysctls:      r.sys.Sysctls,
	})
	if err != nil {
		return st, err
	}
	st, err = r.Run(ctx, w, ready)
	if err != nil {
		return st, err
	}
	if err = w.Close(); err != nil {
		return st, fmt.Errorf("writing %s: %w", path, err)
	}
	return st, f.Commit()
}
