package record

import (
	"slices"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Sink receives a recording: tasks as they become known, events in time
// order, and each task's allowed CPUs and task group at first sight and at
// every change. *perfetto.Writer implements it.
type Sink interface {
	// Task declares a thread: its id, thread group and name.
	Task(pid timeline.TID, tgid int32, comm string) error
	// Add writes one event. KindLost events carry a CPU's dropped records.
	Add(ev *timeline.Event) error
	// AddAffinity writes a task's allowed CPUs from a time on.
	AddAffinity(a timeline.AffinityChange) error
	// AddGroup writes a task's cgroup and autogroup from a time on.
	AddGroup(g timeline.GroupChange) error
}

// stream turns decoded records, which arrive almost but not quite in time
// order, into sink calls:
//
//  1. push inserts a KindLost event before a record whose CPU dropped
//     records since its previous one (the BPF side counts drops per CPU),
//     and queues both on their CPU's queue. A CPU's records arrive in time
//     order except when a tracepoint interrupted another program on that
//     CPU and got its record queued first; push moves such a record back
//     to its place (a stable insertion, so equal times keep their order).
//  2. release merges the CPUs' queues by time and hands out everything
//     older than the horizon.
//  3. Before an event, the sink learns every task the event names that it
//     has not seen yet (a fork always re-declares the child).
//  4. Task attribute records (allowed CPUs, cgroup id, autogroup) travel
//     with the events of their CPU; when one differs from what the sink
//     last got for its task (or is the first for it), the sink gets an
//     AffinityChange or a GroupChange (the cgroup named and its cpu.weight
//     read through groups). The BPF side already sends only changes; this
//     also drops the repeats an evicted BPF map entry causes. A task's
//     sched_process_free forgets it, so a reused pid starts afresh.
//
// A record older than what was already released for its CPU is written
// with the last released time and counted in Reordered; with a horizon of
// milliseconds it does not happen in practice.
type stream struct {
	sink   Sink
	strs   *timeline.Strings
	queues [][]decoded // per CPU, in time order
	heads  []int       // per CPU: first queued record not yet written
	merge  cpuHeap

	last     []timeline.Time // per CPU: latest record time pushed
	released []timeline.Time // per CPU: latest event time written
	lastLost []uint32        // per CPU: drop counter of the latest record
	lost     []int64         // per CPU: drops reported so far
	known    []uint64        // bitmap of task ids declared to the sink

	groups  groupResolver // names cgroups; nil: paths and weights unknown
	lastAff map[timeline.TID]topology.CPUSet
	lastGrp map[timeline.TID]groupKey

	events    int64 // events written, KindLost excluded
	tasks     int64
	reordered int64
	affinity  int64 // AffinityChanges written
	groupsN   int64 // GroupChanges written
}

// groupKey is what the BPF side says of a task's group.
type groupKey struct {
	cgroup    uint64
	autogroup int64
	nice      int32
}

func newStream(sink Sink, strs *timeline.Strings, ncpu int) *stream {
	s := &stream{sink: sink, strs: strs, lastAff: map[timeline.TID]topology.CPUSet{}, lastGrp: map[timeline.TID]groupKey{}}
	s.grow(ncpu)
	return s
}

func (s *stream) grow(ncpu int) {
	for len(s.last) < ncpu {
		s.queues = append(s.queues, nil)
		s.heads = append(s.heads, 0)
		s.last = append(s.last, timeline.NoTime)
		s.released = append(s.released, timeline.NoTime)
		s.lastLost = append(s.lastLost, 0)
		s.lost = append(s.lost, 0)
	}
}

// push queues one decoded record, preceded by a KindLost event when its
// CPU dropped records since the previous one.
func (s *stream) push(d *decoded) {
	cpu := int(d.ev.CPU)
	s.grow(cpu + 1)
	if n := d.lost - s.lastLost[cpu]; n != 0 {
		s.enqueue(cpu, s.lostEvent(cpu, d.ev.Time, int64(n)))
		s.lastLost[cpu] = d.lost
	}
	s.enqueue(cpu, *d)
	if s.last[cpu] == timeline.NoTime || d.ev.Time > s.last[cpu] {
		s.last[cpu] = d.ev.Time
	}
}

// enqueue appends d to its CPU's queue, moving it back past unwritten
// records stamped later.
func (s *stream) enqueue(cpu int, d decoded) {
	q := append(s.queues[cpu], d)
	i := len(q) - 1
	for i > s.heads[cpu] && q[i-1].ev.Time > d.ev.Time {
		q[i] = q[i-1]
		i--
	}
	q[i] = d
	s.queues[cpu] = q
}

func (s *stream) lostEvent(cpu int, at timeline.Time, n int64) decoded {
	var l decoded
	l.ev.Reset()
	l.ev.Kind = timeline.KindLost
	l.ev.CPU = timeline.CPU(cpu)
	l.ev.Time = at
	l.ev.Start = s.last[cpu]
	l.ev.Arg = n
	l.tgid, l.otgid = -1, -1
	return l
}

// horizon returns the time before which every record has been read, less
// the reorder window:
//
//   - after a drain that emptied the buffers, the time the drain started;
//   - else (the reader is behind), the earliest of the CPUs' latest
//     records: each CPU's buffer is in order, so a CPU's unread records
//     are all later than its latest read one.
func (s *stream) horizon(drainStart timeline.Time, emptied bool) timeline.Time {
	var h timeline.Time = timeline.NoTime
	switch {
	case emptied:
		h = drainStart
	default:
		for _, t := range s.last {
			if t != timeline.NoTime && (h == timeline.NoTime || t < h) {
				h = t
			}
		}
	}
	if h == timeline.NoTime {
		return h
	}
	return h - timeline.Time(reorderWindow)
}

// release writes the queued events older than horizon, in time order:
// a merge of the CPUs' queues (ties go to the lower CPU).
func (s *stream) release(horizon timeline.Time) error {
	h := &s.merge
	h.reset()
	for cpu, q := range s.queues {
		if s.heads[cpu] < len(q) && q[s.heads[cpu]].ev.Time < horizon {
			h.push(cpuHead{q[s.heads[cpu]].ev.Time, cpu})
		}
	}
	for len(h.items) > 0 {
		cpu := h.items[0].cpu
		q := s.queues[cpu]
		if err := s.write(&q[s.heads[cpu]]); err != nil {
			return err
		}
		s.heads[cpu]++
		if i := s.heads[cpu]; i < len(q) && q[i].ev.Time < horizon {
			h.replaceTop(cpuHead{q[i].ev.Time, cpu})
		} else {
			h.pop()
		}
	}
	// Move what is left to the front of each queue, keeping the arrays.
	for cpu, q := range s.queues {
		if s.heads[cpu] == 0 {
			continue
		}
		n := copy(q, q[s.heads[cpu]:])
		clear(q[n:])
		s.queues[cpu], s.heads[cpu] = q[:n], 0
	}
	return nil
}

// cpuHead is a CPU's first unwritten record time, for the merge.
type cpuHead struct {
	t   timeline.Time
	cpu int
}

func (a cpuHead) less(b cpuHead) bool { return a.t < b.t || a.t == b.t && a.cpu < b.cpu }

// cpuHeap is a binary min-heap of cpuHeads.
type cpuHeap struct{ items []cpuHead }

func (h *cpuHeap) reset() { h.items = h.items[:0] }

func (h *cpuHeap) push(x cpuHead) {
	h.items = append(h.items, x)
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.items[i].less(h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *cpuHeap) pop() {
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	h.down()
}

func (h *cpuHeap) replaceTop(x cpuHead) {
	h.items[0] = x
	h.down()
}

func (h *cpuHeap) down() {
	n := len(h.items)
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h.items[l].less(h.items[m]) {
			m = l
		}
		if r := l + 1; r < n && h.items[r].less(h.items[m]) {
			m = r
		}
		if m == i {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}

// finish writes everything queued, then a KindLost event for each CPU
// whose last drops came after its last record (they are only in final),
// with Time = Start = that CPU's last event time.
func (s *stream) finish(final []uint64) error {
	if err := s.release(timeline.Time(1<<63 - 1)); err != nil {
		return err
	}
	s.grow(len(final))
	var end timeline.Time = timeline.NoTime
	for _, t := range s.last {
		end = max(end, t)
	}
	for cpu, total := range final {
		n := int64(total) - s.lost[cpu]
		if n <= 0 {
			continue
		}
		l := s.lostEvent(cpu, s.last[cpu], n)
		if l.ev.Time == timeline.NoTime {
			l.ev.Time = end
		}
		l.ev.Start = l.ev.Time
		if l.ev.Time == timeline.NoTime {
			// Nothing was recorded at all: the loss has no place in time.
			s.lost[cpu] += n
			continue
		}
		if err := s.write(&l); err != nil {
			return err
		}
	}
	return nil
}

// write hands one event to the sink after declaring the tasks it names.
func (s *stream) write(d *decoded) error {
	ev := &d.ev
	cpu := int(ev.CPU)
	if r := s.released[cpu]; r != timeline.NoTime && ev.Time < r {
		ev.Time = r
		s.reordered++
	}
	s.released[cpu] = ev.Time
	if d.attrs != nil {
		return s.writeAttrs(d)
	}
	switch ev.Kind {
	case timeline.KindLost:
		s.lost[cpu] += ev.Arg
		return s.sink.Add(ev)
	case timeline.KindFork:
		if err := s.declare(ev.Other, d.otgid, ev.OComm, false); err != nil {
			return err
		}
		if err := s.declare(ev.Task, d.tgid, ev.Comm, true); err != nil {
			return err
		}
	default:
		if err := s.declare(ev.Task, d.tgid, ev.Comm, false); err != nil {
			return err
		}
		if err := s.declare(ev.Other, d.otgid, ev.OComm, false); err != nil {
			return err
		}
	}
	s.events++
	if ev.Kind == timeline.KindFree {
		delete(s.lastAff, ev.Task)
		delete(s.lastGrp, ev.Task)
	}
	return s.sink.Add(ev)
}

// writeAttrs hands the sink what changed in a task attribute record.
func (s *stream) writeAttrs(d *decoded) error {
	a, pid, at := d.attrs, d.ev.Task, d.ev.Time
	if old, ok := s.lastAff[pid]; !ok || !slices.Equal(old, a.cpus) {
		s.lastAff[pid] = a.cpus
		s.affinity++
		if err := s.sink.AddAffinity(timeline.AffinityChange{At: at, TID: pid, CPUs: a.cpus}); err != nil {
			return err
		}
	}
	k := groupKey{cgroup: a.cgroup, autogroup: a.autogroup, nice: a.autogroupNice}
	if old, ok := s.lastGrp[pid]; ok && old == k {
		return nil
	}
	s.lastGrp[pid] = k
	g := timeline.GroupChange{At: at, TID: pid}
	if s.groups != nil {
		g.Path, g.Weight = s.groups.resolve(pid, a.cgroup)
	}
	if a.autogroup > 0 { // 0: the root autogroup; -1: a kernel without autogroups
		g.Autogroup, g.AutogroupNice = int(a.autogroup), int(a.autogroupNice)
	}
	s.groupsN++
	return s.sink.AddGroup(g)
}

// declare tells the sink about task pid unless it knows it already (or
// force). The idle tasks (pid 0) are not declared.
func (s *stream) declare(pid timeline.TID, tgid int32, comm timeline.CommID, force bool) error {
	if pid <= 0 || tgid < 0 {
		return nil
	}
	w, bit := int(pid)/64, uint64(1)<<(pid%64)
	for len(s.known) <= w {
		s.known = append(s.known, 0)
	}
	if !force && s.known[w]&bit != 0 {
		return nil
	}
	s.known[w] |= bit
	s.tasks++
	return s.sink.Task(pid, tgid, s.strs.Get(comm))
}

// declareInitial declares a task found when the recording started.
func (s *stream) declareInitial(pid timeline.TID, tgid int32, comm string) error {
	if pid <= 0 {
		return nil
	}
	w, bit := int(pid)/64, uint64(1)<<(pid%64)
	for len(s.known) <= w {
		s.known = append(s.known, 0)
	}
	s.known[w] |= bit
	s.tasks++
	return s.sink.Task(pid, tgid, comm)
}
