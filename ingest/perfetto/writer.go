package perfetto

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// WriterOptions configure a Writer.
type WriterOptions struct {
	// CompactSched writes sched_switch and sched_waking in the compact_sched
	// encoding (what traced_probes writes with compact_sched enabled). It
	// drops what that encoding cannot hold: the prev side of switches and
	// the waker of wakings, which a reader infers.
	CompactSched bool
	// Strings resolves the CommIDs of the events (and marker texts); nil
	// means a new, empty interner, so every comm is written empty.
	Strings *timeline.Strings
	// Topology is written as CpuInfo (one entry per CPU with its capacity)
	// when non-nil.
	Topology *topology.Topology
	// Kernel is the kernel release ("6.18.44"), written as
	// SystemInfo.utsname.release. It also picks the prev_state encoding
	// (the 4.14+ one when empty). trace_processor decodes prev_state by
	// this release and assumes 4.4 without it, which shows R+ as W, P as x
	// and I as K: pass it whenever it is known.
	Kernel string
	// NCPU is written as SystemInfo.num_cpus when positive.
	NCPU int
	// Clock is the trace clock of the events' timestamps as the source
	// names it ("mono", "boot", "global", ...; parse.Meta.Clock), written in
	// schedlens' Machine packet so that a reader does not take it for the
	// boot clock Perfetto assumes.
	Clock string
	// Sysctls are scheduler sysctls as read on the traced machine
	// ("kernel.sched_autogroup_enabled=1"), written in schedlens' Machine
	// packet (parse.Meta.Sysctls on reading).
	Sysctls []string
	// ClockStated writes Clock even when empty: the source names no clock,
	// and a reader must not take it for the boot clock either (convert and
	// replay -o, which copy what the source says).
	ClockStated bool
	// Incomplete says the events come from a trace that does not prove
	// every CPU was recorded from its first event (its parse.Meta.Coverage
	// is not timeline.CoverageComplete). The START_OF_TRACE FtraceStats,
	// without which a Reader does not take a trace as complete, is then
	// left out.
	Incomplete bool
	// CoverageAtClose: the source proves (or not) its coverage only once
	// read to its end (trace.dat, perf.data and Perfetto inputs keep their
	// stats at the end). The START_OF_TRACE FtraceStats is then written at
	// Close, after the last SetIncomplete, instead of with the metadata.
	CoverageAtClose bool
	// RecordStart says a leading buffer start of a CPU marks where its
	// record begins, complete from there (a replayed run, which starts
	// every CPU at the workload's start), not a buffer whose earlier data
	// was overwritten: it is then not written as lost data.
	RecordStart bool
}

// Writer writes timeline events as a Perfetto trace (a serialized Trace,
// one TracePacket at a time):
//
//   - sequence 2: SystemInfo, CpuInfo and ProcessTree packets, the first
//     flagged SEQ_INCREMENTAL_STATE_CLEARED, and schedlens' TaskAttrs
//     packets (AddAffinity, AddGroup; see attrs.go);
//   - sequence 3: one FtraceEventBundle per CPU and chunk of at most
//     bundleMax events (fewer in compact mode when the bundle's comm table
//     reaches 64 entries), bracketed by FtraceStats at the start and the
//     end of the trace.
//
// Events are buffered per CPU; a CPU's events must come in time order.
// KindLost becomes the lost_events flag of the CPU's next bundle (with
// previous_bundle_end_timestamp = the event's Start), and its count goes
// into the end-of-trace FtraceStats overrun of that CPU. KindBufferStart
// before a CPU's first event becomes that CPU's first
// previous_bundle_end_timestamp.
type Writer struct {
	w      *bufio.Writer
	opts   WriterOptions
	strs   *timeline.Strings
	layout stateLayout
	err    error

	started          bool // the metadata packets were written
	metaStarted      bool // the metadata sequence has a packet
	ftraceSeqStarted bool
	closed           bool
	cpus             []wcpu
	lastTime         timeline.Time

	tasks   map[timeline.TID]taskEntry
	pending []timeline.TID // tasks not yet written, in call order

	attrs      []byte          // TaskAttrs records not yet written (attrs.go)
	attrsN     int             // how many
	attrsFirst timeline.Time   // their earliest time
	attrsFull  []attrsBatchMsg // full messages written once the metadata is out

	// encoding scratch
	sub, ev, bundle, pkt []byte
	cols                 compactEnc
}

