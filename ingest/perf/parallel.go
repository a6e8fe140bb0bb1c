package perf

import "github.com/schedlens/schedlens/ingest/parse"

// blockLines is the most lines a block holds when the Reader parses on
// several goroutines (a variable for the tests, which cut blocks small).
var blockLines = parse.BlockLines

// newParser returns the parse function of one worker, with a lineParser of
// its own.
func (r *Reader) newParser() func(b *parse.Block[lineRes, struct{}]) {
	p := &lineParser{name: r.parser.name, summary: r.parser.summary}
	return func(b *parse.Block[lineRes, struct{}]) {
		b.Each(func(line []byte, pos parse.LinePos, res *lineRes) { p.parse(line, &pos, res) })
	}
}

// Close stops the goroutines of a Reader that parses in parallel; the
// input is not read any further, and Next returns parse.ErrClosed unless
// it returned another error before. Reading to the end or to an error
// stops them too.
func (r *Reader) Close() error {
	if r.pipe != nil {
		r.pipe.Close()
	}
	return nil
}
