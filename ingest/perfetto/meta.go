package perfetto

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Clocks.
//
// Perfetto records ftrace timestamps on the ftrace clock, which is "boot"
// (CLOCK_BOOTTIME) unless FtraceEventBundle.ftrace_clock says otherwise, and
// the trace's own clock is BOOTTIME unless a ClockSnapshot names another
// primary_trace_clock. The reader puts every event on the trace clock with
// one constant offset, fixed at the first FtraceEventBundle:
//
//  1. ftrace clock "boot" (field absent): offset 0.
//  2. Another ftrace clock (global, local, mono_raw) with the bundle's
//     ftrace_timestamp/boot_timestamp pair: offset = boot - ftrace of that
//     first pair. Without a pair the timestamps stay on the ftrace clock,
//     Meta.Clock names it and a warning says so.
//  3. If a ClockSnapshot seen before that bundle has a primary_trace_clock
//     other than BOOTTIME and both clocks, the primary-minus-boot difference
//     of that snapshot is added.
//
// A constant offset keeps durations exact on the recording clock and never
// reorders a CPU's events; the drift between clocks over the trace (which
// trace_processor follows snapshot by snapshot) is not modeled.
func (r *Reader) lockClock(clk uint64, ftraceTS, bootTS int64, pair bool) {
	if r.clockLocked {
		return
	}
	r.clockLocked = true
	name := "boot"
	if clk != ftraceClockUnspecified {
		if !pair {
			r.meta.Clock = ftraceClockName(clk)
			r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf("ftrace clock %s has no boot-time pair in the first bundle: timestamps stay on the ftrace clock", r.meta.Clock))
			return
		}
		d := bootTS - ftraceTS
		if (bootTS >= 0) != (ftraceTS >= 0) && (d >= 0) != (bootTS >= 0) { // overflow
			r.meta.Clock = ftraceClockName(clk)
			return
		}
		r.clockOffset = d
	}
	if r.primary != clockBoottime {
		p, okP := r.snapshot[r.primary]
		b, okB := r.snapshot[clockBoottime]
		if okP && okB && p <= math.MaxInt64 && b <= math.MaxInt64 {
			r.clockOffset += int64(p) - int64(b)
			name = builtinClockName(r.primary)
		} else {
			r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf("primary trace clock %s has no snapshot with boot time before the first bundle: timestamps stay on the boot clock", builtinClockName(r.primary)))
		}
	} else if clk == ftraceClockUnspecified {
		r.clockDefault = true
	}
	r.meta.Clock = name
}

func ftraceClockName(c uint64) string {
	switch c {
	case ftraceClockGlobal:
		return "global"
	case ftraceClockLocal:
		return "local"
	case ftraceClockMonoRaw:
		return "mono_raw"
	case ftraceClockUnknown:
		return "unknown"
	}
	return fmt.Sprintf("ftrace_clock_%d", c)
}

func builtinClockName(c uint32) string {
	switch c {
	case clockRealtime:
		return "realtime"
	case clockMonotonic:
		return "mono"
	case clockMonoRaw:
		return "mono_raw"
	case clockBoottime:
		return "boot"
	}
	return fmt.Sprintf("clock_%d", c)
}

// decodeClockSnapshot keeps the first snapshot's builtin clocks and the
// primary trace clock.
func (r *Reader) decodeClockSnapshot(b []byte) *fieldError {
	snap := map[uint32]uint64{}
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fSnapClocks:
			if fe := f.want(protowire.BytesType, "clocks"); fe != nil {
				return fe
			}
			id, ts, ok, fe := decodeClock(f.b)
			if fe != nil {
				return fe.in("clocks")
			}
			if ok && id < 64 {
				snap[id] = ts
			}
		case fSnapPrimaryClock:
			if fe := f.want(protowire.VarintType, "primary_trace_clock"); fe != nil {
				return fe
			}
			if !r.clockLocked && f.v != 0 {
				r.primary = uint32(f.v)
			}
		}
	}
	if r.snapshot == nil && len(snap) > 0 {
		r.snapshot = snap
	}
	return nil
}

func decodeClock(b []byte) (id uint32, ts uint64, ok bool, fe *fieldError) {
	var hasID, hasTS bool
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return 0, 0, false, fe
		}
		b = b[n:]
		switch f.num {
		case fClockID, fClockTimestamp:
			if fe := f.want(protowire.VarintType, "clock field"); fe != nil {
				return 0, 0, false, fe
			}
			if f.num == fClockID {
				id, hasID = uint32(f.v), true
			} else {
				ts, hasTS = f.v, true
			}
		}
	}
	return id, ts, hasID && hasTS, nil
}

