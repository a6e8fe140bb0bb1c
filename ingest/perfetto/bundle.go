package perfetto

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// bundleScratch holds the decoded parts of one FtraceEventBundle; it is
// reused from bundle to bundle.
type bundleScratch struct {
	plain  []timeline.Event // FtraceEvents, Time still raw (ftrace clock)
	intern []timeline.CommID

	swTS, swState, swPid, swPrio, swComm        []uint64
	wkTS, wkPid, wkCPU, wkPrio, wkComm, wkFlags []uint64
}

func (s *bundleScratch) reset() {
	s.plain = s.plain[:0]
	s.intern = s.intern[:0]
	s.swTS, s.swState, s.swPid, s.swPrio, s.swComm = s.swTS[:0], s.swState[:0], s.swPid[:0], s.swPrio[:0], s.swComm[:0]
	s.wkTS, s.wkPid, s.wkCPU, s.wkPrio, s.wkComm, s.wkFlags = s.wkTS[:0], s.wkPid[:0], s.wkCPU[:0], s.wkPrio[:0], s.wkComm[:0], s.wkFlags[:0]
}

// decodeBundle decodes one FtraceEventBundle and appends its events to
// r.out.
//
//  1. Scan the fields: plain FtraceEvents are decoded into s.plain in file
//     order, compact_sched columns into s.sw*/s.wk*, the rest noted.
//  2. Fix the clock offset (first bundle only) and note lost data and a
//     late buffer start for the CPU.
//  3. Check the compact columns and turn delta timestamps into absolute ones.
//  4. Merge the plain events, the compact switches and the compact wakings by
//     (time, kind), filling what compact_sched leaves out from the CPU's
//     running task, and append them to r.out.
func (r *Reader) decodeBundle(b []byte, seq *seqState) *fieldError {
	s := &r.b
	s.reset()
	var (
		cpu                      uint64
		lost                     bool
		prevEnd, lastRead        uint64
		clk                      uint64
		ftraceTS, bootTS         int64
		haveFtraceTS, haveBootTS bool
		nErrors                  int
		compactOK                = true
	)
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fBundleCPU:
			if fe := f.want(protowire.VarintType, "cpu"); fe != nil {
				return fe
			}
			cpu = f.v
		case fBundleEvent:
			if fe := f.want(protowire.BytesType, "event"); fe != nil {
				return fe
			}
			s.plain = append(s.plain, timeline.Event{})
			keep, fe := r.decodeEvent(f.b, &s.plain[len(s.plain)-1])
			if fe != nil {
				s.plain = s.plain[:len(s.plain)-1]
				fe.in("event")
				if !r.lenient {
					return fe
				}
				r.meta.Skip(r.perr(r.curOff, r.packetBase, fe.in("ftrace_events")))
				continue
			}
			if !keep {
				s.plain = s.plain[:len(s.plain)-1]
			}
		case fBundleLostEvents:
			if fe := f.want(protowire.VarintType, "lost_events"); fe != nil {
				return fe
			}
			lost = lost || f.v != 0
		case fBundleCompactSched:
			if fe := f.want(protowire.BytesType, "compact_sched"); fe != nil {
				return fe
			}
			if fe := r.decodeCompact(f.b); fe != nil {
				fe.in("compact_sched")
				if !r.lenient {
					return fe
				}
				r.meta.Skip(r.perr(r.curOff, r.packetBase, fe.in("ftrace_events")))
				compactOK = false
			}
		case fBundleFtraceClock, fBundleFtraceTimestamp, fBundleBootTimestamp, fBundleLastReadEventTS, fBundlePrevBundleEndTS:
			if fe := f.want(protowire.VarintType, bundleFieldName(f.num)); fe != nil {
				return fe
			}
			switch f.num {
			case fBundleFtraceClock:
				clk = f.v
			case fBundleFtraceTimestamp:
				ftraceTS, haveFtraceTS = int64(f.v), true
			case fBundleBootTimestamp:
				bootTS, haveBootTS = int64(f.v), true
			case fBundleLastReadEventTS:
				lastRead = f.v
			case fBundlePrevBundleEndTS:
				prevEnd = f.v
			}
		case fBundleError:
			nErrors++
		}
	}
	if cpu > MaxCPU {
		return badField("cpu %d above the limit %d", cpu, MaxCPU).in("cpu")
	}
	if !compactOK {
		s.swTS, s.wkTS = s.swTS[:0], s.wkTS[:0]
	} else if fe := r.checkCompact(); fe != nil {
		fe.in("compact_sched")
		if !r.lenient {
			return fe
		}
		r.meta.Skip(r.perr(r.curOff, r.packetBase, fe.in("ftrace_events")))
		s.swTS, s.wkTS = s.swTS[:0], s.wkTS[:0]
	}

	r.lockClock(clk, ftraceTS, bootTS, haveFtraceTS && haveBootTS)
	ci := int(cpu)
	c := r.cpu(ci)
	c.bundles++
	for len(seq.cpus) <= ci/64 {
		seq.cpus = append(seq.cpus, 0)
	}
	seq.cpus[ci/64] |= 1 << (ci % 64)

	validEnd := prevEnd
	if validEnd == 0 {
		validEnd = lastRead
	}
	if c.bundles == 1 && validEnd > 0 && validEnd <= math.MaxInt64 {
		// Earlier bundles of this CPU were written but are not in the
		// file (Perfetto's own ring buffer overwrote them): the CPU's data
		// is complete only from validEnd on.
		c.pendStart, c.startAt = true, timeline.Time(int64(validEnd)+r.clockOffset)
		r.lateStarts++
	}
	if lost || nErrors > 0 {
		start := timeline.NoTime
		if prevEnd > 0 && prevEnd <= math.MaxInt64 {
			start = timeline.Time(int64(prevEnd) + r.clockOffset)
		}
		r.markLost(ci, start, -1)
	}
	r.startMerge(ci)
	return nil
}

