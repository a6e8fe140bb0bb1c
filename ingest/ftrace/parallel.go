package ftrace

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/schedlens/schedlens/timeline"
)

// Parallel parsing. Parsing a record line needs nothing from the lines
// before it (recParser), so the input is cut into blocks of whole lines and
// the blocks are parsed on several goroutines:
//
//	producer:  lineReader -> blocks, in input order -> work and ordered
//	workers:   block -> lineRes per line (comms deferred as refs)
//	Next:      ordered blocks -> Reader.apply per line, in input order
//
// The Reader applies the results exactly as it applies its own serial
// parse: same checks, same Meta, same errors (a worker's ParseError carries
// the line's own position), and the deferred comms are interned in the
// order one parser would have interned them, so every CommID is the same.
// Memory is bounded by the blocks in flight.

// A block closes after blockBytes of lines or blockLines lines (a
// variable for the tests, which cut blocks small).
const blockBytes = 256 << 10

var blockLines = 2048

// block is a run of whole lines and, once a worker is done, their parse.
type block struct {
	data  []byte  // the lines, each with its newline (the input's last may have none)
	first linePos // position of the first line
	long  bool    // one line longer than MaxLine at first: no data
	err   error   // a read error after the lines
	eof   bool    // the input ends after the lines

	res  []lineRes
	refs []commRef
	ids  []timeline.CommID
	done chan struct{}
}

// pipeline runs the producer and workers of one Reader.
type pipeline struct {
	ordered chan *block // blocks in input order, for Next
	work    chan *block // blocks to parse
	free    chan *block // parsed and applied blocks, to reuse
	stop    chan struct{}
	halt    sync.Once
	exited  chan struct{} // closed when the producer returned

	lines int // blockLines when the pipeline started

	cur *block // the block Next applies
	ci  int    // next line of cur
	err error  // sticky read error
}

func startPipeline(r *Reader, workers int) *pipeline {
	inFlight := 2*workers + 2
	p := &pipeline{
		ordered: make(chan *block, inFlight),
		work:    make(chan *block, inFlight),
		free:    make(chan *block, inFlight+2),
		stop:    make(chan struct{}),
		exited:  make(chan struct{}),
		lines:   blockLines,
	}
	go p.produce(&r.lr)
	for range workers {
		go p.parse(r.name)
	}
	return p
}

func (p *pipeline) newBlock() *block {
	select {
	case b := <-p.free:
		b.data, b.res, b.refs = b.data[:0], b.res[:0], b.refs[:0]
		b.long, b.err, b.eof = false, nil, false
		b.done = make(chan struct{})
		return b
	default:
		return &block{data: make([]byte, 0, blockBytes+bufSize), done: make(chan struct{})}
	}
}

// send hands b to the workers and to Next; false when the Reader was
// closed.
func (p *pipeline) send(b *block) bool {
	select {
	case p.ordered <- b:
	case <-p.stop:
		return false
	}
	select {
	case p.work <- b:
	case <-p.stop:
		return false
	}
	return true
}

// produce cuts the input into blocks until its end, a read error, or a
// stop.
func (p *pipeline) produce(lr *lineReader) {
	defer close(p.exited)
	defer close(p.ordered)
	defer close(p.work)
	for {
		b := p.newBlock()
		b.first = linePos{lineNo: lr.pos.lineNo + 1, off: lr.nextOff}
		n := 0
		var long *block
		for len(b.data) < blockBytes && n < p.lines {
			line, err := lr.readLine()
			if err == io.EOF {
				b.eof = true
				break
			}
			if err != nil {
				b.err = err
				break
			}
			if lr.pos.tooLong > 0 {
				// The line was not kept: it gets a block of its own.
				long = p.newBlock()
				long.first, long.long = lr.pos, true
				break
			}
			b.data = append(b.data, line...)
			n++
		}
		if n > 0 || b.eof || b.err != nil {
			if !p.send(b) {
				return
			}
		} else {
			p.recycle(b)
		}
		if long != nil && !p.send(long) {
			return
		}
		if b.eof || b.err != nil {
			return
		}
	}
}

// parse is a worker: it parses the lines of each block it is given.
func (p *pipeline) parse(name string) {
	rp := recParser{name: name}
	for b := range p.work {
		rp.refs = b.refs[:0]
		if b.long {
			rp.pos = b.first
			b.res = append(b.res[:0], lineRes{})
			rp.classify(nil, &b.res[0])
		} else {
			pos := b.first
			data := b.data
			for len(data) > 0 {
				line := data
				if i := bytes.IndexByte(data, '\n'); i >= 0 {
					line = data[:i+1]
				} else {
					pos.partial = true
				}
				data = data[len(line):]
				rp.pos = pos
				b.res = append(b.res, lineRes{})
				rp.classify(line, &b.res[len(b.res)-1])
				pos.lineNo++
				pos.off += int64(len(line))
			}
		}
		b.refs = rp.refs
		rp.refs = nil
		close(b.done)
	}
}

// step applies the next parsed line, or moves to the next block; at the
// end of the input it finishes the Reader. It returns a line's error
// (skipped under Lenient) or a read error.
func (p *pipeline) step(r *Reader) error {
	if p.err != nil {
		return p.err
	}
	b := p.cur
	if b == nil || p.ci == len(b.res) {
		if b != nil {
			p.cur = nil
			switch {
			case b.err != nil:
				p.err = b.err
				p.recycle(b)
				p.close()
				return p.err
			case b.eof:
				p.recycle(b)
				p.close()
				r.finish()
				return nil
			}
			p.recycle(b)
		}
		b, ok := <-p.ordered
		if !ok {
			p.err = errClosed
			return p.err
		}
		select {
		case <-b.done:
		case <-p.stop:
			p.err = errClosed
			return p.err
		}
		p.cur, p.ci = b, 0
		return nil
	}
	res := &b.res[p.ci]
	p.ci++
	r.pos = res.pos
	if err := r.apply(res, b); err != nil {
		if r.lenient {
			r.meta.Skip(err)
			return nil
		}
		return err
	}
	return nil
}

// errClosed is what Next returns after Close.
var errClosed = errors.New("ftrace: reader closed")

func (p *pipeline) recycle(b *block) {
	select {
	case p.free <- b:
	default:
	}
}

// close stops the producer and waits until it no longer reads the input.
func (p *pipeline) close() {
	p.halt.Do(func() { close(p.stop) })
	<-p.exited
}

// Close stops the goroutines of a Reader that parses in parallel; the
// input is not read any further. Reading to the end or to an error stops
// them too.
func (r *Reader) Close() error {
	if r.pipe != nil {
		r.pipe.close()
	}
	return nil
}
