package ftrace

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// Keys of the kernel's TP_printk layouts (include/trace/events/sched.h,
// task.h, power.h). Keys after the first carry their leading space.
var (
	kPrevComm   = []byte("prev_comm=")
	kPrevPid    = []byte(" prev_pid=")
	kPrevPrio   = []byte(" prev_prio=")
	kPrevState  = []byte(" prev_state=")
	kArrowNext  = []byte(" ==> next_comm=")
	kNextPid    = []byte(" next_pid=")
	kNextPrio   = []byte(" next_prio=")
	kComm       = []byte("comm=")
	kSpComm     = []byte(" comm=")
	kPid        = []byte(" pid=")
	kPidFirst   = []byte("pid=")
	kPrio       = []byte(" prio=")
	kTargetCPU  = []byte(" target_cpu=")
	kOrigCPU    = []byte(" orig_cpu=")
	kDestCPU    = []byte(" dest_cpu=")
	kChildComm  = []byte(" child_comm=")
	kChildPid   = []byte(" child_pid=")
	kFilename   = []byte("filename=")
	kOldPid     = []byte(" old_pid=")
	kCloneFlags = []byte(" clone_flags=")
	kOldComm    = []byte(" oldcomm=")
	kNewComm    = []byte(" newcomm=")
	kOOMAdj     = []byte(" oom_score_adj=")
	kState      = []byte("state=")
	kCPUID      = []byte(" cpu_id=")
	kMarkWrite  = []byte("tracing_mark_write: ")
	kArrow      = []byte(" ==> ")
	kPluginCPU  = []byte(" CPU:")
	kSuccess    = []byte(" success=")
	kSig        = []byte("sig=")
	kErrno      = []byte(" errno=")
	kCode       = []byte(" code=")
	kGrp        = []byte(" grp=")
	kRes        = []byte(" res=")
)

// schedKind returns the Kind of a scheduler event this package reads
// fields of, by its name; false for a marker or an event it does not
// interpret.
func schedKind(name []byte) (timeline.Kind, bool) {
	switch string(name) {
	case "sched_switch":
		return timeline.KindSwitch, true
	case "sched_waking":
		return timeline.KindWaking, true
	case "sched_wakeup":
		return timeline.KindWakeup, true
	case "sched_wakeup_new":
		return timeline.KindWakeupNew, true
	case "sched_migrate_task":
		return timeline.KindMigrate, true
	case "sched_process_fork":
		return timeline.KindFork, true
	case "sched_process_exec":
		return timeline.KindExec, true
	case "sched_process_exit":
		return timeline.KindExit, true
	case "sched_process_free":
		return timeline.KindFree, true
	case "task_newtask":
		return timeline.KindNewTask, true
	case "task_rename":
		return timeline.KindRename, true
	case "cpu_idle":
		return timeline.KindIdle, true
	case "signal_generate":
		return timeline.KindSignal, true
	}
	return timeline.KindUnknown, false
}

