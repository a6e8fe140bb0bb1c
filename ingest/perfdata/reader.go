package perfdata

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// Record types (enum perf_event_type in include/uapi/linux/perf_event.h;
// the user types from 64 in tools/lib/perf/include/perf/event.h).
const (
	recLost          = 2
	recComm          = 3
	recExit          = 4
	recFork          = 7
	recSample        = 9
	recLostSamples   = 13
	recHeaderAttr    = 64
	recTracingData   = 66
	recFinishedRound = 68
	recHeaderFeature = 80
	recCompressed    = 81
)

const (
	maxCPU  = 8191 // CONFIG_NR_CPUS is at most 8192
	bufSize = 256 << 10
)

// Reader reads perf.data. It implements parse.Reader.
type Reader struct {
	name string
	opts parse.Options
	strs *timeline.Strings
	meta *parse.Meta

	src     *bufio.Reader // the record stream
	win     []byte        // bytes of src peeked and not yet discarded, records in place
	wpos    int           // bytes of win taken
	pos     int64         // file offset of the next record in src
	end     int64         // end of the data section; -1 in pipe mode
	data    int64         // size of the data section; 0 in pipe mode
	pipe    bool
	spool   *os.File // file-mode input copied to a temporary file
	mapped  *mapping // the data section in memory (win is it while inMap)
	inMap   bool
	recAt   int64 // file offset of the record read last from the stream
	zdec    *zstream
	dbuf    []byte // decompressed records not yet taken
	dpos    int
	dAt     int64 // offset of the COMPRESSED record dbuf came from
	srcDone bool

	// recMapped: the record read last lies in the mapped section
	recMapped bool

	attrs    []*attr
	byID     map[uint64]*attr
	idTab    []*attr // byID as a table from idBase, when the ids are few and close
	idBase   uint64
	sidPos   int // where a sample's id is (sampleAttr): -1 no attribute yet, 0 none (the first attribute's)
	tracing  *tracingData
	features map[int][]byte
	featOffs map[int]int64
	featOrd  []int
	info     *headerInfo

	q       queue
	threads threadNames // perf's name for each thread, from COMM and FORK records
	comms   commCache   // the payloads' comms
	// delivering: the file offset of the record being delivered; cutAt:
	// the size of a mapped file found cut short while it was read, -1
	delivering, cutAt int64
	cutWarned         bool
	one               [1]timeline.Event // Next's batch of a mapped read

	cpuLost parse.LostCPUs // per CPU: last record time, a loss not yet handed out
	maxCPU  int
	held    timeline.Event
	hasHeld bool
	eof     bool
	err     error

	lostRecs  int
	lostTotal int64 // records lost, by the LOST and timed LOST_SAMPLES records
	synthLost int64 // what perf record's closing LOST_SAMPLES records say
	firstLost int64
	backward  bool
	records   int64
}

var _ parse.Reader = (*Reader)(nil)

// NewReader returns a Reader of the perf.data in r. It reads the header,
// the attributes and the feature sections at once (a file-mode perf.data
// that is not an *os.File is first copied to an unlinked temporary file,
// since its feature sections, the event formats among them, follow the
// data); records are read by Next.
func NewReader(r io.Reader, opts parse.Options) (*Reader, error) {
	if r == nil {
		return nil, errors.New("perfdata: nil input")
	}
	strs := opts.Strings
	if strs == nil {
		strs = timeline.NewStrings()
	}
	rd := &Reader{
		name: opts.Name, opts: opts, strs: strs, meta: parse.NewMeta("perf.data"),
		byID: map[uint64]*attr{}, maxCPU: -1,
		features: map[int][]byte{},
		featOffs: map[int]int64{}, firstLost: -1, q: newQueue(), sidPos: -1, cutAt: -1,
	}
	rd.comms.strs = strs
	// perf names the idle task before reading any record
	// (perf_session__register_idle_thread in tools/perf/util/session.c).
	rd.threads.set(0, strs.IDString("swapper"))
	if f, ok := r.(*os.File); ok {
		// A file handed over after sniffing: read it from the start.
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return nil, err
			}
		}
	}
	br := bufio.NewReaderSize(r, bufSize)
	head, _ := br.Peek(pipeHeaderSize)
	if len(head) < pipeHeaderSize {
		return nil, rd.errorAt(0, "file header", parse.ErrTruncated, "want a %d-byte header, the input has %d bytes", pipeHeaderSize, len(head))
	}
	if string(head[:8]) != Magic {
		return nil, rd.errorAt(0, "file header", parse.ErrBadField, "want the magic %q, got %q", Magic, head[:8])
	}
	if binary.LittleEndian.Uint64(head[8:]) == pipeHeaderSize {
		rd.pipe = true
		br.Discard(pipeHeaderSize)
		rd.src, rd.pos, rd.end = br, pipeHeaderSize, -1
		rd.meta.Format = "perf.data (pipe)"
		return rd, nil
	}
	ra, size, err := seekable(r, br)
	if err != nil {
		return nil, err
	}
	if f, ok := ra.(*os.File); ok && f != r {
		rd.spool = f
	}
	if perr := rd.openFile(ra, size); perr != nil {
		rd.closeSpool()
		return nil, perr
	}
	return rd, nil
}