func bundleFieldName(n protowire.Number) string {
	switch n {
	case fBundleFtraceClock:
		return "ftrace_clock"
	case fBundleFtraceTimestamp:
		return "ftrace_timestamp"
	case fBundleBootTimestamp:
		return "boot_timestamp"
	case fBundleLastReadEventTS:
		return "last_read_event_timestamp"
	case fBundlePrevBundleEndTS:
		return "previous_bundle_end_timestamp"
	}
	return "field " + strconv.Itoa(int(n))
}

// decodeCompact reads the CompactSched columns into the scratch slices.
func (r *Reader) decodeCompact(b []byte) *fieldError {
	s := &r.b
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fCompactInternTable:
			if fe := f.want(protowire.BytesType, "intern_table"); fe != nil {
				return fe
			}
			s.intern = append(s.intern, r.commOf(f.b))
		case fCompactSwitchTimestamp:
			s.swTS, fe = appendPacked(s.swTS, &f, "switch_timestamp")
		case fCompactSwitchPrevState:
			s.swState, fe = appendPacked(s.swState, &f, "switch_prev_state")
		case fCompactSwitchNextPid:
			s.swPid, fe = appendPacked(s.swPid, &f, "switch_next_pid")
		case fCompactSwitchNextPrio:
			s.swPrio, fe = appendPacked(s.swPrio, &f, "switch_next_prio")
		case fCompactSwitchNextComm:
			s.swComm, fe = appendPacked(s.swComm, &f, "switch_next_comm_index")
		case fCompactWakingTimestamp:
			s.wkTS, fe = appendPacked(s.wkTS, &f, "waking_timestamp")
		case fCompactWakingPid:
			s.wkPid, fe = appendPacked(s.wkPid, &f, "waking_pid")
		case fCompactWakingTargetCPU:
			s.wkCPU, fe = appendPacked(s.wkCPU, &f, "waking_target_cpu")
		case fCompactWakingPrio:
			s.wkPrio, fe = appendPacked(s.wkPrio, &f, "waking_prio")
		case fCompactWakingComm:
			s.wkComm, fe = appendPacked(s.wkComm, &f, "waking_comm_index")
		case fCompactWakingCommonFlag:
			s.wkFlags, fe = appendPacked(s.wkFlags, &f, "waking_common_flags")
		}
		if fe != nil {
			return fe
		}
	}
	return nil
}

// checkCompact checks that the columns of each stream have one entry per
// event and valid intern indices, and turns the delta-encoded timestamps
// into absolute ones (raw ftrace clock). waking_common_flags may be shorter
// than the other waking columns or absent.
func (r *Reader) checkCompact() *fieldError {
	s := &r.b
	ns := len(s.swTS)
	if len(s.swState) != ns || len(s.swPid) != ns || len(s.swPrio) != ns || len(s.swComm) != ns {
		return badField("switch columns differ in length: switch_timestamp %d, switch_prev_state %d, switch_next_pid %d, switch_next_prio %d, switch_next_comm_index %d",
			ns, len(s.swState), len(s.swPid), len(s.swPrio), len(s.swComm))
	}
	nw := len(s.wkTS)
	if len(s.wkPid) != nw || len(s.wkCPU) != nw || len(s.wkPrio) != nw || len(s.wkComm) != nw || len(s.wkFlags) > nw {
		return badField("waking columns differ in length: waking_timestamp %d, waking_pid %d, waking_target_cpu %d, waking_prio %d, waking_comm_index %d, waking_common_flags %d",
			nw, len(s.wkPid), len(s.wkCPU), len(s.wkPrio), len(s.wkComm), len(s.wkFlags))
	}
	for _, col := range []struct {
		name string
		v    []uint64
	}{{"switch_next_pid", s.swPid}, {"waking_pid", s.wkPid}} {
		for i, v := range col.v {
			if _, fe := pidOf(v, col.name); fe != nil {
				return fe.in(fmt.Sprintf("%s[%d]", col.name, i))
			}
		}
	}
	ni := uint64(len(s.intern))
	for i, x := range s.swComm {
		if x >= ni {
			return badField("switch_next_comm_index[%d] = %d, intern_table has %d entries", i, x, ni)
		}
	}
	for i, x := range s.wkComm {
		if x >= ni {
			return badField("waking_comm_index[%d] = %d, intern_table has %d entries", i, x, ni)
		}
	}
	if fe := absolute(s.swTS, "switch_timestamp"); fe != nil {
		return fe
	}
	return absolute(s.wkTS, "waking_timestamp")
}

