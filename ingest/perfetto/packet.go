package perfetto

import (
	"bytes"
	"errors"
	"io"
	"math/bits"
	"strconv"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// One TracePacket: its fields scanned, then its messages decoded in file
// order, with its sequence's state and compressed packets.

// packetFields holds the fields of one TracePacket that are decoded after
// the whole packet was scanned (their meaning depends on other fields).
type packetFields struct {
	ftrace, tree, sysInfo, cpuInfo, stats, traceStats, snapshot, service, compressed, zstd, attrs, mach []byte
	hasTimestamp, hasSeq, hasMachine                                                                    bool
	timestamp                                                                                           uint64
	seq, flags, machine                                                                                 uint32
	dropped, cleared, first                                                                             bool
}

// decodePacket decodes one TracePacket. Events of an ftrace bundle go to
// r.out.
func (r *Reader) decodePacket(b []byte, off int64) *fieldError {
	var p packetFields
	if fe := scanPacket(b, &p); fe != nil {
		return fe
	}
	return r.applyPacket(&p, off, nil)
}

// scanPacket reads the fields of one TracePacket into p (which it sets
// whole), keeping the messages to decode once the whole packet was read.
// It needs nothing from the packets before.
func scanPacket(b []byte, p *packetFields) *fieldError {
	*p = packetFields{}
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		var dst *[]byte
		var name string
		switch f.num {
		case fPacketFtraceEvents:
			dst, name = &p.ftrace, "ftrace_events"
		case fPacketProcessTree:
			dst, name = &p.tree, "process_tree"
		case fPacketSystemInfo:
			dst, name = &p.sysInfo, "system_info"
		case fPacketCPUInfo:
			dst, name = &p.cpuInfo, "cpu_info"
		case fPacketFtraceStats:
			dst, name = &p.stats, "ftrace_stats"
		case fPacketTraceStats:
			dst, name = &p.traceStats, "trace_stats"
		case fPacketClockSnapshot:
			dst, name = &p.snapshot, "clock_snapshot"
		case fPacketServiceEvent:
			dst, name = &p.service, "service_event"
		case fPacketCompressed:
			dst, name = &p.compressed, "compressed_packets"
		case fPacketZstdCompressed:
			dst, name = &p.zstd, "zstd_compressed_packets"
		case fPacketTaskAttrs:
			dst, name = &p.attrs, "schedlens_task_attrs"
		case fPacketMachine:
			dst, name = &p.mach, "schedlens_machine"
		case fPacketInternedData:
			// Interned data carries kernel symbols and track-event strings;
			// ftrace bundles reference none of it (compact_sched has its own
			// per-bundle intern table), so it is checked and skipped.
			if fe := f.want(protowire.BytesType, "interned_data"); fe != nil {
				return fe
			}
			continue
		case fPacketTimestamp, fPacketSequenceID, fPacketSequenceFlags, fPacketIncrementalCleared,
			fPacketPreviousDropped, fPacketFirstOnSequence, fPacketMachineID:
			if fe := f.want(protowire.VarintType, packetFieldName(f.num)); fe != nil {
				return fe
			}
			switch f.num {
			case fPacketTimestamp:
				p.timestamp, p.hasTimestamp = f.v, true
			case fPacketSequenceID:
				p.seq, p.hasSeq = uint32(f.v), true
			case fPacketSequenceFlags:
				p.flags = uint32(f.v)
			case fPacketIncrementalCleared:
				p.cleared = f.v != 0
			case fPacketPreviousDropped:
				p.dropped = f.v != 0
			case fPacketFirstOnSequence:
				p.first = f.v != 0
			case fPacketMachineID:
				p.machine, p.hasMachine = uint32(f.v), true
			}
			continue
		default:
			continue
		}
		if fe := f.want(protowire.BytesType, name); fe != nil {
			return fe
		}
		*dst = f.b
	}
	return nil
}

// applyPacket decodes the messages of a scanned TracePacket, in file order.
// pre is its ftrace bundle as a worker decoded it (parallel.go), or nil:
// decoded here.
func (r *Reader) applyPacket(p *packetFields, off int64, pre *decodedBundle) *fieldError {
	seq := r.sequence(p)

	// Data of another machine (a remote machine of a multi-machine trace)
	// is counted, not mixed with the host's CPUs.
	if p.ftrace != nil || p.tree != nil || p.sysInfo != nil || p.cpuInfo != nil || p.stats != nil || p.traceStats != nil || p.attrs != nil || p.mach != nil {
		if !r.hostKnown {
			r.host, r.hostKnown = p.machine, true
		} else if p.machine != r.host {
			r.meta.Unknown["packets_of_other_machines"]++
			return nil
		}
	}

	if p.compressed != nil || p.zstd != nil {
		if r.inNested {
			return badField("compressed packets nested inside compressed packets")
		}
		if p.compressed != nil {
			if fe := r.inflate(p.compressed, false); fe != nil {
				return fe.in("compressed_packets")
			}
		} else if fe := r.inflate(p.zstd, true); fe != nil {
			return fe.in("zstd_compressed_packets")
		}
		r.nestedOff = off
		r.inNested = true
		r.packetBase = "TracePacket.compressed_packets.TracePacket"
		return nil
	}
	if p.snapshot != nil {
		if fe := r.decodeClockSnapshot(p.snapshot); fe != nil {
			return fe.in("clock_snapshot")
		}
	}
	if p.service != nil {
		if fe := r.decodeServiceEvent(p.service, p); fe != nil {
			return fe.in("service_event")
		}
	}
	if p.sysInfo != nil {
		if fe := r.decodeSystemInfo(p.sysInfo); fe != nil {
			return fe.in("system_info")
		}
	}
	if p.cpuInfo != nil {
		if fe := r.decodeCPUInfo(p.cpuInfo); fe != nil {
			return fe.in("cpu_info")
		}
	}
	if p.tree != nil {
		if fe := r.decodeProcessTree(p.tree); fe != nil {
			return fe.in("process_tree")
		}
	}
	if p.stats != nil {
		if fe := r.decodeFtraceStats(p.stats); fe != nil {
			return fe.in("ftrace_stats")
		}
	}
	if p.traceStats != nil {
		if fe := r.decodeTraceStats(p.traceStats); fe != nil {
			return fe.in("trace_stats")
		}
	}
	if p.mach != nil {
		if fe := r.decodeMachine(p.mach); fe != nil {
			return fe.in("schedlens_machine")
		}
	}
	if p.attrs != nil {
		if fe := r.decodeTaskAttrs(p.attrs); fe != nil {
			return fe.in("schedlens_task_attrs")
		}
	}
	if p.ftrace != nil {
		var fe *fieldError
		if pre != nil && pre.layout == r.layout {
			fe = r.applyBundle(pre, seq)
		} else {
			// Decoded with a layout a later SystemInfo changed: again.
			fe = r.decodeBundle(p.ftrace, seq)
		}
		if fe != nil {
			return fe.in("ftrace_events")
		}
	}
	return nil
}

