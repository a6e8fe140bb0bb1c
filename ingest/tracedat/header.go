package tracedat

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// Magic is the start of every trace.dat file: 0x17 0x08 0x44 "tracing".
const Magic = "\x17\x08\x44tracing"

// Option ids (trace-cmd.dat.v7(5); v6 uses the same numbers for the ones it
// has).
const (
	optDone         = 0
	optCPUStat      = 2
	optBuffer       = 3
	optTraceClock   = 4
	optUname        = 5
	optOffset       = 7
	optCPUCount     = 8
	optTSC2NSec     = 14
	optHeaderInfo   = 16
	optFtraceEvents = 17
	optEventFormats = 18
	optCmdlines     = 21
)

// Section ids (v7).
const (
	secOptions      = 0
	secFlyrecord    = 3
	secHeaderInfo   = 16
	secFtraceEvents = 17
	secEventFormats = 18
	secCmdlines     = 21
)

// maxSections bounds the v7 options chain, so that a DONE option pointing
// back at its own section is an error, not a loop.
const maxSections = 1024

// buffer is one trace instance's flyrecord data: "" is the top instance.
type buffer struct {
	name    string
	clock   string
	secOff  int64 // v7: the BUFFER FLYRECORD section; -1 in v6
	cpus    []cpuData
	stats   map[int]cpuStat // CPUSTAT options, by CPU
	chunked bool            // v7 compressed: CPU data in compressed chunks
}

// cpuData is where a CPU's pages are, as the file states it; a file cut
// short holds less (the stream reads up to the cut, then reports it).
type cpuData struct {
	cpu       int
	off, size int64
}

// cpuStat is what the kernel's per_cpu/cpuN/stats file said when the trace
// was extracted (ring_buffer stats in kernel/trace/trace.c tracing_stats_read).
type cpuStat struct {
	entries, overrun, commitOverrun, dropped, read int64
}

// header reads everything before the ring-buffer pages.
func (r *Reader) header() error {
	c := r.cursor(0, r.size, "initial header")
	if err := c.expect(Magic, "magic"); err != nil {
		return err
	}
	ver, err := c.cstring("version")
	if err != nil {
		return err
	}
	switch ver {
	case "6":
		r.version = 6
	case "7":
		r.version = 7
	default:
		return c.errAt(10, parse.ErrBadField, "version: want \"6\" or \"7\", got %q", clipS(ver))
	}
	b, err := c.bytes(2, "endianness and long size")
	if err != nil {
		return err
	}
	switch b[0] {
	case 0:
		r.order = binary.LittleEndian
	case 1:
		r.order = binary.BigEndian
	default:
		return c.errAt(c.off-2, parse.ErrBadField, "endianness: want 0 (little) or 1 (big), got %d", b[0])
	}
	if b[1] != 4 && b[1] != 8 {
		return c.errAt(c.off-1, parse.ErrBadField, "long size: want 4 or 8, got %d", b[1])
	}
	r.longSize = int(b[1])
	ps, err := c.u32("page size")
	if err != nil {
		return err
	}
	if ps < 64 || ps > 1<<20 || ps&(ps-1) != 0 {
		return c.errAt(c.off-4, parse.ErrBadField, "page size: want a power of two from 64 to 1 MiB, got %d", ps)
	}
	r.pageSize = int(ps)
	if r.version == 6 {
		return r.headerV6(c)
	}
	return r.headerV7(c)
}

