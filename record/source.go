package record

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf/perf"
)

// source reads raw records from the kernel buffers. The BPF side never
// wakes the reader: Run polls (see pollInterval).
type source interface {
	// drain hands fn the records queued now, without waiting, and stops
	// early once budget has passed. It reports emptied when it read every
	// buffer to its end: every record committed before the call is then
	// read.
	drain(budget time.Time, fn func([]byte)) (emptied bool, err error)
	// kernelLost returns records the kernel itself reported lost (perf
	// buffers only; the BPF side counts drops either way).
	kernelLost() uint64
	close() error
}

// checkEvery is how many records drain reads between looks at the clock.
const checkEvery = 256

// past is a deadline that makes the perf reader's waits return at once.
var past = time.Unix(1, 0)

// ringSource reads the per-CPU BPF ring buffers through their memory
// mappings. It consumes a whole batch before publishing the new consumer
// position, once per buffer and drain: the BPF side reads that position on
// every reservation, and publishing it per record (as a general-purpose
// reader does) moves its cache line between CPUs for every event.
type ringSource struct {
	rings []*mappedRing
}

func newRingSource(p *probe) (*ringSource, error) {
	s := &ringSource{}
	for cpu, m := range p.rings {
		if m == nil {
			continue
		}
		r, err := mapRing(m.FD(), int(m.MaxEntries()))
		if err != nil {
			s.close()
			return nil, fmt.Errorf("mapping the ring buffer of CPU %d: %w", cpu, err)
		}
		s.rings = append(s.rings, r)
	}
	return s, nil
}

func (s *ringSource) drain(budget time.Time, fn func([]byte)) (bool, error) {
	for _, r := range s.rings {
		done, err := r.consume(budget, fn)
		if err != nil || !done {
			return false, err
		}
	}
	return true, nil
}

func (s *ringSource) kernelLost() uint64 { return 0 }

func (s *ringSource) close() error {
	var errs []error
	for _, r := range s.rings {
		errs = append(errs, r.unmap())
	}
	s.rings = nil
	return errors.Join(errs...)
}

type perfSource struct {
	rd   *perf.Reader
	rec  perf.Record
	lost uint64
}

func newPerfSource(p *probe) (*perfSource, error) {
	// The watermark is never reached in practice: drain polls.
	rd, err := perf.NewReaderWithOptions(p.perf, p.bufBytes, perf.ReaderOptions{Watermark: p.bufBytes / 2})
	if err != nil {
		return nil, fmt.Errorf("opening perf buffers: %w", err)
	}
	rd.SetDeadline(past)
	return &perfSource{rd: rd}, nil
}

func (s *perfSource) drain(budget time.Time, fn func([]byte)) (bool, error) {
	for n := 1; ; n++ {
		err := s.rd.ReadInto(&s.rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("reading perf buffers: %w", err)
		}
		if s.rec.LostSamples > 0 {
			s.lost += s.rec.LostSamples
		} else {
			fn(s.rec.RawSample)
		}
		if n%checkEvery == 0 && time.Now().After(budget) {
			return false, nil
		}
	}
}

func (s *perfSource) kernelLost() uint64 { return s.lost }
func (s *perfSource) close() error       { return s.rd.Close() }