// seekable returns r itself when it is a file or an in-memory reader with
// a size, else a temporary copy.
func seekable(r io.Reader, br *bufio.Reader) (io.ReaderAt, int64, error) {
	if ra, ok := r.(interface {
		io.ReaderAt
		Size() int64
	}); ok {
		return ra, ra.Size(), nil
	}
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if _, err := f.Seek(0, io.SeekStart); err == nil {
				return f, st.Size(), nil
			}
		}
	}
	f, err := os.CreateTemp("", "schedlens-perfdata-*")
	if err != nil {
		return nil, 0, fmt.Errorf("perf.data: a temporary copy is needed to read the feature sections: %w", err)
	}
	os.Remove(f.Name())
	n, err := io.Copy(f, br)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, n, nil
}

// Close stops the decompressor of a perf record -z file and drops the
// temporary copy of a pipe, for a caller that stops reading before the
// end; reading to the end or to an error does it too.
func (r *Reader) Close() error {
	r.closeSpool()
	return nil
}

func (r *Reader) closeSpool() {
	if r.zdec != nil {
		r.zdec.close()
	}
	if r.spool != nil {
		r.spool.Close()
		r.spool = nil
	}
	if r.mapped != nil {
		r.mapped.close()
		r.mapped, r.win, r.wpos, r.inMap = nil, nil, 0, false
	}
}

func (r *Reader) openFile(ra io.ReaderAt, size int64) *parse.ParseError {
	h, perr := readHeader(ra, size, r.name)
	if perr != nil {
		return perr
	}
	attrs, perr := readAttrs(ra, size, h, r.name)
	if perr != nil {
		return perr
	}
	for _, a := range attrs {
		r.addAttr(a)
	}
	feat, offs, order, perr := readFeatures(ra, size, h, r.name)
	if perr != nil {
		return perr
	}
	r.features, r.featOffs, r.featOrd = feat, offs, order
	if perr := r.readInfo(); perr != nil {
		return perr
	}
	if b, ok := feat[featTracingData]; ok {
		td, perr := parseTracingData(b, offs[featTracingData], r.name)
		if perr != nil {
			return perr
		}
		r.tracing = td
	}
	r.src = bufio.NewReaderSize(io.NewSectionReader(ra, int64(h.data.off), int64(h.data.size)), bufSize)
	r.pos, r.end, r.data = int64(h.data.off), int64(h.data.off+h.data.size), int64(h.data.size)
	if f, ok := ra.(*os.File); ok {
		// Records read in place; src only for what the window cannot
		// hold (a record cut off at the section's end).
		if r.mapped = mapData(f, r.pos, r.data); r.mapped != nil {
			r.win, r.wpos, r.inMap = r.mapped.data, 0, true
			r.q.setMapped(r.mapped.data, r.pos)
		}
	}
	return nil
}

func (r *Reader) readInfo() *parse.ParseError {
	info, perr := readHeaderInfo(r.features, r.featOffs, r.featOrd, r.name)
	if perr != nil {
		return perr
	}
	r.info = info
	m := r.meta
	m.Kernel = info.osRelease
	if info.hasClockID {
		m.Clock = clockName(info.clockID)
	}
	if info.topo != nil {
		m.Topology = info.topo
	}
	for _, a := range r.attrs {
		if n, ok := info.names[firstID(a)]; ok && a.name == "" {
			a.name = n
		}
	}
	return nil
}