// absolute replaces delta-encoded timestamps by their running sum.
func absolute(ts []uint64, name string) *fieldError {
	var acc uint64
	for i, d := range ts {
		n := acc + d
		if n < acc || n > math.MaxInt64 {
			return badField("%s[%d]: running sum overflows", name, i)
		}
		acc = n
		ts[i] = acc
	}
	return nil
}

// mergeState walks the three streams of a decoded bundle (plain events,
// compact switches, compact wakings) in (time, kind) order, one event per
// Next call, writing straight into the caller's Event.
type mergeState struct {
	active     bool
	ci         int
	np, ns, nw int
	pi, si, wi int
	pt, st, wt uint64 // next raw timestamp of each stream, none when exhausted
	pk         timeline.Kind
	tieCounted int // 1 + the waking whose tie afterSleep counted
}

// none marks an exhausted stream (real timestamps are at most MaxInt64).
const none = math.MaxUint64

// startMerge prepares the walk over the bundle just decoded for CPU ci.
//
// Order: at one timestamp a compact waking goes first, a compact switch
// last, and plain events keep their file order between them (ordered by
// kind against the compact ones). The compact columns do not say how a
// waking and a switch of the same instant were ordered, and with
// microsecond timestamps (a converted text trace) they often tie: a
// waking of a task that a switch of the same instant puts to sleep (its
// prev, with a sleeping prev_state) went after that switch, since a
// running task cannot be woken from a sleep it has not entered yet (see
// afterSleep). Such ties are counted in tiesInferred. The walk tracks the CPU's running task,
// fills the prev side of compact switches from it, and hands out pending
// BufferStart/Lost records just before the CPU's first event of the bundle.
func (r *Reader) startMerge(ci int) {
	s := &r.b
	m := &r.m
	*m = mergeState{active: true, ci: ci, np: len(s.plain), ns: len(s.swTS), nw: len(s.wkTS), pt: none, st: none, wt: none}
	if m.nw > 0 {
		m.wt = s.wkTS[0]
	}
	if m.ns > 0 {
		m.st = s.swTS[0]
	}
	if m.np > 0 {
		m.pt, m.pk = uint64(s.plain[0].Time), s.plain[0].Kind
	}
}

// nextMerged fills ev with the bundle's next event. It reports false when
// the bundle is exhausted; a non-nil error is a malformed event (in
// lenient mode it is skipped here and never returned).
func (r *Reader) nextMerged(ev *timeline.Event) (bool, error) {
	m := &r.m
	s := &r.b
	c := &r.cpus[m.ci]
	cpu := timeline.CPU(m.ci)
	for m.wt != none || m.st != none || m.pt != none {
		src, t, k := 1, m.wt, timeline.KindWaking
		if m.pt < t || (m.pt == t && m.pk < k) {
			src, t, k = 2, m.pt, m.pk
		}
		if m.st < t || (m.st == t && timeline.KindSwitch < k) {
			src, t = 3, m.st
		} else if m.st == t && (src == 1 && r.afterSleep(c) || src == 2 && r.afterSwitchIn(c)) {
			src, t = 3, m.st
		}
		now := timeline.Time(int64(t) + r.clockOffset)
		var fe *fieldError
		if now < c.last {
			fe = r.backwards(m.ci, c, now, src, s, m.pi)
		} else {
			if c.pendStart || c.pendLost {
				r.pendingInto(ev, cpu, c, now)
				return true, nil
			}
			c.last = now
			if now > r.lastTime {
				r.lastTime = now
			}
			fe = r.emitInto(ev, src, now, cpu, c)
		}
		switch src {
		case 1:
			if m.wi++; m.wi < m.nw {
				m.wt = s.wkTS[m.wi]
			} else {
				m.wt = none
			}
		case 2:
			if m.pi++; m.pi < m.np {
				m.pt, m.pk = uint64(s.plain[m.pi].Time), s.plain[m.pi].Kind
			} else {
				m.pt = none
			}
		default:
			if m.si++; m.si < m.ns {
				m.st = s.swTS[m.si]
			} else {
				m.st = none
			}
		}
		if fe == nil {
			return true, nil
		}
		pe := r.perr(r.curOff, r.packetBase, fe.in("ftrace_events"))
		if !r.lenient {
			m.active = false
			return false, pe
		}
		r.meta.Skip(pe)
	}
	m.active = false
	return false, nil
}

