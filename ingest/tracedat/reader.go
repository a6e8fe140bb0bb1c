package tracedat

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"os"

	"github.com/klauspost/compress/zstd"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// Format is the Meta.Format of a trace.dat file.
const Format = "trace.dat"

// maxCPU bounds CPU numbers and counts read from the file.
const maxCPU = 8192

// Reader streams the scheduler events of a trace.dat file.
type Reader struct {
	// lastOnCPU is the time of each CPU's last record handed out, over
	// every buffer (NoTime before the first): where a lost gap at the
	// start of a buffer's pages begins.
	lastOnCPU []timeline.Time
	ncpu      int  // the header's CPU count
	summary   bool // parse.Options.Summary: time, CPU and kind only
	name      string
	ra        io.ReaderAt
	size      int64
	spool     *os.File // the input copied to a temporary file when it cannot be read at offsets
	meta      *parse.Meta
	strs      *timeline.Strings

	version     int
	order       binary.ByteOrder
	bigEndian   bool
	longSize    int
	pageSize    int
	compression string
	zstd        *zstd.Decoder

	tsOff, commitOff, commitSize, dataOff int

	clock     string
	tsOffset  int64
	tscMult   uint32
	tscShift  uint32
	tscOffset uint64

	buffers []*buffer
	stats   map[string]map[int]cpuStat
	statBuf string // the buffer the following CPUSTAT options describe

	names  []string   // event name by id
	dec    []*decoder // decoder by id, nil for events not interpreted
	common commonFields

	comm      map[int32]timeline.CommID // what trace-cmd report would print in the task column, pids >= maxPIDSlice
	pidComm   []timeline.CommID         // the same for smaller pids
	idle      timeline.CommID
	commCache [256]commSlot

	streams streamHeap
	all     []*stream
	q       []timeline.Event
	qi      int
	done    bool
	err     error
	lenient bool
	unknown map[uint16]int64

	lostPages int64
	firstLost string
	scratch   []byte
}

func (r *Reader) cursor(off, end int64, section string) *cursor {
	return &cursor{r: r, ra: r.ra, off: off, end: end, section: section}
}