type taskEntry struct {
	tgid    int32
	comm    string
	pending bool // not yet written
}

type wcpu struct {
	evs       []timeline.Event
	last      timeline.Time // last event time added
	flushed   timeline.Time // last event time of the last bundle written, NoTime if none
	bundles   int
	lost      bool          // the next bundle carries lost_events
	lostStart timeline.Time // its previous_bundle_end_timestamp
	lostCount int64         // sum of known lost counts, for FtraceStats
	startAt   timeline.Time // BufferStart: first bundle's previous_bundle_end_timestamp
	comms     []timeline.CommID
}

// compactEnc holds the columns of one compact bundle.
type compactEnc struct {
	intern                                      []timeline.CommID
	swTS, swState, swPid, swPrio, swComm        []uint64
	wkTS, wkPid, wkCPU, wkPrio, wkComm, wkFlags []uint64
	hasFlags                                    bool
	lastSw, lastWk                              uint64
}

// bundleMax is the largest number of events in one bundle.
const bundleMax = 1000

// NewWriter returns a Writer of a Perfetto trace to w. Nothing is written
// before the first bundle is due or Close is called.
func NewWriter(w io.Writer, opts WriterOptions) (*Writer, error) {
	strs := opts.Strings
	if strs == nil {
		strs = timeline.NewStrings()
	}
	if opts.NCPU < 0 || opts.NCPU > MaxCPU+1 {
		return nil, fmt.Errorf("perfetto writer: NCPU %d out of range", opts.NCPU)
	}
	return &Writer{
		w:        bufio.NewWriterSize(w, 256<<10),
		opts:     opts,
		strs:     strs,
		layout:   layoutFor(opts.Kernel),
		lastTime: timeline.NoTime,
		tasks:    map[timeline.TID]taskEntry{},
	}, nil
}

// Task records a process tree entry: a thread pid of thread group tgid (-1
// if unknown) named comm. A task whose tgid is its pid is also written as a
// process whose command line is its comm. Entries are written in the next
// ProcessTree packet (before the next bundle, or at Close); repeating an
// unchanged entry writes nothing.
func (w *Writer) Task(pid timeline.TID, tgid int32, comm string) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("perfetto writer: Task after Close")
	}
	old, ok := w.tasks[pid]
	if ok && old.tgid == tgid && old.comm == comm {
		return nil
	}
	if !ok || !old.pending {
		w.pending = append(w.pending, pid)
	}
	w.tasks[pid] = taskEntry{tgid: tgid, comm: comm, pending: true}
	return nil
}

