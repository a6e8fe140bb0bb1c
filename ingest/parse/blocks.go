package parse

import (
	"errors"
	"io"
	"iter"
	"sync"
)

// Parsing text on several goroutines. A text reader whose lines can each
// be parsed without the lines before them splits its work in two: a pure
// parse of one line into a result R (no state kept from line to line), and
// the application of the results in input order (checks across lines,
// Meta, interning). Blocks runs the first part in parallel:
//
//	producer:  LineReader -> blocks of whole lines, in input order -> workers and Next
//	workers:   block -> one R per line (the format's parse function)
//	Next:      the results in input order, line by line
//
// so the reader applies them exactly as it applies its own serial parse.
// Memory is bounded by the blocks in flight, which are reused.
//
// A binary format's records (Perfetto's packets) go the same way: the
// format's cut function takes the producer's place of the LineReader and
// adds whole records to each block with their input offsets (StartUnits,
// Block.Add, Block.Units).

// TextRef is a comm or other text whose interning a worker deferred: the
// reader interns a block's refs in their order, which is the order one
// parser would have interned them in, so every id comes out the same.
type TextRef struct {
	B   []byte
	Raw bool // a marker's text: interned as is, not through a comm cache
}

// DeferredID marks a CommID (or a marker's Arg) that stands for the TextRef
// of that index, until the reader puts the text's id in its place.
const DeferredID = 1 << 31

// ErrClosed is what Blocks.Next returns after Close.
var ErrClosed = errors.New("reader closed")

// A block closes after blockBytes of lines or its line count (BlockLines
// unless the reader asks for another).
const blockBytes = 256 << 10

// BlockLines is the most lines a block holds by default.
const BlockLines = 2048

// Block is a run of whole lines of the input and, once a worker is done
// with it, one result per line in Res, plus what the format keeps per block
// in X (a format may keep there, say, texts its workers leave to intern in
// order).
type Block[R, X any] struct {
	Res []R
	X   X

	data  []byte  // the lines, each with its newline (the input's last may have none)
	ends  []int32 // where each line ends in data
	offs  []int64 // StartUnits: where each unit begins in the input
	max   int     // StartUnits: the most units it holds
	bytes int     // StartUnits: the bytes after which it is full
	first LinePos // position of the first line
	long  bool    // one line longer than the limit: no data, first says so
	err   error   // an input error after the lines
	eof   bool    // the input ends after the lines
	done  chan struct{}
}

// Lines yields the lines of b with their positions: each with its newline
// (the input's last line may have none, and is Partial); a line over the
// limit is yielded empty, with its TooLong position.
func (b *Block[R, X]) Lines() iter.Seq2[[]byte, LinePos] {
	return func(yield func([]byte, LinePos) bool) {
		if b.long {
			yield(nil, b.first)
			return
		}
		pos := b.first
		start := int32(0)
		for _, end := range b.ends {
			line := b.data[start:end]
			pos.Partial = line[len(line)-1] != '\n' // only the input's last line lacks one
			if !yield(line, pos) {
				return
			}
			pos.Line++
			pos.Off += int64(len(line))
			start = end
		}
	}
}

// Each adds an R to b.Res for each line of b and calls parse on it, which
// must set all of it (it may hold a result of an earlier use of the
// block): the loop of a parse function whose results need nothing per
// block.
func (b *Block[R, X]) Each(parse func(line []byte, pos LinePos, res *R)) {
	for line, pos := range b.Lines() {
		parse(line, pos, b.NewRes())
	}
}

// NewRes adds an R to b.Res and returns it: it may hold a result of an
// earlier use of the block, whose slices a parse function can reuse.
func (b *Block[R, X]) NewRes() *R {
	if n := len(b.Res); n < cap(b.Res) {
		b.Res = b.Res[:n+1]
	} else {
		var zero R
		b.Res = append(b.Res, zero)
	}
	return &b.Res[len(b.Res)-1]
}