// headerV6 reads the sequential v6 header (trace-cmd.dat.v6(5)).
func (r *Reader) headerV6(c *cursor) error {
	c.section = "header info"
	if err := r.headerInfo(c); err != nil {
		return err
	}
	c.section = "ftrace event formats"
	if err := r.ftraceEvents(c); err != nil {
		return err
	}
	c.section = "event formats"
	if err := r.eventFormats(c); err != nil {
		return err
	}
	c.section = "kallsyms"
	n, err := c.u32("kallsyms size")
	if err != nil {
		return err
	}
	if err := c.skip(int64(n), "kallsyms"); err != nil {
		return err
	}
	c.section = "printk formats"
	if n, err = c.u32("printk formats size"); err != nil {
		return err
	}
	if err := c.skip(int64(n), "printk formats"); err != nil {
		return err
	}
	c.section = "saved cmdlines"
	if err := r.cmdlines(c); err != nil {
		return err
	}
	c.section = "CPU count"
	ncpu, err := c.u32("CPU count")
	if err != nil {
		return err
	}
	if ncpu > maxCPU {
		return c.errAt(c.off-4, parse.ErrBadField, "CPU count: want at most %d, got %d", maxCPU, ncpu)
	}
	r.meta.NCPU, r.ncpu = int(ncpu), int(ncpu)
	c.section = "options"
	start := c.off
	kind, err := c.bytes(10, "options or flyrecord keyword")
	if err != nil {
		return err
	}
	if string(kind) == "options  \x00" {
		for {
			id, err := c.u16("option id")
			if err != nil {
				return err
			}
			if id == optDone {
				break
			}
			size, err := c.u32("option size")
			if err != nil {
				return err
			}
			at := c.off
			data, err := c.bytes(int64(size), "option data")
			if err != nil {
				return err
			}
			if err := r.option(c, at, id, data); err != nil {
				return err
			}
		}
		start = c.off
		if kind, err = c.bytes(10, "flyrecord keyword"); err != nil {
			return err
		}
	}
	switch string(kind) {
	case "flyrecord\x00":
	case "latency  \x00":
		return c.errAt(start, parse.ErrUnknownEvent, "want flyrecord data, got a latency-tracer text trace (not supported)")
	default:
		return c.errAt(start, parse.ErrBadField, "want \"options  \" or \"flyrecord\", got %q", string(kind))
	}
	top := &buffer{secOff: -1, clock: r.clock, stats: r.statFor("")}
	if err := r.cpuTable(c, top, int(ncpu)); err != nil {
		return err
	}
	top.clock = r.tableClock(c, top.clock)
	r.buffers = append([]*buffer{top}, r.buffers...)
	// Instances: a BUFFER option's offset points at the instance's own
	// "flyrecord" keyword and CPU table.
	for _, b := range r.buffers[1:] {
		bc := r.cursor(b.secOff, r.size, "buffer "+strconv.Quote(b.name))
		if err := bc.expect("flyrecord\x00", "flyrecord keyword"); err != nil {
			return err
		}
		if err := r.cpuTable(bc, b, int(ncpu)); err != nil {
			return err
		}
		b.clock = r.tableClock(bc, b.clock)
		b.secOff = -1
	}
	return nil
}

// cpuTable reads v6's n (offset, size) pairs.
func (r *Reader) cpuTable(c *cursor, b *buffer, n int) error {
	for cpu := 0; cpu < n; cpu++ {
		off, err := c.u64("CPU data offset")
		if err != nil {
			return err
		}
		size, err := c.u64("CPU data size")
		if err != nil {
			return err
		}
		if off > 1<<62 || size > 1<<62 {
			return c.errAt(c.off-16, parse.ErrBadField, "CPU %d data: want an offset and size inside a file, got %d bytes at %d", cpu, size, off)
		}
		b.cpus = append(b.cpus, cpuData{cpu: cpu, off: int64(off), size: int64(size)})
	}
	return nil
}

// tableClock reads what trace-cmd 2.x and later write after a v6 CPU
// table: a 64-bit size and the trace_clock file ("[local] global ..."),
// and returns the bracketed clock; files without it keep def.
func (r *Reader) tableClock(c *cursor, def string) string {
	save := c.off
	n, err := c.u64("trace clock size")
	if err != nil || n == 0 || n > 4096 {
		c.off = save
		return def
	}
	b, err := c.bytes(int64(n), "trace clock")
	if err != nil {
		c.off = save
		return def
	}
	s := string(b)
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return def
}

