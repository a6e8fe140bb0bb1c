package perfetto

import (
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

// decodedBundle is one FtraceEventBundle decoded as far as it needs
// nothing from the packets before it (steps 1 and 2 of decodeBundle): its
// events and columns, and what the Reader applies in file order. A worker
// of the parallel read fills it (parallel.go); so does the Reader itself.
type decodedBundle struct {
	bundleScratch

	cpu                      uint64
	lost                     bool
	prevEnd, lastRead, clk   uint64
	ftraceTS, bootTS         int64
	haveFtraceTS, haveBootTS bool
	nErrors                  int

	fe       *fieldError    // the bundle is malformed: none of its events is handed out
	skipped  []*fieldError  // lenient: the events and columns skipped, in order
	unknown  []unknownCount // events of kinds not interpreted, by field number
	switches int64          // plain sched_switch events read
	refs     []parse.TextRef
	layout   stateLayout // the prev_state layout the switches were read with
}

// unknownCount counts the FtraceEvents of one uninterpreted kind (0: no
// payload) in a bundle.
type unknownCount struct {
	num protowire.Number
	n   int64
}

func (d *decodedBundle) reset() {
	d.bundleScratch.reset()
	*d = decodedBundle{bundleScratch: d.bundleScratch, skipped: d.skipped[:0], unknown: d.unknown[:0], refs: d.refs[:0]}
}

// bundleDecoder decodes the fields of FtraceEventBundles (decode). It
// reads nothing of the Reader but through r, which interns comms as they
// come; without r (a worker) it defers them: each is left in the bundle's
// refs and its CommID is parse.DeferredID|index until the Reader resolves
// it (resolveRefs), in the order one decoder would have interned them.
type bundleDecoder struct {
	r       *Reader
	lenient bool
	layout  stateLayout
	d       *decodedBundle // the bundle being decoded
}

// decodeBundle decodes one FtraceEventBundle and starts handing out its
// events (r.m).
//
//  1. Scan the fields: plain FtraceEvents are decoded into s.plain in file
//     order, compact_sched columns into s.sw*/s.wk*, the rest noted.
//  2. Check the compact columns and turn delta timestamps into absolute
//     ones.
//  3. Fix the clock offset (first bundle only) and note lost data and a
//     late buffer start for the CPU.
//  4. Merge the plain events, the compact switches and the compact wakings by
//     (time, kind), filling what compact_sched leaves out from the CPU's
//     running task, and append them to r.out.
//
// Steps 1 and 2 (bundleDecoder.decode) need nothing from earlier packets but
// the prev_state layout, so the parallel read runs them on its workers;
// steps 3 and 4 (applyBundle) follow the packets in file order.
func (r *Reader) decodeBundle(b []byte, seq *seqState) *fieldError {
	r.dec.lenient, r.dec.layout = r.lenient, r.layout
	r.dec.decode(b, &r.bundle)
	return r.applyBundle(&r.bundle, seq)
}

// decode runs steps 1 and 2 of decodeBundle on the bundle b into d.
func (x *bundleDecoder) decode(b []byte, d *decodedBundle) {
	d.reset()
	d.layout = x.layout
	x.d = d
	d.fe = x.scan(b)
	x.d = nil
}

// skip notes fe, a part of the bundle skipped under lenient; false when
// the decoder is not lenient and the bundle fails with it.
func (x *bundleDecoder) skip(fe *fieldError) bool {
	if !x.lenient {
		return false
	}
	x.d.skipped = append(x.d.skipped, fe.in("ftrace_events"))
	return true
}

func (x *bundleDecoder) scan(b []byte) *fieldError {
	d := x.d
	s := &d.bundleScratch
	compactOK := true
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
			d.cpu = f.v
		case fBundleEvent:
			if fe := f.want(protowire.BytesType, "event"); fe != nil {
				return fe
			}
			s.plain = append(s.plain, timeline.Event{})
			keep, fe := x.decodeEvent(f.b, &s.plain[len(s.plain)-1])
			if fe != nil {
				s.plain = s.plain[:len(s.plain)-1]
				fe.in("event")
				if !x.skip(fe) {
					return fe
				}
				continue
			}
			if !keep {
				s.plain = s.plain[:len(s.plain)-1]
			}
		case fBundleLostEvents:
			if fe := f.want(protowire.VarintType, "lost_events"); fe != nil {
				return fe
			}
			d.lost = d.lost || f.v != 0
		case fBundleCompactSched:
			if fe := f.want(protowire.BytesType, "compact_sched"); fe != nil {
				return fe
			}
			if fe := x.decodeCompact(f.b); fe != nil {
				fe.in("compact_sched")
				if !x.skip(fe) {
					return fe
				}
				compactOK = false
			}
		case fBundleFtraceClock, fBundleFtraceTimestamp, fBundleBootTimestamp, fBundleLastReadEventTS, fBundlePrevBundleEndTS:
			if fe := f.want(protowire.VarintType, bundleFieldName(f.num)); fe != nil {
				return fe
			}
			switch f.num {
			case fBundleFtraceClock:
				d.clk = f.v
			case fBundleFtraceTimestamp:
				d.ftraceTS, d.haveFtraceTS = int64(f.v), true
			case fBundleBootTimestamp:
				d.bootTS, d.haveBootTS = int64(f.v), true
			case fBundleLastReadEventTS:
				d.lastRead = f.v
			case fBundlePrevBundleEndTS:
				d.prevEnd = f.v
			}
		case fBundleError:
			d.nErrors++
		}
	}
	if d.cpu > MaxCPU {
		return badField("cpu %d above the limit %d", d.cpu, MaxCPU).in("cpu")
	}
	if !compactOK {
		s.swTS, s.wkTS = s.swTS[:0], s.wkTS[:0]
	} else if fe := x.checkCompact(); fe != nil {
		fe.in("compact_sched")
		if !x.skip(fe) {
			return fe
		}
		s.swTS, s.wkTS = s.swTS[:0], s.wkTS[:0]
	}
	return nil
}

