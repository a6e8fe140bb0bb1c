package perfetto

import (
	"fmt"
	"math"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

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
	s := r.bs
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
	s := r.bs
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
	s, m := r.bs, &r.m
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
	s, m := r.bs, &r.m
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
	s := r.bs
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
