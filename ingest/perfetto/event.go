package perfetto

import (
	"bytes"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

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
func (x *bundleDecoder) decodeEvent(b []byte, ev *timeline.Event) (bool, *fieldError) {
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
		fe = x.decodeSwitch(payload, ev)
	case fEvSchedWaking:
		ev.Kind = timeline.KindWaking
		fe = x.decodeWake(payload, ev)
	case fEvSchedWakeup:
		ev.Kind = timeline.KindWakeup
		fe = x.decodeWake(payload, ev)
	case fEvSchedWakeupNew:
		ev.Kind = timeline.KindWakeupNew
		fe = x.decodeWake(payload, ev)
	case fEvMigrateTask:
		fe = x.decodeSimple(payload, ev, &migrateMsg)
	case fEvProcessFork:
		fe = x.decodeSimple(payload, ev, &forkMsg)
	case fEvProcessExit:
		fe = x.decodeSimple(payload, ev, &exitMsg)
	case fEvProcessFree:
		fe = x.decodeSimple(payload, ev, &freeMsg)
	case fEvProcessExec:
		fe = x.decodeExec(payload, ev)
	case fEvTaskNewtask:
		fe = x.decodeSimple(payload, ev, &newtaskMsg)
	case fEvTaskRename:
		fe = x.decodeSimple(payload, ev, &renameMsg)
	case fEvCPUIdle:
		fe = x.decodeIdle(payload, ev)
	case fEvPrint:
		fe = x.decodePrint(payload, ev)
	case fEvSignalGenerate:
		fe = x.decodeSignal(payload, ev)
	case 0:
		x.countUnknown(0)
		return false, nil
	default:
		x.countUnknown(kind)
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
		case timeline.KindWaking, timeline.KindWakeup, timeline.KindWakeupNew, timeline.KindNewTask, timeline.KindSignal:
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
		fEvTaskRename, fEvProcessExec, fEvProcessExit, fEvProcessFork, fEvProcessFree, fEvMigrateTask, fEvSignalGenerate:
		return true
	}
	return false
}

var eventFieldNames = map[protowire.Number]string{
	fEvPrint: "print", fEvSchedSwitch: "sched_switch", fEvCPUIdle: "cpu_idle", fEvSchedWakeup: "sched_wakeup",
	fEvSchedWaking: "sched_waking", fEvSchedWakeupNew: "sched_wakeup_new", fEvTaskNewtask: "task_newtask",
	fEvTaskRename: "task_rename", fEvProcessExec: "sched_process_exec", fEvProcessExit: "sched_process_exit",
	fEvProcessFork: "sched_process_fork", fEvProcessFree: "sched_process_free", fEvMigrateTask: "sched_migrate_task",
	fEvSignalGenerate: "signal_generate",
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

func (x *bundleDecoder) decodeSwitch(b []byte, ev *timeline.Event) *fieldError {
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
				ev.OComm = x.commOf(f.b)
			} else {
				ev.Comm = x.commOf(f.b)
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
	st, err := x.layout.decode(raw)
	if err != nil {
		return &fieldError{path: "prev_state", msg: err.Error(), err: parse.ErrBadField}
	}
	ev.State = st
	x.d.switches++
	return nil
}

func (x *bundleDecoder) decodeWake(b []byte, ev *timeline.Event) *fieldError {
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
			ev.Comm = x.commOf(f.b)
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
func (x *bundleDecoder) decodeSimple(b []byte, ev *timeline.Event, m *simpleMsg) *fieldError {
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
					ev.Comm = x.commOf(f.b)
				} else {
					ev.OComm = x.commOf(f.b)
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
func (x *bundleDecoder) decodeExec(b []byte, ev *timeline.Event) *fieldError {
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
			ev.Comm = x.commOf(name)
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

func (x *bundleDecoder) decodeIdle(b []byte, ev *timeline.Event) *fieldError {
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

// decodeSignal reads signal_generate: Task = pid (the target), Comm its
// comm, Arg = sig, Arg2 = result | group<<8; the sender is the event's
// header pid.
func (x *bundleDecoder) decodeSignal(b []byte, ev *timeline.Event) *fieldError {
	ev.Kind = timeline.KindSignal
	ev.Task = 0
	var res, grp int64
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fSigComm:
			if fe := f.want(protowire.BytesType, "comm"); fe != nil {
				return fe
			}
			ev.Comm = x.commOf(f.b)
		case fSigCode, fSigGroup, fSigPid, fSigResult, fSigSig:
			if fe := f.want(protowire.VarintType, "signal_generate field"); fe != nil {
				return fe
			}
			v := int64(int32(f.v))
			switch f.num {
			case fSigPid:
				if ev.Task, fe = pidOf(f.v, "pid"); fe != nil {
					return fe
				}
			case fSigSig:
				ev.Arg = v
			case fSigResult:
				res = v & 0xff
			case fSigGroup:
				grp = v & 1
			}
		}
	}
	ev.Arg2 = res | grp<<8
	return nil
}

func (x *bundleDecoder) decodePrint(b []byte, ev *timeline.Event) *fieldError {
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
			ev.Arg = x.text(text)
		}
	}
	return nil
}