// event fills ev from the record's event name and fields. It reports false
// for an event this package does not interpret. A summary read
// (parse.Options.Summary) parses the fields of markers only.
func (r *recParser) event(h *header, ev *timeline.Event) (bool, error) {
	p := h.rest
	// trace-cmd pads the name to 20 columns; the kernel prints one space.
	for len(p) > 0 && p[0] == ' ' {
		p = p[1:]
	}
	if k, ok := schedKind(h.name); ok {
		ev.Kind = k
		if r.summary {
			// The layout, as the full parse finds it in a well-formed
			// record: the plugin's says trace-cmd report (Reader.commit).
			switch k {
			case timeline.KindSwitch:
				r.plugin = !bytes.HasPrefix(p, kPrevComm)
			case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew:
				r.plugin = !bytes.HasPrefix(p, kComm)
			}
			return true, nil
		}
		var err error
		switch k {
		case timeline.KindSwitch:
			if bytes.HasPrefix(p, kPrevComm) {
				err = r.switchKV(h, ev, p)
			} else {
				err = r.switchPlugin(h, ev, p)
			}
		case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew:
			err = r.wakeup(h, ev, p)
		case timeline.KindMigrate:
			err = r.migrate(h, ev, p)
		case timeline.KindFork:
			err = r.fork(h, ev, p)
		case timeline.KindExec:
			err = r.exec(h, ev, p)
		case timeline.KindExit, timeline.KindFree:
			err = r.exitFree(h, ev, p)
		case timeline.KindNewTask:
			err = r.newTask(h, ev, p)
		case timeline.KindRename:
			err = r.rename(h, ev, p)
		case timeline.KindIdle:
			err = r.cpuIdle(h, ev, p)
		case timeline.KindSignal:
			err = r.signal(h, ev, p)
		}
		return err == nil, err
	}
	switch string(h.name) {
	case "tracing_mark_write":
		// The kernel prints the ftrace print entry as "%ps: %s" with the
		// ip of tracing_mark_write: exactly one space, then the text.
		p = h.rest
		if len(p) > 0 && p[0] == ' ' {
			p = p[1:]
		}
		r.marker(h, ev, p)
	case "print":
		// trace-cmd: "print:" padding "tracing_mark_write: text"; an ip
		// without a symbol prints as "0xffff...: text".
		if bytes.HasPrefix(p, kMarkWrite) {
			p = p[len(kMarkWrite):]
		} else if len(p) > 2 && p[0] == '0' && p[1] == 'x' {
			if i := bytes.Index(p, []byte(": ")); i > 2 && isHex(p[2:i]) {
				p = p[i+2:]
			}
		}
		r.marker(h, ev, p)
	default:
		// A kernel without kallsyms prints the print entry's ip as a bare
		// address: "0xffffffff811179e7: text" (tools/kernel-lab's guests).
		if n := h.name; len(n) > 2 && n[0] == '0' && n[1] == 'x' && isHex(n[2:]) {
			p = h.rest
			if len(p) > 0 && p[0] == ' ' {
				p = p[1:]
			}
			r.marker(h, ev, p)
			break
		}
		return false, nil
	}
	return true, nil
}

// fields scans the key=value text of one event. The first failure sticks
// in err and makes later calls no-ops.
type fields struct {
	r    *recParser
	name []byte // event name, for errors
	p    []byte
	err  error
}

// fail records a failure about field.
func (f *fields) fail(cause error, format string, args ...any) {
	if f.err == nil {
		f.err = f.r.errf(recName(f.name), cause, format, args...)
	}
}

// missing records that key was not found in f.p: truncated when the text
// ends where key would start or inside it, a bad field otherwise.
func (f *fields) missing(key []byte) {
	name := bytes.Trim(key, " =>")
	if cutShort(f.p, key) {
		f.fail(parse.ErrTruncated, "field %s: want %s=..., got end of line", name, name)
		return
	}
	f.fail(parse.ErrBadField, "field %s: want %s=..., got %q", name, name, clip(f.p))
}

// cutShort reports whether p ends before key or inside key.
func cutShort(p, key []byte) bool {
	if len(p) == 0 {
		return true
	}
	if key[0] != ' ' {
		return bytes.HasPrefix(key, p)
	}
	i := bytes.LastIndexByte(p, ' ')
	if i < 0 {
		return true // the previous value runs to the end
	}
	return bytes.HasPrefix(key, p[i:])
}

// first expects f.p to start with key.
// task parses the "comm=X pid=N prio=P" that opens sched_waking,
// sched_wakeup, sched_migrate_task and sched_process_exit/free.
func (f *fields) task() (comm []byte, pid, prio int64) {
	f.first(kComm)
	comm = f.until("comm", kPid)
	f.key(kPid)
	pid = f.num("pid", 0, maxPID)
	f.key(kPrio)
	prio = f.num("prio", minPrio, maxPrio)
	return comm, pid, prio
}

func (f *fields) first(key []byte) {
	if f.err != nil {
		return
	}
	if !bytes.HasPrefix(f.p, key) {
		f.missing(key)
		return
	}
	f.p = f.p[len(key):]
}

// key moves past key (" name="), which comes next or, when the kernel put
// fields this package skips in between, later.
func (f *fields) key(key []byte) {
	if f.err != nil {
		return
	}
	if bytes.HasPrefix(f.p, key) {
		f.p = f.p[len(key):]
		return
	}
	i := bytes.Index(f.p, key)
	if i < 0 {
		f.missing(key)
		return
	}
	f.p = f.p[i+len(key):]
}