// afterSleep reports whether the bundle's next compact waking must wait
// for a compact switch at its timestamp: one of the CPU's switches at that
// instant puts the woken task to sleep. The prev of each switch is the
// CPU's running task, then the next of the switch before. A tie ordered
// this way is counted once, at the waking, in tiesInferred.
func (r *Reader) afterSleep(c *cpuState) bool {
	s, m := &r.b, &r.m
	pid := timeline.TID(int32(s.wkPid[m.wi]))
	prev, known := c.cur, c.curKnown
	for j := m.si; j < m.ns && s.swTS[j] == m.st; j++ {
		if known && prev == pid && pid > 0 {
			if st, err := r.layout.decode(int64(s.swState[j])); err == nil && !st.Runnable() {
				if m.tieCounted != m.wi+1 {
					m.tieCounted = m.wi + 1
					r.tiesInferred++
				}
				return true
			}
		}
		prev, known = timeline.TID(int32(s.swPid[j])), true
	}
	return false
}

// afterSwitchIn reports whether the bundle's next plain event must wait
// for a compact switch at its timestamp: the event's pid (the task current
// on the CPU when it was written) is not the CPU's running task but is
// switched in by one of the CPU's switches at that instant, so the event
// was written after that switch.
func (r *Reader) afterSwitchIn(c *cpuState) bool {
	s, m := &r.b, &r.m
	e := &s.plain[m.pi]
	switch e.Kind {
	case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew:
	default:
		return false
	}
	cur := e.Other // the header pid
	if cur == timeline.NoTID || (c.curKnown && c.cur == cur) {
		return false
	}
	for j := m.si; j < m.ns && s.swTS[j] == m.st; j++ {
		if timeline.TID(int32(s.swPid[j])) == cur {
			return true
		}
	}
	return false
}

// emitInto fills ev with the event of stream src at its current index:
// a compact waking (1), a plain event (2) or a compact switch (3).
func (r *Reader) emitInto(ev *timeline.Event, src int, now timeline.Time, cpu timeline.CPU, c *cpuState) *fieldError {
	s := &r.b
	m := &r.m
	switch src {
	case 1: // compact waking: the waker is not recorded
		wi := m.wi
		ctx := timeline.CtxUnknown
		if wi < len(s.wkFlags) {
			ctx = ctxOf(s.wkFlags[wi])
		}
		*ev = timeline.Event{
			Time: now, Start: timeline.NoTime, CPU: cpu, Kind: timeline.KindWaking, Ctx: ctx,
			Task: timeline.TID(int32(s.wkPid[wi])), Other: timeline.NoTID,
			Comm: s.intern[s.wkComm[wi]], Prio: prio16(s.wkPrio[wi]), OPrio: -1, TGID: -1,
			Arg: int64(int32(s.wkCPU[wi])),
		}
	case 3: // compact switch: prev is the CPU's running task, if known
		si := m.si
		st, err := r.layout.decode(int64(s.swState[si]))
		if err != nil {
			return &fieldError{path: "compact_sched.switch_prev_state", msg: fmt.Sprintf("[%d]: %v", si, err), err: parse.ErrBadField}
		}
		r.switchesSeen++
		r.compactSeen = true
		task, comm, prio := timeline.TID(int32(s.swPid[si])), s.intern[s.swComm[si]], prio16(s.swPrio[si])
		*ev = timeline.Event{
			Time: now, Start: timeline.NoTime, CPU: cpu, Kind: timeline.KindSwitch, State: st,
			Task: task, Other: timeline.NoTID, Comm: comm, Prio: prio, OPrio: -1, TGID: -1,
		}
		if c.curKnown {
			ev.Other, ev.OComm, ev.OPrio = c.cur, c.curComm, c.curPrio
		}
		c.cur, c.curComm, c.curPrio, c.curKnown = task, comm, prio, true
		r.setPrio(task, prio)
		if task >= 0 && int(task) < len(r.tidComm) {
			r.tidComm[task] = comm
		} else {
			r.setComm(task, comm)
		}
	default: // plain event
		*ev = s.plain[m.pi]
		ev.Time, ev.CPU = now, cpu
		r.plainState(c, ev)
	}
	return nil
}

// backwards builds the error for an event earlier than its CPU's last one.
func (r *Reader) backwards(ci int, c *cpuState, now timeline.Time, src int, s *bundleScratch, pi int) *fieldError {
	path := "compact_sched.waking"
	switch src {
	case 2:
		path = "event." + s.plain[pi].Kind.String()
	case 3:
		path = "compact_sched.switch"
	}
	return &fieldError{path: path, msg: fmt.Sprintf("CPU %d: timestamp %d is before the CPU's previous event at %d", ci, now, c.last), err: parse.ErrBackwards}
}

