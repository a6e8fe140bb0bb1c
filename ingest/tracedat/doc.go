// Package tracedat reads trace-cmd's binary trace.dat files, versions 6
// and 7 (trace-cmd.dat.v6(5), trace-cmd.dat.v7(5)), into the same
// timeline.Events the ftrace reader makes of their `trace-cmd report` text,
// with nanosecond stamps, the kernel's prev_state letters and each event's
// context. Files: header.go (initial header, v6 header, v7 sections and
// options), format.go (format files), events.go (decoding the events this
// tool uses, by offsets from the formats), stream.go (one CPU's ring-buffer
// pages), reader.go (the merge across CPUs), coverage.go (the window proof
// from CPUSTAT and missed-event pages), inflate.go (zstd/zlib).
//
// Errors are *parse.ParseError with the byte offset (for compressed data,
// the section's offset and the byte inside it), the section and what was
// expected. Under parse.Options.Lenient a damaged page is skipped.
//
// It imports timeline and ingest/parse only.
package tracedat
