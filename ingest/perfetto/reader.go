package perfetto

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Size limits. A TracePacket written by traced is at most a few MiB
// (compressed_packets are kept under 512 KiB); the limits only keep a
// corrupt length from costing more than the input itself.
const (
	// MaxPacketSize is the largest TracePacket the reader accepts.
	MaxPacketSize = 64 << 20
	// MaxInflatedSize is the largest decompressed compressed_packets payload.
	MaxInflatedSize = 64 << 20
	// MaxCPU is the highest CPU number a bundle may name.
	MaxCPU = topology.MaxCPUs - 1 // the one limit
	// readChunk is how much of a packet body is read (and allocated) at a
	// time, so that a length past the end of the input costs at most this
	// much more than the input.
	readChunk = 1 << 20
)

// Process is one process of a ProcessTree snapshot
// (trace/ps/process_tree.proto, ProcessTree.Process).
type Process struct {
	PID       timeline.TID
	PPID      timeline.TID // -1 if absent
	Cmdline   []string
	IsKthread bool
}

// Reader streams the scheduler events of a Perfetto trace. It implements
// parse.Reader. Create it with NewReader.
type Reader struct {
	name    string
	lenient bool
	br      *bufio.Reader
	strs    *timeline.Strings
	meta    *parse.Meta

	off int64  // stream offset of the next unread byte
	pkt []byte // reused packet buffer

	// Packets unpacked from compressed_packets are served from nested
	// before the stream is read on.
	nested     []byte
	nestedPos  int
	nestedOff  int64 // stream offset of the compressed packet
	nestedBuf  bytes.Buffer
	zstdDec    *zstd.Decoder
	inNested   bool
	curOff     int64  // offset of the packet being decoded
	packetBase string // record prefix for errors: "TracePacket" or "TracePacket.compressed_packets.TracePacket"

	m        mergeState       // the bundle being handed out
	out      []timeline.Event // records due at EOF, handed out in order
	outPos   int
	errAfter error // returned once out is drained
	done     bool  // EOF events were produced

	cpus     []cpuState
	maxCPU   int
	lastTime timeline.Time // last event time handed out on any CPU
	seqs     map[uint32]*seqState

	layout       stateLayout
	layoutSet    bool // SystemInfo gave the layout
	switchesSeen int64
	// tiesInferred counts compact wakings put after a switch of the same
	// instant that sent the woken task to sleep (bundle.go, afterSleep).
	tiesInferred int64
	// compactSeen: a compact_sched switch was read; curFromPid counts the
	// times a plain event's pid showed a compact switch missing.
	compactSeen bool
	curFromPid  int64

	clockLocked bool
	// clockDefault: the trace names no clock (no ftrace_clock, boot as the
	// primary clock), so its timestamps are taken as boot time.
	clockDefault bool
	// What schedlens' Machine packet says: the source's clock and its
	// whole topology (which CpuInfo cannot hold); nil and "" when absent.
	machTopo     *topology.Topology
	machClock    string
	machClockSet bool
	clockOffset  int64 // added to every ftrace timestamp
	primary      uint32
	snapshot     map[uint32]uint64 // first clock snapshot: clock id -> timestamp

	host      uint32 // machine id whose data is read
	hostKnown bool

	procs          map[timeline.TID]Process
	tidComm        []timeline.CommID                // last comm the events gave each task, by tid
	tidPrio        map[timeline.TID]int16           // last prio the events gave each task, for a prev found from an event's pid
	comms          map[timeline.TID]timeline.CommID // the same for tids >= maxTIDTable
	tracingStarted timeline.Time
	unknownNames   map[uint32]string

	traceStats  bool          // a TraceStats packet was read
	serviceLoss []string      // what TraceStats counted as lost, for Meta.CoverageNote
	lateStarts  int           // CPUs whose first bundle says earlier bundles existed
	affinity    []rawAffinity // TaskAttrs records, put into Meta at the end
	groups      []rawGroup

	// parallel read (parallel.go): the packets prepared by workers, and
	// the layout they decode with
	workers   int
	pipe      *parse.Blocks[prepared, struct{}]
	layoutPub atomic.Uint32
	closed    bool // Close stopped the parallel read

	dec    bundleDecoder     // decodes bundles here (decodeBundle)
	bundle decodedBundle     // the bundle dec decoded last
	bs     *bundleScratch    // the bundle being handed out (r.m)
	refIDs []timeline.CommID // resolveRefs' ids, reused

	commCache [256]struct {
		s  string
		id timeline.CommID
	}
}