func (r *Reader) decodeServiceEvent(b []byte, p *packetFields) *fieldError {
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		if f.num == fServiceTracingStarted && f.typ == protowire.VarintType && f.v != 0 && p.hasTimestamp && p.timestamp <= math.MaxInt64 {
			r.tracingStarted = timeline.Time(int64(p.timestamp))
		}
	}
	return nil
}

// decodeSystemInfo reads the kernel release (Meta.Kernel, and the
// prev_state layout) and the CPU count.
func (r *Reader) decodeSystemInfo(b []byte) *fieldError {
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fSysUtsname:
			if fe := f.want(protowire.BytesType, "utsname"); fe != nil {
				return fe
			}
			u := f.b
			for len(u) > 0 {
				g, m, fe := next(u)
				if fe != nil {
					return fe.in("utsname")
				}
				u = u[m:]
				if g.num != fUtsRelease {
					continue
				}
				if fe := g.want(protowire.BytesType, "release"); fe != nil {
					return fe.in("utsname")
				}
				r.setRelease(string(g.b))
			}
		case fSysNumCPUs:
			if fe := f.want(protowire.VarintType, "num_cpus"); fe != nil {
				return fe
			}
			if f.v > 0 && f.v <= MaxCPU+1 {
				r.meta.NCPU = int(f.v)
			}
		}
	}
	return nil
}

func (r *Reader) setRelease(rel string) {
	if rel == "" {
		return
	}
	r.meta.Kernel = rel
	if r.layoutSet {
		return
	}
	l := layoutFor(rel)
	if r.switchesSeen > 0 && l != r.layout {
		r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf("kernel %s came after %d sched_switch events: their prev_state was read with the %s layout", rel, r.switchesSeen, r.layout))
	}
	r.layout, r.layoutSet = l, true
	r.layoutPub.Store(uint32(l))
}

// decodeCPUInfo builds Meta.Topology from CpuInfo. CpuInfo has no core,
// cluster or package ids; like trace_processor, CPUs are grouped into
// clusters by capacity when every CPU has one, else by maximum frequency
// when every CPU lists frequencies, else all into cluster 0. Each CPU is its
// own core (no SMT information); a CPU without capacity gets 1024.
func (r *Reader) decodeCPUInfo(b []byte) *fieldError {
	type cpuRow struct {
		capacity, maxFreq uint64
		hasCap, hasFreq   bool
	}
	var rows []cpuRow
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		if f.num != fCPUInfoCPUs {
			continue
		}
		if fe := f.want(protowire.BytesType, "cpus"); fe != nil {
			return fe
		}
		if len(rows) > MaxCPU {
			return badField("more than %d cpus", MaxCPU+1).in("cpus")
		}
		var row cpuRow
		c := f.b
		for len(c) > 0 {
			g, m, fe := next(c)
			if fe != nil {
				return fe.in("cpus")
			}
			c = c[m:]
			switch g.num {
			case fCPUCapacity:
				if fe := g.want(protowire.VarintType, "capacity"); fe != nil {
					return fe.in("cpus")
				}
				row.capacity, row.hasCap = uint64(uint32(g.v)), true
			case fCPUFreqs:
				switch g.typ {
				case protowire.VarintType:
					row.maxFreq, row.hasFreq = max(row.maxFreq, uint64(uint32(g.v))), true
				case protowire.BytesType:
					for p := g.b; len(p) > 0; {
						v, k := protowire.ConsumeVarint(p)
						if k < 0 {
							return wireError(k, "packed frequencies").in("cpus")
						}
						p = p[k:]
						row.maxFreq, row.hasFreq = max(row.maxFreq, uint64(uint32(v))), true
					}
				default:
					return g.want(protowire.BytesType, "frequencies").in("cpus")
				}
			}
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil
	}
	allCap, allFreq := true, true
	for _, row := range rows {
		allCap = allCap && row.hasCap
		allFreq = allFreq && row.hasFreq
	}
	key := func(i int) uint64 { return 0 }
	switch {
	case allCap:
		key = func(i int) uint64 { return rows[i].capacity }
	case allFreq:
		key = func(i int) uint64 { return rows[i].maxFreq }
	}
	distinct := make([]uint64, 0, len(rows))
	for i := range rows {
		distinct = append(distinct, key(i))
	}
	sort.Slice(distinct, func(i, j int) bool { return distinct[i] < distinct[j] })
	rank := map[uint64]int{}
	for _, v := range distinct {
		if _, ok := rank[v]; !ok {
			rank[v] = len(rank)
		}
	}
	t := &topology.Topology{Source: "trace"}
	for i, row := range rows {
		capacity := 1024
		if row.hasCap {
			capacity = int(row.capacity)
		}
		t.CPUs = append(t.CPUs, topology.CPU{ID: i, Core: i, Cluster: rank[key(i)], Capacity: capacity})
	}
	r.meta.Topology = t
	return nil
}