// optKey is key for a field that may be absent; it reports whether it was
// there.
func (f *fields) optKey(key []byte) bool {
	if f.err != nil {
		return false
	}
	if bytes.HasPrefix(f.p, key) {
		f.p = f.p[len(key):]
		return true
	}
	i := bytes.Index(f.p, key)
	if i < 0 {
		return false
	}
	f.p = f.p[i+len(key):]
	return true
}

// until returns the text up to next (a string field whose value may hold
// spaces); next stays in f.p.
func (f *fields) until(field string, next []byte) []byte {
	if f.err != nil {
		return nil
	}
	i := bytes.Index(f.p, next)
	if i < 0 {
		f.missing(next)
		return nil
	}
	v := f.p[:i]
	f.p = f.p[i:]
	return v
}

// untilOpt returns the text up to next, or to the end when next is absent.
func (f *fields) untilOpt(next []byte) []byte {
	if f.err != nil {
		return nil
	}
	i := bytes.Index(f.p, next)
	if i < 0 {
		v := f.p
		f.p = f.p[len(f.p):]
		return v
	}
	v := f.p[:i]
	f.p = f.p[i:]
	return v
}

// num parses a decimal number ended by a space or the end of the text.
func (f *fields) num(field string, min, max int64) int64 {
	if f.err != nil {
		return 0
	}
	i := bytes.IndexByte(f.p, ' ')
	if i < 0 {
		i = len(f.p)
	}
	tok := f.p[:i]
	v, ok := parseInt(tok)
	if !ok || v < min || v > max {
		switch {
		case len(tok) == 0 && i == len(f.p):
			f.fail(parse.ErrTruncated, "field %s: want a number, got end of line", field)
		case !ok:
			f.fail(parse.ErrBadField, "field %s: want a decimal number, got %q", field, clip(tok))
		default:
			f.fail(parse.ErrBadField, "field %s: want %d..%d, got %d", field, min, max, v)
		}
		return 0
	}
	f.p = f.p[i:]
	return v
}

// parseInt parses an optionally negative decimal number filling all of b.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return len(b) > 0
}

const (
	maxPID  = math.MaxInt32
	minPrio = math.MinInt16
	maxPrio = math.MaxInt16
	maxCPUs = MaxCPU - 1
)

// commSlot is one entry of the reader's direct-mapped comm cache. Kernel
// comms are at most 15 bytes (TASK_COMM_LEN 16), so they fit inline.
type commSlot struct {
	n  uint8
	b  [15]byte
	id timeline.CommID
}

// commHash picks the cache slot of a comm of 1..15 bytes.
func commHash(b []byte) uint32 {
	var x uint64
	if len(b) >= 8 {
		x = binary.LittleEndian.Uint64(b) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(b[len(b)-8:]), 29)
	} else {
		for _, c := range b {
			x = x<<8 | uint64(c)
		}
	}
	x ^= uint64(len(b)) << 59
	x *= 0x9E3779B97F4A7C15
	return uint32(x >> (64 - commCacheBits))
}

// headerComm interns the TASK column; "<...>" (comm not recorded) is NoComm.
func (r *recParser) headerComm(h *header) timeline.CommID {
	if string(h.comm) == "<...>" {
		return timeline.NoComm
	}
	return r.intern(h.comm)
}

// state parses a prev_state value.
func (r *recParser) state(h *header, b []byte) (timeline.State, error) {
	s, ok := timeline.ParseState(b)
	if !ok {
		if len(b) == 0 {
			return 0, r.errf(recName(h.name), parse.ErrBadField, "field prev_state: want R, R+ or letters of SDTtXZPIKWxN joined by |, got an empty state")
		}
		return 0, r.errf(recName(h.name), parse.ErrBadField, "field prev_state: want R, R+ or letters of SDTtXZPIKWxN joined by |, got %q", clip(b))
	}
	return s, nil
}