// Add buffers one event. A CPU's buffer is written as a bundle once it
// holds bundleMax events.
func (w *Writer) Add(ev *timeline.Event) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("perfetto writer: Add after Close")
	}
	if ev.CPU < 0 || ev.CPU > MaxCPU {
		return fmt.Errorf("perfetto writer: %v event at %d: CPU %d out of range", ev.Kind, ev.Time, ev.CPU)
	}
	if ev.Time < 0 {
		return fmt.Errorf("perfetto writer: %v event on CPU %d: negative time %d", ev.Kind, ev.CPU, ev.Time)
	}
	for len(w.cpus) <= int(ev.CPU) {
		w.cpus = append(w.cpus, wcpu{last: timeline.NoTime, flushed: timeline.NoTime, lostStart: timeline.NoTime, startAt: timeline.NoTime})
	}
	c := &w.cpus[ev.CPU]
	if ev.Time < c.last {
		return fmt.Errorf("perfetto writer: %v event on CPU %d at %d before the CPU's previous event at %d: %w", ev.Kind, ev.CPU, ev.Time, c.last, parse.ErrBackwards)
	}
	switch ev.Kind {
	case timeline.KindLost:
		if err := w.flushCPU(int(ev.CPU)); err != nil {
			return err
		}
		if c.lost && c.lostStart != timeline.NoTime && (ev.Start == timeline.NoTime || ev.Start > c.lostStart) {
			// keep the earlier start of two gaps before one event
		} else {
			c.lostStart = ev.Start
		}
		c.lost = true
		if ev.Arg > 0 {
			c.lostCount += ev.Arg
		}
		return nil
	case timeline.KindBufferStart:
		if c.bundles == 0 && len(c.evs) == 0 && w.opts.RecordStart {
			// The CPU's record begins here and is whole from here (a
			// replayed run): the START_OF_TRACE stats say so, where
			// previous_bundle_end would say earlier bundles were lost.
			return nil
		}
		if c.bundles == 0 && len(c.evs) == 0 {
			c.startAt = ev.Start
			if c.startAt == timeline.NoTime {
				c.startAt = ev.Time
			}
			return nil
		}
		// A buffer start after the CPU's first event is a gap.
		if err := w.flushCPU(int(ev.CPU)); err != nil {
			return err
		}
		c.lost = true
		return nil
	case timeline.KindSwitch:
		if _, err := w.layout.encode(ev.State); err != nil {
			return fmt.Errorf("perfetto writer: sched_switch on CPU %d at %d: %v", ev.CPU, ev.Time, err)
		}
	case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew, timeline.KindMigrate,
		timeline.KindFork, timeline.KindNewTask, timeline.KindExec, timeline.KindRename,
		timeline.KindExit, timeline.KindFree, timeline.KindIdle, timeline.KindMarker, timeline.KindSignal:
	default:
		return fmt.Errorf("perfetto writer: event kind %v at %d has no Perfetto encoding", ev.Kind, ev.Time)
	}
	if w.opts.CompactSched && (ev.Kind == timeline.KindSwitch || ev.Kind == timeline.KindWaking) {
		if !containsComm(c.comms, ev.Comm) {
			if len(c.comms) >= compactInternThreshold {
				if err := w.flushCPU(int(ev.CPU)); err != nil {
					return err
				}
			}
			c.comms = append(c.comms, ev.Comm)
		}
	}
	c.evs = append(c.evs, *ev)
	c.last = ev.Time
	if ev.Time > w.lastTime {
		w.lastTime = ev.Time
	}
	if len(c.evs) >= bundleMax {
		return w.flushCPU(int(ev.CPU))
	}
	return nil
}

func containsComm(s []timeline.CommID, id timeline.CommID) bool {
	for _, x := range s {
		if x == id {
			return true
		}
	}
	return false
}

// Close writes the buffered events, pending tasks and lost flags and the
// end-of-trace stats, and flushes. It does not close the underlying
// io.Writer.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if err := w.start(); err != nil {
		return err
	}
	for i := range w.cpus {
		if err := w.flushCPU(i); err != nil {
			return err
		}
	}
	for i := range w.cpus {
		if c := &w.cpus[i]; c.lost {
			// A gap with no later event: an empty bundle carries the flag.
			if err := w.writeBundle(i); err != nil {
				return err
			}
		}
	}
	if err := w.writeTasks(); err != nil {
		return err
	}
	if err := w.flushAttrs(true); err != nil {
		return err
	}
	if w.opts.CoverageAtClose && !w.opts.Incomplete {
		if err := w.writeStats(statsPhaseStart); err != nil {
			return err
		}
	}
	if err := w.writeStats(statsPhaseEnd); err != nil {
		return err
	}
	if err := w.w.Flush(); err != nil {
		w.err = err
	}
	return w.err
}