// decodeProcessTree merges a ProcessTree snapshot into Meta.Tasks and the
// process table. Thread entries give tid -> tgid and name; process entries
// give pid -> tgid (itself) and, when cmdline_is_comm says the command line
// is the comm (kernel threads), the name. A name the trace already gave is
// not replaced by an empty one.
func (r *Reader) decodeProcessTree(b []byte) *fieldError {
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fTreeProcesses:
			if fe := f.want(protowire.BytesType, "processes"); fe != nil {
				return fe
			}
			if fe := r.decodeProcess(f.b); fe != nil {
				return fe.in("processes")
			}
		case fTreeThreads:
			if fe := f.want(protowire.BytesType, "threads"); fe != nil {
				return fe
			}
			if fe := r.decodeThread(f.b); fe != nil {
				return fe.in("threads")
			}
		}
	}
	return nil
}

func (r *Reader) decodeProcess(b []byte) *fieldError {
	p := Process{PPID: timeline.NoTID}
	var isComm bool
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fProcPid, fProcPpid, fProcIsKthread, fProcCmdlineIsComm:
			if fe := f.want(protowire.VarintType, "field"); fe != nil {
				return fe
			}
			switch f.num {
			case fProcPid:
				if p.PID, fe = pidOf(f.v, "pid"); fe != nil {
					return fe
				}
			case fProcPpid:
				if p.PPID, fe = pidOf(f.v, "ppid"); fe != nil {
					return fe
				}
			case fProcIsKthread:
				p.IsKthread = f.v != 0
			case fProcCmdlineIsComm:
				isComm = f.v != 0
			}
		case fProcCmdline:
			if fe := f.want(protowire.BytesType, "cmdline"); fe != nil {
				return fe
			}
			p.Cmdline = append(p.Cmdline, string(f.b))
		}
	}
	if isComm && len(p.Cmdline) == 1 {
		// The "command line" is /proc/PID/comm (kernel threads).
		p.Cmdline[0] = kernelComm(p.Cmdline[0])
	}
	r.procs[p.PID] = p
	ti, ok := r.meta.Tasks[p.PID]
	if !ok {
		ti = parse.TaskInfo{Comm: ""}
	}
	ti.TGID = int32(p.PID)
	if isComm && len(p.Cmdline) > 0 && p.Cmdline[0] != "" && ti.Comm == "" {
		ti.Comm = p.Cmdline[0]
	}
	r.meta.Tasks[p.PID] = ti
	return nil
}

func (r *Reader) decodeThread(b []byte) *fieldError {
	var tid timeline.TID
	tgid := int32(-1)
	var name []byte
	var hasName bool
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fThreadTid, fThreadTgid:
			if fe := f.want(protowire.VarintType, "field"); fe != nil {
				return fe
			}
			pid, fe := pidOf(f.v, "tid")
			if fe != nil {
				return fe
			}
			if f.num == fThreadTid {
				tid = pid
			} else {
				tgid = int32(pid)
			}
		case fThreadName:
			if fe := f.want(protowire.BytesType, "name"); fe != nil {
				return fe
			}
			name, hasName = f.b, true
		}
	}
	ti, ok := r.meta.Tasks[tid]
	if !ok {
		ti = parse.TaskInfo{TGID: -1}
	}
	if tgid >= 0 {
		ti.TGID = tgid
	}
	if hasName && len(name) > 0 {
		ti.Comm = kernelComm(string(name))
	}
	r.meta.Tasks[tid] = ti
	return nil
}

// decodeFtraceStats notes the per-CPU overrun (ring buffer overwrote),
// commit_overrun and dropped_events counters at the start and at the end of
// the trace; finish turns a positive difference into a Lost record for a
// CPU that no bundle flagged.
func (r *Reader) decodeFtraceStats(b []byte) *fieldError {
	var phase uint64
	type row struct {
		cpu  int
		lost int64
	}
	var rows []row
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fStatsPhase:
			if fe := f.want(protowire.VarintType, "phase"); fe != nil {
				return fe
			}
			phase = f.v
		case fStatsCPUStats:
			if fe := f.want(protowire.BytesType, "cpu_stats"); fe != nil {
				return fe
			}
			var rw row
			c := f.b
			for len(c) > 0 {
				g, m, fe := next(c)
				if fe != nil {
					return fe.in("cpu_stats")
				}
				c = c[m:]
				switch g.num {
				case fCPUStatsCPU, fCPUStatsOverrun, fCPUStatsCommitOverr, fCPUStatsDropped:
					if fe := g.want(protowire.VarintType, "field"); fe != nil {
						return fe.in("cpu_stats")
					}
					if g.num == fCPUStatsCPU {
						if g.v > MaxCPU {
							return badField("cpu %d above the limit %d", g.v, MaxCPU).in("cpu_stats")
						}
						rw.cpu = int(g.v)
					} else if g.v < math.MaxInt32 {
						rw.lost += int64(g.v)
					}
				}
			}
			rows = append(rows, rw)
		}
	}
	for _, rw := range rows {
		c := r.cpu(rw.cpu)
		switch phase {
		case statsPhaseStart:
			c.statsStart, c.haveStart = rw.lost, true
		case statsPhaseEnd:
			c.statsEnd, c.haveEnd = rw.lost, true
		}
	}
	return nil
}