// switchKV parses the kernel's sched_switch layout:
//
//	prev_comm=bash prev_pid=13113 prev_prio=120 prev_state=R ==> next_comm=rcu_preempt next_pid=15 next_prio=120
func (r *recParser) switchKV(h *header, ev *timeline.Event, p []byte) error {
	f := fields{r: r, name: h.name, p: p}
	f.first(kPrevComm)
	oc := f.until("prev_comm", kPrevPid)
	f.key(kPrevPid)
	op := f.num("prev_pid", 0, maxPID)
	f.key(kPrevPrio)
	opr := f.num("prev_prio", minPrio, maxPrio)
	f.key(kPrevState)
	sb := f.until("prev_state", kArrowNext)
	f.key(kArrowNext)
	nc := f.until("next_comm", kNextPid)
	f.key(kNextPid)
	np := f.num("next_pid", 0, maxPID)
	f.key(kNextPrio)
	npr := f.num("next_prio", minPrio, maxPrio)
	if f.err != nil {
		return f.err
	}
	st, err := r.state(h, sb)
	if err != nil {
		return err
	}
	ev.Other = timeline.TID(op)
	ev.OComm = r.intern(oc)
	ev.OPrio = int16(opr)
	ev.State = st
	ev.Task = timeline.TID(np)
	ev.Comm = r.intern(nc)
	ev.Prio = int16(npr)
	return nil
}

// switchPlugin parses trace-cmd's sched_switch layout:
//
//	bash:13113 [120] R ==> rcu_preempt:15 [120]
//
// Comms may hold ':', so each side is read from its right end.
func (r *recParser) switchPlugin(h *header, ev *timeline.Event, p []byte) error {
	const want = "want COMM:PID [PRIO] STATE ==> COMM:PID [PRIO]"
	i := bytes.Index(p, kArrow)
	if i < 0 {
		if len(p) == 0 {
			return r.errf(recName(h.name), parse.ErrTruncated, "%s, got end of line", want)
		}
		if cutShort(p, kArrow) || bytes.HasSuffix(p, []byte(" =")) || bytes.HasSuffix(p, []byte(" ==")) {
			return r.errf(recName(h.name), parse.ErrTruncated, "%s, got end of line after %q", want, clip(p))
		}
		return r.errf(recName(h.name), parse.ErrBadField, "%s, got %q", want, clip(p))
	}
	left, right := p[:i], p[i+len(kArrow):]
	sp := bytes.LastIndexByte(left, ' ')
	if sp < 0 {
		return r.errf(recName(h.name), parse.ErrBadField, "%s, got %q", want, clip(p))
	}
	sb := left[sp+1:]
	oc, op, opr, ok := commPidPrio(left[:sp])
	if !ok {
		return r.errf(recName(h.name), parse.ErrBadField, "field prev: want COMM:PID [PRIO], got %q", clip(left[:sp]))
	}
	nc, np, npr, ok := commPidPrio(right)
	if !ok {
		if len(right) == 0 || bytes.IndexByte(right, ':') < 0 && bytes.IndexByte(right, ' ') < 0 {
			// cut inside the comm
			return r.errf(recName(h.name), parse.ErrTruncated, "field next: want COMM:PID [PRIO], got end of line after %q", clip(p))
		}
		return r.errf(recName(h.name), parse.ErrBadField, "field next: want COMM:PID [PRIO], got %q", clip(right))
	}
	st, err := r.state(h, sb)
	if err != nil {
		return err
	}
	r.plugin = true
	ev.Other = op
	ev.OComm = r.intern(oc)
	ev.OPrio = opr
	ev.State = st
	ev.Task = np
	ev.Comm = r.intern(nc)
	ev.Prio = npr
	return nil
}

// commPidPrio parses "comm:pid [prio]" or "comm:pid" from the right.
func commPidPrio(b []byte) (comm []byte, pid timeline.TID, prio int16, ok bool) {
	prio = -1
	if n := len(b); n > 0 && b[n-1] == ']' {
		lb := bytes.LastIndex(b, []byte(" ["))
		if lb < 0 {
			return nil, 0, 0, false
		}
		v, ok := parseInt(b[lb+2 : n-1])
		if !ok || v < minPrio || v > maxPrio {
			return nil, 0, 0, false
		}
		prio = int16(v)
		b = b[:lb]
	}
	c := bytes.LastIndexByte(b, ':')
	if c < 0 {
		return nil, 0, 0, false
	}
	v, ok := parseInt(b[c+1:])
	if !ok || v < 0 || v > maxPID {
		return nil, 0, 0, false
	}
	return b[:c], timeline.TID(v), prio, true
}

