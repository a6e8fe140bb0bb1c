package perfdata

import (
	"os"
	"runtime/debug"

	"golang.org/x/sys/unix"

	"github.com/schedlens/schedlens/ingest/parse"
)

// mapStep is how far ahead of the records being read a mapped data
// section's pages are made present, and how much the reader reads between
// two hand-overs to the goroutine that does it.
var mapStep = 4 << 20

// mapping is a file-mode data section mapped into memory, so that records
// are read where they are (Reader.streamRecord takes them from the mapped
// window) instead of copied out of the file by read(2). A goroutine of its
// own makes the pages ahead of the reader present (MADV_POPULATE_READ), so
// the reader's goroutine takes no page faults, and drops those behind it
// (MADV_DONTNEED), so that the file's pages count in the process's memory
// only while they are read.
type mapping struct {
	all  []byte // the mapping, from a page boundary
	data []byte // the data section within it
	skip int    // offset of data in all
	// the reader's progress in data, handed over each mapStep: how far it
	// read, and from where records are still queued in place
	pos  chan [2]int
	done chan struct{}
	next int      // where the reader hands over its progress next
	f    *os.File // the file mapped
}

// mapData maps the data section [off, off+size) of f, or returns nil
// where it cannot (the reader then reads the file).
func mapData(f *os.File, off, size int64) *mapping {
	if size <= 0 || size > 1<<40 {
		return nil
	}
	page := int64(os.Getpagesize())
	start := off / page * page
	all, err := unix.Mmap(int(f.Fd()), start, int(off+size-start), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	m := &mapping{all: all, skip: int(off - start), pos: make(chan [2]int, 4), done: make(chan struct{}), f: f}
	m.data = all[m.skip:]
	// the first step's pages, before the reader starts
	unix.Madvise(all[:min(len(all), m.skip+2*mapStep)], unix.MADV_POPULATE_READ)
	m.next = mapStep
	go m.pages()
	return m
}

// pages keeps the pages ahead of the reader present and drops those
// behind it.
func (m *mapping) pages() {
	defer close(m.done)
	ahead, behind := min(len(m.all), m.skip+2*mapStep), 0
	for pk := range m.pos {
		p, keep := pk[0]+m.skip, pk[1]+m.skip
		if end := min(len(m.all), p+2*mapStep); end > ahead {
			unix.Madvise(m.all[ahead:end], unix.MADV_POPULATE_READ)
			ahead = end
		}
		// A step short of what is still read: a record being read may
		// start there. Dropping too much costs only faults: the pages
		// come back from the page cache.
		if b := (keep - mapStep) / mapStep * mapStep; b > behind {
			unix.Madvise(m.all[behind:b], unix.MADV_DONTNEED)
			behind = b
		}
	}
}

// due reports whether the reader, at pos in the data section, is to hand
// its progress over (once a step).
func (m *mapping) due(pos int) bool { return pos >= m.next }

// progress hands over the reader's position in the data section and the
// start of what it still reads there (the records queued in place).
func (m *mapping) progress(pos, keep int) {
	m.next = pos + mapStep
	select {
	case m.pos <- [2]int{pos, min(pos, keep)}:
	default: // it is behind; the next step tells it more
	}
}

// close ends the pages goroutine and unmaps the section. No slice of it
// may be read after.
func (m *mapping) close() {
	close(m.pos)
	<-m.done
	unix.Munmap(m.all)
}

// guard makes a fault on the mapping (the file cut short while it is read)
// the error fail returns, in *err, rather than a crash; call it deferred
// around a read of the mapped records: defer m.guard(&err, fail)().
func (m *mapping) guard(err *error, fail func() *parse.ParseError) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		if p := recover(); p != nil {
			if !isFault(p) {
				panic(p)
			}
			*err = fail()
		}
	}
}

// fileSize returns the mapped file's size now (a file cut short while it
// is read is smaller than its data section says), -1 if it cannot tell.
func (m *mapping) fileSize() int64 {
	st, err := m.f.Stat()
	if err != nil {
		return -1
	}
	return st.Size()
}
