// Package progress shows how long work goes on a terminal: reading a trace
// (bytes read of the input's size, events, rate, time left) and running a
// model (simulated time of the recording's). It draws with
// github.com/vbauerster/mpb/v8 on the writer it is given, only after the
// work has taken Delay, so that a quick command prints nothing; the caller
// decides whether to show it at all (Wanted: stderr a terminal, no --quiet).
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Delay is how long work runs before its progress is drawn.
var Delay = time.Second

// Wanted reports whether progress should be drawn on w: w is a terminal
// (a character device) and quiet is not set. Progress never goes to a pipe,
// a file or a test's buffer.
func Wanted(w io.Writer, quiet bool) bool {
	if quiet {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Bar is one piece of work's progress. A nil *Bar draws nothing, so that
// callers need not check whether progress is wanted.
type Bar struct {
	p      *mpb.Progress
	bar    *mpb.Bar
	timer  *time.Timer
	count  atomic.Int64 // events read, or -1 for a model run
	total  atomic.Int64
	sized  atomic.Bool // the total is known
	began  time.Time
	doneMu sync.Once
}

// Reading starts the progress of reading name; Update gives the bytes read
// of the input's size (0 if unknown: the bar then follows what was read)
// and the events so far.
func Reading(w io.Writer, name string) *Bar {
	b := &Bar{}
	b.start(w,
		mpb.PrependDecorators(decor.Name(name+" ", decor.WCSyncSpaceR),
			decor.Any(func(s decor.Statistics) string {
				if s.Current == 0 {
					return "" // read at offsets: no byte count
				}
				if !b.sized.Load() {
					return fmt.Sprintf("% .1f", decor.SizeB1024(s.Current))
				}
				return fmt.Sprintf("% .1f / % .1f", decor.SizeB1024(s.Current), decor.SizeB1024(s.Total))
			}, decor.WCSyncSpace)),
		mpb.AppendDecorators(
			decor.Any(func(s decor.Statistics) string {
				n := b.count.Load()
				el := time.Since(b.began).Seconds()
				if el <= 0 {
					return fmt.Sprintf("%d events", n)
				}
				return fmt.Sprintf("%d events, %.0f events/s, %.1f MiB/s", n, float64(n)/el, float64(s.Current)/el/(1<<20))
			}, decor.WCSyncSpace),
			decor.Name(" ETA "), decor.AverageETA(decor.ET_STYLE_GO)))
	return b
}

// Simulating starts the progress of model runs; Update gives the simulated
// time (ns) of the total to simulate (the recording's span, times the
// runs). what names the work ("replay", "whatif").
func Simulating(w io.Writer, what string) *Bar {
	b := &Bar{}
	b.start(w,
		mpb.PrependDecorators(decor.Name(what+" ", decor.WCSyncSpaceR),
			decor.Any(func(s decor.Statistics) string {
				return fmt.Sprintf("simulated %.3f of %.3f s", float64(s.Current)/1e9, float64(s.Total)/1e9)
			}, decor.WCSyncSpace)),
		mpb.AppendDecorators(decor.Name(" ETA "), decor.AverageETA(decor.ET_STYLE_GO)))
	return b
}

func (b *Bar) start(w io.Writer, opts ...mpb.BarOption) {
	b.began = time.Now()
	delay := make(chan any)
	b.timer = time.AfterFunc(Delay, func() { close(delay) })
	b.p = mpb.New(mpb.WithOutput(w), mpb.WithRenderDelay(delay), mpb.WithWidth(80), mpb.WithAutoRefresh())
	b.bar = b.p.AddBar(0, append(opts, mpb.BarRemoveOnComplete())...) // total 0: completes only in Done
}

// Update says how far the work is: done bytes (or simulated ns) of total
// (0 or less: unknown), and for reading the events so far. It may be
// called from several goroutines.
func (b *Bar) Update(done, total int64, events int) {
	if b == nil {
		return
	}
	b.count.Store(int64(events))
	b.sized.Store(total > 0)
	if total <= 0 {
		total = done + 1
	}
	if b.total.Swap(total) != total {
		b.bar.SetTotal(total, false)
	}
	b.bar.SetCurrent(min(done, total))
}

// Done ends the bar and removes it from the terminal.
func (b *Bar) Done() {
	if b == nil {
		return
	}
	b.doneMu.Do(func() {
		b.timer.Stop()
		b.bar.SetTotal(-1, true)
		b.p.Wait()
	})
}