func firstID(a *attr) uint64 {
	if len(a.ids) == 0 {
		return 0
	}
	return a.ids[0]
}

func (r *Reader) addAttr(a *attr) {
	r.attrs = append(r.attrs, a)
	for _, id := range a.ids {
		r.byID[id] = a
	}
	lo, hi := uint64(1<<64-1), uint64(0)
	for id := range r.byID {
		lo, hi = min(lo, id), max(hi, id)
	}
	r.idTab = nil
	if len(r.byID) > 0 && hi-lo < 1<<16 {
		r.idBase = lo
		r.idTab = make([]*attr, hi-lo+1)
		for id, at := range r.byID {
			r.idTab[id-lo] = at
		}
	}
	r.sidPos = sampleIDPos(r.attrs)
	if a.flags&flagWriteBackward != 0 {
		r.backward = true
	}
	if a.flags&flagUseClockID != 0 && r.meta.Clock == "" {
		r.meta.Clock = clockName(int64(a.clockID))
	}
}

// DeclaredCPUs returns the CPUs present on the recording machine
// (HEADER_NRCPUS' nr_cpus_avail) when the header, ahead of the records,
// states them; 0 otherwise (pipe mode sends its feature sections last).
func (r *Reader) DeclaredCPUs() int {
	if r.info == nil {
		return 0
	}
	return r.info.nrAvail
}

var _ parse.CPUDeclarer = (*Reader)(nil)

// Meta returns what the Reader learned so far; it is complete after Next
// has returned io.EOF.
func (r *Reader) Meta() *parse.Meta { return r.meta }

// Strings returns the interner of the events' comms and marker texts.
func (r *Reader) Strings() *timeline.Strings { return r.strs }