// plainState applies a plain event to the CPU state and fills what the
// event leaves to its context (the waker's comm).
func (r *Reader) plainState(c *cpuState, e *timeline.Event) {
	switch e.Kind {
	case timeline.KindSwitch:
		c.cur, c.curComm, c.curPrio, c.curKnown = e.Task, e.Comm, e.Prio, true
		r.setPrio(e.Other, e.OPrio)
		r.setPrio(e.Task, e.Prio)
		r.setComm(e.Other, e.OComm)
		r.setComm(e.Task, e.Comm)
	case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew:
		// The event's pid is the task current on this CPU. When it is not
		// the task the compact switches left running, a switch is missing
		// from the trace: the next compact switch's prev is this task, as
		// its prev_pid would have said (the plain encoding's prev), so that
		// the gap shows as the inconsistency it is instead of charging the
		// time to the task switched in last.
		if e.Other != timeline.NoTID && c.curKnown && c.cur != e.Other && r.compactSeen {
			c.cur, c.curComm, c.curPrio = e.Other, r.commOfTask(e.Other), r.prioOfTask(e.Other)
			r.curFromPid++
		}
		r.setPrio(e.Task, e.Prio)
		if e.Other != timeline.NoTID && e.OComm == timeline.NoComm {
			if c.curKnown && c.cur == e.Other {
				e.OComm = c.curComm
			} else {
				e.OComm = r.commOfTask(e.Other)
			}
		}
	case timeline.KindRename, timeline.KindExec:
		// A task renames itself (prctl, exec) while it runs on this CPU:
		// later compact switches carry the new name on their prev side, as
		// the kernel's prev_comm would.
		if c.curKnown && c.cur == e.Task {
			c.curComm = e.Comm
		}
		r.setComm(e.Task, e.Comm)
	}
}

// setPrio remembers the last prio the events gave a task (only once a
// compact switch was read: only compact switches need it).
func (r *Reader) setPrio(t timeline.TID, p int16) {
	if !r.compactSeen || t < 0 || p < 0 {
		return
	}
	if r.tidPrio == nil {
		r.tidPrio = map[timeline.TID]int16{}
	}
	r.tidPrio[t] = p
}

// prioOfTask is the task's last known prio, -1 if none.
func (r *Reader) prioOfTask(t timeline.TID) int16 {
	if p, ok := r.tidPrio[t]; ok {
		return p
	}
	return -1
}

// maxTIDTable bounds the tid-indexed comm table (256 KiB: the default
// pid_max is 32768); larger tids (up to PID_MAX_LIMIT, 2^22) go to a map,
// so a few bytes of input cannot make the reader allocate megabytes.
const maxTIDTable = 1 << 16

// setComm remembers the last comm the events gave a task, to name the
// waker of plain wakeups whose header task is not the CPU's running task.
func (r *Reader) setComm(t timeline.TID, id timeline.CommID) {
	if id == timeline.NoComm || t < 0 {
		return
	}
	if t < maxTIDTable {
		if int(t) >= len(r.tidComm) {
			n := max(int(t)+1, 2*len(r.tidComm), 1024)
			r.tidComm = append(r.tidComm, make([]timeline.CommID, min(n, maxTIDTable)-len(r.tidComm))...)
		}
		r.tidComm[t] = id
		return
	}
	r.comms[t] = id
}

func (r *Reader) commOfTask(t timeline.TID) timeline.CommID {
	if t < 0 {
		return timeline.NoComm
	}
	if t < maxTIDTable {
		if int(t) < len(r.tidComm) {
			return r.tidComm[t]
		}
		return timeline.NoComm
	}
	return r.comms[t]
}

// pendingInto fills ev with the CPU's pending BufferStart, else its
// pending Lost record, due before an event at time now, and clears it.
func (r *Reader) pendingInto(ev *timeline.Event, cpu timeline.CPU, c *cpuState, now timeline.Time) {
	*ev = timeline.Event{Time: now, CPU: cpu, Task: timeline.NoTID, Other: timeline.NoTID, Prio: -1, OPrio: -1, TGID: -1}
	// A compact switch after lost or missing data must not take its prev
	// from a switch before the gap: the task running then is unknown.
	c.curKnown = false
	if c.pendStart {
		ev.Kind, ev.Start = timeline.KindBufferStart, c.startAt
		c.pendStart = false
		return
	}
	ev.Kind, ev.Start, ev.Arg = timeline.KindLost, c.lostStart, c.lostArg
	c.pendLost = false
}

func ctxOf(flags uint64) timeline.Context {
	switch {
	case flags&traceFlagNMI != 0:
		return timeline.CtxNMI
	case flags&traceFlagHardirq != 0:
		return timeline.CtxHardirq
	case flags&traceFlagSoftirq != 0:
		return timeline.CtxSoftirq
	}
	return timeline.CtxTask
}