func packetFieldName(n protowire.Number) string {
	switch n {
	case fPacketTimestamp:
		return "timestamp"
	case fPacketSequenceID:
		return "trusted_packet_sequence_id"
	case fPacketSequenceFlags:
		return "sequence_flags"
	case fPacketIncrementalCleared:
		return "incremental_state_cleared"
	case fPacketPreviousDropped:
		return "previous_packet_dropped"
	case fPacketFirstOnSequence:
		return "first_packet_on_sequence"
	case fPacketMachineID:
		return "machine_id"
	}
	return "field " + strconv.Itoa(int(n))
}

// sequence updates the incremental state of the packet's sequence and
// returns it.
//
// Perfetto's rule: a sequence's incremental state (interned data, packet
// defaults) is valid from a packet flagged SEQ_INCREMENTAL_STATE_CLEARED (or
// the older incremental_state_cleared) until a packet of the sequence is
// lost (previous_packet_dropped). A packet flagged SEQ_NEEDS_INCREMENTAL_STATE
// on a sequence whose state is not valid cannot be resolved; trace_processor
// drops it. FtraceEventBundles never depend on that state, so they are
// still decoded; such packets are counted in Meta.Warnings at the end.
// A dropped packet on a sequence means events of the CPUs that sequence
// carried may be missing: those CPUs are flagged as having lost events.
func (r *Reader) sequence(p *packetFields) *seqState {
	s := r.seqs[p.seq]
	if s == nil {
		s = &seqState{}
		r.seqs[p.seq] = s
	}
	if p.dropped {
		s.valid = false
		for w, mask := range s.cpus {
			for mask != 0 {
				i := w*64 + bits.TrailingZeros64(mask)
				mask &= mask - 1
				r.markLost(i, timeline.NoTime, -1)
			}
		}
	}
	if p.flags&seqIncrementalStateCleared != 0 || p.cleared {
		s.valid = true
	}
	if p.flags&seqNeedsIncrementalState != 0 && !s.valid {
		s.missing++
	}
	return s
}

// inflate decompresses a compressed_packets payload into r.nested: zlib
// (what traced writes, zlib's deflateInit) or raw deflate, or zstd.
func (r *Reader) inflate(b []byte, isZstd bool) *fieldError {
	r.nestedBuf.Reset()
	var src io.Reader
	if isZstd {
		if r.zstdDec == nil {
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxInflatedSize))
			if err != nil {
				return badField("zstd: %v", err)
			}
			r.zstdDec = d
		}
		if err := r.zstdDec.Reset(bytes.NewReader(b)); err != nil {
			return badField("zstd: %v", err)
		}
		src = r.zstdDec
	} else if len(b) >= 2 && b[0]&0x0f == 8 && (uint16(b[0])<<8|uint16(b[1]))%31 == 0 {
		zr, err := zlib.NewReader(bytes.NewReader(b))
		if err != nil {
			return badField("zlib: %v", err)
		}
		defer zr.Close()
		src = zr
	} else {
		fr := flate.NewReader(bytes.NewReader(b))
		defer fr.Close()
		src = fr
	}
	// Perfetto keeps a compressed_packets field under 512 KiB and real
	// trace data compresses far less than 256:1; the cap keeps a
	// decompression bomb from costing more than that ratio.
	limit := min(MaxInflatedSize, max(1<<20, 256*int64(len(b))))
	n, err := r.nestedBuf.ReadFrom(io.LimitReader(src, limit+1))
	if err != nil {
		cause := parse.ErrBadField
		if errors.Is(err, io.ErrUnexpectedEOF) {
			cause = parse.ErrTruncated
		}
		return &fieldError{msg: "decompressing: " + err.Error(), err: cause}
	}
	if n > limit {
		return badField("decompressed size exceeds the %d byte limit (256 times the compressed size, at least 1 MiB)", limit)
	}
	r.nested = r.nestedBuf.Bytes()
	r.nestedPos = 0
	return nil
}
