// Package blocks holds List, an append-only list kept in blocks that are
// never copied. A slice grown by append leaves its old arrays behind as
// garbage: for a large one, growing by a quarter at a time, about four
// times its final size before a collection takes them. A List's blocks
// double from 16 items up to 4096 and then stay at 4096, so a short list
// costs little and a long one wastes at most a block.
package blocks

import (
	"iter"
	"math/bits"
	"unsafe"
)

const (
	first = 16   // items in the first block
	most  = 4096 // items in every block from the ninth on
	// grown is how many items the doubling blocks hold: 16 + 32 + ... + 4096.
	grown = first * (most/first*2 - 1)
)

// List is an append-only list of T in blocks. The zero List is empty.
type List[T any] struct {
	blocks [][]T
	n      int
}

// Add appends v.
func (l *List[T]) Add(v T) {
	k := len(l.blocks) - 1
	if k < 0 || len(l.blocks[k]) == cap(l.blocks[k]) {
		size := first
		if k >= 0 {
			size = min(2*cap(l.blocks[k]), most)
		}
		l.blocks = append(l.blocks, make([]T, 0, size))
		k++
	}
	l.blocks[k] = append(l.blocks[k], v)
	l.n++
}

// Len returns how many items the list holds.
func (l *List[T]) Len() int { return l.n }

// At returns item i (0 <= i < Len).
func (l *List[T]) At(i int) *T {
	if i < grown {
		// Block k starts at first * (2^k - 1).
		k := bits.Len(uint(i/first+1)) - 1
		return &l.blocks[k][i-first*(1<<k-1)]
	}
	i -= grown
	return &l.blocks[bits.Len(most/first)+i/most][i%most]
}

// Last returns the latest item, nil if none.
func (l *List[T]) Last() *T {
	if l.n == 0 {
		return nil
	}
	b := l.blocks[len(l.blocks)-1]
	return &b[len(b)-1]
}

// Blocks returns the blocks, in order, for a caller that walks the items
// (forwards or back) without copying them.
func (l *List[T]) Blocks() [][]T { return l.blocks }

// All yields the items in order, with their indices.
func (l *List[T]) All() iter.Seq2[int, T] {
	return func(yield func(int, T) bool) {
		i := 0
		for _, b := range l.blocks {
			for _, v := range b {
				if !yield(i, v) {
					return
				}
				i++
			}
		}
	}
}

// AppendTo appends the items to dst.
func (l *List[T]) AppendTo(dst []T) []T {
	for _, b := range l.blocks {
		dst = append(dst, b...)
	}
	return dst
}

// Bytes is the memory the list's blocks hold.
func (l *List[T]) Bytes() int {
	var z T
	n := 0
	for _, b := range l.blocks {
		n += cap(b)
	}
	return n * int(unsafe.Sizeof(z))
}