// prio16 converts a prio column value (int32 on the wire) to the Event's
// int16, saturating values no kernel produces.
func prio16(v uint64) int16 {
	p := int32(v)
	if p > math.MaxInt16 {
		return math.MaxInt16
	}
	if p < math.MinInt16 {
		return math.MinInt16
	}
	return int16(p)
}

// decodeEvent decodes one FtraceEvent into ev (Time raw, CPU unset). It
// reports false for an event schedlens does not interpret (counted in
// Meta.Unknown).
func (r *Reader) decodeEvent(b []byte, ev *timeline.Event) (bool, *fieldError) {
	ev.Reset()
	var (
		ts, pid, flags          uint64
		hasTS, hasPid, hasFlags bool
		payload                 []byte
		kind                    protowire.Number
	)
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return false, fe
		}
		b = b[n:]
		switch f.num {
		case fEventTimestamp:
			if fe := f.want(protowire.VarintType, "timestamp"); fe != nil {
				return false, fe
			}
			ts, hasTS = f.v, true
		case fEventPid:
			if fe := f.want(protowire.VarintType, "pid"); fe != nil {
				return false, fe
			}
			pid, hasPid = f.v, true
		case fEventCommonFlags:
			if fe := f.want(protowire.VarintType, "common_flags"); fe != nil {
				return false, fe
			}
			flags, hasFlags = f.v, true
		default:
			if f.typ == protowire.BytesType {
				payload, kind = f.b, f.num
			} else if interpreted(f.num) {
				return false, f.want(protowire.BytesType, eventFieldName(f.num))
			}
		}
	}
	var fe *fieldError
	switch kind {
	case fEvSchedSwitch:
		fe = r.decodeSwitch(payload, ev)
	case fEvSchedWaking:
		ev.Kind = timeline.KindWaking
		fe = r.decodeWake(payload, ev)
	case fEvSchedWakeup:
		ev.Kind = timeline.KindWakeup
		fe = r.decodeWake(payload, ev)
	case fEvSchedWakeupNew:
		ev.Kind = timeline.KindWakeupNew
		fe = r.decodeWake(payload, ev)
	case fEvMigrateTask:
		fe = r.decodeSimple(payload, ev, &migrateMsg)
	case fEvProcessFork:
		fe = r.decodeSimple(payload, ev, &forkMsg)
	case fEvProcessExit:
		fe = r.decodeSimple(payload, ev, &exitMsg)
	case fEvProcessFree:
		fe = r.decodeSimple(payload, ev, &freeMsg)
	case fEvProcessExec:
		fe = r.decodeExec(payload, ev)
	case fEvTaskNewtask:
		fe = r.decodeSimple(payload, ev, &newtaskMsg)
	case fEvTaskRename:
		fe = r.decodeSimple(payload, ev, &renameMsg)
	case fEvCPUIdle:
		fe = r.decodeIdle(payload, ev)
	case fEvPrint:
		fe = r.decodePrint(payload, ev)
	case 0:
		r.meta.Unknown["ftrace_event_without_payload"]++
		return false, nil
	default:
		r.meta.Unknown[r.unknownName(kind)]++
		return false, nil
	}
	if fe != nil {
		return false, fe.in(ev.Kind.String())
	}
	if !hasTS {
		return false, badField("missing timestamp").in(ev.Kind.String())
	}
	if ts > math.MaxInt64 {
		return false, badField("timestamp %d out of range", ts).in("timestamp")
	}
	ev.Time = timeline.Time(int64(ts))
	if hasFlags {
		ev.Ctx = ctxOf(flags)
	}
	if hasPid {
		header, fe := pidOf(pid, "pid")
		if fe != nil {
			return false, fe.in("pid")
		}
		switch ev.Kind {
		case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew, timeline.KindNewTask:
			ev.Other = header
		case timeline.KindMarker:
			ev.Task, ev.Other = header, header
		}
	}
	return true, nil
}

// interpreted reports whether n is an FtraceEvent member this reader
// decodes (a message: length-delimited on the wire).
func interpreted(n protowire.Number) bool {
	switch n {
	case fEvPrint, fEvSchedSwitch, fEvCPUIdle, fEvSchedWakeup, fEvSchedWaking, fEvSchedWakeupNew, fEvTaskNewtask,
		fEvTaskRename, fEvProcessExec, fEvProcessExit, fEvProcessFork, fEvProcessFree, fEvMigrateTask:
		return true
	}
	return false
}

var eventFieldNames = map[protowire.Number]string{
	fEvPrint: "print", fEvSchedSwitch: "sched_switch", fEvCPUIdle: "cpu_idle", fEvSchedWakeup: "sched_wakeup",
	fEvSchedWaking: "sched_waking", fEvSchedWakeupNew: "sched_wakeup_new", fEvTaskNewtask: "task_newtask",
	fEvTaskRename: "task_rename", fEvProcessExec: "sched_process_exec", fEvProcessExit: "sched_process_exit",
	fEvProcessFork: "sched_process_fork", fEvProcessFree: "sched_process_free", fEvMigrateTask: "sched_migrate_task",
}

