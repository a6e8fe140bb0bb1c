package tracedat

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// kindField is a field a decoded event needs: its name in the format file
// and whether it may be absent.
type kindField struct {
	name     string
	optional bool
}

// wanted lists the events this package decodes and the fields it takes
// from each, by the names of the kernel's TRACE_EVENT definitions
// (include/trace/events/sched.h, task.h, power.h; ftrace print in
// kernel/trace/trace_entries.h). The index of a field here is its index in
// decoder.f.
var wanted = map[string]struct {
	system string
	kind   timeline.Kind
	fields []kindField
}{
	"sched_switch":       {"sched", timeline.KindSwitch, []kindField{{"prev_comm", false}, {"prev_pid", false}, {"prev_prio", false}, {"prev_state", false}, {"next_comm", false}, {"next_pid", false}, {"next_prio", false}}},
	"sched_waking":       {"sched", timeline.KindWaking, []kindField{{"comm", false}, {"pid", false}, {"prio", false}, {"target_cpu", true}}},
	"sched_wakeup":       {"sched", timeline.KindWakeup, []kindField{{"comm", false}, {"pid", false}, {"prio", false}, {"target_cpu", true}}},
	"sched_wakeup_new":   {"sched", timeline.KindWakeupNew, []kindField{{"comm", false}, {"pid", false}, {"prio", false}, {"target_cpu", true}}},
	"sched_migrate_task": {"sched", timeline.KindMigrate, []kindField{{"comm", false}, {"pid", false}, {"prio", false}, {"orig_cpu", false}, {"dest_cpu", false}}},
	"sched_process_fork": {"sched", timeline.KindFork, []kindField{{"parent_comm", false}, {"parent_pid", false}, {"child_comm", false}, {"child_pid", false}}},
	"sched_process_exec": {"sched", timeline.KindExec, []kindField{{"pid", false}, {"old_pid", false}}},
	"sched_process_exit": {"sched", timeline.KindExit, []kindField{{"comm", false}, {"pid", false}, {"prio", false}}},
	"sched_process_free": {"sched", timeline.KindFree, []kindField{{"comm", false}, {"pid", false}, {"prio", false}}},
	"task_newtask":       {"task", timeline.KindNewTask, []kindField{{"pid", false}, {"comm", false}}},
	"task_rename":        {"task", timeline.KindRename, []kindField{{"pid", true}, {"oldcomm", false}, {"newcomm", false}}},
	"cpu_idle":           {"power", timeline.KindIdle, []kindField{{"state", false}, {"cpu_id", false}}},
	"print":              {"ftrace", timeline.KindMarker, []kindField{{"buf", false}}},
	"signal_generate":    {"signal", timeline.KindSignal, []kindField{{"sig", false}, {"comm", false}, {"pid", false}, {"group", false}, {"result", false}}},
}

// decoder reads one event id's records.
type decoder struct {
	name string
	kind timeline.Kind
	f    [7]slot
	has  [7]bool
	// sched_switch: prev_state's __print_flags table from the print fmt.
	stateBits []uint64
	stateOf   []timeline.State
	preempt   uint64 // the "+" bit (TASK_REPORT_MAX)
	minLen    int    // the end of the last field: shorter records are malformed
	stateMask uint64
}

// slot is where a decoded field sits in a record: the part of a field the
// hot path needs, small enough to pass by value.
type slot struct {
	off, size int
	signed    bool
	loc       uint8
}

func slotOf(f field) slot { return slot{off: f.off, size: f.size, signed: f.signed, loc: uint8(f.loc)} }

// common fields every record starts with (struct trace_entry,
// include/linux/trace_events.h), taken from the first format that has them.
type commonFields struct {
	typ, flags, pid field
	ok              bool
}

