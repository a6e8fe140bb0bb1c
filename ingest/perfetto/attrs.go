package perfetto

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Task attributes: schedlens' TaskAttrs message in TracePacket field
// fPacketTaskAttrs carries timeline.AffinityChange and timeline.GroupChange
// records, which no Perfetto message holds. Perfetto's tools and schedlens
// versions before it skip the field (see proto.go and docs/perfetto.md).
//
//	message TaskAttrs {             // TracePacket field 9870
//	  repeated Affinity affinity = 1;
//	  repeated Group group = 2;
//	}
//	message Affinity {
//	  optional uint64 timestamp = 1;              // ns, clock of the ftrace events
//	  optional int32 tid = 2;
//	  repeated uint64 cpu_mask = 3 [packed=true]; // bit b of word w: CPU 64w+b; no word: every CPU
//	}
//	message Group {
//	  optional uint64 timestamp = 1;
//	  optional int32 tid = 2;
//	  optional string cgroup_path = 3;            // cgroup v2 path, "/" the root; absent: unknown
//	  optional uint32 cpu_weight = 4;             // absent or 0: unknown, or no cpu controller
//	  optional int64 autogroup = 5;               // absent or 0: none
//	  optional int32 autogroup_nice = 6;
//	}

// attrsBatch is how many records one TaskAttrs packet holds at most.
const attrsBatch = 512

// maxMaskWords bounds an affinity mask: CPUs 0..MaxCPU.
const maxMaskWords = (MaxCPU + 1) / 64

// AddAffinity records that task a.TID may run only on a.CPUs from a.At on
// (an empty set: every CPU). Records are written in TaskAttrs packets on
// the metadata sequence, in the order added.
func (w *Writer) AddAffinity(a timeline.AffinityChange) error {
	if err := w.attrsCheck("affinity", a.At, a.TID); err != nil {
		return err
	}
	if a.CPUs.Max() > MaxCPU {
		return fmt.Errorf("perfetto writer: affinity of task %d at %d: CPU %d above the limit %d", a.TID, a.At, a.CPUs.Max(), MaxCPU)
	}
	m := w.sub[:0]
	m = appendVarint(m, fAffTimestamp, uint64(a.At))
	m = appendInt(m, fAffTid, int64(a.TID))
	words := a.CPUs
	for len(words) > 0 && words[len(words)-1] == 0 {
		words = words[:len(words)-1]
	}
	m = appendPackedCol(m, fAffCPUMask, words)
	w.sub = m
	w.addAttr(fAttrsAffinity, m, a.At)
	return nil
}

// AddGroup records the task group of task g.TID from g.At on.
func (w *Writer) AddGroup(g timeline.GroupChange) error {
	if err := w.attrsCheck("task group", g.At, g.TID); err != nil {
		return err
	}
	if g.Weight < 0 || g.Weight > math.MaxUint32 {
		return fmt.Errorf("perfetto writer: task group of task %d at %d: cpu.weight %d out of range", g.TID, g.At, g.Weight)
	}
	if g.AutogroupNice < math.MinInt32 || g.AutogroupNice > math.MaxInt32 {
		return fmt.Errorf("perfetto writer: task group of task %d at %d: autogroup nice %d out of range", g.TID, g.At, g.AutogroupNice)
	}
	m := w.sub[:0]
	m = appendVarint(m, fGroupTimestamp, uint64(g.At))
	m = appendInt(m, fGroupTid, int64(g.TID))
	if g.Path != "" {
		m = appendString(m, fGroupPath, g.Path)
	}
	if g.Weight != 0 {
		m = appendVarint(m, fGroupWeight, uint64(g.Weight))
	}
	if g.Autogroup != 0 {
		m = appendInt(m, fGroupAutogroup, int64(g.Autogroup))
	}
	if g.AutogroupNice != 0 {
		m = appendInt(m, fGroupAutogroupNice, int64(g.AutogroupNice))
	}
	w.sub = m
	w.addAttr(fAttrsGroup, m, g.At)
	return nil
}