func eventFieldName(n protowire.Number) string { return eventFieldNames[n] }

func (r *Reader) unknownName(n protowire.Number) string {
	if s, ok := ftraceEventNames[uint32(n)]; ok {
		return s
	}
	s, ok := r.unknownNames[uint32(n)]
	if !ok {
		s = "ftrace_event_" + strconv.Itoa(int(n))
		r.unknownNames[uint32(n)] = s
	}
	return s
}

// The per-event decoders. Absent integer fields keep the proto default 0
// (as trace_processor reads them), except prio (-1: absent) and target CPUs
// (-1: absent).

func (r *Reader) decodeSwitch(b []byte, ev *timeline.Event) *fieldError {
	ev.Kind = timeline.KindSwitch
	ev.Task, ev.Other = 0, 0
	var raw int64
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fSwitchPrevComm, fSwitchNextComm:
			if fe := f.want(protowire.BytesType, "comm"); fe != nil {
				return fe
			}
			if f.num == fSwitchPrevComm {
				ev.OComm = r.commOf(f.b)
			} else {
				ev.Comm = r.commOf(f.b)
			}
		case fSwitchPrevPid, fSwitchPrevPrio, fSwitchPrevState, fSwitchNextPid, fSwitchNextPrio:
			if fe := f.want(protowire.VarintType, "sched_switch field"); fe != nil {
				return fe
			}
			switch f.num {
			case fSwitchPrevPid:
				if ev.Other, fe = pidOf(f.v, "prev_pid"); fe != nil {
					return fe
				}
			case fSwitchPrevPrio:
				ev.OPrio = prio16(f.v)
			case fSwitchPrevState:
				raw = int64(f.v)
			case fSwitchNextPid:
				if ev.Task, fe = pidOf(f.v, "next_pid"); fe != nil {
					return fe
				}
			case fSwitchNextPrio:
				ev.Prio = prio16(f.v)
			}
		}
	}
	st, err := r.layout.decode(raw)
	if err != nil {
		return &fieldError{path: "prev_state", msg: err.Error(), err: parse.ErrBadField}
	}
	ev.State = st
	r.switchesSeen++
	return nil
}

func (r *Reader) decodeWake(b []byte, ev *timeline.Event) *fieldError {
	ev.Task, ev.Arg = 0, -1
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fWakeComm:
			if fe := f.want(protowire.BytesType, "comm"); fe != nil {
				return fe
			}
			ev.Comm = r.commOf(f.b)
		case fWakePid, fWakePrio, fWakeTargetCPU, fWakeSuccess:
			if fe := f.want(protowire.VarintType, "field"); fe != nil {
				return fe
			}
			switch f.num {
			case fWakePid:
				var fe *fieldError
				if ev.Task, fe = pidOf(f.v, "pid"); fe != nil {
					return fe
				}
			case fWakePrio:
				ev.Prio = prio16(f.v)
			case fWakeTargetCPU:
				ev.Arg = int64(int32(f.v))
			}
		}
	}
	return nil
}

// slot is the Event field a proto field fills.
type slot uint8

const (
	slotNone  slot = iota // read and checked, not kept (clone_flags)
	slotTask              // Task (pid)
	slotOther             // Other (pid)
	slotComm              // Comm
	slotOComm             // OComm
	slotPrio              // Prio
	slotTGID              // TGID
	slotArg               // Arg (int32 on the wire)
	slotArg2              // Arg2 (int32 on the wire)
)

// msgField maps one field of an ftrace event message to its Event slot.
type msgField struct {
	num  protowire.Number
	name string // in errors about a wrong wire type
	dst  slot
}

// simpleMsg describes an ftrace event message whose fields go straight into
// Event slots: comms are strings, everything else a varint.
type simpleMsg struct {
	kind   timeline.Kind
	fields []msgField
}

