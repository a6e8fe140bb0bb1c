package ftrace

import (
	"github.com/schedlens/schedlens/ingest/parse"
)

// Parallel parsing. Parsing a record line needs nothing from the lines
// before it (recParser), so parse.Blocks cuts the input into blocks of
// whole lines, parses the blocks on several goroutines and hands the
// results back in input order, which the Reader applies exactly as it
// applies its own serial parse: same checks, same Meta, same errors (a
// worker's ParseError carries the line's own position). Workers defer
// interning: the comms they meet are left in the block (deferred), and the
// Reader interns them in the order one parser would have interned them
// (resolve), so every CommID is the same.

// blockLines is the most lines a block holds (a variable for the tests,
// which cut blocks small).
var blockLines = parse.BlockLines

// newParser returns the parse function of one worker: a recParser of its
// own, with no comm cache, so that it defers interning to the block.
func (r *Reader) newParser() func(b *parse.Block[lineRes, deferred]) {
	rp := &recParser{name: r.name, summary: r.summary}
	return func(b *parse.Block[lineRes, deferred]) {
		rp.refs = b.X.refs[:0]
		b.Each(func(line []byte, pos parse.LinePos, res *lineRes) {
			rp.pos = pos
			rp.classify(line, res)
		})
		b.X.refs = rp.refs
		rp.refs = nil
	}
}

// Close stops the goroutines of a Reader that parses in parallel; the
// input is not read any further. Reading to the end or to an error stops
// them too.
func (r *Reader) Close() error {
	if r.pipe != nil {
		r.pipe.Close()
	}
	return nil
}