// NewReader reads the header of the trace.dat in in and returns a Reader
// positioned at the first event. The ring-buffer pages of all CPUs are read
// side by side, so the input must be readable at offsets: an *os.File or
// other io.ReaderAt with a Size is read in place; any other reader (a
// decompressed stream) is first copied to a temporary file, which is
// removed at once and closed when Next returns io.EOF or an error.
func NewReader(in io.Reader, opts parse.Options) (*Reader, error) {
	r := &Reader{name: opts.Name, strs: opts.Strings, lenient: opts.Lenient, summary: opts.Summary,
		meta: parse.NewMeta(Format), stats: map[string]map[int]cpuStat{},
		comm: map[int32]timeline.CommID{}, unknown: map[uint16]int64{}}
	if r.strs == nil {
		r.strs = timeline.NewStrings()
	}
	r.idle = r.strs.ID([]byte("<idle>"))
	if err := r.open(in); err != nil {
		return nil, err
	}
	if err := r.start(); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

type sizedReaderAt interface {
	io.ReaderAt
	Size() int64
}

func (r *Reader) open(in io.Reader) error {
	switch v := in.(type) {
	case *os.File:
		st, err := v.Stat()
		if err == nil && st.Mode().IsRegular() {
			r.ra, r.size = v, st.Size()
			return nil
		}
	case sizedReaderAt:
		r.ra, r.size = v, v.Size()
		return nil
	}
	f, err := os.CreateTemp("", "schedlens-tracedat-*")
	if err != nil {
		return &parse.ParseError{File: r.name, Record: "input", Msg: "want a temporary file to read the pages from: " + err.Error(), Err: err}
	}
	os.Remove(f.Name())
	n, err := io.Copy(f, in)
	if err != nil {
		f.Close()
		if pe, ok := err.(*parse.ParseError); ok {
			return pe
		}
		return &parse.ParseError{File: r.name, Offset: n, Record: "input", Msg: "read error: " + err.Error(), Err: err}
	}
	r.spool, r.ra, r.size = f, f, n
	return nil
}

func (r *Reader) close() {
	if r.spool != nil {
		r.spool.Close()
		r.spool = nil
	}
	if r.zstd != nil {
		r.zstd.Close()
		r.zstd = nil
	}
}

// start reads the header and primes one stream per CPU of every buffer.
func (r *Reader) start() error {
	if err := r.header(); err != nil {
		return err
	}
	r.bigEndian = r.order == binary.BigEndian
	if err := r.checkFormats(); err != nil {
		return err
	}
	if r.meta.Clock == "" {
		r.meta.Clock = r.clock
	}
	for _, b := range r.buffers {
		if b.clock != "" {
			r.meta.Clock = b.clock
		}
		for _, cd := range b.cpus {
			if cd.size == 0 {
				continue
			}
			s := &stream{r: r, cpu: timeline.CPU(cd.cpu), buf: b, off: cd.off, end: cd.off + cd.size, last: timeline.NoTime}
			if s.end > r.size {
				// Cut short: read what is there, then report the cut.
				s.cut, s.end = s.end, r.size
				if s.off > s.end {
					s.off = s.end
				}
			}
			if b.chunked {
				// The size trace-cmd stores counts the chunks, not the
				// chunk count before them.
				if s.cut == 0 {
					s.end = min(s.end+4, r.size)
				}
				c := r.cursor(cd.off, s.end, "CPU "+itoa(cd.cpu)+" compressed data")
				n, err := c.u32("chunk count")
				if err != nil {
					return err
				}
				s.compressed, s.chunks, s.off = true, int64(n), c.off
			}
			r.all = append(r.all, s)
		}
	}
	for i, s := range r.all {
		s.idx = i
		if err := r.step(s); err != nil {
			return err
		}
		if s.valid {
			heap.Push(&r.streams, s)
		}
	}
	return nil
}

// Meta returns what the reader learned so far.
func (r *Reader) Meta() *parse.Meta {
	for id, n := range r.unknown {
		name := "id " + itoa(int(id))
		if int(id) < len(r.names) && r.names[id] != "" {
			name = r.names[id]
		}
		r.meta.Unknown[name] = n
	}
	return r.meta
}

// DeclaredCPUs returns the CPU count of the file's header, which comes
// before the events (parse.CPUDeclarer).
func (r *Reader) DeclaredCPUs() int { return r.ncpu }

var _ parse.CPUDeclarer = (*Reader)(nil)

// Strings returns the interner of comms and marker texts.
func (r *Reader) Strings() *timeline.Strings { return r.strs }

// time converts a ring-buffer stamp to the trace clock in ns, applying the
// TSC2NSEC and OFFSET options when the file has them.
func (r *Reader) time(ts uint64) timeline.Time {
	if r.tscMult != 0 {
		// mul_u64_u32_shr: (ts * mult) >> shift on 128 bits.
		hi, lo := bits.Mul64(ts, uint64(r.tscMult))
		if r.tscShift == 0 {
			ts = lo
		} else {
			ts = hi<<(64-r.tscShift) | lo>>r.tscShift
		}
		ts += r.tscOffset
	}
	return timeline.Time(int64(ts) + r.tsOffset)
}

// Next fills ev with the next event in time order across CPUs.
func (r *Reader) Next(ev *timeline.Event) error {
	for {
		if r.qi < len(r.q) {
			*ev = r.q[r.qi]
			r.qi++
			if r.qi == len(r.q) {
				r.q, r.qi = r.q[:0], 0
			}
			return nil
		}
		if r.err != nil {
			return r.err
		}
		if r.done {
			return io.EOF
		}
		if len(r.streams) == 0 {
			r.finish()
			continue
		}
		s := r.streams[0]
		out, err := r.record(s, ev)
		if err != nil {
			out = false
			if !r.lenient {
				r.err = err
				r.close()
				continue
			}
			// A malformed record is skipped alone.
			r.meta.Skip(err)
		}
		if err = r.step(s); err != nil {
			// The event decoded before the error is handed out first.
			r.err = err
			r.close()
			if out {
				return nil
			}
			continue
		}
		if s.valid {
			r.streams.fix()
		} else {
			heap.Pop(&r.streams)
		}
		if out {
			return nil
		}
	}
}

// step moves s to its next record. Under Lenient a damaged page is skipped
// whole, counted, and what it held becomes a lost gap of unknown size; a
// damaged compressed chunk, which cannot be stepped over, ends the CPU.
func (r *Reader) step(s *stream) error {
	for {
		err := s.advance()
		if err == nil || !r.lenient {
			return err
		}
		r.meta.Skip(err)
		s.data, s.valid = nil, false
		s.lost, s.lostCount = true, -1
		if s.dead {
			return nil
		}
	}
}

// record decodes the head record of s into ev, and reports whether it did;
// a lost record due before it goes to the queue first, followed by the
// event.
func (r *Reader) record(s *stream, ev *timeline.Event) (bool, error) {
	t := r.time(s.evTS)
	rec := s.rec
	if len(rec) < 8 || r.common.pid.off+4 > len(rec) || r.common.typ.off+2 > len(rec) {
		return false, s.errf(parse.ErrTruncated, "event: want at least the common fields, got %d bytes", len(rec))
	}
	if s.last != timeline.NoTime && t < s.last {
		return false, s.errf(parse.ErrBackwards, "want a timestamp at or after %d ns (CPU %d's previous event), got %d", s.last, s.cpu, t)
	}
	prev := s.last
	first := prev == timeline.NoTime
	if prev == timeline.NoTime && int(s.cpu) < len(r.lastOnCPU) {
		// The stream's first record: the CPU's previous event may be in
		// another buffer of the file (an instance beside the top one),
		// as trace-cmd report's text shows it.
		prev = r.lastOnCPU[s.cpu]
	}
	for len(r.lastOnCPU) <= int(s.cpu) {
		r.lastOnCPU = append(r.lastOnCPU, timeline.NoTime)
	}
	r.lastOnCPU[s.cpu] = t
	queued := false
	s.last = t
	if s.lost {
		s.lost = false
		if r.lostPages++; r.lostPages == 1 {
			r.firstLost = fmt.Sprintf("CPU %d before %s", s.cpu, t.Seconds())
		}
		n := s.lostCount
		if n < 0 && first {
			// A page flagged without a stored count before the CPU's first
			// record: in overwrite mode the kernel overwrote the oldest
			// pages, and its per-CPU statistics (CPUSTAT, "overrun") count
			// them, which is the number trace-cmd report --stat gives.
			if st, ok := s.buf.stats[int(s.cpu)]; ok && st.overrun > 0 {
				n = st.overrun
			}
		}
		e := timeline.Event{}
		e.Reset()
		e.Kind, e.Time, e.Start, e.CPU, e.Arg = timeline.KindLost, t, prev, s.cpu, n
		r.q = append(r.q, e)
		queued = true
	}
	id := r.order.Uint16(rec[r.common.typ.off:])
	var d *decoder
	if int(id) < len(r.dec) {
		d = r.dec[id]
	}
	if d == nil {
		r.unknown[id]++
		return false, nil
	}
	pid := timeline.TID(int32(r.order.Uint32(rec[r.common.pid.off:])))
	ev.Reset()
	ev.Time, ev.CPU = t, s.cpu
	if r.summary && d.kind != timeline.KindMarker {
		// The first read of a streamed analysis: time, CPU and kind;
		// the second read decodes the fields.
		ev.Kind = d.kind
	} else {
		ev.Ctx = context(rec[r.common.flags.off])
		if err := r.decode(d, rec, pid, ev); err != nil {
			return false, s.errf(parse.ErrBadField, "%v", err)
		}
		r.registerComms(ev)
	}
	if queued {
		r.q = append(r.q, *ev)
		return false, nil
	}
	return true, nil
}

// context maps common_flags (enum trace_flag_type, kernel/trace/trace.h:
// HARDIRQ 0x08, SOFTIRQ 0x10, NMI 0x40) to an execution context.
func context(f byte) timeline.Context {
	switch {
	case f&0x40 != 0:
		return timeline.CtxNMI
	case f&0x08 != 0:
		return timeline.CtxHardirq
	case f&0x10 != 0:
		return timeline.CtxSoftirq
	}
	return timeline.CtxTask
}

// finish emits lost records still pending (a last page that says events
// were lost, with nothing after it) and states the coverage.
func (r *Reader) finish() {
	var lastAll timeline.Time = timeline.NoTime
	for _, s := range r.all {
		if s.last != timeline.NoTime && (lastAll == timeline.NoTime || s.last > lastAll) {
			lastAll = s.last
		}
	}
	for _, s := range r.all {
		if !s.lost {
			continue
		}
		t := s.last
		if t == timeline.NoTime {
			t = lastAll
		}
		e := timeline.Event{}
		e.Reset()
		e.Kind, e.Time, e.Start, e.CPU, e.Arg = timeline.KindLost, t, t, s.cpu, s.lostCount
		r.q = append(r.q, e)
		s.lost = false
		r.lostPages++
	}
	r.coverage()
	r.done = true
	r.close()
}

// streamHeap orders the CPU streams by their head record's time, then by
// stream order (buffer, then CPU), as trace-cmd report does.
type streamHeap []*stream

func (h streamHeap) Len() int { return len(h) }
func (h streamHeap) Less(i, j int) bool {
	if h[i].evTS != h[j].evTS {
		return h[i].evTS < h[j].evTS
	}
	return h[i].idx < h[j].idx
}
func (h streamHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *streamHeap) Push(x any)   { *h = append(*h, x.(*stream)) }

// fix restores the order after the head stream moved on: a sift-down
// without container/heap's interface calls.
func (h streamHeap) fix() {
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.Less(r, l) {
			m = r
		}
		if !h.Less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (h *streamHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}