// The messages of ftrace/sched.proto and ftrace/task.proto that need no
// more than copying (field numbers in proto.go).
var (
	migrateMsg = simpleMsg{timeline.KindMigrate, []msgField{
		{fMigrateComm, "comm", slotComm}, {fMigratePid, "field", slotTask}, {fMigratePrio, "field", slotPrio},
		{fMigrateOrigCPU, "field", slotArg2}, {fMigrateDestCPU, "field", slotArg}}}
	forkMsg = simpleMsg{timeline.KindFork, []msgField{
		{fForkParentComm, "comm", slotOComm}, {fForkParentPid, "pid", slotOther},
		{fForkChildComm, "comm", slotComm}, {fForkChildPid, "pid", slotTask}}}
	// The exiting task is the one running: its tgid is the event's TGID.
	exitMsg = simpleMsg{timeline.KindExit, []msgField{
		{fExitComm, "comm", slotComm}, {fExitPid, "field", slotTask}, {fExitTgid, "field", slotTGID}, {fExitPrio, "field", slotPrio}}}
	freeMsg = simpleMsg{timeline.KindFree, []msgField{
		{fFreeComm, "comm", slotComm}, {fFreePid, "field", slotTask}, {fFreePrio, "field", slotPrio}}}
	newtaskMsg = simpleMsg{timeline.KindNewTask, []msgField{
		{fNewtaskComm, "comm", slotComm}, {fNewtaskPid, "field", slotTask}, {fNewtaskCloneFlags, "field", slotNone}}}
	renameMsg = simpleMsg{timeline.KindRename, []msgField{
		{fRenameOldComm, "comm", slotOComm}, {fRenameNewComm, "comm", slotComm}, {fRenamePid, "pid", slotTask}}}
)

// decodeSimple fills ev from a message described by m. Unknown fields are
// skipped; a known field with the wrong wire type is an error.
func (r *Reader) decodeSimple(b []byte, ev *timeline.Event, m *simpleMsg) *fieldError {
	ev.Kind = m.kind
	ev.Task = 0
	switch m.kind {
	case timeline.KindMigrate:
		ev.Arg, ev.Arg2 = -1, -1
	case timeline.KindFork:
		ev.Other = 0
	}
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		for i := range m.fields {
			d := &m.fields[i]
			if d.num != f.num {
				continue
			}
			if d.dst == slotComm || d.dst == slotOComm {
				if fe := f.want(protowire.BytesType, d.name); fe != nil {
					return fe
				}
				if d.dst == slotComm {
					ev.Comm = r.commOf(f.b)
				} else {
					ev.OComm = r.commOf(f.b)
				}
				break
			}
			if fe := f.want(protowire.VarintType, d.name); fe != nil {
				return fe
			}
			switch d.dst {
			case slotTask, slotOther:
				pid, fe := pidOf(f.v, d.name)
				if fe != nil {
					return fe
				}
				if d.dst == slotTask {
					ev.Task = pid
				} else {
					ev.Other = pid
				}
			case slotPrio:
				ev.Prio = prio16(f.v)
			case slotTGID:
				pid, fe := pidOf(f.v, d.name)
				if fe != nil {
					return fe
				}
				ev.TGID = int32(pid)
			case slotArg:
				ev.Arg = int64(int32(f.v))
			case slotArg2:
				ev.Arg2 = int64(int32(f.v))
			}
			break
		}
	}
	return nil
}

// taskCommLen is TASK_COMM_LEN (include/linux/sched.h) less the NUL.
const taskCommLen = 15

// decodeExec reads sched_process_exec. The proto has no comm: the comm
// after exec is the base name of filename cut to 15 bytes, which is what
// the kernel's begin_new_exec sets (__set_task_comm(kbasename(filename))).
func (r *Reader) decodeExec(b []byte, ev *timeline.Event) *fieldError {
	ev.Kind = timeline.KindExec
	ev.Task, ev.Arg2 = 0, -1
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fExecFilename:
			if fe := f.want(protowire.BytesType, "filename"); fe != nil {
				return fe
			}
			name := f.b
			if i := bytes.LastIndexByte(name, '/'); i >= 0 {
				name = name[i+1:]
			}
			if len(name) > taskCommLen {
				name = name[:taskCommLen]
			}
			ev.Comm = r.commOf(name)
		case fExecPid, fExecOldPid:
			if fe := f.want(protowire.VarintType, "pid"); fe != nil {
				return fe
			}
			pid, fe := pidOf(f.v, "pid")
			if fe != nil {
				return fe
			}
			if f.num == fExecPid {
				ev.Task = pid
			} else {
				ev.Arg2 = int64(pid)
			}
		}
	}
	return nil
}

// idleExit is cpu_idle's state for "leaving idle" (PWR_EVENT_EXIT, (u32)-1).
const idleExit = math.MaxUint32

func (r *Reader) decodeIdle(b []byte, ev *timeline.Event) *fieldError {
	ev.Kind = timeline.KindIdle
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fIdleState, fIdleCPUID:
			if fe := f.want(protowire.VarintType, "field"); fe != nil {
				return fe
			}
			v := int64(uint32(f.v))
			if f.num == fIdleState {
				if v == idleExit {
					v = -1
				}
				ev.Arg = v
			} else {
				ev.Arg2 = v
			}
		}
	}
	return nil
}

func (r *Reader) decodePrint(b []byte, ev *timeline.Event) *fieldError {
	ev.Kind = timeline.KindMarker
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		if f.num == fPrintBuf {
			if fe := f.want(protowire.BytesType, "buf"); fe != nil {
				return fe
			}
			text := bytes.TrimRight(f.b, "\n \t\r")
			ev.Arg = int64(r.strs.ID(text))
		}
	}
	return nil
}
