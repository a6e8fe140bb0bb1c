package record

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/schedlens/schedlens/ingest/perfetto"
)

// FileOptions configure the trace file WriteFile writes.
type FileOptions struct {
	// CompactSched writes sched_switch and sched_waking in Perfetto's
	// compact_sched encoding: smaller, but without the prev side of
	// switches and the waker of wakings.
	CompactSched bool
}

// WriteFile runs the recording (see Run) into a Perfetto trace at path.
// The trace goes to a temporary file in the same directory, which is
// renamed to path only once complete and synced, so path never holds a
// partial trace; on error the temporary file is removed and an existing
// file at path is left as it was.
func (r *Recorder) WriteFile(ctx context.Context, path string, fo FileOptions, ready func() error) (st Stats, err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return st, fmt.Errorf("creating the trace file: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w, err := perfetto.NewWriter(f, perfetto.WriterOptions{
		CompactSched: fo.CompactSched,
		Strings:      r.strs,
		Topology:     r.sys.Topology,
		Kernel:       r.sys.Kernel,
		NCPU:         r.sys.NCPU,
	})
	if err != nil {
		return st, err
	}
	st, err = r.Run(ctx, w, ready)
	if err != nil {
		return st, err
	}
	if err = w.Close(); err != nil {
		return st, fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err = f.Sync(); err != nil {
		return st, fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return st, fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return st, fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return st, fmt.Errorf("renaming the finished trace: %w", err)
	}
	return st, nil
}
