package perf

import (
	"bytes"
	"fmt"
	"math"

	"github.com/schedlens/schedlens/timeline"
)

// Separators that end a comm value: the next key with its leading space.
// A comm may hold spaces, so its value runs to the next key.
var (
	sepPID        = []byte(" pid=")
	sepPrevPID    = []byte(" prev_pid=")
	sepNextPID    = []byte(" next_pid=")
	sepChildPID   = []byte(" child_pid=")
	sepCloneFlags = []byte(" clone_flags=")
	sepNewComm    = []byte(" newcomm=")
	sepOOMAdj     = []byte(" oom_score_adj=")
	arrow         = []byte("==>")
	markPrefix    = []byte(": ")
)

// fields walks a tracepoint's key=value text in TP_printk order. The first
// failure is kept; later calls do nothing.
type fields struct {
	t    []byte
	bad  bool
	key  string
	want string
	got  []byte
}

func (f *fields) fail(key, want string, got []byte) {
	if !f.bad {
		f.bad, f.key, f.want, f.got = true, key, want, got
	}
}

// msg describes the failure for a ParseError.
func (f *fields) msg() string {
	if len(f.got) == 0 {
		return fmt.Sprintf("field %s: want %s, got nothing", f.key, f.want)
	}
	return fmt.Sprintf("field %s: want %s, got %q", f.key, f.want, clip(f.got))
}

// has reports whether the next key is key.
func (f *fields) has(key string) bool {
	t := skipSpace(f.t)
	return len(t) > len(key) && string(t[:len(key)]) == key && t[len(key)] == '='
}

// open consumes "key=".
func (f *fields) open(key string) bool {
	if f.bad {
		return false
	}
	f.t = skipSpace(f.t)
	if !f.has(key) {
		f.fail(key, key+"=VALUE", f.t)
		return false
	}
	f.t = f.t[len(key)+1:]
	return true
}

// word consumes "key=VALUE" where VALUE has no space.
func (f *fields) word(key string) []byte {
	if !f.open(key) {
		return nil
	}
	j := bytes.IndexByte(f.t, ' ')
	if j < 0 {
		j = len(f.t)
	}
	v := f.t[:j]
	f.t = f.t[j:]
	return v
}

// int consumes "key=N" with lo <= N <= hi.
func (f *fields) int(key string, lo, hi int64) int64 {
	if f.bad {
		return 0
	}
	w := f.word(key)
	if f.bad {
		return 0
	}
	v, ok := parseInt(w)
	if !ok {
		f.fail(key, "an integer", w)
		return 0
	}
	if v < lo || v > hi {
		f.fail(key, fmt.Sprintf("%d to %d", lo, hi), w)
		return 0
	}
	return v
}

func (f *fields) pid(key string) timeline.TID {
	return timeline.TID(f.int(key, 0, math.MaxInt32))
}

func (f *fields) prio(key string) int16 {
	return int16(f.int(key, math.MinInt16, math.MaxInt16))
}

func (f *fields) cpu(key string) int64 {
	return f.int(key, 0, maxCPU)
}

// str consumes "key=VALUE" where VALUE runs to sep (" nextkey="). When
// optional, a missing sep makes VALUE the rest of the text.
func (f *fields) str(key string, sep []byte, optional bool) []byte {
	if !f.open(key) {
		return nil
	}
	i := bytes.Index(f.t, sep)
	if i < 0 {
		if optional {
			v := bytes.TrimRight(f.t, " ")
			f.t = nil
			return v
		}
		f.fail(key, fmt.Sprintf("a value followed by %q", sep), f.t)
		return nil
	}
	v := f.t[:i]
	f.t = f.t[i:]
	return v
}

// kindOf maps an event name to the Kind the Reader emits for it, or
// KindUnknown. The system must be the one the kernel defines the event in,
// or absent.
func kindOf(sys, name []byte) timeline.Kind {
	is := func(want string) bool { return len(sys) == 0 || string(sys) == want }
	switch string(name) {
	case "sched_switch":
		if is("sched") {
			return timeline.KindSwitch
		}
	case "sched_waking":
		if is("sched") {
			return timeline.KindWaking
		}
	case "sched_wakeup":
		if is("sched") {
			return timeline.KindWakeup
		}
	case "sched_wakeup_new":
		if is("sched") {
			return timeline.KindWakeupNew
		}
	case "sched_migrate_task":
		if is("sched") {
			return timeline.KindMigrate
		}
	case "sched_process_fork":
		if is("sched") {
			return timeline.KindFork
		}
	case "sched_process_exec":
		if is("sched") {
			return timeline.KindExec
		}
	case "sched_process_exit":
		if is("sched") {
			return timeline.KindExit
		}
	case "sched_process_free":
		if is("sched") {
			return timeline.KindFree
		}
	case "task_newtask":
		if is("task") {
			return timeline.KindNewTask
		}
	case "task_rename":
		if is("task") {
			return timeline.KindRename
		}
	case "cpu_idle":
		if is("power") {
			return timeline.KindIdle
		}
	case "print":
		if is("ftrace") {
			return timeline.KindMarker
		}
	case "tracing_mark_write":
		return timeline.KindMarker
	case "signal_generate":
		if is("signal") {
			return timeline.KindSignal
		}
	}
	return timeline.KindUnknown
}

// knownName reports whether name is an event kindOf maps in some system.
func knownName(name []byte) bool {
	return kindOf(nil, name) != timeline.KindUnknown
}