func (w *Writer) attrsCheck(what string, at timeline.Time, tid timeline.TID) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("perfetto writer: %s after Close", what)
	}
	if at < 0 {
		return fmt.Errorf("perfetto writer: %s of task %d: negative time %d", what, tid, at)
	}
	return nil
}

// attrsBatchMsg is a full TaskAttrs message waiting for the metadata
// packets to be written.
type attrsBatchMsg struct {
	msg   []byte
	first timeline.Time
}

// addAttr appends one encoded record to the pending TaskAttrs message; a
// full message is written at once, or kept until the metadata packets are
// out.
func (w *Writer) addAttr(field protowire.Number, rec []byte, at timeline.Time) {
	w.attrs = protowire.AppendTag(w.attrs, field, protowire.BytesType)
	w.attrs = protowire.AppendBytes(w.attrs, rec)
	if w.attrsN == 0 || at < w.attrsFirst {
		w.attrsFirst = at
	}
	w.attrsN++
	if w.attrsN < attrsBatch {
		return
	}
	if w.started {
		w.flushAttrs(true) // an error stays in w.err
		return
	}
	w.attrsFull = append(w.attrsFull, attrsBatchMsg{msg: w.attrs, first: w.attrsFirst})
	w.attrs, w.attrsN = nil, 0
}

// flushAttrs writes the full TaskAttrs messages kept, then with force the
// pending one, each as a packet stamped with its earliest record's time.
// Nothing is written before the metadata packets.
func (w *Writer) flushAttrs(force bool) error {
	if !w.started {
		return nil
	}
	for _, p := range w.attrsFull {
		if err := w.metaPacket(fPacketTaskAttrs, p.msg, p.first); err != nil {
			return err
		}
	}
	w.attrsFull = nil
	if w.attrsN == 0 || !force {
		return nil
	}
	err := w.metaPacket(fPacketTaskAttrs, w.attrs, w.attrsFirst)
	w.attrs, w.attrsN = w.attrs[:0], 0
	return err
}

// rawAffinity and rawGroup hold a record as read, its time still on the
// ftrace clock (the clock offset is fixed only at the first bundle).
type rawAffinity struct {
	ts   uint64
	tid  timeline.TID
	cpus topology.CPUSet
}

type rawGroup struct {
	ts uint64
	g  timeline.GroupChange
}

// decodeTaskAttrs reads one TaskAttrs message.
func (r *Reader) decodeTaskAttrs(b []byte) *fieldError {
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return fe
		}
		b = b[n:]
		switch f.num {
		case fAttrsAffinity:
			if fe := f.want(protowire.BytesType, "affinity"); fe != nil {
				return fe
			}
			a, fe := decodeAffinity(f.b)
			if fe != nil {
				return fe.in("affinity")
			}
			r.affinity = append(r.affinity, a)
		case fAttrsGroup:
			if fe := f.want(protowire.BytesType, "group"); fe != nil {
				return fe
			}
			g, fe := decodeGroup(f.b)
			if fe != nil {
				return fe.in("group")
			}
			r.groups = append(r.groups, g)
		}
	}
	return nil
}