// Add appends unit, a record that begins at input offset off, to b (a cut
// function of StartUnits).
func (b *Block[R, X]) Add(unit []byte, off int64) {
	b.data = append(b.data, unit...)
	b.ends = append(b.ends, int32(len(b.data)))
	b.offs = append(b.offs, off)
}

// Full reports whether b holds as much as a block should: a cut function
// adds units until it is.
func (b *Block[R, X]) Full() bool { return len(b.data) >= b.bytes || len(b.ends) >= b.max }

// Units yields the units a cut function added to b, with their offsets.
func (b *Block[R, X]) Units() iter.Seq2[[]byte, int64] {
	return func(yield func([]byte, int64) bool) {
		start := int32(0)
		for i, end := range b.ends {
			if !yield(b.data[start:end], b.offs[i]) {
				return
			}
			start = end
		}
	}
}

// Blocks parses the lines of one input on several goroutines and hands the
// results out in input order (Next). Only the producer goroutine reads the
// LineReader once Blocks started.
type Blocks[R, X any] struct {
	ordered chan *Block[R, X] // blocks in input order, for Next
	work    chan *Block[R, X] // blocks to parse
	free    chan *Block[R, X] // applied blocks, to reuse
	stop    chan struct{}
	halt    sync.Once
	exited  chan struct{} // closed when the producer returned

	lines int // most lines per block
	bytes int // StartUnits: the bytes after which a block is full

	cur *Block[R, X] // the block Next hands out
	ci  int          // next result of cur
	err error        // sticky: an input error, io.EOF or ErrClosed
}

// StartBlocks starts parsing lr on workers goroutines, in blocks of at
// most lines lines (0: BlockLines). Each worker calls the function
// newParser made for it on each block it is given: that function fills
// b.Res (empty on the call) with one result per line of b.Lines, and
// resets b.X as it needs (a block is reused). The caller must Close the
// Blocks unless Next returned an error.
func StartBlocks[R, X any](lr *LineReader, workers, lines int, newParser func() func(b *Block[R, X])) *Blocks[R, X] {
	if lines <= 0 {
		lines = BlockLines
	}
	p := newBlocks[R, X](workers, lines)
	go p.produce(lr)
	for range workers {
		go p.parse(newParser())
	}
	return p
}

// StartUnits is StartBlocks for an input of records other than lines, in
// blocks of at most units records (0: BlockLines), full after size bytes
// (0: 256 KiB; a record may end past it). cut fills the block it
// is given with whole records (Block.Add) until the block is Full, and
// returns nil; or until the input ends, and returns
// io.EOF; or until the input fails, and returns that error, which Next
// returns after the records before it. Only the producer goroutine calls
// cut. newParser's functions go through the block's Units.
func StartUnits[R, X any](cut func(b *Block[R, X]) error, workers, units, size int, newParser func() func(b *Block[R, X])) *Blocks[R, X] {
	if units <= 0 {
		units = BlockLines
	}
	p := newBlocks[R, X](workers, units)
	if size > 0 {
		p.bytes = size
	}
	go p.produceUnits(cut)
	for range workers {
		go p.parse(newParser())
	}
	return p
}

func newBlocks[R, X any](workers, lines int) *Blocks[R, X] {
	inFlight := workers + 1
	return &Blocks[R, X]{
		ordered: make(chan *Block[R, X], inFlight),
		work:    make(chan *Block[R, X], inFlight),
		free:    make(chan *Block[R, X], inFlight+3),
		stop:    make(chan struct{}),
		exited:  make(chan struct{}),
		lines:   lines,
		bytes:   blockBytes,
	}
}