// start writes the metadata packets and the start-of-trace stats once.
func (w *Writer) start() error {
	if w.started {
		return nil
	}
	w.started = true
	t0 := w.firstTime()
	// SystemInfo.
	if w.opts.Kernel != "" || w.opts.NCPU > 0 {
		si := w.sub[:0]
		if w.opts.Kernel != "" {
			var uts []byte
			uts = appendString(uts, fUtsSysname, "Linux")
			uts = appendString(uts, fUtsRelease, w.opts.Kernel)
			si = protowire.AppendTag(si, fSysUtsname, protowire.BytesType)
			si = protowire.AppendBytes(si, uts)
		}
		if w.opts.NCPU > 0 {
			si = appendVarint(si, fSysNumCPUs, uint64(w.opts.NCPU))
		}
		w.sub = si
		if err := w.metaPacket(fPacketSystemInfo, si, t0); err != nil {
			return err
		}
	}
	if err := w.writeMachine(t0); err != nil {
		return err
	}
	// CpuInfo: capacities. CpuInfo has no core or cluster ids.
	if t := w.opts.Topology; t != nil && len(t.CPUs) > 0 {
		cpus := append([]topology.CPU(nil), t.CPUs...)
		sort.Slice(cpus, func(i, j int) bool { return cpus[i].ID < cpus[j].ID })
		ci := w.sub[:0]
		var one []byte
		for _, c := range cpus {
			one = one[:0]
			one = appendString(one, fCPUProc, fmt.Sprintf("cpu%d", c.ID))
			if c.Capacity > 0 {
				one = appendVarint(one, fCPUCapacity, uint64(c.Capacity))
			}
			ci = protowire.AppendTag(ci, fCPUInfoCPUs, protowire.BytesType)
			ci = protowire.AppendBytes(ci, one)
		}
		w.sub = ci
		if err := w.metaPacket(fPacketCPUInfo, ci, t0); err != nil {
			return err
		}
	}
	if err := w.writeTasks(); err != nil {
		return err
	}
	if w.opts.Incomplete || w.opts.CoverageAtClose {
		return nil
	}
	return w.writeStats(statsPhaseStart)
}

// SetIncomplete sets WriterOptions.Incomplete; with CoverageAtClose it may
// be called up to Close, when the source's coverage is known.
func (w *Writer) SetIncomplete(v bool) { w.opts.Incomplete = v }

// writeMachine writes schedlens' Machine packet: the clock, the whole
// topology (cores, SMT siblings, caches, nodes, capacities), which CpuInfo
// cannot hold, and the scheduler sysctls.
func (w *Writer) writeMachine(t0 timeline.Time) error {
	t := w.opts.Topology
	if w.opts.Clock == "" && !w.opts.ClockStated && (t == nil || len(t.CPUs) == 0 || t.Validate() != nil) && len(w.opts.Sysctls) == 0 {
		return nil
	}
	var m []byte
	if w.opts.Clock != "" || w.opts.ClockStated {
		m = appendString(m, fMachineClock, w.opts.Clock)
	}
	if t != nil && len(t.CPUs) > 0 && t.Validate() == nil {
		// A topology that does not validate (a bare list of capacities)
		// is only written as CpuInfo.
		var js bytes.Buffer
		if err := topology.WriteJSON(&js, t); err != nil {
			return fmt.Errorf("perfetto writer: topology: %w", err)
		}
		m = appendString(m, fMachineTopology, js.String())
	}
	for _, s := range w.opts.Sysctls {
		m = appendString(m, fMachineSysctl, s)
	}
	return w.metaPacket(fPacketMachine, m, t0)
}

// firstTime returns the earliest buffered event time (0 if none).
func (w *Writer) firstTime() timeline.Time {
	t := timeline.NoTime
	for i := range w.cpus {
		if c := &w.cpus[i]; len(c.evs) > 0 && (t == timeline.NoTime || c.evs[0].Time < t) {
			t = c.evs[0].Time
		}
	}
	if t == timeline.NoTime {
		return 0
	}
	return t
}

// metaPacket writes a packet on the metadata sequence holding one message
// field, with a timestamp.
func (w *Writer) metaPacket(field protowire.Number, msg []byte, ts timeline.Time) error {
	p := w.pkt[:0]
	p = appendVarint(p, fPacketTimestamp, uint64(ts))
	p = appendVarint(p, fPacketSequenceID, seqWriterMeta)
	if !w.metaStarted {
		w.metaStarted = true
		p = appendVarint(p, fPacketSequenceFlags, seqIncrementalStateCleared)
		p = appendVarint(p, fPacketFirstOnSequence, 1)
	}
	p = protowire.AppendTag(p, field, protowire.BytesType)
	p = protowire.AppendBytes(p, msg)
	w.pkt = p
	return w.emit(p)
}