func decodeAffinity(b []byte) (rawAffinity, *fieldError) {
	var a rawAffinity
	var hasTS, hasTID bool
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return a, fe
		}
		b = b[n:]
		switch f.num {
		case fAffTimestamp, fAffTid:
			if fe := f.want(protowire.VarintType, attrFieldName(f.num)); fe != nil {
				return a, fe
			}
			if f.num == fAffTimestamp {
				a.ts, hasTS = f.v, true
			} else {
				tid, fe := pidOf(f.v, "tid")
				if fe != nil {
					return a, fe
				}
				a.tid, hasTID = tid, true
			}
		case fAffCPUMask:
			switch f.typ {
			case protowire.VarintType:
				a.cpus = append(a.cpus, f.v)
			case protowire.BytesType:
				for p := f.b; len(p) > 0; {
					v, k := protowire.ConsumeVarint(p)
					if k < 0 {
						return a, wireError(k, "packed cpu_mask")
					}
					p = p[k:]
					a.cpus = append(a.cpus, v)
				}
			default:
				return a, f.want(protowire.BytesType, "cpu_mask")
			}
			if len(a.cpus) > maxMaskWords {
				return a, badField("cpu_mask of %d words, more than the %d of CPUs 0-%d", len(a.cpus), maxMaskWords, MaxCPU)
			}
		}
	}
	if !hasTS || !hasTID {
		return a, badField("want timestamp and tid")
	}
	if a.ts > math.MaxInt64 {
		return a, badField("timestamp %d out of range", a.ts)
	}
	for len(a.cpus) > 0 && a.cpus[len(a.cpus)-1] == 0 {
		a.cpus = a.cpus[:len(a.cpus)-1]
	}
	if len(a.cpus) == 0 {
		a.cpus = nil
	}
	return a, nil
}

func decodeGroup(b []byte) (rawGroup, *fieldError) {
	var g rawGroup
	var hasTS, hasTID bool
	for len(b) > 0 {
		f, n, fe := next(b)
		if fe != nil {
			return g, fe
		}
		b = b[n:]
		switch f.num {
		case fGroupTimestamp, fGroupTid, fGroupWeight, fGroupAutogroup, fGroupAutogroupNice:
			if fe := f.want(protowire.VarintType, attrFieldName(f.num)); fe != nil {
				return g, fe
			}
			switch f.num {
			case fGroupTimestamp:
				g.ts, hasTS = f.v, true
			case fGroupTid:
				tid, fe := pidOf(f.v, "tid")
				if fe != nil {
					return g, fe
				}
				g.g.TID, hasTID = tid, true
			case fGroupWeight:
				g.g.Weight = int(uint32(f.v))
			case fGroupAutogroup:
				g.g.Autogroup = int(int64(f.v))
			case fGroupAutogroupNice:
				g.g.AutogroupNice = int(int32(f.v))
			}
		case fGroupPath:
			if fe := f.want(protowire.BytesType, "cgroup_path"); fe != nil {
				return g, fe
			}
			g.g.Path = string(f.b)
		}
	}
	if !hasTS || !hasTID {
		return g, badField("want timestamp and tid")
	}
	if g.ts > math.MaxInt64 {
		return g, badField("timestamp %d out of range", g.ts)
	}
	return g, nil
}

func attrFieldName(n protowire.Number) string {
	switch n {
	case fAffTimestamp:
		return "timestamp"
	case fAffTid:
		return "tid"
	case fGroupWeight:
		return "cpu_weight"
	case fGroupAutogroup:
		return "autogroup"
	case fGroupAutogroupNice:
		return "autogroup_nice"
	}
	return fmt.Sprintf("field %d", n)
}

// finishAttrs puts the task attributes read into Meta, on the trace clock.
func (r *Reader) finishAttrs() {
	for _, a := range r.affinity {
		r.meta.Affinity = append(r.meta.Affinity, timeline.AffinityChange{At: r.attrTime(a.ts), TID: a.tid, CPUs: a.cpus})
	}
	for _, g := range r.groups {
		g.g.At = r.attrTime(g.ts)
		r.meta.Groups = append(r.meta.Groups, g.g)
	}
	r.affinity, r.groups = nil, nil
}

// attrTime converts a task-attribute timestamp (at most MaxInt64, checked
// when read) like an ftrace timestamp.
func (r *Reader) attrTime(ts uint64) timeline.Time {
	t := int64(ts)
	if r.clockOffset > 0 && t > math.MaxInt64-r.clockOffset || r.clockOffset < 0 && t < math.MinInt64-r.clockOffset {
		return timeline.Time(t)
	}
	return timeline.Time(t + r.clockOffset)
}