// fill reads the tracepoint text of s into ev (whose Time, CPU and TGID are
// set). It returns the event's kind (KindUnknown for events not
// interpreted, with ev untouched) and the texts to intern for it, all parts
// of the line: a marker's text or the comm of ev.Task, and the comm of
// ev.Other (nil when the event has none); or what was wrong.
func fill(s *sample, ev *timeline.Event) (kind timeline.Kind, comm, ocomm []byte, msg string) {
	kind = kindOf(s.sys, s.event)
	if kind == timeline.KindUnknown {
		return kind, nil, nil, ""
	}
	f := fields{t: s.text}
	switch kind {
	case timeline.KindSwitch:
		// prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==>
		// next_comm=%s next_pid=%d next_prio=%d (include/trace/events/sched.h)
		ocomm = f.str("prev_comm", sepPrevPID, false)
		ev.Other = f.pid("prev_pid")
		ev.OPrio = f.prio("prev_prio")
		st := f.word("prev_state")
		if !f.bad {
			state, ok := timeline.ParseState(st)
			if !ok {
				f.fail("prev_state", "R, R+ or letters of SDTtXZPIKWxN joined by |", st)
			}
			ev.State = state
		}
		if !f.bad {
			f.t = skipSpace(f.t)
			if !bytes.HasPrefix(f.t, arrow) {
				f.fail("==>", "\"==>\" after prev_state", f.t)
			} else {
				f.t = f.t[len(arrow):]
			}
		}
		comm = f.str("next_comm", sepNextPID, false)
		ev.Task = f.pid("next_pid")
		ev.Prio = f.prio("next_prio")
	case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew:
		// comm=%s pid=%d prio=%d [success=%d] target_cpu=%03d
		comm = f.str("comm", sepPID, false)
		ev.Task = f.pid("pid")
		ev.Prio = f.prio("prio")
		if f.has("success") {
			f.int("success", math.MinInt64, math.MaxInt64)
		}
		ev.Arg = -1
		if f.has("target_cpu") {
			ev.Arg = f.cpu("target_cpu")
		}
		ev.Other = s.tid
		ocomm = s.comm
	case timeline.KindMigrate:
		// comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d
		comm = f.str("comm", sepPID, false)
		ev.Task = f.pid("pid")
		ev.Prio = f.prio("prio")
		ev.Arg2 = f.cpu("orig_cpu")
		ev.Arg = f.cpu("dest_cpu")
	case timeline.KindFork:
		// comm=%s pid=%d child_comm=%s child_pid=%d
		ocomm = f.str("comm", sepPID, false)
		ev.Other = f.pid("pid")
		comm = f.str("child_comm", sepChildPID, false)
		ev.Task = f.pid("child_pid")
	case timeline.KindExec:
		// filename=%s pid=%d old_pid=%d
		file := f.str("filename", sepPID, false)
		ev.Task = f.pid("pid")
		ev.Arg2 = int64(f.pid("old_pid"))
		comm = s.comm
		if comm == nil && !f.bad {
			comm = execComm(file)
		}
	case timeline.KindExit, timeline.KindFree:
		// comm=%s pid=%d prio=%d [group_dead=%s]
		comm = f.str("comm", sepPID, false)
		ev.Task = f.pid("pid")
		ev.Prio = f.prio("prio")
	case timeline.KindNewTask:
		// pid=%d comm=%s clone_flags=%lx oom_score_adj=%hd (include/trace/events/task.h)
		ev.Task = f.pid("pid")
		comm = f.str("comm", sepCloneFlags, true)
		ev.Other = s.tid
	case timeline.KindRename:
		// [pid=%d] oldcomm=%s newcomm=%s oom_score_adj=%hd; newer kernels
		// dropped the pid, which is then the current task's.
		ev.Task = s.tid
		if f.has("pid") {
			ev.Task = f.pid("pid")
		}
		ocomm = f.str("oldcomm", sepNewComm, false)
		comm = f.str("newcomm", sepOOMAdj, true)
	case timeline.KindIdle:
		// state=%lu cpu_id=%lu (include/trace/events/power.h)
		st := f.int("state", math.MinInt32, math.MaxUint32)
		if st == math.MaxUint32 {
			st = -1 // PWR_EVENT_EXIT
		}
		ev.Arg = st
		ev.Arg2 = f.int("cpu_id", -1, math.MaxUint32)
	case timeline.KindSignal:
		// sig=%d errno=%d code=%d comm=%s pid=%d grp=%d res=%d
		// (include/trace/events/signal.h)
		ev.Arg = f.int("sig", 0, 1<<16)
		f.int("errno", math.MinInt32, math.MaxInt32)
		f.int("code", math.MinInt32, math.MaxInt32)
		comm = f.str("comm", sepPID, false)
		ev.Task = f.pid("pid")
		grp := f.int("grp", 0, 1)
		ev.Arg2 = f.int("res", 0, 255) | grp<<8
		ev.Other = s.tid
		ocomm = s.comm
	case timeline.KindMarker:
		text := s.text
		if string(s.event) == "print" {
			// ftrace:print is "%ps: %s" (kernel/trace/trace_entries.h):
			// drop the ip's symbol.
			if i := bytes.Index(text, markPrefix); i >= 0 {
				text = text[i+len(markPrefix):]
			}
		}
		comm = bytes.TrimRight(text, " \n\r\t")
		ev.Task = s.tid
		ev.Other = s.tid
	}
	if f.bad {
		return kind, nil, nil, f.msg()
	}
	return kind, comm, ocomm, ""
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
