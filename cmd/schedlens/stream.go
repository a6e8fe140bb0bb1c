package main

import (
	"bytes"
	"errors"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
)

// Values of --stream.
const (
	streamAuto   = "auto"
	streamAlways = "always"
	streamNever  = "never"
)

// streamedReads counts the analyses that streamed (for tests, which
// cannot tell them from the output).
var streamedReads atomic.Int64

// registerStream adds --stream to a command whose analysis can run over a
// streamed walk (tasks, cpus).
func (f *traceFlags) registerStream(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.stream, "stream", streamAuto,
		"read a text trace file twice instead of holding its events, so that memory grows with tasks, not events (about 1.4x the time): "+
			"auto (when holding them would take over a quarter of the memory available), always, never; the output is the same")
}

// prepareAccount is prepare followed by metrics.Account: it checks the
// flags, reads the trace, resolves the window and accounts for it. A text
// trace file that --stream selects is read twice, a summary then a
// streamed walk, and never held whole; anything else (standard input, a
// binary format, text out of time order) is loaded.
func (f *traceFlags) prepareAccount(cmd *cobra.Command, path string, formats ...string) (*ingest.Loaded, metrics.Window, *metrics.Accounting, error) {
	if err := f.checkFormat(formats...); err != nil {
		return nil, metrics.Window{}, nil, err
	}
	if err := f.validate(); err != nil {
		return nil, metrics.Window{}, nil, err
	}
	switch f.stream {
	case streamAuto, streamAlways, streamNever:
	default:
		return nil, metrics.Window{}, nil, usagef("--stream %q: want auto, always or never", f.stream)
	}
	if f.stream == streamAlways || f.stream == streamAuto && ingest.WorthStreaming(path) {
		ld, win, acc, err := f.streamAccount(cmd, path)
		if !errors.Is(err, ingest.ErrNotStreamable) && !errors.Is(err, timeline.ErrNotTimeOrdered) {
			return ld, win, acc, err
		}
	}
	// Loaded: accounted before the warnings, whose count of
	// inconsistencies the accounting's walk then finds.
	ld, err := f.loadQuiet(cmd, path)
	if err != nil {
		return nil, metrics.Window{}, nil, err
	}
	win, err := f.window(ld.Timeline)
	if err != nil {
		f.warnLoad(cmd, ld)
		return ld, win, nil, err
	}
	acc := metrics.Account(ld.Timeline, win)
	f.warnLoad(cmd, ld)
	return ld, win, acc, f.checkFilter(cmd.ErrOrStderr(), ld.Timeline)
}

// streamAccount is prepareAccount's streamed read.
func (f *traceFlags) streamAccount(cmd *cobra.Command, path string) (*ingest.Loaded, metrics.Window, *metrics.Accounting, error) {
	var ld *ingest.Loaded
	err := f.read(cmd, path, "1/2", func(o ingest.Options) (err error) {
		ld, err = ingest.Summarize(path, o)
		return err
	})
	if err != nil {
		return nil, metrics.Window{}, nil, err
	}
	win, err := f.window(ld.Timeline)
	if err != nil {
		f.warnLoad(cmd, ld) // what the summary knows: all but the inconsistencies
		return ld, win, nil, err
	}
	a := metrics.NewAccountant(ld.Timeline, win)
	var ws timeline.WalkStats
	err = f.read(cmd, path, "2/2", func(o ingest.Options) (err error) {
		ws, err = ingest.StreamWalk(ld, o, a.Span, a.Events)
		return err
	})
	if err != nil {
		return nil, win, nil, err
	}
	f.warnLoad(cmd, ld)
	streamedReads.Add(1)
	if err := f.checkFilter(cmd.ErrOrStderr(), ld.Timeline); err != nil {
		return ld, win, nil, err
	}
	return ld, win, a.Result(ws), nil
}

// warnLoad prints what the user must know about the trace's quality on
// stderr and keeps it for the JSON header.
func (f *traceFlags) warnLoad(cmd *cobra.Command, ld *ingest.Loaded) {
	var buf bytes.Buffer
	warnLoad(&buf, ld)
	f.warn(cmd.ErrOrStderr(), buf.String())
}
