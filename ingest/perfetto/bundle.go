package perfetto

import (
	"fmt"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

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