// wakeup parses sched_waking, sched_wakeup and sched_wakeup_new in the
// kernel's layout
//
//	comm=rcu_preempt pid=15 prio=120 target_cpu=000   (older: prio=120 success=1 target_cpu=000)
//
// or trace-cmd's
//
//	rcu_preempt:15 [120] CPU:000                      (older: [120] success=1 CPU:000)
func (r *recParser) wakeup(h *header, ev *timeline.Event, p []byte) error {
	ev.Other = h.pid
	ev.OComm = r.headerComm(h)
	ev.Arg = -1
	if !bytes.HasPrefix(p, kComm) {
		return r.wakeupPlugin(h, ev, p)
	}
	f := fields{r: r, name: h.name, p: p}
	c, pid, prio := f.task()
	if f.optKey(kTargetCPU) {
		ev.Arg = f.num("target_cpu", 0, maxCPUs)
	}
	if f.err != nil {
		return f.err
	}
	ev.Task = timeline.TID(pid)
	ev.Comm = r.intern(c)
	ev.Prio = int16(prio)
	return nil
}

func (r *recParser) wakeupPlugin(h *header, ev *timeline.Event, p []byte) error {
	if i := bytes.LastIndex(p, kPluginCPU); i >= 0 {
		v, ok := parseInt(p[i+len(kPluginCPU):])
		if !ok || v < 0 || v > maxCPUs {
			return r.errf(recName(h.name), parse.ErrBadField, "field CPU: want CPU:N, got %q", clip(p[i+1:]))
		}
		ev.Arg = v
		p = p[:i]
	}
	if i := bytes.LastIndex(p, kSuccess); i >= 0 {
		if _, ok := parseInt(p[i+len(kSuccess):]); !ok {
			return r.errf(recName(h.name), parse.ErrBadField, "field success: want success=N, got %q", clip(p[i+1:]))
		}
		p = p[:i]
	}
	c, pid, prio, ok := commPidPrio(p)
	if !ok {
		if len(p) == 0 {
			return r.errf(recName(h.name), parse.ErrTruncated, "want comm=COMM pid=PID prio=PRIO target_cpu=CPU or COMM:PID [PRIO] CPU:N, got end of line")
		}
		return r.errf(recName(h.name), parse.ErrBadField, "want comm=COMM pid=PID prio=PRIO target_cpu=CPU or COMM:PID [PRIO] CPU:N, got %q", clip(p))
	}
	r.plugin = true
	ev.Task = pid
	ev.Comm = r.intern(c)
	ev.Prio = prio
	return nil
}

// migrate parses "comm=rcu_preempt pid=15 prio=120 orig_cpu=0 dest_cpu=1".
func (r *recParser) migrate(h *header, ev *timeline.Event, p []byte) error {
	f := fields{r: r, name: h.name, p: p}
	c, pid, prio := f.task()
	f.key(kOrigCPU)
	orig := f.num("orig_cpu", 0, maxCPUs)
	f.key(kDestCPU)
	dest := f.num("dest_cpu", 0, maxCPUs)
	if f.err != nil {
		return f.err
	}
	ev.Task = timeline.TID(pid)
	ev.Comm = r.intern(c)
	ev.Prio = int16(prio)
	ev.Arg = dest
	ev.Arg2 = orig
	return nil
}

// fork parses "comm=bash pid=13113 child_comm=bash child_pid=13116".
func (r *recParser) fork(h *header, ev *timeline.Event, p []byte) error {
	f := fields{r: r, name: h.name, p: p}
	f.first(kComm)
	pc := f.until("comm", kPid)
	f.key(kPid)
	pid := f.num("pid", 0, maxPID)
	f.key(kChildComm)
	cc := f.until("child_comm", kChildPid)
	f.key(kChildPid)
	cpid := f.num("child_pid", 0, maxPID)
	if f.err != nil {
		return f.err
	}
	ev.Other = timeline.TID(pid)
	ev.OComm = r.intern(pc)
	ev.Task = timeline.TID(cpid)
	ev.Comm = r.intern(cc)
	return nil
}

// exec parses "filename=/usr/bin/sh pid=13119 old_pid=13119"; the comm
// after exec is the TASK column's.
func (r *recParser) exec(h *header, ev *timeline.Event, p []byte) error {
	f := fields{r: r, name: h.name, p: p}
	f.first(kFilename)
	f.until("filename", kPid)
	f.key(kPid)
	pid := f.num("pid", 0, maxPID)
	f.key(kOldPid)
	old := f.num("old_pid", 0, maxPID)
	if f.err != nil {
		return f.err
	}
	ev.Task = timeline.TID(pid)
	ev.Comm = r.headerComm(h)
	ev.Arg2 = old
	return nil
}

