package perfdata

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// kindOf maps a tracepoint to the Kind the reader emits, as the perf script
// text reader does (ingest/perf: kindOf).
func kindOf(sys, name string) timeline.Kind {
	switch sys + ":" + name {
	case "sched:sched_switch":
		return timeline.KindSwitch
	case "sched:sched_waking":
		return timeline.KindWaking
	case "sched:sched_wakeup":
		return timeline.KindWakeup
	case "sched:sched_wakeup_new":
		return timeline.KindWakeupNew
	case "sched:sched_migrate_task":
		return timeline.KindMigrate
	case "sched:sched_process_fork":
		return timeline.KindFork
	case "sched:sched_process_exec":
		return timeline.KindExec
	case "sched:sched_process_exit":
		return timeline.KindExit
	case "sched:sched_process_free":
		return timeline.KindFree
	case "task:task_newtask":
		return timeline.KindNewTask
	case "task:task_rename":
		return timeline.KindRename
	case "power:cpu_idle":
		return timeline.KindIdle
	case "ftrace:print":
		return timeline.KindMarker
	case "signal:signal_generate":
		return timeline.KindSignal
	}
	if name == "tracing_mark_write" {
		return timeline.KindMarker
	}
	return timeline.KindUnknown
}

// fieldsOf lists the fields each kind reads, required unless marked
// optional with a leading '?' (include/trace/events/sched.h, task.h,
// power.h; kernel/trace/trace_entries.h for ftrace:print).
var fieldsOf = map[timeline.Kind][]string{
	timeline.KindSwitch:    {"prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio"},
	timeline.KindWaking:    {"comm", "pid", "prio", "?target_cpu"},
	timeline.KindWakeup:    {"comm", "pid", "prio", "?target_cpu"},
	timeline.KindWakeupNew: {"comm", "pid", "prio", "?target_cpu"},
	timeline.KindMigrate:   {"comm", "pid", "prio", "orig_cpu", "dest_cpu"},
	timeline.KindFork:      {"parent_comm", "parent_pid", "child_comm", "child_pid"},
	timeline.KindExec:      {"filename", "pid", "old_pid"},
	timeline.KindExit:      {"comm", "pid", "prio"},
	timeline.KindFree:      {"comm", "pid", "prio"},
	timeline.KindNewTask:   {"pid", "comm"},
	timeline.KindRename:    {"?pid", "oldcomm", "newcomm"},
	timeline.KindIdle:      {"state", "cpu_id"},
	timeline.KindMarker:    {"?buf"},
	timeline.KindSignal:    {"sig", "comm", "pid", "group", "result"},
}

// eventSpec is how to decode one tracepoint's raw payload: its kind and
// the fields, in the order of fieldsOf, taken from its format file.
type eventSpec struct {
	kind   timeline.Kind
	name   string // bare event name, as Meta.Unknown counts it
	fields []field
	has    []bool
	states stateTable
	small  []uint32 // state+1 of a prev_state below len(small), 0 if not seen
	cache  map[uint64]timeline.State
	// ctxComm says fill reads sampleCtx.comm (perf's name for the running
	// task), which costs a lookup.
	ctxComm bool
	idx     int   // 1 + its index in the queue's spec table, 0 before it is queued
	count   int64 // samples not yet counted in Meta.Unknown
	// std: the fields of a switch or wakeup have the layout every kernel
	// gives them (comms of char[N], pids and prios of 4-byte ints), and a
	// payload of at least need bytes holds them all: fill then reads them
	// at their offsets without checking each (stdLayout).
	std  bool
	need int
}