// addFormat registers a format file: every id gets a name (so that
// uninterpreted events count by name), the wanted ones a decoder.
func (r *Reader) addFormat(c *cursor, at int64, f *eventFormat) error {
	if f.id >= len(r.names) {
		n := make([]string, f.id+1)
		copy(n, r.names)
		r.names = n
		d := make([]*decoder, f.id+1)
		copy(d, r.dec)
		r.dec = d
	}
	r.names[f.id] = f.name
	if !r.common.ok {
		t, ok1 := f.field("common_type")
		fl, ok2 := f.field("common_flags")
		p, ok3 := f.field("common_pid")
		if ok1 && ok2 && ok3 {
			if t.size != 2 || fl.size != 1 || p.size != 4 {
				return c.errAt(at, parse.ErrBadField, "%s format: want common_type, common_flags and common_pid of 2, 1 and 4 bytes, got %d, %d, %d", f.name, t.size, fl.size, p.size)
			}
			r.common = commonFields{typ: t, flags: fl, pid: p, ok: true}
		}
	}
	w, ok := wanted[f.name]
	if !ok || w.system != f.system {
		return nil
	}
	d := &decoder{name: f.name, kind: w.kind}
	for i, kf := range w.fields {
		fd, ok := f.field(kf.name)
		if !ok {
			if kf.optional {
				continue
			}
			return c.errAt(at, parse.ErrBadField, "%s:%s format: want a field %s, the format has none", f.system, f.name, kf.name)
		}
		isStr := kf.name == "buf" || kf.name == "prev_comm" || kf.name == "next_comm" || kf.name == "comm" || kf.name == "parent_comm" || kf.name == "child_comm" || kf.name == "oldcomm" || kf.name == "newcomm"
		switch {
		case isStr && fd.loc != 0 && fd.size != 4:
			return c.errAt(at, parse.ErrBadField, "%s format: field %s: want a 4-byte dynamic array word, got size %d", f.name, kf.name, fd.size)
		case isStr && fd.loc == 0 && !fd.array:
			return c.errAt(at, parse.ErrBadField, "%s format: field %s: want a char array, got %q", f.name, kf.name, fd.typ)
		case !isStr && fd.size != 1 && fd.size != 2 && fd.size != 4 && fd.size != 8:
			return c.errAt(at, parse.ErrBadField, "%s format: field %s: want an integer of 1, 2, 4 or 8 bytes, got size %d", f.name, kf.name, fd.size)
		}
		d.f[i], d.has[i] = slotOf(fd), true
		d.minLen = max(d.minLen, fd.off+fd.size)
	}
	if d.kind == timeline.KindSwitch {
		vals, names := flagTable(f.print)
		var top uint64
		for i, v := range vals {
			st, ok := timeline.ParseState([]byte(names[i]))
			if !ok || v == 0 || v&(v-1) != 0 {
				return c.errAt(at, parse.ErrBadField, "sched_switch print fmt: prev_state flag {%#x, %q}: want a single bit and a state letter", v, names[i])
			}
			d.stateBits = append(d.stateBits, v)
			d.stateOf = append(d.stateOf, st)
			d.stateMask |= v
			top = max(top, v)
		}
		if len(vals) == 0 {
			return c.errAt(at, parse.ErrBadField, "sched_switch print fmt: want a __print_flags table of prev_state letters, got %q", clipS(f.print))
		}
		// The kernel prints "+" for TASK_REPORT_MAX, the bit above the
		// table's last (TASK_REPORT_IDLE << 1, include/linux/sched.h).
		if bytes.Contains([]byte(f.print), []byte(`"+"`)) {
			d.preempt = top << 1
		}
	}
	r.dec[f.id] = d
	return nil
}

// checkFormats reports the formats schedlens cannot work without.
func (r *Reader) checkFormats() error {
	if !r.common.ok {
		return &parse.ParseError{File: r.name, Record: "event formats", Err: parse.ErrBadField,
			Msg: "want formats with common_type, common_flags and common_pid fields, found none"}
	}
	for _, d := range r.dec {
		if d != nil && d.kind == timeline.KindSwitch {
			return nil
		}
	}
	return &parse.ParseError{File: r.name, Record: "event formats", Err: parse.ErrUnknownEvent,
		Msg: "want the sched:sched_switch format (record with -e sched_switch), the file has none"}
}

