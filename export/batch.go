package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/schedlens/schedlens/ingest"
)

// BatchOptions of Batch.
type BatchOptions struct {
	Options
	// Jobs is how many traces are exported at once; 0 or less: the CPU
	// count. Each job holds one trace's timeline and analysis.
	Jobs int
	// Progress, when set, is called after each trace, one call at a time.
	Progress func(done, total int, o Outcome)
}

// Outcome is what became of one trace of a batch.
type Outcome struct {
	Path    string
	ID      string
	Skipped bool    // exported before with the same content hash
	Err     error   // the export failed (recorded in traces)
	Result  *Result // nil if skipped or failed
}

// Find lists the traces named by arg: under a folder (recursively) every
// regular file the format sniffer does not reject as "not a trace" (a
// topology.txt, a CSV), sorted; otherwise arg is a glob (filepath.Match
// syntax) and every file it matches is taken as a trace. others lists the
// files of a folder that were left out.
func Find(arg string) (traces, others []string, err error) {
	fi, err := os.Stat(arg)
	if err != nil || !fi.IsDir() {
		m, gerr := filepath.Glob(arg)
		if gerr != nil {
			return nil, nil, fmt.Errorf("%s: %w", arg, gerr)
		}
		if len(m) == 0 {
			if err != nil {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("%s: no file matches", arg)
		}
		for _, p := range m {
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				traces = append(traces, p)
			}
		}
		return traces, nil, nil
	}
	err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if isTrace(p) {
			traces = append(traces, p)
		} else {
			others = append(others, p)
		}
		return nil
	})
	sort.Strings(traces)
	sort.Strings(others)
	return traces, others, err
}

// isTrace: the sniffer recognizes the file, or fails on it for a reason
// other than "not a known format" (a damaged compressed file, an
// unreadable one): those are traces that will fail, to be recorded.
func isTrace(p string) bool {
	s, err := ingest.Open(p, ingest.Options{Name: p})
	if err == nil {
		s.Close()
		return true
	}
	return !errors.Is(err, ingest.ErrUnrecognized)
}

// Exported reports whether the trace with this content hash has a complete
// export under dir: a traces partition without an error.
func Exported(dir, sha string) bool {
	rows, err := parquet.ReadFile[TraceRow](PartPath(dir, TableTraces, ID(sha)))
	return err == nil && len(rows) == 1 && rows[0].Error == "" && rows[0].SHA256 == sha
}

// Batch exports paths under dir, Jobs at a time. A trace already exported
// with the same content hash is skipped; a trace that fails is recorded in
// traces with its error and the others go on. The outcomes are in the
// order of paths; the error is only for a failure to record a failure.
func Batch(paths []string, dir string, o BatchOptions) ([]Outcome, error) {
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	out := make([]Outcome, len(paths))
	next := make(chan int)
	var (
		mu       sync.Mutex
		done     int
		firstErr error
		wg       sync.WaitGroup
	)
	for range min(jobs, max(len(paths), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				oc, err := one(paths[i], dir, o.Options)
				mu.Lock()
				out[i] = oc
				if err != nil && firstErr == nil {
					firstErr = err
				}
				done++
				if o.Progress != nil {
					o.Progress(done, len(paths), oc)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, firstErr
}

func one(path, dir string, opts Options) (Outcome, error) {
	oc := Outcome{Path: path}
	sha, err := HashFile(path)
	if err == nil {
		oc.ID = ID(sha)
		if Exported(dir, sha) {
			oc.Skipped = true
			return oc, nil
		}
		oc.Result, err = Export(path, dir, opts)
	}
	if err != nil {
		oc.Err, oc.Result = err, nil
		id, werr := WriteFailure(path, sha, dir, err, opts)
		oc.ID = id
		return oc, werr
	}
	return oc, nil
}