// newSpec builds the spec of a tracepoint format, checking that the fields
// the kind needs are there.
func newSpec(f *eventFormat, file string) (*eventSpec, *parse.ParseError) {
	s := &eventSpec{kind: kindOf(f.sys, f.name), name: f.name}
	switch s.kind {
	case timeline.KindUnknown:
		return s, nil
	case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew, timeline.KindExec, timeline.KindSignal:
		s.ctxComm = true
	}
	for _, want := range fieldsOf[s.kind] {
		opt := want[0] == '?'
		if opt {
			want = want[1:]
		}
		fl, ok := f.fields[want]
		if !ok && s.kind == timeline.KindMarker && f.name == "tracing_mark_write" {
			fl, ok = f.fields["buf"]
		}
		if !ok && !opt {
			return nil, &parse.ParseError{File: file, Offset: f.at, Record: "event format " + f.sys + "/" + f.name, Err: parse.ErrBadField,
				Msg: fmt.Sprintf("want a field %q, the format has none", want)}
		}
		s.fields = append(s.fields, fl)
		s.has = append(s.has, ok)
	}
	if !fieldByField {
		s.std, s.need = stdLayout(s)
	}
	if s.kind == timeline.KindSwitch {
		t, ok := parseStateTable(f.printFmt)
		if !ok {
			return nil, &parse.ParseError{File: file, Offset: f.at, Record: "event format sched/sched_switch", Err: parse.ErrBadField,
				Msg: "print fmt: want a __print_flags table for prev_state, found none"}
		}
		s.states = t
		s.small = make([]uint32, 1024)
		s.cache = map[uint64]timeline.State{}
	}
	return s, nil
}

// fieldByField makes every spec read its fields one by one, checking each
// (for a test that compares the two ways).
var fieldByField = false

// stdLayout reports whether a switch's or a wakeup's fields are char
// arrays and signed 4-byte ints (prev_state: any integer of 4 or 8 bytes),
// with the payload bytes they need.
func stdLayout(s *eventSpec) (bool, int) {
	var chars, ints []int // indexes into s.fields
	switch s.kind {
	case timeline.KindSwitch:
		chars, ints = []int{0, 4}, []int{1, 2, 5, 6}
		if st := &s.fields[3]; st.dataLoc || st.array || st.size != 4 && st.size != 8 {
			return false, 0
		}
	case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew:
		chars, ints = []int{0}, []int{1, 2}
		if s.has[3] {
			ints = append(ints, 3)
		}
	default:
		return false, 0
	}
	need := 0
	for i, f := range s.fields {
		if s.has[i] {
			need = max(need, f.off+f.size)
		}
	}
	for _, i := range chars {
		if f := &s.fields[i]; f.dataLoc || f.size == 0 {
			return false, 0
		}
	}
	for _, i := range ints {
		if f := &s.fields[i]; f.dataLoc || f.array || f.size != 4 || !f.signed {
			return false, 0
		}
	}
	return true, need
}

// i32 reads the signed 4-byte field f of p, which holds it.
func i32(p []byte, f *field) int64 { return int64(int32(binary.LittleEndian.Uint32(p[f.off:]))) }

// charsAt reads the char array f of p, which holds it.
func charsAt(p []byte, f *field) []byte { return p[f.off : f.off+f.size] }

// raw is a tracepoint payload being decoded; bad holds the first problem.
type raw struct {
	b   []byte
	bad string
}

// in reports whether f is inside the payload (small enough to be inlined:
// the message is short's).
func (r *raw) in(f *field) bool {
	if f.off+f.size <= len(r.b) {
		return true
	}
	r.short(f)
	return false
}

func (r *raw) short(f *field) {
	if r.bad == "" {
		r.bad = fmt.Sprintf("field %s at offset %d size %d: the payload has %d bytes", f.name, f.off, f.size, len(r.b))
	}
}