func (p *Blocks[R, X]) newBlock() *Block[R, X] {
	select {
	case b := <-p.free:
		b.data, b.ends, b.offs, b.Res = b.data[:0], b.ends[:0], b.offs[:0], b.Res[:0]
		b.long, b.err, b.eof = false, nil, false
		b.max, b.bytes = p.lines, p.bytes
		return b
	default:
		// done holds one token: a worker puts it there when the block is
		// parsed, Next takes it, and the block can be reused.
		n := min(p.lines, blockBytes/64)
		return &Block[R, X]{
			max:   p.lines,
			bytes: p.bytes,
			Res:   make([]R, 0, n),
			data:  make([]byte, 0, p.bytes+LineBufSize),
			ends:  make([]int32, 0, n),
			done:  make(chan struct{}, 1),
		}
	}
}

// send hands b to the workers and to Next; false when the Blocks were
// closed.
func (p *Blocks[R, X]) send(b *Block[R, X]) bool {
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

// produce cuts the input into blocks until its end, an input error, or a
// stop.
func (p *Blocks[R, X]) produce(lr *LineReader) {
	defer close(p.exited)
	defer close(p.ordered)
	defer close(p.work)
	for {
		b := p.newBlock()
		b.first = lr.nextPos()
		n := 0
		var long *Block[R, X]
		for len(b.data) < blockBytes && n < p.lines {
			line, err := lr.Next()
			if err == io.EOF {
				b.eof = true
				break
			}
			if err != nil {
				b.err = err
				break
			}
			if lr.pos.TooLong > 0 {
				// The line was not kept: it gets a block of its own.
				long = p.newBlock()
				long.first, long.long = lr.pos, true
				break
			}
			b.data = append(b.data, line...)
			b.ends = append(b.ends, int32(len(b.data)))
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

// produceUnits is produce for StartUnits: cut fills the blocks.
func (p *Blocks[R, X]) produceUnits(cut func(b *Block[R, X]) error) {
	defer close(p.exited)
	defer close(p.ordered)
	defer close(p.work)
	for {
		b := p.newBlock()
		switch err := cut(b); err {
		case nil:
		case io.EOF:
			b.eof = true
		default:
			b.err = err
		}
		if len(b.ends) > 0 || b.eof || b.err != nil {
			if !p.send(b) {
				return
			}
		} else {
			p.recycle(b)
		}
		if b.eof || b.err != nil {
			return
		}
	}
}

// parse is a worker: it parses each block it is given, unless the Blocks
// were closed.
func (p *Blocks[R, X]) parse(parse func(b *Block[R, X])) {
	for b := range p.work {
		select {
		case <-p.stop:
		default:
			b.Res = b.Res[:0]
			parse(b)
		}
		b.done <- struct{}{}
	}
}

// Next returns the result of the next line, in input order, and the block
// it is in (both valid until the following call); io.EOF after the last
// line; the input's error after the lines before it; ErrClosed after Close.
// The error is returned again on every later call.
func (p *Blocks[R, X]) Next() (*R, *Block[R, X], error) {
	for p.err == nil {
		b := p.cur
		if b != nil && p.ci < len(b.Res) {
			p.ci++
			return &b.Res[p.ci-1], b, nil
		}
		if b != nil {
			p.cur = nil
			err, eof := b.err, b.eof
			p.recycle(b)
			switch {
			case err != nil:
				p.err = err
				p.Close()
				continue
			case eof:
				p.err = io.EOF
				p.Close()
				continue
			}
		}
		select {
		case <-p.stop:
			p.err = ErrClosed
			continue
		default:
		}
		b, ok := <-p.ordered
		if !ok {
			p.err = ErrClosed
			continue
		}
		select {
		case <-b.done:
		case <-p.stop:
			p.err = ErrClosed
			continue
		}
		p.cur, p.ci = b, 0
	}
	return nil, nil, p.err
}

func (p *Blocks[R, X]) recycle(b *Block[R, X]) {
	select {
	case p.free <- b:
	default:
	}
}

// Close stops the producer and the workers and waits until the producer no
// longer reads the input. Next returns ErrClosed after it, unless it
// returned another error before.
func (p *Blocks[R, X]) Close() {
	p.halt.Do(func() { close(p.stop) })
	<-p.exited
}