// headerV7 reads the compression header and follows the options sections.
func (r *Reader) headerV7(c *cursor) error {
	c.section = "compression header"
	name, err := c.cstring("compression name")
	if err != nil {
		return err
	}
	if _, err := c.cstring("compression version"); err != nil {
		return err
	}
	switch name {
	case "none", "zstd", "zlib":
		r.compression = name
	default:
		return c.errAt(c.off, parse.ErrBadField, "compression: want none, zstd or zlib, got %q", clipS(name))
	}
	next, err := c.u64("first options section offset")
	if err != nil {
		return err
	}
	offs := map[int]int64{}
	for n := 0; next != 0; n++ {
		if n == maxSections {
			return c.errf(parse.ErrBadField, "options: want at most %d options sections, the chain goes on", maxSections)
		}
		sc, err := r.section(int64(next), secOptions, "options")
		if err != nil {
			return err
		}
		next = 0
		for sc.off < sc.end {
			id, err := sc.u16("option id")
			if err != nil {
				return err
			}
			size, err := sc.u32("option size")
			if err != nil {
				return err
			}
			at := sc.off
			data, err := sc.bytes(int64(size), "option data")
			if err != nil {
				return err
			}
			if id == optDone {
				if len(data) != 8 {
					return sc.errAt(at, parse.ErrBadField, "DONE option: want 8 bytes, got %d", len(data))
				}
				next = r.order.Uint64(data)
				break
			}
			switch id {
			case optHeaderInfo, optFtraceEvents, optEventFormats, optCmdlines:
				if len(data) != 8 {
					return sc.errAt(at, parse.ErrBadField, "option %d: want an 8-byte section offset, got %d bytes", id, len(data))
				}
				offs[int(id)] = int64(r.order.Uint64(data))
				continue
			}
			if err := r.option(sc, at, id, data); err != nil {
				return err
			}
		}
	}
	type part struct {
		opt, sec int
		name     string
		read     func(*cursor) error
	}
	for _, p := range []part{
		{optHeaderInfo, secHeaderInfo, "header info", r.headerInfo},
		{optFtraceEvents, secFtraceEvents, "ftrace event formats", r.ftraceEvents},
		{optEventFormats, secEventFormats, "event formats", r.eventFormats},
		{optCmdlines, secCmdlines, "saved cmdlines", r.cmdlines},
	} {
		off, ok := offs[p.opt]
		if !ok {
			if p.opt == optCmdlines || p.opt == optFtraceEvents {
				continue
			}
			return c.errAt(0, parse.ErrTruncated, "options: want a %s section (option %d), found none", p.name, p.opt)
		}
		sc, err := r.section(off, p.sec, p.name)
		if err != nil {
			return err
		}
		if err := p.read(sc); err != nil {
			return err
		}
	}
	for _, b := range r.buffers {
		if len(b.cpus) == 0 {
			continue
		}
		hc := r.cursor(b.secOff, r.size, "buffer "+strconv.Quote(b.name))
		id, err := hc.u16("section id")
		if err != nil {
			return err
		}
		flags, err := hc.u16("section flags")
		if err != nil {
			return err
		}
		if id != secFlyrecord {
			return hc.errAt(b.secOff, parse.ErrBadField, "want a flyrecord section (id %d), got id %d", secFlyrecord, id)
		}
		b.chunked = flags&1 != 0
		if b.chunked && r.compression == "none" {
			return hc.errAt(b.secOff, parse.ErrBadField, "flyrecord section is flagged compressed, but the file names no compression")
		}
	}
	return nil
}

// section opens the v7 section at off and checks its id; a compressed
// section is decompressed into memory.
func (r *Reader) section(off int64, want int, name string) (*cursor, error) {
	c := r.cursor(off, r.size, name)
	if off < 0 || off >= r.size {
		return nil, c.errAt(r.size, parse.ErrTruncated, "want a %s section at offset %d, the file ends at %d", name, off, r.size)
	}
	id, err := c.u16("section id")
	if err != nil {
		return nil, err
	}
	flags, err := c.u16("section flags")
	if err != nil {
		return nil, err
	}
	if _, err := c.u32("section description"); err != nil {
		return nil, err
	}
	size, err := c.u64("section size")
	if err != nil {
		return nil, err
	}
	if int(id) != want {
		return nil, c.errAt(off, parse.ErrBadField, "want section id %d (%s), got %d", want, name, id)
	}
	if size > uint64(r.size-c.off) {
		return nil, c.errAt(off, parse.ErrTruncated, "section size: want %d bytes, the file has %d after the header", size, r.size-c.off)
	}
	c.end = c.off + int64(size)
	if flags&1 == 0 {
		return c, nil
	}
	if r.compression == "none" {
		return nil, c.errAt(off, parse.ErrBadField, "section is flagged compressed, but the file names no compression")
	}
	csize, err := c.u32("compressed size")
	if err != nil {
		return nil, err
	}
	usize, err := c.u32("uncompressed size")
	if err != nil {
		return nil, err
	}
	at := c.off
	data, err := c.bytes(int64(csize), "compressed data")
	if err != nil {
		return nil, err
	}
	out, err := r.inflate(data, int64(usize), nil)
	if err != nil {
		return nil, c.errAt(at, parse.ErrBadField, "%s data: %v", r.compression, err)
	}
	return &cursor{r: r, ra: bytes.NewReader(out), end: int64(len(out)), section: name, inflated: true, base: off}, nil
}