var _ parse.Reader = (*Reader)(nil)

// cpuState is what the reader tracks per CPU across bundles.
type cpuState struct {
	last    timeline.Time // time of the last event handed out, NoTime if none
	bundles int           // bundles seen on this CPU

	cur      timeline.TID // task running, from the last switch's next side
	curComm  timeline.CommID
	curPrio  int16
	curKnown bool

	pendStart  bool // BufferStart to emit before the next event
	startAt    timeline.Time
	pendLost   bool // Lost to emit before the next event
	lostStart  timeline.Time
	lostArg    int64
	lostMarked bool // a lost flag (bundle, error or dropped packet) was seen

	statsStart, statsEnd int64
	haveStart, haveEnd   bool
}

// seqState is the incremental state of one packet sequence
// (trusted_packet_sequence_id).
type seqState struct {
	valid   bool     // incremental state was cleared and nothing dropped since
	cpus    []uint64 // bitmask of CPUs whose bundles came on this sequence
	missing int64    // packets that needed incremental state the sequence lacked
}

// NewReader returns a Reader of the Perfetto trace in r. It reads nothing
// before the first call to Next.
func NewReader(r io.Reader, opts parse.Options) (*Reader, error) {
	strs := opts.Strings
	if strs == nil {
		strs = timeline.NewStrings()
	}
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < 64<<10 {
		br = bufio.NewReaderSize(r, 256<<10)
	}
	rd := &Reader{
		name:           opts.Name,
		lenient:        opts.Lenient,
		br:             br,
		strs:           strs,
		meta:           parse.NewMeta("perfetto"),
		seqs:           map[uint32]*seqState{},
		primary:        clockBoottime,
		procs:          map[timeline.TID]Process{},
		comms:          map[timeline.TID]timeline.CommID{},
		tracingStarted: timeline.NoTime,
		unknownNames:   map[uint32]string{},
		lastTime:       timeline.NoTime,
		maxCPU:         -1,
		packetBase:     "TracePacket",
		workers:        parse.WorkersFor(opts.Workers),
	}
	rd.meta.Tasks = map[timeline.TID]parse.TaskInfo{}
	rd.dec.r = rd
	rd.bs = &rd.bundle.bundleScratch
	return rd, nil
}

// Meta returns what the reader learned so far; it is complete after Next
// returned io.EOF.
func (r *Reader) Meta() *parse.Meta { return r.meta }

// Strings returns the interner resolving the events' CommIDs.
func (r *Reader) Strings() *timeline.Strings { return r.strs }

// Processes returns the processes named by the trace's ProcessTree
// snapshots, by pid; a later snapshot replaces an earlier entry.
func (r *Reader) Processes() map[timeline.TID]Process { return r.procs }

// TracingStarted returns the packet time of the tracing service's
// "tracing_started" event (TracingServiceEvent.tracing_started), or
// timeline.NoTime. trace_processor drops ftrace events before it; this
// reader does not.
func (r *Reader) TracingStarted() timeline.Time { return r.tracingStarted }

