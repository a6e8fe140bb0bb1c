// Package perfdata reads perf.data, the file `perf record` and `perf sched
// record` write, in file mode and pipe mode, and hands its scheduler
// tracepoints out as timeline.Events through a parse.Reader: the same
// events, with the same fields, as package ingest/perf gives for the
// `perf script` text of the same file, but with nanosecond times, the
// thread group of every sample, and what the header says (CPU count,
// kernel release, CPU topology, recording command, clock). Meta.Format is
// "perf.data" or "perf.data (pipe)".
//
// It imports timeline, topology and ingest/parse (and klauspost/compress
// for PERF_RECORD_COMPRESSED); it must not import ingest, metrics or the
// other format packages.
//
// # Layout
//
// Constants and layouts are those of include/uapi/linux/perf_event.h
// (perf_event_attr, the record types, the PERF_RECORD_SAMPLE field order,
// struct sample_id) and of tools/perf/util/header.[ch] and
// tools/lib/perf/include/perf/event.h (perf_file_header, the feature bits
// and sections, the user record types 64 and up). A file is little-endian;
// a big-endian one is refused.
//
//   - header.go: the file header, the attrs section and its ids, the
//     feature table.
//   - features.go: NRCPUS, OSRELEASE, CMDLINE, CLOCKID, EVENT_DESC, and
//     CPU_TOPOLOGY with CACHE and NUMA_TOPOLOGY into a topology.Topology.
//   - tracing.go, format.go: HEADER_TRACING_DATA and the event format files
//     in it: field offsets, sizes and signedness, and sched_switch's
//     __print_flags table for prev_state.
//   - events.go: which tracepoints become which timeline.Kind, the fields
//     each needs (checked against the format, a positioned error if one is
//     missing), and the payload decoding.
//   - records.go: finding a record's attribute by its sample id, decoding
//     PERF_RECORD_SAMPLE by sample_type and the sample_id trailer of other
//     records, COMM/FORK (perf's thread names), LOST/LOST_SAMPLES; the
//     common sample (fixed layout, known event) by a fast path that
//     decodes the same entry.
//   - queue.go: perf's FINISHED_ROUND ordering, as ordered_events does it,
//     with one FIFO per CPU and a lazy k-way merge; FIFOs of fixed blocks
//     and payloads in fixed chunks, reused, so that its memory follows
//     what two rounds hold, whatever the file's size. A sample of an
//     event the reader does not interpret (sched_stat_runtime: half of
//     what `perf sched record` writes) rides on its CPU's next record
//     rather than taking a place in the merge (queue.go, uent).
//   - comms.go: the payloads' comms interned through a per-pid cache,
//     and perf's thread names (COMM, FORK) in a table by tid.
//   - estimate.go: the event count the data section may hold, with which
//     ingest sizes the Builder.
//   - zstream.go: PERF_RECORD_COMPRESSED payloads as one zstd stream.
//   - mmap_linux.go: a file's data section mapped, its pages made present
//     ahead of the reader and dropped behind it; a fault is an error
//     (mmap_other.go: read as a stream elsewhere).
//   - reader.go, finish.go: the Reader, pipe-mode header records, Meta.
//
// # Errors
//
// Malformed input is a *parse.ParseError with the byte offset (of the
// record, or of the field in a header section; of the COMPRESSED record for
// records inside one), the record or section name, and what was expected.
// A file-mode perf.data cut short loses its feature sections (they follow
// the data), so it is an ErrTruncated error before any event. In pipe mode
// a cut inside a record is ErrTruncated after the events before it; under
// Options.Lenient those events are handed out with a warning. An error
// while reading ahead to the end of a round is returned before the events
// queued in that round.
package perfdata
