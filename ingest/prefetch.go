package ingest

import (
	"io"
	"sync"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// prefetch runs a reader on a goroutine of its own, a batch of events
// ahead of its consumer, so that decoding a binary trace (perf.data,
// trace.dat, Perfetto) and building the timeline use two cores. The events,
// their order and the error that ends them are the reader's: a batch
// carries the error that cut it short, handed out after its events. The
// text readers parse on several goroutines themselves (parse.Blocks).
type prefetch struct {
	batches chan evBatch
	free    chan []timeline.Event
	done    chan struct{}
	wg      sync.WaitGroup
	cur     []timeline.Event
	i       int
	err     error
}

type evBatch struct {
	evs []timeline.Event
	err error // io.EOF or the reader's error, after evs
}

// Batches in flight: one being filled, one being read, and six waiting.
// The consumer's core also runs the walk along the load (tasks, cpus:
// timeline.Along), a chunk of 16,384 events at a time; with fewer batches
// waiting (there were one) the reader stopped while a chunk was walked
// (`tasks` on a 188 MB perf.data: 148 -> 134 ms, 5 interleaved pairs of
// BenchmarkTasksPerfData).
const (
	prefetchBatch   = 4096
	prefetchBuffers = 8
)

// prefetchFormats are the formats whose readers decode on one goroutine.
var prefetchFormats = map[string]bool{"perf.data": true, "trace.dat": true, "perfetto": true}

func newPrefetch(r parse.Reader) *prefetch {
	p := &prefetch{batches: make(chan evBatch, prefetchBuffers-1), free: make(chan []timeline.Event, prefetchBuffers), done: make(chan struct{})}
	for range prefetchBuffers {
		p.free <- make([]timeline.Event, prefetchBatch)
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			var buf []timeline.Event
			select {
			case buf = <-p.free:
			case <-p.done:
				return
			}
			n := 0
			var err error
			if bt, ok := r.(parse.Batcher); ok {
				for n < len(buf) && err == nil {
					var k int
					k, err = bt.NextBatch(buf[n:])
					n += k
				}
			} else {
				for n < len(buf) {
					if err = r.Next(&buf[n]); err != nil {
						break
					}
					n++
				}
			}
			select {
			case p.batches <- evBatch{evs: buf[:n], err: err}:
			case <-p.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

// next hands out the next event, as the reader's Next would, where the
// batch holds it: valid until the next call.
func (p *prefetch) next() (*timeline.Event, error) {
	for p.i >= len(p.cur) {
		if p.err != nil {
			return nil, p.err
		}
		if p.cur != nil {
			p.free <- p.cur[:cap(p.cur)]
			p.cur = nil
		}
		b, ok := <-p.batches
		if !ok {
			return nil, io.EOF
		}
		p.cur, p.i, p.err = b.evs, 0, b.err
	}
	p.i++
	return &p.cur[p.i-1], nil
}

// stop ends the reading goroutine (at once if the consumer stops early)
// and waits for it: the reader is the caller's again.
func (p *prefetch) stop() {
	close(p.done)
	p.wg.Wait()
}