// Next fills ev with the next event. Events come bundle by bundle in file
// order; within a bundle (one CPU) in timestamp order. It returns io.EOF at
// the end and a *parse.ParseError for malformed input.
func (r *Reader) Next(ev *timeline.Event) error {
	if r.closed {
		return parse.ErrClosed
	}
	for {
		if r.m.active {
			ok, err := r.nextMerged(ev)
			if ok {
				return nil
			}
			if err != nil {
				r.done = true
				return err
			}
			continue
		}
		if r.outPos < len(r.out) {
			*ev = r.out[r.outPos]
			r.outPos++
			return nil
		}
		if r.errAfter != nil {
			err := r.errAfter
			r.errAfter = nil
			if !r.lenient {
				r.done = true
				r.out = r.out[:0]
				r.outPos = 0
				return err
			}
			r.meta.Skip(err)
			continue
		}
		if r.done {
			return io.EOF
		}
		r.out = r.out[:0]
		r.outPos = 0
		if err := r.step(); err != nil {
			if errors.Is(err, io.EOF) {
				r.finish()
				r.done = true
				continue
			}
			var fatal *fatalError
			if errors.As(err, &fatal) {
				// The framing is broken: nothing after it can be read.
				r.errAfter = fatal.err
				if r.lenient {
					r.finish()
					r.done = true
				}
				continue
			}
			r.errAfter = err
		}
	}
}

func (r *Reader) perr(off int64, record string, fe *fieldError) *parse.ParseError {
	rec := record
	if fe.path != "" {
		rec = record + "." + fe.path
	}
	return &parse.ParseError{File: r.name, Offset: off, Record: rec, Msg: fe.msg, Err: fe.err}
}

// step reads and decodes one packet. It returns io.EOF at the end of input.
func (r *Reader) step() error {
	if r.nested != nil {
		if r.nestedPos < len(r.nested) {
			return r.stepNested()
		}
		r.nested = nil
		r.inNested = false
		r.packetBase = "TracePacket"
	}
	if r.workers > 1 {
		if r.pipe == nil {
			r.startParallel(r.workers)
		}
		return r.stepParallel()
	}
	pkt, off, err := r.readPacket()
	if err != nil {
		return err
	}
	r.curOff = off
	if fe := r.decodePacket(pkt, off); fe != nil {
		return r.perr(off, r.packetBase, fe)
	}
	return nil
}

// stepNested decodes the next packet of a decompressed compressed_packets
// payload (a serialized Trace).
func (r *Reader) stepNested() error {
	for r.nestedPos < len(r.nested) {
		f, n, fe := next(r.nested[r.nestedPos:])
		if fe != nil {
			r.nestedPos = len(r.nested)
			return r.perr(r.nestedOff, "TracePacket.compressed_packets", fe)
		}
		r.nestedPos += n
		if f.num != fTracePacket {
			continue
		}
		if fe := f.want(protowire.BytesType, "packet"); fe != nil {
			r.nestedPos = len(r.nested)
			return r.perr(r.nestedOff, "TracePacket.compressed_packets", fe)
		}
		r.curOff = r.nestedOff
		if fe := r.decodePacket(f.b, r.nestedOff); fe != nil {
			return r.perr(r.nestedOff, r.packetBase, fe)
		}
		return nil
	}
	return nil
}

// markLost flags events lost on cpu before its next event. start is the
// time data is known good until (NoTime: the CPU's last event); arg the
// count, -1 if unknown. Several flags before one event merge into one.
func (r *Reader) markLost(cpu int, start timeline.Time, arg int64) {
	c := r.cpu(cpu)
	if start == timeline.NoTime {
		start = c.last
	}
	if c.pendLost {
		if c.lostArg >= 0 && arg >= 0 {
			c.lostArg += arg
		} else {
			c.lostArg = -1
		}
		if start != timeline.NoTime && (c.lostStart == timeline.NoTime || start < c.lostStart) {
			c.lostStart = start
		}
	} else {
		c.pendLost, c.lostStart, c.lostArg = true, start, arg
	}
	c.lostMarked = true
}

