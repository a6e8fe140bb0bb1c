package ingest

import (
	"encoding/binary"
	"io"

	"github.com/klauspost/compress/zstd"

	"github.com/schedlens/schedlens/timeline"
)

// The Builder's columns are sized ahead from what the input states of its
// size where it can (a text file's bytes, a compressed file's content
// size, a binary reader's EventEstimate), and otherwise, or when that was
// low, from the rate of the events read so far (sizeFromRate). Room
// beyond the events costs no memory (timeline.Builder.Grow); columns
// grown by append's steps cost copies, and the memory of the copies left
// behind.

// contentSize returns the size r decompresses to, as kind ("gzip",
// "zstd") states it where r is a file read at offsets: a zstd frame
// header's content size, a gzip trailer's ISIZE (the size modulo 2^32 of
// the last member: taken only where it is plausible).
// 0 when it states none. A file of several zstd frames or gzip members
// states less than its whole: sizeFromRate then sizes the columns as
// they fill.
func contentSize(r io.Reader, kind string, compressed int64) int64 {
	ra, ok := r.(io.ReaderAt)
	if !ok || compressed <= 0 {
		return 0
	}
	switch kind {
	case "zstd":
		b := make([]byte, zstd.HeaderMaxSize)
		n, _ := ra.ReadAt(b, 0)
		var h zstd.Header
		if h.Decode(b[:n]) != nil || !h.HasFCS || h.Skippable || h.FrameContentSize > 1<<50 {
			return 0
		}
		return int64(h.FrameContentSize)
	case "gzip":
		var b [4]byte
		if n, _ := ra.ReadAt(b[:], compressed-4); n != 4 {
			return 0
		}
		// Not below the compressed size, nor above 64 times it: trace
		// text deflates 8 to 20 times, and the last 4 bytes of a file cut
		// short are not a trailer at all (deflate itself could expand a
		// file about 1032 times).
		if isize := int64(binary.LittleEndian.Uint32(b[:])); isize >= compressed && isize <= 64*compressed {
			return isize
		}
	}
	return 0
}

// sizeFromRate gives cols, which holds n events, room for the events the
// rest of s holds at the rate of those so far (its bytes read against its
// size), and a quarter more, when its columns are about to fill: an input
// whose events were not estimated ahead (Perfetto, a compressed stream
// that states no content size), or were underestimated, grows its columns
// once or twice rather than by append's steps. The bytes read run ahead
// of the events (the buffers of the reader and of a decompressor), so an
// estimate is low rather than high. limit is the events the read may hold
// (0: no limit).
func sizeFromRate(s *Stream, cols *timeline.Builder, n int, limit int64) {
	if s.total <= 0 || s.read == nil || cols.Room() >= 1<<16 {
		return
	}
	read := s.read.n.Load()
	if read <= 0 || read >= s.total {
		return
	}
	est := min(int64(float64(n)*float64(s.total)/float64(read)), maxEventHint)
	est += est / 4
	if limit > 0 {
		est = min(est, limit) // the read stops there (--max-events)
	}
	if want := int(est) - n; want > 1<<16 {
		cols.Grow(want)
	}
}
