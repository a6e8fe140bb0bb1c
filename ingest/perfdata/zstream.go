package perfdata

import (
	"io"

	"github.com/klauspost/compress/zstd"
)

// zstream decompresses the payloads of PERF_RECORD_COMPRESSED records as
// one zstd stream: perf record -z compresses the ring-buffer data with one
// compression stream, flushing it after each record
// (zstd_compress_stream_to_records in tools/perf/util/zstd.c), so a record
// holds no whole frame and a block may continue in the next record. The
// decoder runs in a goroutine whose input blocks until the next payload;
// feed returns once the decoder has consumed a payload and handed out all
// it could decode from it.
type zstream struct {
	in   chan []byte
	out  chan zmsg
	quit chan struct{}
	err  error
}

type zmsg struct {
	b       []byte
	drained bool
	err     error
}

type zsrc struct {
	cur  []byte
	in   chan []byte
	out  chan zmsg
	quit chan struct{}
}

func (s *zsrc) Read(p []byte) (int, error) {
	for len(s.cur) == 0 {
		select {
		case s.out <- zmsg{drained: true}:
		case <-s.quit:
			return 0, io.EOF
		}
		// Between two payloads the decoder waits here: a reader that
		// stops (at its end, an error or Close) must let it go.
		select {
		case b, ok := <-s.in:
			if !ok {
				return 0, io.EOF
			}
			s.cur = b
		case <-s.quit:
			return 0, io.EOF
		}
	}
	n := copy(p, s.cur)
	s.cur = s.cur[n:]
	return n, nil
}

func newZstream() *zstream {
	z := &zstream{in: make(chan []byte), out: make(chan zmsg), quit: make(chan struct{})}
	src := &zsrc{in: z.in, out: z.out, quit: z.quit}
	go func() {
		dec, err := zstd.NewReader(src, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
		if err == nil {
			defer dec.Close()
			buf := make([]byte, 128<<10)
			for {
				var n int
				n, err = dec.Read(buf)
				if n > 0 {
					select {
					case z.out <- zmsg{b: append([]byte(nil), buf[:n]...)}:
					case <-z.quit:
						return
					}
				}
				if err != nil {
					break
				}
			}
		}
		select {
		case z.out <- zmsg{err: err}:
		case <-z.quit:
		}
	}()
	// The decoder asks for its first input.
	if m := <-z.out; m.err != nil {
		z.err = m.err
	}
	return z
}

// feed hands p to the decoder and appends what it decodes to dst. p is
// fully consumed when feed returns.
func (z *zstream) feed(p, dst []byte) ([]byte, error) {
	if z.err != nil {
		return dst, z.err
	}
	if len(p) == 0 {
		return dst, nil
	}
	z.in <- p
	for {
		m := <-z.out
		switch {
		case m.b != nil:
			dst = append(dst, m.b...)
		case m.drained:
			return dst, nil
		default:
			if m.err == nil || m.err == io.EOF {
				m.err = io.ErrUnexpectedEOF
			}
			z.err = m.err
			return dst, m.err
		}
	}
}

// close stops the decoder goroutine.
func (z *zstream) close() {
	select {
	case <-z.quit:
	default:
		close(z.quit)
	}
}