// headerInfo reads header_page and header_event.
func (r *Reader) headerInfo(c *cursor) error {
	if err := c.expect("header_page\x00", "header_page keyword"); err != nil {
		return err
	}
	n, err := c.u64("header_page size")
	if err != nil {
		return err
	}
	at := c.off
	b, err := c.bytes(int64(n), "header_page")
	if err != nil {
		return err
	}
	if err := r.pageLayout(c, at, b); err != nil {
		return err
	}
	if err := c.expect("header_event\x00", "header_event keyword"); err != nil {
		return err
	}
	if n, err = c.u64("header_event size"); err != nil {
		return err
	}
	at = c.off
	if b, err = c.bytes(int64(n), "header_event"); err != nil {
		return err
	}
	return r.eventHeader(c, at, b)
}

// pageLayout takes the ring-buffer page header's fields from header_page.
func (r *Reader) pageLayout(c *cursor, at int64, b []byte) error {
	ts, commit, data := -1, -1, -1
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "field:") {
			continue
		}
		f, msg := parseField(line)
		if msg != "" {
			return c.errAt(at, parse.ErrBadField, "header_page line %d: %s", i+1, msg)
		}
		switch f.name {
		case "timestamp":
			if f.size != 8 {
				return c.errAt(at, parse.ErrBadField, "header_page: timestamp: want size 8, got %d", f.size)
			}
			ts = f.off
		case "commit":
			if f.size != 4 && f.size != 8 {
				return c.errAt(at, parse.ErrBadField, "header_page: commit: want size 4 or 8, got %d", f.size)
			}
			commit = f.off
			r.commitSize = f.size
		case "data":
			data = f.off
		}
	}
	if ts < 0 || commit < 0 || data < 0 {
		return c.errAt(at, parse.ErrBadField, "header_page: want fields timestamp, commit and data, got %q", clipS(string(b)))
	}
	if ts+8 > data || commit+r.commitSize > data || data >= r.pageSize {
		return c.errAt(at, parse.ErrBadField, "header_page: want timestamp and commit before data and data inside the %d-byte page, got offsets %d, %d, %d", r.pageSize, ts, commit, data)
	}
	r.tsOff, r.commitOff, r.dataOff = ts, commit, data
	return nil
}

// eventHeader checks that header_event describes the ring buffer's
// compressed event header this package decodes: a 32-bit word of type_len
// (5 bits) and time_delta (27 bits), then array, with padding, time_extend
// and time_stamp as types 29, 30 and 31 (include/linux/ring_buffer.h).
func (r *Reader) eventHeader(c *cursor, at int64, b []byte) error {
	s := string(b)
	norm := strings.Join(strings.Fields(s), " ")
	for _, want := range []string{"type_len : 5 bits", "time_delta : 27 bits", "padding : type == 29", "time_extend : type == 30"} {
		if !strings.Contains(norm, want) {
			return c.errAt(at, parse.ErrBadField, "header_event: want %q, got %q", want, clipS(norm))
		}
	}
	return nil
}

// ftraceEvents reads the ftrace system's format files (print, for markers).
func (r *Reader) ftraceEvents(c *cursor) error {
	n, err := c.u32("ftrace format count")
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if err := r.formatFile(c, "ftrace"); err != nil {
			return err
		}
	}
	return nil
}