// int reads an integer field of 1, 2, 4 or 8 bytes.
func (r *raw) int(f *field) int64 {
	if !r.in(f) {
		return 0
	}
	b := r.b[f.off:]
	switch f.size {
	case 1:
		if f.signed {
			return int64(int8(b[0]))
		}
		return int64(b[0])
	case 2:
		v := binary.LittleEndian.Uint16(b)
		if f.signed {
			return int64(int16(v))
		}
		return int64(v)
	case 4:
		v := binary.LittleEndian.Uint32(b)
		if f.signed {
			return int64(int32(v))
		}
		return int64(v)
	case 8:
		return int64(binary.LittleEndian.Uint64(b))
	}
	if r.bad == "" {
		r.bad = fmt.Sprintf("field %s: integer of %d bytes, want 1, 2, 4 or 8", f.name, f.size)
	}
	return 0
}

// str reads a char array or __data_loc string up to its NUL.
func (r *raw) str(f *field) []byte {
	b := r.chars(f)
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return b
}

// chars reads a char array or __data_loc string whole, NUL and what
// follows it included (a comm for commCache, which cuts it).
func (r *raw) chars(f *field) []byte {
	if !r.in(f) {
		return nil
	}
	var b []byte
	switch {
	case f.dataLoc:
		v := binary.LittleEndian.Uint32(r.b[f.off:])
		off, n := int(v&0xffff), int(v>>16)
		if off+n > len(r.b) {
			if r.bad == "" {
				r.bad = fmt.Sprintf("field %s: __data_loc [%d, +%d) past the payload's %d bytes", f.name, off, n, len(r.b))
			}
			return nil
		}
		b = r.b[off : off+n]
	case f.size == 0:
		b = r.b[f.off:] // char x[] at the end
	default:
		b = r.b[f.off : f.off+f.size]
	}
	return b
}

func pidOf(v int64) timeline.TID { return timeline.TID(int32(v)) }

func prioOf(v int64) int16 {
	if v < math.MinInt16 || v > math.MaxInt16 {
		return -1
	}
	return int16(v)
}

// state maps a raw prev_state to the letters the kernel prints and then to
// a timeline.State, as the text reader reads them.
func (s *eventSpec) state(v uint64) (timeline.State, bool) {
	if v < uint64(len(s.small)) {
		if c := s.small[v]; c != 0 {
			return timeline.State(c - 1), true
		}
	} else if st, ok := s.cache[v]; ok {
		return st, true
	}
	st, ok := timeline.ParseState([]byte(s.states.format(v)))
	switch {
	case !ok:
	case v < uint64(len(s.small)):
		s.small[v] = uint32(st) + 1
	case len(s.cache) < 4096:
		s.cache[v] = st
	}
	return st, ok
}

// sampleCtx is what the sample header gives besides the payload: the
// running task and perf's name for it at that point (NoComm when perf
// would print a ":TID" placeholder).
type sampleCtx struct {
	tid  timeline.TID
	comm timeline.CommID
}