// cpu returns the state of CPU i, growing the table as needed (i <= MaxCPU).
func (r *Reader) cpu(i int) *cpuState {
	for len(r.cpus) <= i {
		r.cpus = append(r.cpus, cpuState{last: timeline.NoTime, startAt: timeline.NoTime, lostStart: timeline.NoTime})
	}
	if i > r.maxCPU {
		r.maxCPU = i
	}
	return &r.cpus[i]
}

// finish produces the events due at EOF (lost records with no later event
// on their CPU) and completes Meta.
func (r *Reader) finish() {
	for i := range r.cpus {
		c := &r.cpus[i]
		if c.haveEnd && !c.lostMarked {
			if d := c.statsEnd - c.statsStart; d > 0 {
				r.markLost(i, timeline.NoTime, d)
			}
		} else if c.haveEnd {
			if d := c.statsEnd - c.statsStart; d > 0 {
				r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf("CPU %d: ftrace stats count %d events overrun or dropped; the bundles flag the gaps without counts", i, d))
			}
		}
		if !c.pendLost {
			continue
		}
		t := c.last
		if t == timeline.NoTime {
			t = r.lastTime
		}
		ev := timeline.Event{}
		ev.Reset()
		ev.Kind, ev.CPU, ev.Time, ev.Start, ev.Arg = timeline.KindLost, timeline.CPU(i), t, t, c.lostArg
		r.out = append(r.out, ev)
		c.pendLost = false
	}
	r.coverage()
	if r.machTopo != nil {
		r.meta.Topology = r.machTopo
	}
	if r.machClockSet && (r.clockDefault || r.meta.Clock == "") {
		r.meta.Clock = r.machClock // "" when the source named no clock
	}
	if r.meta.NCPU == 0 {
		if r.meta.Topology != nil && len(r.meta.Topology.CPUs) > 0 {
			r.meta.NCPU = len(r.meta.Topology.CPUs)
		} else {
			r.meta.NCPU = r.maxCPU + 1
		}
	}
	var missing int64
	ids := make([]uint32, 0, len(r.seqs))
	for id := range r.seqs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		missing += r.seqs[id].missing
	}
	if missing > 0 {
		r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf("%d packets need incremental state their sequence never set (ftrace data in them was still read)", missing))
	}
	if r.meta.Clock == "" && !r.machClockSet {
		r.meta.Clock = "boot"
	}
	if r.curFromPid > 0 {
		r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf("compact_sched: an event's pid showed another task running than the last switch put in, %d times (a switch missing from the trace): "+
			"the next switch's prev was taken from that pid, so the gap counts as unknown; where no event names the running task the compact encoding cannot show the missing switch", r.curFromPid))
	}
	if r.tiesInferred > 0 {
		r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf("compact_sched: wakings that share their timestamp with the switch that put the woken task to sleep on the same CPU: %d; "+
			"the encoding does not keep their order, so they were put after it (the task sleeps, then wakes): the wakeup latency of these wakings rests on that inferred order", r.tiesInferred))
	}
	r.finishAttrs()
}

// commOf interns a comm, trimming nothing: Perfetto stores comms verbatim.
// A small direct-mapped cache in front of the shared interner saves its
// lock and map lookup for the few comms a trace repeats.
func (r *Reader) commOf(b []byte) timeline.CommID {
	if len(b) == 0 {
		return timeline.NoComm
	}
	h := uint32(len(b))
	for _, c := range b {
		h = h*31 + uint32(c)
	}
	slot := &r.commCache[h%uint32(len(r.commCache))]
	if slot.id != timeline.NoComm && slot.s == string(b) {
		return slot.id
	}
	id := r.strs.ID(b)
	slot.s, slot.id = r.strs.Get(id), id
	return id
}

// toTime converts an ftrace timestamp to the trace clock.
func (r *Reader) toTime(ts uint64) (timeline.Time, *fieldError) {
	if ts > math.MaxInt64 {
		return 0, badField("timestamp %d out of range", ts)
	}
	return timeline.Time(int64(ts) + r.clockOffset), nil
}
