package tracedat

import (
	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// Ring-buffer constants (include/linux/ring_buffer.h, kernel/trace/ring_buffer.c).
const (
	typePadding    = 29
	typeTimeExtend = 30
	typeTimeStamp  = 31
	tsShift        = 27
	missedEvents   = 1 << 31 // RB_MISSED_EVENTS in the page's commit
	missedStored   = 1 << 30 // RB_MISSED_STORED: the count follows the data
	tsMSB          = uint64(0x1f) << 59
)

// stream walks one CPU's ring-buffer pages, one page (or, compressed, one
// chunk of pages) in memory at a time.
type stream struct {
	r   *Reader
	cpu timeline.CPU
	buf *buffer

	// Source: the uncompressed range [off, end), or chunks left at off.
	off, end   int64
	cut        int64 // the end the file states when it was cut short before it, else 0
	chunks     int64
	chunk      []byte // current decompressed chunk
	chunkOff   int64  // its file offset, for errors
	chunkPos   int    // next page in chunk
	compressed bool

	page    []byte // current page
	pageOff int64  // its file offset (chunked: the chunk's)
	pageIn  int    // its byte offset inside the chunk
	data    []byte // the page's committed data
	pos     int    // next event in data
	ts      uint64 // running timestamp

	// The event at the head of the stream.
	evTS  uint64
	rec   []byte
	valid bool

	lost      bool  // the current page says events were lost before it
	lostCount int64 // how many, -1 when the kernel did not store it
	last      timeline.Time
	events    int64 // data records read
	pages     int64
	idx       int
	dead      bool // a compressed chunk failed: nothing after it can be read
}

func (s *stream) errf(cause error, format string, args ...any) error {
	c := cursor{r: s.r, section: "CPU " + itoa(int(s.cpu)) + " ring buffer"}
	off := s.pageOff + int64(s.pos+s.r.dataOff)
	if s.compressed {
		c.inflated, c.base = true, s.chunkOff
		off = int64(s.pageIn + s.r.dataOff + s.pos)
	}
	return c.errAt(off, cause, format, args...)
}

// nextPage loads the next page; false at the end of the CPU's data.
func (s *stream) nextPage() (bool, error) {
	r := s.r
	ps := r.pageSize
	if s.dead {
		return false, nil
	}
	if s.compressed {
		if s.chunkPos >= len(s.chunk) {
			if s.chunks == 0 {
				return false, nil
			}
			c := r.cursor(s.off, s.end, "CPU "+itoa(int(s.cpu))+" compressed chunk")
			csize, err := c.u32("chunk compressed size")
			if err != nil {
				s.dead = true
				return false, err
			}
			usize, err := c.u32("chunk uncompressed size")
			if err != nil {
				s.dead = true
				return false, err
			}
			at := c.off
			src, err := c.bytes(int64(csize), "chunk data")
			if err != nil {
				s.dead = true
				return false, err
			}
			if int(usize)%ps != 0 {
				s.dead = true
				return false, c.errAt(at-4, parse.ErrBadField, "chunk uncompressed size: want a multiple of the %d-byte page, got %d", ps, usize)
			}
			out, err := r.inflate(src, int64(usize), s.chunk)
			if err != nil {
				s.dead = true
				return false, c.errAt(at, parse.ErrBadField, "%s chunk: %v", r.compression, err)
			}
			s.chunk, s.chunkOff, s.chunkPos = out, at, 0
			s.off = c.off
			s.chunks--
			if len(out) == 0 {
				return s.nextPage()
			}
		}
		s.page = s.chunk[s.chunkPos : s.chunkPos+ps]
		s.pageIn = s.chunkPos
		s.pageOff = s.chunkOff
		s.chunkPos += ps
	} else {
		if s.off >= s.end {
			if s.cut > 0 {
				s.pageOff, s.pos = s.end, -r.dataOff
				err := s.errf(parse.ErrTruncated, "want %d more bytes of CPU %d pages (to offset %d), the file ends at %d", s.cut-s.end, s.cpu, s.cut, s.end)
				s.cut = 0
				return false, err
			}
			return false, nil
		}
		if s.end-s.off < int64(ps) {
			s.pageOff, s.pos = s.off, -r.dataOff
			left := s.end - s.off
			s.off = s.end
			if s.cut > 0 {
				cut := s.cut
				s.cut = 0
				return false, s.errf(parse.ErrTruncated, "want a %d-byte page, only %d bytes left: the file ends at %d, CPU %d's pages go to %d", ps, left, s.end, s.cpu, cut)
			}
			return false, s.errf(parse.ErrTruncated, "want a %d-byte page, only %d bytes of CPU data left", ps, left)
		}
		if cap(s.page) < ps {
			s.page = make([]byte, ps)
		}
		s.page = s.page[:ps]
		if _, err := r.ra.ReadAt(s.page, s.off); err != nil {
			s.pageOff, s.pos = s.off, -r.dataOff
			return false, s.errf(parse.ErrTruncated, "want a %d-byte page, got a read error: %v", ps, err)
		}
		s.pageOff = s.off
		s.off += int64(ps)
	}
	s.pages++
	p := s.page
	s.pos = -r.dataOff
	s.ts = r.order.Uint64(p[r.tsOff:])
	var commit uint64
	if r.commitSize == 8 {
		commit = r.order.Uint64(p[r.commitOff:])
	} else {
		commit = uint64(r.order.Uint32(p[r.commitOff:]))
	}
	// The kernel ORs RB_MISSED_EVENTS, an int (1 << 31), into the 64-bit
	// commit: on a 64-bit kernel it arrives sign-extended (a page of a real
	// overrun reads 0xffffffffc0000fe0), so the upper half is either 0 or,
	// with that flag, all ones; the low half holds the flags and the size.
	if hi := commit >> 32; hi != 0 && (hi != 0xffffffff || commit&missedEvents == 0) {
		return false, s.errf(parse.ErrBadField, "page header commit: want at most %d bytes of data and the missed-events flags, got %#x", ps-r.dataOff, commit)
	}
	commit &= 0xffffffff
	size := int(commit &^ (missedEvents | missedStored) & 0x3fffffff)
	if size > ps-r.dataOff {
		return false, s.errf(parse.ErrBadField, "page header commit: want at most %d bytes of data, got %#x", ps-r.dataOff, commit)
	}
	s.data = p[r.dataOff : r.dataOff+size]
	s.pos = 0
	if commit&missedEvents != 0 {
		n := int64(-1)
		if commit&missedStored != 0 {
			at := r.dataOff + size
			if at+r.longSize <= ps {
				if r.longSize == 8 {
					n = int64(r.order.Uint64(p[at:]))
				} else {
					n = int64(r.order.Uint32(p[at:]))
				}
			}
		}
		switch {
		case !s.lost:
			s.lost, s.lostCount = true, n
		case n < 0 || s.lostCount < 0:
			s.lostCount = -1
		default:
			s.lostCount += n
		}
	}
	return true, nil
}

// advance moves to the next data record; s.valid is false at the end.
func (s *stream) advance() error {
	r := s.r
	s.valid = false
	for {
		if s.data == nil || s.pos >= len(s.data) {
			ok, err := s.nextPage()
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			continue
		}
		d := s.data
		if len(d)-s.pos < 4 {
			return s.errf(parse.ErrTruncated, "want a 4-byte event header, %d bytes left in the page", len(d)-s.pos)
		}
		w := r.order.Uint32(d[s.pos:])
		var typeLen, delta uint32
		if r.bigEndian {
			typeLen, delta = w>>27, w&(1<<27-1)
		} else {
			typeLen, delta = w&31, w>>5
		}
		start := s.pos
		p := s.pos + 4
		switch typeLen {
		case typePadding:
			if delta == 0 && len(d)-p < 4 {
				s.pos = len(d)
				continue
			}
			if len(d)-p < 4 {
				return s.errf(parse.ErrTruncated, "padding: want its 4-byte length, %d bytes left in the page", len(d)-p)
			}
			n := int(r.order.Uint32(d[p:]))
			if delta == 0 {
				// A null padding ends the page's data.
				s.pos = len(d)
				continue
			}
			if n < 4 || n > len(d)-p {
				return s.errf(parse.ErrBadField, "padding: want a length of 4..%d bytes, got %d", len(d)-p, n)
			}
			s.pos = p + n
		case typeTimeExtend, typeTimeStamp:
			if len(d)-p < 4 {
				return s.errf(parse.ErrTruncated, "time extend: want 4 more bytes, %d left in the page", len(d)-p)
			}
			v := uint64(r.order.Uint32(d[p:]))<<tsShift + uint64(delta)
			if typeLen == typeTimeExtend {
				s.ts += v
			} else {
				// Absolute: the kernel keeps the top 5 bits of the page's
				// stamp (rb_fix_abs_ts in kernel/trace/ring_buffer.c).
				if s.ts&tsMSB != 0 {
					v |= s.ts & tsMSB
					if v < s.ts {
						v += 1 << 59
					}
				}
				s.ts = v
			}
			s.pos = p + 4
		case 0:
			if len(d)-p < 4 {
				return s.errf(parse.ErrTruncated, "event: want its 4-byte length, %d bytes left in the page", len(d)-p)
			}
			n := int(r.order.Uint32(d[p:]))
			if n < 4 || (n-4+3)&^3 > len(d)-p-4 {
				return s.errf(parse.ErrBadField, "event length: want 4..%d bytes, got %d", len(d)-p, n)
			}
			s.ts += uint64(delta)
			s.rec = d[p+4 : p+n]
			s.pos = p + 4 + (n-4+3)&^3
			s.evTS = s.ts
			s.valid = true
		default:
			n := int(typeLen) * 4
			if n > len(d)-p {
				s.pos = start
				return s.errf(parse.ErrTruncated, "event: want %d bytes of data, %d left in the page", n, len(d)-p)
			}
			s.ts += uint64(delta)
			s.rec = d[p : p+n]
			s.pos = p + n
			s.evTS = s.ts
			s.valid = true
		}
		if s.valid {
			s.events++
			return nil
		}
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	if n == 0 {
		return "0"
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