// writeTasks writes the pending process tree entries as one ProcessTree.
func (w *Writer) writeTasks() error {
	if len(w.pending) == 0 {
		return nil
	}
	tree := w.sub[:0]
	var one []byte
	for _, pid := range w.pending {
		e := w.tasks[pid]
		e.pending = false
		w.tasks[pid] = e
		if e.tgid == int32(pid) {
			one = one[:0]
			one = appendVarint(one, fProcPid, uint64(int64(pid)))
			if e.comm != "" {
				one = appendString(one, fProcCmdline, e.comm)
				one = appendVarint(one, fProcCmdlineIsComm, 1)
			}
			tree = protowire.AppendTag(tree, fTreeProcesses, protowire.BytesType)
			tree = protowire.AppendBytes(tree, one)
		}
		one = one[:0]
		one = appendVarint(one, fThreadTid, uint64(int64(pid)))
		if e.comm != "" {
			one = appendString(one, fThreadName, e.comm)
		}
		if e.tgid >= 0 {
			one = appendVarint(one, fThreadTgid, uint64(int64(e.tgid)))
		}
		tree = protowire.AppendTag(tree, fTreeThreads, protowire.BytesType)
		tree = protowire.AppendBytes(tree, one)
	}
	w.sub = tree
	w.pending = w.pending[:0]
	ts := w.lastTime
	if !w.ftraceSeqStarted || ts == timeline.NoTime {
		ts = w.firstTime()
	}
	return w.metaPacket(fPacketProcessTree, tree, ts)
}

// writeStats writes an FtraceStats packet: overrun per CPU (0 at the start,
// the known lost counts at the end).
func (w *Writer) writeStats(phase uint64) error {
	st := w.sub[:0]
	st = appendVarint(st, fStatsPhase, phase)
	var one []byte
	for i := range w.cpus {
		one = one[:0]
		one = appendVarint(one, fCPUStatsCPU, uint64(i))
		var n int64
		if phase == statsPhaseEnd {
			n = w.cpus[i].lostCount
		}
		one = appendVarint(one, fCPUStatsOverrun, uint64(n))
		st = protowire.AppendTag(st, fStatsCPUStats, protowire.BytesType)
		st = protowire.AppendBytes(st, one)
	}
	w.sub = st
	return w.ftracePacket(fPacketFtraceStats, st)
}

// ftracePacket writes a packet of the ftrace sequence.
func (w *Writer) ftracePacket(field protowire.Number, msg []byte) error {
	p := w.pkt[:0]
	p = appendVarint(p, fPacketSequenceID, seqWriterFtrace)
	if !w.ftraceSeqStarted {
		w.ftraceSeqStarted = true
		p = appendVarint(p, fPacketSequenceFlags, seqIncrementalStateCleared)
		p = appendVarint(p, fPacketFirstOnSequence, 1)
	}
	p = protowire.AppendTag(p, field, protowire.BytesType)
	p = protowire.AppendBytes(p, msg)
	w.pkt = p
	return w.emit(p)
}

// emit writes one Trace.packet.
func (w *Writer) emit(p []byte) error {
	var hdr [binaryMaxVarint + 1]byte
	h := protowire.AppendTag(hdr[:0], fTracePacket, protowire.BytesType)
	h = protowire.AppendVarint(h, uint64(len(p)))
	if _, err := w.w.Write(h); err != nil {
		w.err = err
		return err
	}
	if _, err := w.w.Write(p); err != nil {
		w.err = err
		return err
	}
	return nil
}

const binaryMaxVarint = 10

// flushCPU writes the CPU's buffered events as a bundle, if any.
func (w *Writer) flushCPU(i int) error {
	if i >= len(w.cpus) || len(w.cpus[i].evs) == 0 {
		return nil
	}
	if err := w.start(); err != nil {
		return err
	}
	if err := w.writeTasks(); err != nil {
		return err
	}
	if err := w.flushAttrs(false); err != nil {
		return err
	}
	return w.writeBundle(i)
}