// applyBundle applies d, a bundle decoded by bundleDecoder.decode, in file
// order: what its decode interned, skipped and counted, then steps 3 and 4.
func (r *Reader) applyBundle(d *decodedBundle, seq *seqState) *fieldError {
	r.resolveRefs(d)
	for _, fe := range d.skipped {
		r.meta.Skip(r.perr(r.curOff, r.packetBase, fe))
	}
	for _, u := range d.unknown {
		name := "ftrace_event_without_payload"
		if u.num != 0 {
			name = r.unknownName(u.num)
		}
		r.meta.Unknown[name] += u.n
	}
	r.switchesSeen += d.switches
	if d.fe != nil {
		return d.fe
	}

	r.lockClock(d.clk, d.ftraceTS, d.bootTS, d.haveFtraceTS && d.haveBootTS)
	ci := int(d.cpu)
	c := r.cpu(ci)
	c.bundles++
	for len(seq.cpus) <= ci/64 {
		seq.cpus = append(seq.cpus, 0)
	}
	seq.cpus[ci/64] |= 1 << (ci % 64)

	validEnd := d.prevEnd
	if validEnd == 0 {
		validEnd = d.lastRead
	}
	if c.bundles == 1 && validEnd > 0 && validEnd <= math.MaxInt64 {
		// Earlier bundles of this CPU were written but are not in the
		// file (Perfetto's own ring buffer overwrote them): the CPU's data
		// is complete only from validEnd on.
		c.pendStart, c.startAt = true, timeline.Time(int64(validEnd)+r.clockOffset)
		r.lateStarts++
	}
	if d.lost || d.nErrors > 0 {
		start := timeline.NoTime
		if d.prevEnd > 0 && d.prevEnd <= math.MaxInt64 {
			start = timeline.Time(int64(d.prevEnd) + r.clockOffset)
		}
		r.markLost(ci, start, -1)
	}
	r.bs = &d.bundleScratch
	r.startMerge(ci)
	return nil
}

// resolveRefs interns the texts a worker's decode deferred (d.refs), in
// their order, and puts their ids in place of the placeholders.
func (r *Reader) resolveRefs(d *decodedBundle) {
	if len(d.refs) == 0 {
		return
	}
	ids := r.refIDs[:0]
	for _, ref := range d.refs {
		if ref.Raw {
			ids = append(ids, r.strs.ID(ref.B))
		} else {
			ids = append(ids, r.commOf(ref.B))
		}
	}
	r.refIDs = ids
	for i := range d.plain {
		ev := &d.plain[i]
		if ev.Comm&parse.DeferredID != 0 {
			ev.Comm = ids[ev.Comm&^parse.DeferredID]
		}
		if ev.OComm&parse.DeferredID != 0 {
			ev.OComm = ids[ev.OComm&^parse.DeferredID]
		}
		if ev.Kind == timeline.KindMarker && ev.Arg&parse.DeferredID != 0 {
			ev.Arg = int64(ids[ev.Arg&^parse.DeferredID])
		}
	}
	for i, id := range d.intern {
		if id&parse.DeferredID != 0 {
			d.intern[i] = ids[id&^parse.DeferredID]
		}
	}
}

// commOf returns the id of a comm: interned through the Reader, or
// deferred.
func (x *bundleDecoder) commOf(b []byte) timeline.CommID {
	if x.r != nil {
		return x.r.commOf(b)
	}
	if len(b) == 0 {
		return timeline.NoComm
	}
	x.d.refs = append(x.d.refs, parse.TextRef{B: b})
	return parse.DeferredID | timeline.CommID(len(x.d.refs)-1)
}

// text returns the id of a marker's text as its Arg: interned as is, or
// deferred.
func (x *bundleDecoder) text(b []byte) int64 {
	if x.r != nil {
		return int64(x.r.strs.ID(b))
	}
	x.d.refs = append(x.d.refs, parse.TextRef{B: b, Raw: true})
	return parse.DeferredID | int64(len(x.d.refs)-1)
}

// countUnknown counts an FtraceEvent of a kind not interpreted.
func (x *bundleDecoder) countUnknown(num protowire.Number) {
	u := x.d.unknown
	for i := range u {
		if u[i].num == num {
			u[i].n++
			return
		}
	}
	x.d.unknown = append(u, unknownCount{num: num, n: 1})
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
func (x *bundleDecoder) decodeCompact(b []byte) *fieldError {
	s := &x.d.bundleScratch
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
			s.intern = append(s.intern, x.commOf(f.b))
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
func (x *bundleDecoder) checkCompact() *fieldError {
	s := &x.d.bundleScratch
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