// decodeTraceStats notes what the tracing service's TraceStats counted as
// lost: chunks overwritten in a RING_BUFFER buffer before they were read
// (the oldest data of the trace), chunks discarded by a DISCARD buffer or
// before reaching one, failed patches, ABI violations and packets a trace
// writer reported lost.
func (r *Reader) decodeTraceStats(b []byte) *fieldError {
	r.traceStats = true
	var discarded uint64
	var buffers [][]byte
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fTraceStatsBuffers:
			if fe := f.want(protowire.BytesType, "buffer_stats"); fe != nil {
				return fe
			}
			buffers = append(buffers, f.b)
		case fTraceStatsChunksDiscarded:
			if fe := f.want(protowire.VarintType, "chunks_discarded"); fe != nil {
				return fe
			}
			discarded = f.v
		}
	}
	if discarded > 0 {
		r.serviceLoss = append(r.serviceLoss, fmt.Sprintf("%d chunks discarded before reaching a buffer", discarded))
	}
	names := map[protowire.Number]string{
		fBufChunksOverwritten: "chunks overwritten", fBufBytesOverwritten: "bytes overwritten",
		fBufChunksDiscarded: "chunks discarded", fBufPatchesFailed: "patches failed",
		fBufAbiViolations: "ABI violations", fBufTraceWriterPacketLoss: "trace writer packet losses",
	}
	for i, bs := range buffers {
		for len(bs) > 0 {
			g, m, fe := next(bs)
			if fe != nil {
				return fe.in("buffer_stats")
			}
			bs = bs[m:]
			name, ok := names[g.num]
			if !ok {
				continue
			}
			if fe := g.want(protowire.VarintType, name); fe != nil {
				return fe.in("buffer_stats")
			}
			if g.v > 0 {
				r.serviceLoss = append(r.serviceLoss, fmt.Sprintf("buffer %d: %d %s", i, g.v, name))
			}
		}
	}
	return nil
}

// kernelComm returns the comm the kernel's events show for a name read from
// /proc/PID/comm. For a workqueue worker /proc appends "-" and the work
// item's workqueue ("kworker/1:0-events", wq_worker_comm in
// kernel/workqueue.c); task->comm, which sched events print, has no suffix.
func kernelComm(name string) string {
	if strings.HasPrefix(name, "kworker/") {
		if i := strings.IndexByte(name[len("kworker/"):], '-'); i >= 0 {
			return name[:len("kworker/")+i]
		}
	}
	return name
}

// decodeMachine reads schedlens' Machine message: the source's clock name,
// its whole topology as topology JSON, and the scheduler sysctls it read.
func (r *Reader) decodeMachine(b []byte) *fieldError {
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fMachineClock:
			if fe := f.want(protowire.BytesType, "clock"); fe != nil {
				return fe
			}
			r.machClock, r.machClockSet = string(f.b), true
		case fMachineTopology:
			if fe := f.want(protowire.BytesType, "topology_json"); fe != nil {
				return fe
			}
			t, err := topology.ReadJSON(bytes.NewReader(f.b), "topology_json")
			if err != nil {
				r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf("the topology in schedlens' machine packet is ignored (the CpuInfo one is used): %v", err))
				continue
			}
			t.Source = "trace"
			r.machTopo = t
		case fMachineSysctl:
			if fe := f.want(protowire.BytesType, "sysctl"); fe != nil {
				return fe
			}
			name, _, ok := strings.Cut(string(f.b), "=")
			if !ok || name == "" {
				r.meta.Warnings = append(r.meta.Warnings, fmt.Sprintf("schedlens' machine packet: sysctl %q is not name=value; ignored", f.b))
				continue
			}
			r.meta.Sysctls = append(r.meta.Sysctls, string(f.b))
		}
	}
	return nil
}