// writeBundle encodes and writes the CPU's buffered events (possibly none)
// as one FtraceEventBundle and empties the buffer.
func (w *Writer) writeBundle(i int) error {
	if err := w.start(); err != nil {
		return err
	}
	c := &w.cpus[i]
	b := w.bundle[:0]
	b = appendVarint(b, fBundleCPU, uint64(i))
	compact := w.opts.CompactSched
	cols := &w.cols
	if compact {
		cols.reset()
	}
	for k := range c.evs {
		ev := &c.evs[k]
		if compact && (ev.Kind == timeline.KindSwitch || ev.Kind == timeline.KindWaking) {
			if err := w.addCompact(ev); err != nil {
				return err
			}
			continue
		}
		e, err := w.encodeEvent(ev)
		if err != nil {
			return err
		}
		b = protowire.AppendTag(b, fBundleEvent, protowire.BytesType)
		b = protowire.AppendBytes(b, e)
	}
	if c.lost {
		b = appendVarint(b, fBundleLostEvents, 1)
	}
	if compact && (len(cols.swTS) > 0 || len(cols.wkTS) > 0) {
		w.sub = cols.encode(w.sub[:0], w.strs)
		b = protowire.AppendTag(b, fBundleCompactSched, protowire.BytesType)
		b = protowire.AppendBytes(b, w.sub)
	}
	// previous_bundle_end_timestamp: the last event of the CPU's previous
	// bundle; on the first bundle only a buffer start sets it, and a gap
	// sets it to where the data was last known good.
	prevEnd := c.flushed
	switch {
	case c.lost:
		prevEnd = c.lostStart
	case c.bundles == 0:
		prevEnd = c.startAt
	}
	if prevEnd != timeline.NoTime && prevEnd > 0 {
		b = appendVarint(b, fBundlePrevBundleEndTS, uint64(prevEnd))
	}
	w.bundle = b
	if err := w.ftracePacket(fPacketFtraceEvents, b); err != nil {
		return err
	}
	if len(c.evs) > 0 {
		c.flushed = c.evs[len(c.evs)-1].Time
	}
	c.bundles++
	c.lost, c.lostStart = false, timeline.NoTime
	c.evs = c.evs[:0]
	c.comms = c.comms[:0]
	return nil
}

func (c *compactEnc) reset() {
	c.intern = c.intern[:0]
	c.swTS, c.swState, c.swPid, c.swPrio, c.swComm = c.swTS[:0], c.swState[:0], c.swPid[:0], c.swPrio[:0], c.swComm[:0]
	c.wkTS, c.wkPid, c.wkCPU, c.wkPrio, c.wkComm, c.wkFlags = c.wkTS[:0], c.wkPid[:0], c.wkCPU[:0], c.wkPrio[:0], c.wkComm[:0], c.wkFlags[:0]
	c.hasFlags = false
	c.lastSw, c.lastWk = 0, 0
}

func (c *compactEnc) commIndex(id timeline.CommID) uint64 {
	for i, x := range c.intern {
		if x == id {
			return uint64(i)
		}
	}
	c.intern = append(c.intern, id)
	return uint64(len(c.intern) - 1)
}

// addCompact adds a switch or waking to the compact columns.
func (w *Writer) addCompact(ev *timeline.Event) error {
	c := &w.cols
	t := uint64(ev.Time)
	if ev.Kind == timeline.KindSwitch {
		st, err := w.layout.encode(ev.State)
		if err != nil {
			return err
		}
		c.swTS = append(c.swTS, t-c.lastSw)
		c.lastSw = t
		c.swState = append(c.swState, uint64(st))
		c.swPid = append(c.swPid, uint64(int64(ev.Task)))
		c.swPrio = append(c.swPrio, uint64(int64(ev.Prio)))
		c.swComm = append(c.swComm, c.commIndex(ev.Comm))
		return nil
	}
	c.wkTS = append(c.wkTS, t-c.lastWk)
	c.lastWk = t
	c.wkPid = append(c.wkPid, uint64(int64(ev.Task)))
	c.wkCPU = append(c.wkCPU, uint64(ev.Arg))
	c.wkPrio = append(c.wkPrio, uint64(int64(ev.Prio)))
	c.wkComm = append(c.wkComm, c.commIndex(ev.Comm))
	f, known := flagsOf(ev.Ctx)
	c.wkFlags = append(c.wkFlags, f)
	c.hasFlags = c.hasFlags || known
	return nil
}