func (r *Reader) errorAt(at int64, record string, sentinel error, format string, args ...any) *parse.ParseError {
	return &parse.ParseError{File: r.name, Offset: at, Record: record, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// Next fills ev with the next event in perf's delivery order (time order
// within the limits of the round queue). It returns io.EOF at the end and a
// *parse.ParseError for malformed input (unless Options.Lenient skips a
// malformed record); after any other error Next keeps returning it.
func (r *Reader) Next(ev *timeline.Event) error {
	if r.mapped == nil {
		return r.next(ev)
	}
	for {
		// through NextBatch, whose guard a mapped read needs
		n, err := r.NextBatch(r.one[:])
		*ev = r.one[0]
		if n == 1 || err != nil {
			return err
		}
	}
}

// NextBatch fills evs with the events Next would hand out next, as many
// as come before the end or an error, and returns how many (parse.Batcher).
// A queued record's payload is read where it lies in the mapped section,
// and if the file was cut short since, its pages are gone: the guard that
// makes that fault an error (onFault) is taken once for them all. Fewer
// than len(evs) with a nil error (a record was skipped after a fault, with
// Options.Lenient) means: call again.
func (r *Reader) NextBatch(evs []timeline.Event) (n int, err error) {
	if r.mapped != nil {
		old := debug.SetPanicOnFault(true)
		defer func() {
			debug.SetPanicOnFault(old)
			if p := recover(); p != nil {
				r.onFault(p, &evs[n], &err)
			}
		}()
	}
	for n < len(evs) {
		if err = r.next(&evs[n]); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

var _ parse.Batcher = (*Reader)(nil)

// onFault handles p, recovered while a record was delivered: a fault on
// the mapped section (its pages gone: the file was cut short while it was
// read) becomes in *err a positioned ErrTruncated that ends the read, or,
// with Options.Lenient, a skipped record (*err stays nil): the records
// that lay past the file's new end are then skipped unread (cutAt). Any
// other panic goes on.
func (r *Reader) onFault(p any, ev *timeline.Event, err *error) {
	if !isFault(p) {
		panic(p)
	}
	ev.Reset()
	perr := r.errorAt(r.delivering, "perf record", parse.ErrTruncated,
		"the file changed while it was read: the mapped pages of this record are gone (cut short?)")
	r.fileCut()
	if !r.opts.Lenient {
		r.err = perr
		r.countSpecs()
		r.closeSpool()
		*err = perr
		return
	}
	r.cutOff(perr)
	r.meta.Skip(perr)
}

// cutOff warns, once, that the input ends short of its data section, with
// the first error that showed it.
func (r *Reader) cutOff(err error) {
	if !r.cutWarned {
		r.cutWarned = true
		r.meta.Warnings = append(r.meta.Warnings, "perf.data cut off: "+err.Error())
	}
}

// fileCut notes the size of a mapped file found cut short while it was
// read: the queued records past it are gone (cutAt).
func (r *Reader) fileCut() {
	if r.cutAt < 0 && r.mapped != nil {
		if n := r.mapped.fileSize(); n >= 0 {
			r.cutAt = n
		}
	}
}

// gone reports whether the record just taken from the queue, whose
// payload is p, lay past where the file was cut short while it was read
// (fileCut): its payload, read where it lay, is gone.
func (r *Reader) gone(e *entry, p []byte) bool {
	return r.cutAt >= 0 && r.q.lastMapped && e.at+int64(r.q.lastOff&0xffff)+int64(len(p)) > r.cutAt
}

// next is Next, unguarded.
func (r *Reader) next(ev *timeline.Event) error {
	if r.hasHeld {
		*ev = r.held
		r.hasHeld = false
		return nil
	}
	if r.err != nil {
		ev.Reset()
		return r.err
	}
	for !r.eof {
		var e entry
		payload, ok := r.q.next(&e)
		if !ok {
			if err := r.fill(); err != nil {
				var perr *parse.ParseError
				if r.opts.Lenient && errors.As(err, &perr) && errors.Is(err, parse.ErrTruncated) {
					// What was complete is handed out; the rest is gone.
					r.cutOff(err)
					r.meta.Skip(err)
					r.q.flushAll()
					r.srcDone = true
					continue
				}
				ev.Reset()
				r.err = err
				r.countSpecs()
				r.closeSpool()
				return err
			}
			if r.srcDone && !r.q.ready() {
				r.finish()
			}
			continue
		}
		if e.nu > 0 {
			if err := r.deliverCarried(e.cpu); err != nil {
				ev.Reset()
				return err
			}
		}
		if e.typ == 0 {
			continue // a carrier of unknown samples alone
		}
		if r.gone(&e, payload) {
			perr := r.errorAt(e.at, "perf record", parse.ErrTruncated,
				"the file was cut short at offset %#x while it was read: this record, queued before, is gone", r.cutAt)
			if err := r.refuse(perr); err != nil {
				ev.Reset()
				return err
			}
			continue
		}
		r.delivering = e.at
		ok, perr := r.deliver(&e, payload, ev)
		if perr != nil {
			ev.Reset()
			if err := r.refuse(perr); err != nil {
				return err
			}
			continue
		}
		if ok {
			r.commit(ev)
			return nil
		}
	}
	return r.flush(ev)
}

// deliverCarried hands out the unknown samples the record just taken from
// the queue carries (queue.carried), of CPU cpu, as deliver would have
// one by one: a malformed one stops the read, or is skipped with
// Options.Lenient.
//
// A record carries samples only while their CPU's FIFO is in time order,
// so once one of them is not before the CPU's previous record, neither is
// any after it: those are counted, and the last is the CPU's latest.
func (r *Reader) deliverCarried(cpu int32) error {
	c := r.q.carried
	for i, u := range c {
		if perr := r.checkOrder(int(cpu), timeline.Time(u.time), u.at); perr != nil {
			if err := r.refuse(perr); err != nil {
				return err
			}
			continue
		}
		for _, v := range c[i:] {
			r.q.specs[v.spec-1].count++ // into Meta.Unknown at the end
		}
		r.see(int(cpu), timeline.Time(c[len(c)-1].time))
		return nil
	}
	return nil
}

// refuse handles a malformed record found at delivery: skipped under
// Options.Lenient (nil), else the error that ends the read.
func (r *Reader) refuse(perr *parse.ParseError) error {
	if r.opts.Lenient {
		r.meta.Skip(perr)
		return nil
	}
	r.err = perr
	r.countSpecs()
	r.closeSpool()
	return perr
}

// fill reads records until some are ready to hand out or the input ends.
func (r *Reader) fill() (err error) {
	if r.inMap {
		defer r.mapped.guard(&err, func() *parse.ParseError {
			r.fileCut()
			return r.errorAt(r.recAt, "perf record", parse.ErrTruncated,
				"the file changed while it was read: its mapped pages are gone (cut short?)")
		})()
	}
	for !r.q.ready() {
		if r.srcDone {
			return nil
		}
		typ, rec, at, err := r.nextRecord()
		if err == io.EOF {
			r.srcDone = true
			r.q.flushAll()
			return nil
		}
		if err != nil {
			return err
		}
		r.records++
		switch typ {
		case recFinishedRound:
			r.q.round()
		case recSample, recComm, recFork, recExit, recLost, recLostSamples:
			if typ == recSample {
				var e entry
				if payload, ok := r.fastSample(rec, at, &e); ok {
					// read from the mapped section: kept in place (see qent)
					e.mapped = r.recMapped && payload != nil
					r.q.add(&e, payload, e.time != 0)
					continue
				}
			}
			e, payload, ok, perr := r.decode(typ, rec, at)
			if perr != nil {
				if r.opts.Lenient {
					r.meta.Skip(perr)
					continue
				}
				return perr
			}
			if ok {
				r.q.add(&e, payload, e.flags&hasTime != 0 && e.time != 0)
			}
		case recHeaderAttr:
			if perr := r.pipeAttr(rec, at); perr != nil {
				return perr
			}
		case recTracingData:
			if perr := r.pipeTracingData(rec, at); perr != nil {
				return perr
			}
		case recHeaderFeature:
			if perr := r.pipeFeature(rec, at); perr != nil {
				return perr
			}
		}
	}
	return nil
}

// nextRecord returns the next record (header included): from the
// decompressed buffer when it holds one, else from the stream, whose
// PERF_RECORD_COMPRESSED records are unpacked on the way.
func (r *Reader) nextRecord() (uint32, []byte, int64, error) {
	for {
		if rest := r.dbuf[r.dpos:]; len(rest) >= 8 {
			size := int(binary.LittleEndian.Uint16(rest[6:]))
			if size < 8 {
				return 0, nil, 0, r.errorAt(r.dAt, "PERF_RECORD_COMPRESSED", parse.ErrBadField,
					"decompressed record at byte %d has size %d, want at least 8", r.dpos, size)
			}
			if len(rest) >= size {
				r.dpos += size
				r.recMapped = false
				return binary.LittleEndian.Uint32(rest), rest[:size], r.dAt, nil
			}
		}
		typ, rec, at, err := r.streamRecord()
		r.recMapped = r.inMap
		if err == io.EOF && r.dpos < len(r.dbuf) {
			return 0, nil, 0, r.errorAt(r.dAt, "PERF_RECORD_COMPRESSED", parse.ErrTruncated,
				"the data ends inside a compressed record (%d bytes of it left)", len(r.dbuf)-r.dpos)
		}
		if err != nil || typ != recCompressed {
			return typ, rec, at, err
		}
		if err := r.decompress(rec[8:], at); err != nil {
			return 0, nil, 0, err
		}
	}
}

// decompress appends a PERF_RECORD_COMPRESSED payload (zstd frames, from
// perf record -z) to the decompressed buffer.
func (r *Reader) decompress(p []byte, at int64) error {
	if r.zdec == nil {
		r.zdec = newZstream()
	}
	keep := append(r.dbuf[:0:0], r.dbuf[r.dpos:]...)
	out, err := r.zdec.feed(p, keep)
	if err != nil {
		return r.errorAt(at, "PERF_RECORD_COMPRESSED", parse.ErrBadField, "zstd payload of %d bytes: %v", len(p), err)
	}
	r.dbuf, r.dpos, r.dAt = out, 0, at
	return nil
}

// streamRecord reads one record of the stream. The record is in the
// bufio buffer and valid until the next read.
//
// Records are taken from a window of what src has buffered (win), which
// is discarded from src only when a record is not wholly in it: one Peek
// and one Discard per buffer's worth of records rather than per record.
func (r *Reader) streamRecord() (uint32, []byte, int64, error) {
	at := r.pos
	r.recAt = at
	if r.end >= 0 && at >= r.end {
		return 0, nil, at, io.EOF
	}
	if w := r.win[r.wpos:]; len(w) >= 8 {
		size := int(binary.LittleEndian.Uint16(w[6:]))
		if size >= 8 && size <= len(w) && (r.end < 0 || at+int64(size) <= r.end) {
			r.wpos += size
			r.pos += int64(size)
			if r.inMap && r.mapped.due(r.wpos) {
				r.mapProgress()
			}
			return binary.LittleEndian.Uint32(w), w[:size], at, nil
		}
	}
	r.syncSrc()
	hdr, err := r.src.Peek(8)
	if len(hdr) == 0 && err == io.EOF {
		if r.end >= 0 {
			// the header promised more: the file changed under the read
			return 0, nil, at, r.errorAt(at, "perf record", parse.ErrTruncated,
				"the file ends at offset %#x, inside its data section (to %#x): cut short while it was read?", at, r.end)
		}
		return 0, nil, at, io.EOF
	}
	if len(hdr) < 8 {
		return 0, nil, at, r.readErr(at, len(hdr), 8, err)
	}
	typ := binary.LittleEndian.Uint32(hdr)
	size := int(binary.LittleEndian.Uint16(hdr[6:]))
	if size < 8 {
		return 0, nil, at, r.errorAt(at, recordName(typ), parse.ErrBadField, "record size %d, want at least 8 (the header)", size)
	}
	if r.end >= 0 && at+int64(size) > r.end {
		return 0, nil, at, r.errorAt(at, recordName(typ), parse.ErrTruncated,
			"record of %d bytes runs past the data section's end at %#x", size, r.end)
	}
	rec, err := r.src.Peek(size)
	if len(rec) < size {
		return 0, nil, at, r.readErr(at, len(rec), size, err)
	}
	r.win, _ = r.src.Peek(r.src.Buffered())
	r.wpos = size
	r.pos += int64(size)
	return typ, rec, at, nil
}

// mapProgress hands the pages goroutine how far the mapped section is
// read, and from where records still wait in the queue there.
func (r *Reader) mapProgress() {
	keep := r.wpos
	if o := r.q.oldest(); o >= 0 {
		keep = int(o - r.q.mapAt)
	}
	r.mapped.progress(r.wpos, keep)
}

// syncSrc discards from src the records taken from the window, before src
// is read directly.
func (r *Reader) syncSrc() {
	r.src.Discard(r.wpos)
	r.win, r.wpos, r.inMap = nil, 0, false
}

func (r *Reader) readErr(at int64, have, want int, err error) error {
	var perr *parse.ParseError
	if errors.As(err, &perr) {
		return err
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return r.errorAt(at, "perf record", parse.ErrTruncated, "want a record of %d bytes, the input ends after %d: cut off?", want, have)
	}
	return r.errorAt(at, "perf record", err, "reading: %v", err)
}

func recordName(typ uint32) string {
	switch typ {
	case recLost:
		return "PERF_RECORD_LOST"
	case recComm:
		return "PERF_RECORD_COMM"
	case recExit:
		return "PERF_RECORD_EXIT"
	case recFork:
		return "PERF_RECORD_FORK"
	case recSample:
		return "PERF_RECORD_SAMPLE"
	case recLostSamples:
		return "PERF_RECORD_LOST_SAMPLES"
	case recHeaderAttr:
		return "PERF_RECORD_HEADER_ATTR"
	case recTracingData:
		return "PERF_RECORD_HEADER_TRACING_DATA"
	case recFinishedRound:
		return "PERF_RECORD_FINISHED_ROUND"
	case recHeaderFeature:
		return "PERF_RECORD_HEADER_FEATURE"
	case recCompressed:
		return "PERF_RECORD_COMPRESSED"
	}
	return fmt.Sprintf("perf record type %d", typ)
}

// isFault reports whether a recovered panic is a memory fault that
// debug.SetPanicOnFault made a panic.
func isFault(p any) bool {
	_, ok := p.(interface{ Addr() uintptr })
	return ok
}