// fill decodes the payload of a tracepoint of kind s.kind into ev (Time,
// CPU, TGID already set), with the fields the text reader gives the same
// kind. It returns "" or what was wrong.
func (s *eventSpec) fill(p []byte, sc sampleCtx, comms *commCache, ev *timeline.Event) string {
	r := raw{b: p}
	f := s.fields
	var comm, ocomm []byte
	std := s.std && len(p) >= s.need
	switch s.kind {
	case timeline.KindSwitch:
		if std {
			ocomm = charsAt(p, &f[0])
			ev.Other = pidOf(i32(p, &f[1]))
			ev.OPrio = prioOf(i32(p, &f[2]))
			comm = charsAt(p, &f[4])
			ev.Task = pidOf(i32(p, &f[5]))
			ev.Prio = prioOf(i32(p, &f[6]))
			st := r.int(&f[3])
			state, ok := s.state(uint64(st))
			if !ok {
				return fmt.Sprintf("field prev_state: %#x prints as %q, not a state", uint64(st), s.states.format(uint64(st)))
			}
			ev.State = state
			break
		}
		ocomm = r.chars(&f[0])
		ev.Other = pidOf(r.int(&f[1]))
		ev.OPrio = prioOf(r.int(&f[2]))
		st := uint64(r.int(&f[3]))
		comm = r.chars(&f[4])
		ev.Task = pidOf(r.int(&f[5]))
		ev.Prio = prioOf(r.int(&f[6]))
		if r.bad == "" {
			state, ok := s.state(st)
			if !ok {
				return fmt.Sprintf("field prev_state: %#x prints as %q, not a state", st, s.states.format(st))
			}
			ev.State = state
		}
	case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew:
		ev.Arg = -1
		if std {
			comm = charsAt(p, &f[0])
			ev.Task = pidOf(i32(p, &f[1]))
			ev.Prio = prioOf(i32(p, &f[2]))
			if s.has[3] {
				ev.Arg = i32(p, &f[3])
			}
		} else {
			comm = r.chars(&f[0])
			ev.Task = pidOf(r.int(&f[1]))
			ev.Prio = prioOf(r.int(&f[2]))
			if s.has[3] {
				ev.Arg = r.int(&f[3])
			}
		}
		ev.Other = sc.tid
		ev.OComm = sc.comm
	case timeline.KindMigrate:
		comm = r.chars(&f[0])
		ev.Task = pidOf(r.int(&f[1]))
		ev.Prio = prioOf(r.int(&f[2]))
		ev.Arg2 = r.int(&f[3])
		ev.Arg = r.int(&f[4])
	case timeline.KindFork:
		ocomm = r.chars(&f[0])
		ev.Other = pidOf(r.int(&f[1]))
		comm = r.chars(&f[2])
		ev.Task = pidOf(r.int(&f[3]))
	case timeline.KindExec:
		file := r.str(&f[0])
		ev.Task = pidOf(r.int(&f[1]))
		ev.Arg2 = int64(pidOf(r.int(&f[2])))
		ev.Comm = sc.comm
		if sc.comm == timeline.NoComm && r.bad == "" {
			comm = execComm(file)
		}
	case timeline.KindExit, timeline.KindFree:
		comm = r.chars(&f[0])
		ev.Task = pidOf(r.int(&f[1]))
		ev.Prio = prioOf(r.int(&f[2]))
	case timeline.KindNewTask:
		ev.Task = pidOf(r.int(&f[0]))
		comm = r.chars(&f[1])
		ev.Other = sc.tid
	case timeline.KindRename:
		ev.Task = sc.tid
		if s.has[0] {
			ev.Task = pidOf(r.int(&f[0]))
		}
		ocomm = r.chars(&f[1])
		comm = r.chars(&f[2])
	case timeline.KindIdle:
		st := r.int(&f[0])
		if uint32(st) == math.MaxUint32 {
			st = -1 // PWR_EVENT_EXIT
		}
		ev.Arg = st
		ev.Arg2 = r.int(&f[1])
	case timeline.KindSignal:
		ev.Arg = r.int(&f[0])
		comm = r.chars(&f[1])
		ev.Task = pidOf(r.int(&f[2]))
		ev.Arg2 = r.int(&f[4])&0xff | (r.int(&f[3])&1)<<8
		ev.Other = sc.tid
		ev.OComm = sc.comm
	case timeline.KindMarker:
		var text []byte
		if s.has[0] {
			text = r.str(&f[0])
		}
		text = bytes.TrimRight(text, " \n\r\t")
		ev.Arg = int64(comms.strs.ID(text))
		ev.Task = sc.tid
		ev.Other = sc.tid
	}
	if r.bad != "" {
		return r.bad
	}
	if comm != nil {
		ev.Comm = comms.id(ev.Task, comm)
	}
	if ocomm != nil {
		ev.OComm = comms.id(ev.Other, ocomm)
	}
	return ""
}

// execComm is the comm the kernel gives a task after exec: the file name's
// last element, cut to TASK_COMM_LEN-1 bytes.
func execComm(file []byte) []byte {
	if i := bytes.LastIndexByte(file, '/'); i >= 0 {
		file = file[i+1:]
	}
	if len(file) > 15 {
		file = file[:15]
	}
	return file
}