// exitFree parses sched_process_exit and sched_process_free:
// "comm=hackbench pid=389 prio=120" (newer kernels append group_dead=).
func (r *recParser) exitFree(h *header, ev *timeline.Event, p []byte) error {
	f := fields{r: r, name: h.name, p: p}
	c, pid, prio := f.task()
	if f.err != nil {
		return f.err
	}
	ev.Task = timeline.TID(pid)
	ev.Comm = r.intern(c)
	ev.Prio = int16(prio)
	return nil
}

// newTask parses "pid=13116 comm=bash clone_flags=1200000 oom_score_adj=0".
func (r *recParser) newTask(h *header, ev *timeline.Event, p []byte) error {
	f := fields{r: r, name: h.name, p: p}
	f.first(kPidFirst)
	pid := f.num("pid", 0, maxPID)
	f.key(kSpComm)
	c := f.untilOpt(kCloneFlags)
	if f.err != nil {
		return f.err
	}
	ev.Task = timeline.TID(pid)
	ev.Comm = r.intern(c)
	ev.Other = h.pid
	return nil
}

// rename parses "pid=13116 oldcomm=bash newcomm=oracle-busy
// oom_score_adj=0"; kernels that dropped pid= rename the TASK column's task.
func (r *recParser) rename(h *header, ev *timeline.Event, p []byte) error {
	f := fields{r: r, name: h.name, p: p}
	pid := int64(h.pid)
	if bytes.HasPrefix(p, kPidFirst) {
		f.first(kPidFirst)
		pid = f.num("pid", 0, maxPID)
		f.key(kOldComm)
	} else {
		f.first(kOldComm[1:])
	}
	oc := f.until("oldcomm", kNewComm)
	f.key(kNewComm)
	nc := f.untilOpt(kOOMAdj)
	if f.err != nil {
		return f.err
	}
	ev.Task = timeline.TID(pid)
	ev.Comm = r.intern(nc)
	ev.OComm = r.intern(oc)
	return nil
}

// cpuIdle parses "state=1 cpu_id=3"; state 4294967295 ((u32)-1,
// PWR_EVENT_EXIT) is idle exit, reported as -1.
func (r *recParser) cpuIdle(h *header, ev *timeline.Event, p []byte) error {
	f := fields{r: r, name: h.name, p: p}
	f.first(kState)
	st := f.num("state", -1, math.MaxUint32)
	f.key(kCPUID)
	cpu := f.num("cpu_id", 0, math.MaxUint32)
	if f.err != nil {
		return f.err
	}
	if st == math.MaxUint32 {
		st = -1
	}
	ev.Arg = st
	ev.Arg2 = cpu
	return nil
}

// marker fills a KindMarker with text, trimmed of trailing space.
func (r *recParser) marker(h *header, ev *timeline.Event, text []byte) {
	text = bytes.TrimRight(text, " \t\r\n")
	ev.Kind = timeline.KindMarker
	ev.Task = h.pid
	ev.Other = h.pid
	ev.Arg = r.internText(text)
}

// signal parses signal_generate (include/trace/events/signal.h):
// "sig=15 errno=0 code=0 comm=bash pid=1234 grp=1 res=0". The sender is
// the header task; Arg is the signal, Arg2 the result (0: delivered) with
// the group flag in bit 8.
func (r *recParser) signal(h *header, ev *timeline.Event, p []byte) error {
	f := fields{r: r, name: h.name, p: p}
	f.first(kSig)
	sig := f.num("sig", 0, 1<<16)
	f.key(kErrno)
	f.num("errno", -1<<31, 1<<31)
	f.key(kCode)
	f.num("code", -1<<31, 1<<31)
	f.key(kSpComm)
	c := f.until("comm", kPid)
	f.key(kPid)
	pid := f.num("pid", 0, maxPID)
	f.key(kGrp)
	grp := f.num("grp", 0, 1)
	f.key(kRes)
	res := f.num("res", 0, 255)
	if f.err != nil {
		return f.err
	}
	ev.Task = timeline.TID(pid)
	ev.Comm = r.intern(c)
	ev.Other = h.pid
	ev.OComm = r.headerComm(h)
	ev.Arg = sig
	ev.Arg2 = res | grp<<8
	return nil
}