// uint reads an unsigned integer field of rec.
func (r *Reader) uint(rec []byte, f slot) uint64 {
	b := rec[f.off : f.off+f.size]
	if r.bigEndian {
		switch f.size {
		case 1:
			return uint64(b[0])
		case 2:
			return uint64(binary.BigEndian.Uint16(b))
		case 4:
			return uint64(binary.BigEndian.Uint32(b))
		}
		return binary.BigEndian.Uint64(b)
	}
	switch f.size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

// int reads an integer field, sign-extended when the format says signed.
func (r *Reader) int(rec []byte, f slot) int64 {
	u := r.uint(rec, f)
	if !f.signed || f.size == 8 {
		return int64(u)
	}
	sh := 64 - 8*f.size
	return int64(u<<sh) >> sh
}

// str reads a char array field up to its first NUL; a dynamic array that
// points outside the record reads as empty.
func (r *Reader) str(rec []byte, f slot) []byte {
	if f.loc != 0 {
		v := r.order.Uint32(rec[f.off:])
		off, n := int(v&0xffff), int(v>>16)
		if f.loc == uint8(locRelLoc) {
			off += f.off + f.size
		}
		if off+n > len(rec) {
			return nil
		}
		b := rec[off : off+n]
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		return b
	}
	end := f.off + f.size
	if f.size == 0 { // flexible array ("char buf[]"): the rest of the record
		end = len(rec)
	}
	b := rec[f.off:end]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return b
}

// fits reports whether every field of d lies inside rec.
func (d *decoder) fits(rec []byte) bool { return len(rec) >= d.minLen }

// decode fills ev from the record rec of decoder d; header fields are
// already set. pid is common_pid.
func (r *Reader) decode(d *decoder, rec []byte, pid timeline.TID, ev *timeline.Event) error {
	if !d.fits(rec) {
		return fmt.Errorf("want a %s record of at least the format's field ends, got %d bytes", d.name, len(rec))
	}
	f := &d.f
	ev.Kind = d.kind
	switch d.kind {
	case timeline.KindSwitch:
		ev.Other = timeline.TID(r.int(rec, f[1]))
		ev.OComm = r.intern(r.str(rec, f[0]))
		ev.OPrio = int16(r.int(rec, f[2]))
		ev.State = d.state(r.uint(rec, f[3]))
		ev.Task = timeline.TID(r.int(rec, f[5]))
		ev.Comm = r.intern(r.str(rec, f[4]))
		ev.Prio = int16(r.int(rec, f[6]))
	case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew:
		ev.Other = pid
		ev.OComm = r.headerComm(pid)
		ev.Task = timeline.TID(r.int(rec, f[1]))
		ev.Comm = r.intern(r.str(rec, f[0]))
		ev.Prio = int16(r.int(rec, f[2]))
		ev.Arg = -1
		if d.has[3] {
			ev.Arg = r.int(rec, f[3])
		}
	case timeline.KindMigrate:
		ev.Task = timeline.TID(r.int(rec, f[1]))
		ev.Comm = r.intern(r.str(rec, f[0]))
		ev.Prio = int16(r.int(rec, f[2]))
		ev.Arg2 = r.int(rec, f[3])
		ev.Arg = r.int(rec, f[4])
	case timeline.KindFork:
		ev.Other = timeline.TID(r.int(rec, f[1]))
		ev.OComm = r.intern(r.str(rec, f[0]))
		ev.Task = timeline.TID(r.int(rec, f[3]))
		ev.Comm = r.intern(r.str(rec, f[2]))
	case timeline.KindExec:
		ev.Task = timeline.TID(r.int(rec, f[0]))
		ev.Comm = r.headerComm(pid)
		ev.Arg2 = r.int(rec, f[1])
	case timeline.KindExit, timeline.KindFree:
		ev.Task = timeline.TID(r.int(rec, f[1]))
		ev.Comm = r.intern(r.str(rec, f[0]))
		ev.Prio = int16(r.int(rec, f[2]))
	case timeline.KindNewTask:
		ev.Task = timeline.TID(r.int(rec, f[0]))
		ev.Comm = r.intern(r.str(rec, f[1]))
		ev.Other = pid
	case timeline.KindRename:
		ev.Task = pid
		if d.has[0] {
			ev.Task = timeline.TID(r.int(rec, f[0]))
		}
		ev.OComm = r.intern(r.str(rec, f[1]))
		ev.Comm = r.intern(r.str(rec, f[2]))
	case timeline.KindIdle:
		st := int64(r.uint(rec, f[0]))
		if st == math.MaxUint32 { // PWR_EVENT_EXIT
			st = -1
		}
		ev.Arg = st
		ev.Arg2 = int64(r.uint(rec, f[1]))
	case timeline.KindMarker:
		text := bytes.TrimRight(r.str(rec, f[0]), " \t\r\n")
		ev.Task = pid
		ev.Other = pid
		ev.Arg = int64(r.strs.ID(text))
	case timeline.KindSignal:
		ev.Arg = r.int(rec, f[0])
		ev.Comm = r.intern(r.str(rec, f[1]))
		ev.Task = timeline.TID(r.int(rec, f[2]))
		ev.Arg2 = r.int(rec, f[4])&0xff | (r.int(rec, f[3])&1)<<8
		ev.Other = pid
		ev.OComm = r.headerComm(pid)
	}
	return nil
}

// state translates a prev_state value by the kernel's own letter table.
func (d *decoder) state(v uint64) timeline.State {
	var s timeline.State
	for i, b := range d.stateBits {
		if v&b != 0 {
			s |= d.stateOf[i]
		}
	}
	if s == 0 && d.preempt != 0 && v&d.preempt != 0 {
		s = timeline.StatePreempted
	}
	return s
}

// registerComms mimics what trace-cmd report's sched plugin learns from a
// record (libtraceevent plugin_sched_switch.c registers prev/next comm of a
// switch and the woken comm of sched_wakeup/sched_wakeup_new), so that the
// task column of later records names tasks as the report does.
// tep_register_comm keeps a pid's first comm (saved_cmdlines, then the
// first registration): in ftrace-oracle-busy pid 13116 prints as "bash"
// all along though it ran as "oracle-busy" between two task_renames.
func (r *Reader) registerComms(ev *timeline.Event) {
	switch ev.Kind {
	case timeline.KindSwitch:
		r.register(ev.Other, ev.OComm)
		r.register(ev.Task, ev.Comm)
	case timeline.KindWakeup, timeline.KindWakeupNew:
		r.register(ev.Task, ev.Comm)
	}
}

func (r *Reader) register(pid timeline.TID, c timeline.CommID) {
	if pid <= 0 || c == timeline.NoComm {
		return
	}
	if int(pid) < maxPIDSlice {
		for int(pid) >= len(r.pidComm) {
			r.pidComm = append(r.pidComm, make([]timeline.CommID, len(r.pidComm)+1024)...)
		}
		if r.pidComm[pid] == timeline.NoComm {
			r.pidComm[pid] = c
		}
		return
	}
	if _, ok := r.comm[int32(pid)]; !ok {
		r.comm[int32(pid)] = c
	}
}

// maxPIDSlice: pids below it keep their comm in a slice, others in a map
// (PID_MAX_DEFAULT is 32768, PID_MAX_LIMIT 4194304).
const maxPIDSlice = 1 << 20

// headerComm is the comm trace-cmd report prints in the task column for
// pid: "<idle>" for 0, the last comm it learned, or "<...>" (NoComm).
func (r *Reader) headerComm(pid timeline.TID) timeline.CommID {
	if pid == 0 {
		return r.idle
	}
	if pid > 0 && int(pid) < maxPIDSlice {
		if int(pid) < len(r.pidComm) {
			return r.pidComm[pid]
		}
		return timeline.NoComm
	}
	return r.comm[int32(pid)]
}

// intern returns the id of a comm through a small cache.
func (r *Reader) intern(b []byte) timeline.CommID {
	if len(b) == 0 {
		return timeline.NoComm
	}
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
	s := &r.commCache[x>>(64-8)]
	if s.id != 0 && string(s.b[:s.n]) == string(b) {
		return s.id
	}
	id := r.strs.ID(b)
	if len(b) <= len(s.b) {
		s.n = uint8(copy(s.b[:], b))
		s.id = id
	}
	return id
}

type commSlot struct {
	n  uint8
	b  [16]byte
	id timeline.CommID
}