// encode writes the CompactSched message: packed columns, the intern table.
func (c *compactEnc) encode(b []byte, strs *timeline.Strings) []byte {
	for _, id := range c.intern {
		b = appendString(b, fCompactInternTable, strs.Get(id))
	}
	b = appendPackedCol(b, fCompactSwitchTimestamp, c.swTS)
	b = appendPackedCol(b, fCompactSwitchPrevState, c.swState)
	b = appendPackedCol(b, fCompactSwitchNextPid, c.swPid)
	b = appendPackedCol(b, fCompactSwitchNextPrio, c.swPrio)
	b = appendPackedCol(b, fCompactSwitchNextComm, c.swComm)
	b = appendPackedCol(b, fCompactWakingTimestamp, c.wkTS)
	b = appendPackedCol(b, fCompactWakingPid, c.wkPid)
	b = appendPackedCol(b, fCompactWakingTargetCPU, c.wkCPU)
	b = appendPackedCol(b, fCompactWakingPrio, c.wkPrio)
	b = appendPackedCol(b, fCompactWakingComm, c.wkComm)
	if c.hasFlags {
		b = appendPackedCol(b, fCompactWakingCommonFlag, c.wkFlags)
	}
	return b
}

func appendPackedCol(b []byte, num protowire.Number, vals []uint64) []byte {
	if len(vals) == 0 {
		return b
	}
	n := 0
	for _, v := range vals {
		n += protowire.SizeVarint(v)
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	for _, v := range vals {
		b = protowire.AppendVarint(b, v)
	}
	return b
}

// flagsOf returns the common_flags bits of a context and whether it is
// known.
func flagsOf(c timeline.Context) (uint64, bool) {
	switch c {
	case timeline.CtxTask:
		return 0, true
	case timeline.CtxSoftirq:
		return traceFlagSoftirq, true
	case timeline.CtxHardirq:
		return traceFlagHardirq, true
	case timeline.CtxNMI:
		return traceFlagNMI, true
	}
	return 0, false
}

// encodeEvent encodes one event as an FtraceEvent into w.ev.
func (w *Writer) encodeEvent(ev *timeline.Event) ([]byte, error) {
	s := w.sub[:0]
	header := timeline.NoTID
	var payload protowire.Number
	switch ev.Kind {
	case timeline.KindSwitch:
		payload, header = fEvSchedSwitch, ev.Other
		st, err := w.layout.encode(ev.State)
		if err != nil {
			return nil, err
		}
		s = w.appendComm(s, fSwitchPrevComm, ev.OComm)
		s = appendInt(s, fSwitchPrevPid, int64(ev.Other))
		s = appendPrio(s, fSwitchPrevPrio, ev.OPrio)
		s = appendInt(s, fSwitchPrevState, st)
		s = w.appendComm(s, fSwitchNextComm, ev.Comm)
		s = appendInt(s, fSwitchNextPid, int64(ev.Task))
		s = appendPrio(s, fSwitchNextPrio, ev.Prio)
	case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew:
		payload, header = fEvSchedWaking, ev.Other
		if ev.Kind == timeline.KindWakeup {
			payload = fEvSchedWakeup
		} else if ev.Kind == timeline.KindWakeupNew {
			payload = fEvSchedWakeupNew
		}
		s = w.appendComm(s, fWakeComm, ev.Comm)
		s = appendInt(s, fWakePid, int64(ev.Task))
		s = appendPrio(s, fWakePrio, ev.Prio)
		s = appendInt(s, fWakeSuccess, 1)
		if ev.Arg >= 0 {
			s = appendInt(s, fWakeTargetCPU, ev.Arg)
		}
	case timeline.KindMigrate:
		payload = fEvMigrateTask
		s = w.appendComm(s, fMigrateComm, ev.Comm)
		s = appendInt(s, fMigratePid, int64(ev.Task))
		s = appendPrio(s, fMigratePrio, ev.Prio)
		if ev.Arg2 >= 0 {
			s = appendInt(s, fMigrateOrigCPU, ev.Arg2)
		}
		if ev.Arg >= 0 {
			s = appendInt(s, fMigrateDestCPU, ev.Arg)
		}
	case timeline.KindFork:
		payload, header = fEvProcessFork, ev.Other
		s = w.appendComm(s, fForkParentComm, ev.OComm)
		s = appendInt(s, fForkParentPid, int64(ev.Other))
		s = w.appendComm(s, fForkChildComm, ev.Comm)
		s = appendInt(s, fForkChildPid, int64(ev.Task))
	case timeline.KindNewTask:
		payload, header = fEvTaskNewtask, ev.Other
		s = appendInt(s, fNewtaskPid, int64(ev.Task))
		s = w.appendComm(s, fNewtaskComm, ev.Comm)
	case timeline.KindExec:
		payload, header = fEvProcessExec, ev.Task
		s = w.appendComm(s, fExecFilename, ev.Comm)
		s = appendInt(s, fExecPid, int64(ev.Task))
		if ev.Arg2 >= 0 {
			s = appendInt(s, fExecOldPid, ev.Arg2)
		}
	case timeline.KindRename:
		payload, header = fEvTaskRename, ev.Task
		s = appendInt(s, fRenamePid, int64(ev.Task))
		s = w.appendComm(s, fRenameOldComm, ev.OComm)
		s = w.appendComm(s, fRenameNewComm, ev.Comm)
	case timeline.KindExit:
		payload, header = fEvProcessExit, ev.Task
		s = w.appendComm(s, fExitComm, ev.Comm)
		s = appendInt(s, fExitPid, int64(ev.Task))
		if ev.TGID >= 0 {
			s = appendInt(s, fExitTgid, int64(ev.TGID))
		}
		s = appendPrio(s, fExitPrio, ev.Prio)
	case timeline.KindFree:
		payload = fEvProcessFree
		s = w.appendComm(s, fFreeComm, ev.Comm)
		s = appendInt(s, fFreePid, int64(ev.Task))
		s = appendPrio(s, fFreePrio, ev.Prio)
	case timeline.KindIdle:
		payload = fEvCPUIdle
		state := uint64(uint32(ev.Arg)) // -1 -> 4294967295
		s = appendVarint(s, fIdleState, state)
		s = appendVarint(s, fIdleCPUID, uint64(uint32(ev.Arg2)))
	case timeline.KindMarker:
		payload, header = fEvPrint, ev.Task
		s = appendString(s, fPrintBuf, w.strs.Get(timeline.CommID(ev.Arg))+"\n")
	case timeline.KindSignal:
		payload, header = fEvSignalGenerate, ev.Other
		s = appendInt(s, fSigSig, ev.Arg)
		s = w.appendComm(s, fSigComm, ev.Comm)
		s = appendInt(s, fSigPid, int64(ev.Task))
		s = appendInt(s, fSigGroup, ev.Arg2>>8&1)
		s = appendInt(s, fSigResult, ev.Arg2&0xff)
	default:
		return nil, fmt.Errorf("event kind %v has no Perfetto encoding", ev.Kind)
	}
	w.sub = s
	e := w.ev[:0]
	e = appendVarint(e, fEventTimestamp, uint64(ev.Time))
	if header != timeline.NoTID && header >= 0 {
		e = appendVarint(e, fEventPid, uint64(uint32(header)))
	}
	if f, ok := flagsOf(ev.Ctx); ok {
		e = appendVarint(e, fEventCommonFlags, f)
	}
	e = protowire.AppendTag(e, payload, protowire.BytesType)
	e = protowire.AppendBytes(e, s)
	w.ev = e
	return e, nil
}

func (w *Writer) appendComm(b []byte, num protowire.Number, id timeline.CommID) []byte {
	if id == timeline.NoComm {
		return b
	}
	return appendString(b, num, w.strs.Get(id))
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendInt writes a signed int32/int64 field (two's complement varint).
func appendInt(b []byte, num protowire.Number, v int64) []byte {
	return appendVarint(b, num, uint64(v))
}

// appendPrio writes a prio field unless it is absent (-1).
func appendPrio(b []byte, num protowire.Number, p int16) []byte {
	if p == -1 {
		return b
	}
	return appendInt(b, num, int64(p))
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}
