package perfdata

import (
	"bytes"

	"github.com/schedlens/schedlens/ingest/parse"
)

// tracingMagic opens the tracing data (HEADER_TRACING_DATA): the bytes
// 0x17 0x08 0x44 and "tracing" (tracing_data_header in
// tools/perf/util/trace-event-info.c).
var tracingMagic = []byte("\x17\x08\x44tracing")

// tracingData is what the tracing data section gives: the event formats by
// tracepoint ID and the page size.
type tracingData struct {
	version  string
	longSize int
	pageSize uint32
	formats  map[uint64]*eventFormat
}

// parseTracingData reads the tracing data, laid out as
// tools/perf/util/trace-event-info.c writes it: magic, version string,
// endianness byte, long size, page size, "header_page" and "header_event"
// with their u64 sizes, the ftrace formats (u32 count, u64 size + text
// each), the event formats by system (u32 count of systems; per system a
// NUL-terminated name, a u32 count, u64 size + text each), kallsyms (u32
// size), printk formats (u32 size) and, from version 0.6, saved cmdlines
// (u64 size). Everything after the event formats is skipped.
func parseTracingData(b []byte, base int64, file string) (*tracingData, *parse.ParseError) {
	c := &cursor{b: b, base: base, sec: "HEADER_TRACING_DATA", name: file}
	td := &tracingData{formats: map[uint64]*eventFormat{}}
	magic := c.bytes(len(tracingMagic), "magic")
	if c.err == nil && !bytes.Equal(magic, tracingMagic) {
		c.pos = 0
		c.fail(parse.ErrBadField, "want the magic \\x17\\x08\\x44tracing, got %q", magic)
	}
	td.version = c.cstr("version")
	endian := c.bytes(1, "endianness")
	if c.err == nil && endian[0] != 0 {
		c.pos--
		c.fail(parse.ErrBadField, "big-endian tracing data is not supported")
	}
	ls := c.bytes(1, "long size")
	if c.err == nil {
		td.longSize = int(ls[0])
	}
	td.pageSize = c.u32("page size")
	for _, name := range []string{"header_page", "header_event"} {
		at := c.pos
		got := c.cstr(name + " tag")
		if c.err == nil && got != name {
			c.pos = at
			c.fail(parse.ErrBadField, "want %q, got %q", name, clip(got))
		}
		c.bytes(c.size(name), name)
	}
	n := c.u32("ftrace format count")
	for i := uint32(0); i < n && c.err == nil; i++ {
		c.bytes(c.size("ftrace format"), "ftrace format")
	}
	nsys := c.u32("event system count")
	for i := uint32(0); i < nsys && c.err == nil; i++ {
		sys := c.cstr("event system name")
		nev := c.u32("event count of " + sys)
		for j := uint32(0); j < nev && c.err == nil; j++ {
			sz := c.size("event format of " + sys)
			at := c.off()
			text := c.bytes(sz, "event format of "+sys)
			if c.err != nil {
				break
			}
			f, perr := parseFormat(sys, text, at, file)
			if perr != nil {
				return nil, perr
			}
			td.formats[f.id] = f
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	return td, nil
}
