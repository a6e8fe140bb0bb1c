// Package outfile is the one way schedlens writes an output file (convert,
// replay -o, record -o, --samples, topology capture -o): a regular file is
// replaced atomically, anything else is written where it is.
//
// The rules:
//   - "-" is standard output.
//   - A regular file (or a symlink that resolves to one) is written to a
//     temporary file in the same directory, synced, and renamed over the
//     target when complete: the target never holds a partial output, and a
//     symlink stays a symlink (the file it names is replaced). The new file
//     keeps the mode of the one it replaces (a 0600 trace stays 0600); a new
//     file gets 0666 less the umask, as any file a shell creates.
//   - A target that exists and is not a regular file (a device such as
//     /dev/null or /dev/full, a FIFO, /dev/stdout and other links into
//     /proc) is opened and written in place, so it is never replaced and a
//     write error (a full device) is reported.
//   - A directory is refused, and so is a target that is one of the inputs
//     (the same file, by device and inode, under any name).
//   - With RemoveOnSignal, SIGINT and SIGTERM remove the temporary file before
//     the process dies of the signal.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/renameio/v2"
)

// Options say how Create treats the target.
type Options struct {
	// Inputs are the files the command reads; the output must be none of
	// them.
	Inputs []string
	// Stdout is where "-" writes; nil refuses "-".
	Stdout io.Writer
	// RemoveOnSignal removes the temporary file on SIGINT or SIGTERM and
	// then lets the signal end the process. Commands that handle the
	// signals themselves (record stops the recording and keeps it) leave it
	// off and call Abort or Commit.
	RemoveOnSignal bool
}

// File is an output being written. Write to it, then Commit; Abort (safe to
// defer, a no-op after Commit) discards an unfinished output.
type File struct {
	path    string
	w       io.Writer
	pending *renameio.PendingFile // atomic replace of a regular file
	direct  *os.File              // written in place

	mu       sync.Mutex
	finished bool
	sigs     chan os.Signal
	stopSigs chan struct{}
}

// Create opens the output path under the rules of the package comment.
func Create(path string, o Options) (*File, error) {
	if path == "" {
		return nil, errors.New("no output file named")
	}
	if path == "-" {
		if o.Stdout == nil {
			return nil, errors.New("output -: this output cannot go to standard output")
		}
		return &File{path: path, w: o.Stdout}, nil
	}
	if err := checkInputs(path, o.Inputs); err != nil {
		return nil, err
	}
	target, inPlace, err := classify(path)
	if err != nil {
		return nil, err
	}
	f := &File{path: path}
	if inPlace {
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		if err != nil {
			return nil, err
		}
		f.direct, f.w = fh, fh
		return f, nil
	}
	p, err := renameio.NewPendingFile(target,
		renameio.WithTempDir(filepath.Dir(target)),
		renameio.WithPermissions(0o666),
		renameio.WithExistingPermissions())
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	f.pending, f.w = p, p
	if o.RemoveOnSignal {
		f.watchSignals()
	}
	return f, nil
}

// classify says where a target is written: the file to replace atomically
// (path itself, or the regular file a symlink resolves to), or in place.
func classify(path string) (target string, inPlace bool, err error) {
	li, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return path, false, nil
	}
	if err != nil {
		return "", false, err
	}
	if li.Mode().IsRegular() {
		return path, false, nil
	}
	if li.IsDir() {
		return "", false, fmt.Errorf("output %s is a directory", path)
	}
	if li.Mode()&os.ModeSymlink != 0 {
		resolved, err := filepath.EvalSymlinks(path)
		if err != nil || strings.HasPrefix(resolved, "/proc/") {
			// Dangling, or a /proc magic link such as /dev/stdout.
			return path, true, nil
		}
		ri, err := os.Stat(resolved)
		if err != nil {
			return "", false, err
		}
		if ri.IsDir() {
			return "", false, fmt.Errorf("output %s is a directory", path)
		}
		if ri.Mode().IsRegular() {
			return resolved, false, nil
		}
	}
	return path, true, nil
}

// checkInputs refuses an output that is one of the inputs.
func checkInputs(path string, inputs []string) error {
	oi, err := os.Stat(path)
	if err != nil || !oi.Mode().IsRegular() {
		return nil // a new file, or a device both may name harmlessly
	}
	for _, in := range inputs {
		if ii, err := os.Stat(in); err == nil && os.SameFile(ii, oi) {
			if in == path {
				return fmt.Errorf("output %s is the input: writing it would destroy what is read", path)
			}
			return fmt.Errorf("output %s is the input %s (the same file): writing it would destroy what is read", path, in)
		}
	}
	return nil
}

// Name is the path the output was created with.
func (f *File) Name() string { return f.path }

// Write writes to the output.
func (f *File) Write(p []byte) (int, error) { return f.w.Write(p) }

// Commit completes the output: a replaced file is synced and renamed over
// its target, a file written in place is closed.
func (f *File) Commit() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.finished {
		return fmt.Errorf("writing %s: the output was already finished or discarded", f.path)
	}
	f.finished = true
	f.stopSignals()
	switch {
	case f.pending != nil:
		if err := f.pending.CloseAtomicallyReplace(); err != nil {
			f.pending.Cleanup()
			return fmt.Errorf("writing %s: %w", f.path, err)
		}
		syncDir(filepath.Dir(f.pending.Name()))
	case f.direct != nil:
		if err := f.direct.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", f.path, err)
		}
	}
	return nil
}

// Abort discards an unfinished output: the temporary file is removed and
// a replaced target is left as it was. After Commit it does nothing.
func (f *File) Abort() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.finished {
		return
	}
	f.finished = true
	f.stopSignals()
	switch {
	case f.pending != nil:
		f.pending.Cleanup()
	case f.direct != nil:
		f.direct.Close()
	}
}

// syncDir makes a rename in dir durable; an error only loses durability,
// not the output, so it is not reported.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

func (f *File) watchSignals() {
	f.sigs = make(chan os.Signal, 1)
	f.stopSigs = make(chan struct{})
	signal.Notify(f.sigs, os.Interrupt, syscall.SIGTERM)
	go func(sigs chan os.Signal, stop chan struct{}) {
		select {
		case <-stop:
			return
		case s := <-sigs:
			f.mu.Lock()
			if !f.finished {
				f.finished = true
				f.pending.Cleanup()
			}
			signal.Reset(s)
			f.mu.Unlock()
			// Die of the signal, as without the handler.
			if sig, ok := s.(syscall.Signal); ok {
				syscall.Kill(os.Getpid(), sig)
				time.Sleep(time.Second)
				os.Exit(128 + int(sig))
			}
			os.Exit(1)
		}
	}(f.sigs, f.stopSigs)
}

// stopSignals ends the signal watch; f.mu is held.
func (f *File) stopSignals() {
	if f.sigs == nil {
		return
	}
	signal.Stop(f.sigs)
	close(f.stopSigs)
	f.sigs = nil
}