// eventFormats reads the event systems and their format files.
func (r *Reader) eventFormats(c *cursor) error {
	nsys, err := c.u32("system count")
	if err != nil {
		return err
	}
	for i := uint32(0); i < nsys; i++ {
		sys, err := c.cstring("system name")
		if err != nil {
			return err
		}
		n, err := c.u32("event count")
		if err != nil {
			return err
		}
		for j := uint32(0); j < n; j++ {
			if err := r.formatFile(c, sys); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *Reader) formatFile(c *cursor, sys string) error {
	size, err := c.u64("format file size")
	if err != nil {
		return err
	}
	at := c.off
	b, err := c.bytes(int64(size), "format file")
	if err != nil {
		return err
	}
	f, line, msg := parseFormat(b, func(name string) bool {
		_, ok := wanted[name]
		return ok || !r.common.ok
	})
	if msg != "" {
		return c.errAt(at, parse.ErrBadField, "%s format file line %d: %s", sys, line, msg)
	}
	f.system = sys
	return r.addFormat(c, at, f)
}

// cmdlines reads saved_cmdlines: "PID COMM" lines.
func (r *Reader) cmdlines(c *cursor) error {
	n, err := c.u64("cmdlines size")
	if err != nil {
		return err
	}
	at := c.off
	b, err := c.bytes(int64(n), "saved cmdlines")
	if err != nil {
		return err
	}
	for i, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimRight(line, "\x00\r")
		if len(line) == 0 {
			continue
		}
		sp := bytes.IndexByte(line, ' ')
		pid, err := strconv.ParseInt(string(line[:max(sp, 0)]), 10, 32)
		if sp < 0 || err != nil || pid < 0 {
			return c.errAt(at, parse.ErrBadField, "saved cmdlines line %d: want PID COMM, got %q", i+1, clipS(string(line)))
		}
		r.register(timeline.TID(pid), r.strs.ID(line[sp+1:]))
	}
	return nil
}

// option interprets one option; at is its data's position for errors.
func (r *Reader) option(c *cursor, at int64, id uint16, data []byte) error {
	str := func() string { return string(bytes.TrimRight(data, "\x00\n")) }
	switch id {
	case optBuffer:
		return r.bufferOption(c, at, data)
	case optCPUStat:
		return r.cpuStatOption(c, at, str())
	case optTraceClock:
		// "[local] global counter ...": the selected clock is bracketed.
		s := str()
		if i := strings.IndexByte(s, '['); i >= 0 {
			if j := strings.IndexByte(s[i:], ']'); j > 0 {
				r.clock = s[i+1 : i+j]
			}
		}
	case optUname:
		// "sysname nodename release machine" (trace-cmd's uname option).
		if f := strings.Fields(str()); len(f) >= 3 {
			r.meta.Kernel = f[2]
		}
	case optOffset:
		v, err := strconv.ParseInt(strings.TrimSpace(str()), 10, 64)
		if err != nil {
			return c.errAt(at, parse.ErrBadField, "OFFSET option: want a decimal number of ns, got %q", clipS(str()))
		}
		r.tsOffset = v
	case optCPUCount:
		if len(data) != 4 {
			return c.errAt(at, parse.ErrBadField, "CPUCOUNT option: want 4 bytes, got %d", len(data))
		}
		n := r.order.Uint32(data)
		if n > maxCPU {
			return c.errAt(at, parse.ErrBadField, "CPUCOUNT option: want at most %d CPUs, got %d", maxCPU, n)
		}
		r.meta.NCPU, r.ncpu = int(n), int(n)
	case optTSC2NSec:
		if len(data) != 16 {
			return c.errAt(at, parse.ErrBadField, "TSC2NSEC option: want 16 bytes, got %d", len(data))
		}
		r.tscMult = r.order.Uint32(data)
		r.tscShift = r.order.Uint32(data[4:])
		r.tscOffset = r.order.Uint64(data[8:])
		if r.tscShift > 63 {
			return c.errAt(at, parse.ErrBadField, "TSC2NSEC option: want a shift below 64, got %d", r.tscShift)
		}
	}
	return nil
}

// bufferOption reads a BUFFER option: v7 has the section offset, name,
// clock, page size and the CPU table; v6 the offset and the name.
func (r *Reader) bufferOption(c *cursor, at int64, data []byte) error {
	oc := &cursor{r: r, ra: bytes.NewReader(data), end: int64(len(data)), section: "BUFFER option", inflated: true, base: at}
	if !c.inflated {
		oc.inflated = false
		oc.ra = &offsetReaderAt{ra: oc.ra, base: at}
		oc.off, oc.end = at, at+int64(len(data))
	}
	off, err := oc.u64("buffer offset")
	if err != nil {
		return err
	}
	name, err := oc.cstring("buffer name")
	if err != nil {
		return err
	}
	b := &buffer{name: name, secOff: int64(off), clock: r.clock, stats: r.statFor(name)}
	r.buffers = append(r.buffers, b)
	if r.version == 6 {
		return nil
	}
	if b.clock, err = oc.cstring("buffer clock"); err != nil {
		return err
	}
	ps, err := oc.u32("buffer page size")
	if err != nil {
		return err
	}
	if int(ps) != r.pageSize {
		return oc.errf(parse.ErrBadField, "buffer page size: want the file's %d, got %d (sub-buffer sizes are not supported)", r.pageSize, ps)
	}
	n, err := oc.u32("buffer CPU count")
	if err != nil {
		return err
	}
	if n > maxCPU {
		return oc.errf(parse.ErrBadField, "buffer CPU count: want at most %d, got %d", maxCPU, n)
	}
	for i := uint32(0); i < n; i++ {
		cpu, err := oc.u32("CPU id")
		if err != nil {
			return err
		}
		o, err := oc.u64("CPU data offset")
		if err != nil {
			return err
		}
		s, err := oc.u64("CPU data size")
		if err != nil {
			return err
		}
		if cpu >= maxCPU {
			return oc.errf(parse.ErrBadField, "CPU id: want below %d, got %d", maxCPU, cpu)
		}
		if o > 1<<62 || s > 1<<62 {
			return oc.errf(parse.ErrBadField, "CPU %d data: want an offset and size inside a file, got %d bytes at %d", cpu, s, o)
		}
		b.cpus = append(b.cpus, cpuData{cpu: int(cpu), off: int64(o), size: int64(s)})
	}
	return nil
}

// statFor returns the CPUSTAT table of the named buffer: trace-cmd writes a
// "Buffer: NAME" CPUSTAT before an instance's per-CPU stats.
func (r *Reader) statFor(name string) map[int]cpuStat {
	if r.stats[name] == nil {
		r.stats[name] = map[int]cpuStat{}
	}
	return r.stats[name]
}

// cpuStatOption reads one per_cpu/cpuN/stats text ("CPU: 0\nentries: 5\n...").
func (r *Reader) cpuStatOption(c *cursor, at int64, s string) error {
	s = strings.TrimSpace(s)
	if name, ok := strings.CutPrefix(s, "Buffer:"); ok {
		r.statBuf = strings.TrimSpace(name)
		return nil
	}
	st := cpuStat{entries: -1, overrun: -1, commitOverrun: -1, dropped: -1, read: -1}
	cpu := -1
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue // "oldest event ts:  578.296278"
		}
		switch strings.TrimSpace(k) {
		case "CPU":
			cpu = int(n)
		case "entries":
			st.entries = n
		case "overrun":
			st.overrun = n
		case "commit overrun":
			st.commitOverrun = n
		case "dropped events":
			st.dropped = n
		case "read events":
			st.read = n
		}
	}
	if cpu < 0 || cpu >= maxCPU {
		return c.errAt(at, parse.ErrBadField, "CPUSTAT option: want a \"CPU: N\" line, got %q", clipS(s))
	}
	r.statFor(r.statBuf)[cpu] = st
	return nil
}

// offsetReaderAt shifts a ReaderAt so that its byte 0 reads at base.
type offsetReaderAt struct {
	ra interface {
		ReadAt([]byte, int64) (int, error)
	}
	base int64
}

func (o *offsetReaderAt) ReadAt(p []byte, off int64) (int, error) {
	return o.ra.ReadAt(p, off-o.base)
}
