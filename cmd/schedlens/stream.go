package main

import (
	"bytes"
	"errors"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/affinity"
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
// streamed walk (tasks, cpus, report, latency, idle, misplaced); same
// says what its output is then.
func (f *traceFlags) registerStream(cmd *cobra.Command, same string) {
	cmd.Flags().StringVar(&f.stream, "stream", streamAuto,
		"read a text, perf.data or trace.dat file twice instead of holding its events (more time, less memory): "+
			"auto (when holding them would take over a quarter of the memory available), always, never; "+same)
}

// Whether a streamed read changes a command's output.
const (
	streamSame        = "the output is the same"
	streamPercentiles = "the output is the same but for the latency percentiles of groups over 64 samples, " +
		"estimated within 0.5% unless --exact"
)

// streams reports whether --stream asks for a streamed read of path (which
// may still turn out not to stream: standard input, a binary format, text
// out of time order).
func (f *traceFlags) streams(path string) (bool, error) {
	switch f.stream {
	case streamAuto, streamAlways, streamNever:
	default:
		return false, usagef("--stream %q: want auto, always or never", f.stream)
	}
	return f.stream == streamAlways || f.stream == streamAuto && ingest.WorthStreaming(path), nil
}

// notStreamed says that a streamed read gave up before it printed
// anything: the trace is loaded instead.
func notStreamed(err error) bool {
	return errors.Is(err, ingest.ErrNotStreamable) || errors.Is(err, timeline.ErrNotTimeOrdered)
}

// prepareAccount is prepare followed by metrics.Account: it checks the
// flags, reads the trace, resolves the window and accounts for it. A text,
// perf.data or trace.dat file that --stream selects is read twice, a
// summary then a streamed walk, and never held whole; anything else
// (standard input, Perfetto, text out of time order) is loaded.
func (f *traceFlags) prepareAccount(cmd *cobra.Command, path string, formats ...string) (*ingest.Loaded, metrics.Window, *metrics.Accounting, error) {
	if err := f.checkFormat(formats...); err != nil {
		return nil, metrics.Window{}, nil, err
	}
	if err := f.validate(); err != nil {
		return nil, metrics.Window{}, nil, err
	}
	stream, err := f.streams(path)
	if err != nil {
		return nil, metrics.Window{}, nil, err
	}
	if stream {
		ld, win, acc, err := f.streamAccount(cmd, path)
		if !notStreamed(err) {
			return ld, win, acc, err
		}
	}
	// Loaded: accounted before the warnings, whose count of
	// inconsistencies the accounting's walk then finds. Over the default
	// window, the accounting walks the events as they load, where it can.
	var along metrics.AccountAlong
	var ld *ingest.Loaded
	var ws timeline.WalkStats
	walked := false
	if f.defaultWindow() && path != "-" {
		err = f.read(cmd, path, "", func(opts ingest.Options) (err error) {
			ld, ws, walked, err = ingest.LoadWalking(path, opts, along.Start)
			return err
		})
	} else {
		ld, err = f.loadQuiet(cmd, path)
	}
	if err != nil {
		return nil, metrics.Window{}, nil, err
	}
	win, err := f.window(ld.Timeline)
	if err != nil {
		f.warnLoad(cmd, ld)
		return ld, win, nil, err
	}
	var acc *metrics.Accounting
	if walked {
		acc = along.Result(ws)
	} else {
		acc = metrics.Account(ld.Timeline, win)
	}
	f.warnLoad(cmd, ld)
	return ld, win, acc, f.checkFilter(cmd.ErrOrStderr(), ld.Timeline)
}

// defaultWindow reports whether no flag narrows the window.
func (f *traceFlags) defaultWindow() bool {
	return f.start == "" && f.end == "" && f.startMarker == "" && f.endMarker == ""
}

// streamAccount is prepareAccount's streamed read.
func (f *traceFlags) streamAccount(cmd *cobra.Command, path string) (*ingest.Loaded, metrics.Window, *metrics.Accounting, error) {
	var win metrics.Window
	var a *metrics.Accountant
	ld, ws, err := f.streamRead(cmd, path, func(ld *ingest.Loaded) (metrics.Sink, error) {
		var err error
		if win, err = f.window(ld.Timeline); err != nil {
			return nil, err
		}
		a = metrics.NewAccountant(ld.Timeline, win)
		return a, nil
	})
	if err != nil {
		return ld, win, nil, err
	}
	return ld, win, a.Result(ws), nil
}

// streamRead reads the text, perf.data or trace.dat file at path twice: a summary read,
// then prepare, which resolves what the walk needs from the summary and
// returns what the walk feeds, then the walk read. It prints the load
// warnings (an error of prepare's comes with what the summary knows: all
// but the inconsistencies) and the filter's once the walk has found the
// tasks. ld is nil when a read fails.
func (f *traceFlags) streamRead(cmd *cobra.Command, path string, prepare func(*ingest.Loaded) (metrics.Sink, error)) (*ingest.Loaded, timeline.WalkStats, error) {
	var ld *ingest.Loaded
	err := f.read(cmd, path, "1/2", func(o ingest.Options) (err error) {
		ld, err = ingest.Summarize(path, o)
		return err
	})
	if err != nil {
		return nil, timeline.WalkStats{}, err
	}
	sink, err := prepare(ld)
	if err != nil {
		f.warnLoad(cmd, ld)
		return ld, timeline.WalkStats{}, err
	}
	var ws timeline.WalkStats
	err = f.read(cmd, path, "2/2", func(o ingest.Options) (err error) {
		ws, err = ingest.StreamWalk(ld, o, sink.Span, sink.Events)
		return err
	})
	if err != nil {
		return nil, ws, err
	}
	f.warnLoad(cmd, ld)
	streamedReads.Add(1)
	return ld, ws, f.checkFilter(cmd.ErrOrStderr(), ld.Timeline)
}

// warnLoad prints what the user must know about the trace's quality on
// stderr and keeps it for the JSON header.
func (f *traceFlags) warnLoad(cmd *cobra.Command, ld *ingest.Loaded) {
	var buf bytes.Buffer
	warnLoad(&buf, ld)
	f.warn(cmd.ErrOrStderr(), buf.String())
}

// streamAnalyse is analyse's streamed read (streamRead): the walk read
// feeds the analysis, the accounting and the affinity inference at once;
// the affinity map follows the walk, which finds the tasks.
func (f *analysisFlags) streamAnalyse(cmd *cobra.Command, path string, accounting bool) (*ingest.Loaded, metrics.Window, *metrics.Analysis, *metrics.Accounting, error) {
	var win metrics.Window
	var sa *metrics.StreamAnalysis
	var acc *metrics.Accountant
	var inf *affinity.Inferrer
	ld, ws, err := f.streamRead(cmd, path, func(ld *ingest.Loaded) (metrics.Sink, error) {
		tl := ld.Timeline
		if err := ingest.CheckStreamedAnalysis(path, tl.Len(), f.maxEvents); err != nil {
			return nil, err
		}
		var err error
		if win, err = f.window(tl); err != nil {
			return nil, err
		}
		topo, err := f.resolveTopology(ld, false)
		if err != nil {
			return nil, err
		}
		opts := f.metricsOptions(win, topo)
		opts.Sketch = !f.exact
		if sa, err = metrics.NewStreamAnalysis(tl, opts); err != nil {
			return nil, err
		}
		sinks := metrics.Sinks{sa}
		if accounting {
			acc = metrics.NewAccountant(tl, win)
			sinks = append(sinks, acc)
		}
		if inf = f.affinity.inferrer(tl); inf != nil {
			sinks = append(sinks, inf)
		}
		return sinks, nil
	})
	if err != nil {
		return ld, win, nil, nil, err
	}
	aff, err := f.affinity.build(ld.Timeline, inf)
	if err != nil {
		return ld, win, nil, nil, err
	}
	var res *metrics.Accounting
	if acc != nil {
		res = acc.Result(ws)
	}
	return ld, win, sa.Finish(ws, aff), res, nil
}
