package timeline

import (
	"container/heap"
	"fmt"
	"slices"
	"sort"

	"github.com/schedlens/schedlens/topology"
)

// Builder collects events from readers or from the replay engine and turns
// them into a Timeline. Each CPU's events must arrive in that CPU's order;
// CPUs may interleave arbitrarily.
type Builder struct {
	strs *Strings
	ncpu int

	// raw columns in arrival order
	times  []Time
	starts map[int]Time // arrival index of a KindLost event -> gap start
	cpus   []int16
	kinds  []Kind
	ctxs   []Context
	states []State
	prios  []uint8
	tasks  []TID
	others []TID
	comms  []CommID
	ocomms []CommID
	args   []int32
	args2  []int32
	tgids  []int32

	affinity []AffinityChange
	groups   []GroupChange

	// online resolves task instances as events arrive, while they arrive
	// in time order (the text formats): then Finish has nothing left to
	// resolve. The first event out of order drops it, and Finish resolves
	// the merged events instead.
	online *resolver
	// osum summarizes the events as they arrive, while they arrive in
	// time order, so that Finish need not go over them again; dropped,
	// like online, by the first event out of order.
	osum *summary
	// ordered: the producer promised time order (RequireOrder), so the
	// pid columns the resolver would need to re-resolve merged events
	// are not kept.
	ordered bool
	// unordered: an event arrived before the one added before it, so
	// Finish merges the per-CPU streams instead of keeping arrival order.
	unordered bool

	// along is the walk beside the Adds, if one was asked for (WalkAlong),
	// and the events to add before the next hand-over to it (kept here,
	// not in the Along, whose walk's goroutine writes beside it).
	along     *Along
	alongLeft int

	coverage Coverage // what the reader proved, see SetCoverage
	evidence string

	// sum is set in summary mode (NewSummaryBuilder): Add keeps no
	// columns, only the summary and the markers.
	sum     *summary
	markers []Marker

	err error
}

// NewBuilder returns a Builder whose events' CommIDs resolve through strs.
// ncpu is the CPU count the trace declares (0 if unknown); the Timeline has
// at least max CPU seen + 1.
func NewBuilder(strs *Strings, ncpu int) *Builder {
	if strs == nil {
		strs = NewStrings()
	}
	return &Builder{strs: strs, ncpu: ncpu, starts: map[int]Time{}, online: newResolver(), osum: &summary{}}
}

// Strings returns the interner of the builder.
func (b *Builder) Strings() *Strings { return b.strs }

// SetNCPU sets the CPU count the trace declares, once a reader knows it.
func (b *Builder) SetNCPU(n int) {
	if n > b.ncpu {
		b.ncpu = n
	}
}

// Grow makes room for n more events, so that a producer that knows its
// input's size (ingest estimates it from a text file's bytes) fills the
// columns without the copies of append's doubling. A wrong estimate costs
// nothing in correctness: fewer events leave the rest of the capacity
// untouched, more grow the columns as usual.
func (b *Builder) Grow(n int) {
	if n <= 0 {
		return
	}
	grow(&b.times, n)
	grow(&b.cpus, n)
	grow(&b.kinds, n)
	grow(&b.ctxs, n)
	grow(&b.states, n)
	grow(&b.prios, n)
	grow(&b.comms, n)
	grow(&b.args, n)
	grow(&b.args2, n)
	if !b.ordered {
		grow(&b.tasks, n)
		grow(&b.others, n)
		grow(&b.ocomms, n)
		grow(&b.tgids, n)
	}
	if b.online != nil {
		grow(&b.online.taskOf, n)
		grow(&b.online.other, n)
	}
}

// Room returns how many more events the columns hold before they grow.
func (b *Builder) Room() int { return cap(b.times) - len(b.times) }

// grow gives *col room for n more elements. It allocates with make, not
// slices.Grow: append's growth clears the new capacity, which makes every
// page of it resident, while a fresh large allocation's pages stay
// untouched (and cost no memory) until events fill them.
func grow[T any](col *[]T, n int) {
	if cap(*col)-len(*col) >= n {
		return
	}
	c := make([]T, len(*col), len(*col)+n)
	copy(c, *col)
	*col = c
}

// RequireOrder is for a producer that hands out its events in time order
// (a simulation): the Builder then keeps only what the Timeline holds, not
// the pids, comms and thread groups that Finish would need to resolve
// task instances anew from merged events (16 bytes an event), and an event
// before the one added before it is an error (ErrNotTimeOrdered) instead
// of merged. Call it before Add and Grow.
func (b *Builder) RequireOrder() {
	if b.sum == nil && b.online != nil {
		b.ordered = true
	}
}

// Err returns what makes Finish fail, once known as the events arrive (a
// CPU out of range, an event out of order that RequireOrder refuses); nil
// so far.
func (b *Builder) Err() error { return b.err }

// Len returns the number of events added.
func (b *Builder) Len() int {
	if b.sum != nil {
		return b.sum.n
	}
	return len(b.times)
}

// Add appends one event. Events with a negative CPU are rejected at Finish.
func (b *Builder) Add(ev Event) { b.AddEvent(&ev) }

// AddEvent is Add for an event it reads where it is, without a copy (a
// producer's batch).
func (b *Builder) AddEvent(ev *Event) {
	if b.err != nil {
		return
	}
	if ev.CPU < 0 || ev.CPU >= topology.MaxCPUs {
		b.err = fmt.Errorf("event %d (%v at %s): CPU %d out of range (0 to %d)", len(b.times), ev.Kind, ev.Time.Seconds(), ev.CPU, topology.MaxCPUs-1)
		return
	}
	if b.sum != nil {
		b.addSummary(ev)
		return
	}
	if ev.Kind == KindLost || ev.Kind == KindBufferStart && ev.Start != NoTime {
		b.starts[len(b.times)] = ev.Start
	}
	if n := len(b.times); n > 0 && ev.Time < b.times[n-1] {
		if b.ordered {
			b.err = fmt.Errorf("event %d (%v at %s) before the one added before it (%s): %w", n, ev.Kind, ev.Time.Seconds(), b.times[n-1].Seconds(), ErrNotTimeOrdered)
			return
		}
		b.unordered = true
		b.online, b.osum = nil, nil
	}
	b.times = append(b.times, ev.Time)
	b.cpus = append(b.cpus, int16(ev.CPU))
	b.kinds = append(b.kinds, ev.Kind)
	b.ctxs = append(b.ctxs, ev.Ctx)
	b.states = append(b.states, ev.State)
	p := prioOf(ev.Prio)
	b.prios = append(b.prios, p)
	b.comms = append(b.comms, ev.Comm)
	b.args = append(b.args, clamp32(ev.Arg))
	b.args2 = append(b.args2, clamp32(ev.Arg2))
	if !b.ordered {
		b.tasks = append(b.tasks, ev.Task)
		b.others = append(b.others, ev.Other)
		b.ocomms = append(b.ocomms, ev.OComm)
		b.tgids = append(b.tgids, ev.TGID)
	}
	if r := b.online; r != nil {
		r.event(ev.Time, int16(ev.CPU), ev.Kind, ev.Comm, p, ev.State, ev.Task, ev.Other, ev.OComm, ev.TGID)
	}
	if b.osum != nil {
		b.osum.addEvent(ev)
	}
	if b.along != nil {
		if b.alongLeft--; b.alongLeft <= 0 {
			b.alongLeft = alongEvery
			b.along.handOver(b)
		}
	}
}

// prioOf is an event's prio as the Prios column keeps it (NoPrio if
// absent or out of range).
func prioOf(prio int16) uint8 {
	if prio >= 0 && prio < NoPrio {
		return uint8(prio)
	}
	return NoPrio
}

func clamp32(v int64) int32 {
	switch {
	case v > 1<<31-1:
		return 1<<31 - 1
	case v < -1<<31:
		return -1 << 31
	}
	return int32(v)
}

// rank orders events with equal timestamps causally.
func rank(k Kind) int {
	switch k {
	case KindBufferStart, KindLost:
		return 0
	case KindFork, KindNewTask, KindExec, KindRename:
		return 1
	case KindWaking:
		return 2
	case KindMigrate:
		return 3
	case KindWakeup, KindWakeupNew:
		return 4
	case KindExit:
		return 5
	case KindSwitch:
		return 6
	case KindFree:
		return 7
	}
	return 8
}

type cpuStream struct {
	idx []int32
	pos int
}

type mergeHeap struct {
	b       *Builder
	streams []*cpuStream
}

func (h *mergeHeap) Len() int { return len(h.streams) }
func (h *mergeHeap) Less(i, j int) bool {
	a := h.streams[i].idx[h.streams[i].pos]
	c := h.streams[j].idx[h.streams[j].pos]
	return h.b.before(a, c)
}
func (h *mergeHeap) Swap(i, j int) { h.streams[i], h.streams[j] = h.streams[j], h.streams[i] }
func (h *mergeHeap) Push(x any)    { h.streams = append(h.streams, x.(*cpuStream)) }
func (h *mergeHeap) Pop() any {
	n := len(h.streams)
	x := h.streams[n-1]
	h.streams = h.streams[:n-1]
	return x
}

// before reports whether raw event a goes before raw event c from another CPU.
func (b *Builder) before(a, c int32) bool {
	ta, tc := b.times[a], b.times[c]
	if ta != tc {
		return ta < tc
	}
	ka, kc := b.kinds[a], b.kinds[c]
	// A task switched out on one CPU and woken from another at the same
	// (microsecond) timestamp: take the switch-out first, the ordinary
	// order; a waking strictly before the switch-out is a real race.
	if ka == KindSwitch && (kc == KindWaking || kc == KindWakeup) && b.others[a] == b.tasks[c] && b.others[a] > 0 {
		return true
	}
	if kc == KindSwitch && (ka == KindWaking || ka == KindWakeup) && b.others[c] == b.tasks[a] && b.others[c] > 0 {
		return false
	}
	ra, rc := rank(ka), rank(kc)
	if ra != rc {
		return ra < rc
	}
	if b.kinds[a] == KindSwitch && b.kinds[c] == KindSwitch {
		// A task switched out on one CPU and in on another at the same
		// timestamp: the switch-out comes first.
		if b.others[a] == b.tasks[c] && b.others[a] != 0 {
			return true
		}
		if b.others[c] == b.tasks[a] && b.others[c] != 0 {
			return false
		}
	}
	return a < c
}

// Finish merges the streams, resolves task instances and returns the
// Timeline. The Builder must not be used afterwards.
func (b *Builder) Finish() (*Timeline, error) {
	if b.along != nil {
		b.along.finishAdds(b)
	}
	if b.err != nil {
		return nil, b.err
	}
	if b.sum != nil {
		return b.finishSummary()
	}
	n := len(b.times)
	maxCPU := -1
	for _, c := range b.cpus {
		if int(c) > maxCPU {
			maxCPU = int(c)
		}
	}
	ncpu := b.ncpu
	if maxCPU+1 > ncpu {
		ncpu = maxCPU + 1
	}
	// 1. An input that is already in global time order (ftrace, trace-cmd
	//    and perf script text: their tools merge the per-CPU buffers by
	//    full-precision timestamp before printing them with microseconds)
	//    keeps its order, which breaks timestamp ties the way the kernel's
	//    clock did; its arrival columns become the Timeline's columns as
	//    they are (clipped, so that no later append reaches into them),
	//    not permuted copies. Otherwise merge the per-CPU streams.
	tl := &Timeline{Strings: b.strs, NCPU: ncpu, Start: NoTime, End: NoTime, ValidStart: NoTime}
	b.finishAttrs(tl)
	var pids, opids []TID
	var ocomms []CommID
	var tgids []int32
	var starts map[int]Time
	if !b.unordered {
		tl.Times = slices.Clip(b.times)
		tl.CPUs = slices.Clip(b.cpus)
		tl.Kinds = slices.Clip(b.kinds)
		tl.Ctxs = slices.Clip(b.ctxs)
		tl.States = slices.Clip(b.states)
		tl.Prios = slices.Clip(b.prios)
		tl.Comms = slices.Clip(b.comms)
		tl.Args = slices.Clip(b.args)
		tl.Args2 = slices.Clip(b.args2)
		pids, opids, ocomms, tgids = b.tasks, b.others, b.ocomms, b.tgids
		starts = b.starts
	} else {
		// The arrival columns are put in merged order in place: the load
		// holds its columns once, not twice, at its end.
		perm := b.merge(ncpu)
		b.permute(perm)
		tl.Times, tl.CPUs, tl.Kinds = slices.Clip(b.times), slices.Clip(b.cpus), slices.Clip(b.kinds)
		tl.Ctxs, tl.States, tl.Prios = slices.Clip(b.ctxs), slices.Clip(b.states), slices.Clip(b.prios)
		tl.Comms, tl.Args, tl.Args2 = slices.Clip(b.comms), slices.Clip(b.args), slices.Clip(b.args2)
		pids, opids, ocomms, tgids = b.tasks, b.others, b.ocomms, b.tgids
		starts = make(map[int]Time, len(b.starts))
		for newi, oldi := range perm {
			if s, ok := b.starts[int(oldi)]; ok {
				starts[newi] = s
			}
		}
	}
	cov, evidence := b.coverage, b.evidence
	online, osum := b.online, b.osum
	*b = Builder{}

	// 3. Window, gaps, counters, unless summarized as the events arrived.
	sum := osum
	if sum == nil {
		sum = &summary{}
		for i, t := range tl.Times {
			st := NoTime
			if k := tl.Kinds[i]; k == KindLost || k == KindBufferStart {
				if s, ok := starts[i]; ok {
					st = s
				}
			}
			sum.add(t, tl.CPUs[i], tl.Kinds[i], st, tl.Args[i])
		}
	}
	sum.apply(tl, cov, evidence)

	// 4. Task instances, unless resolved as the events arrived.
	r := online
	if r == nil {
		r = newResolver()
		r.taskOf = make([]TaskID, 0, n)
		r.other = make([]TaskID, 0, n)
		for i := 0; i < n; i++ {
			r.event(tl.Times[i], tl.CPUs[i], tl.Kinds[i], tl.Comms[i], tl.Prios[i], tl.States[i], pids[i], opids[i], ocomms[i], tgids[i])
		}
	}
	tl.Tasks, tl.TaskOf, tl.Other = r.finalTasks(), slices.Clip(r.taskOf), slices.Clip(r.other)
	// 5. Inconsistencies come from the first walk (Inconsistencies).
	tl.incs = &incsCache{}
	return tl, nil
}

// merge k-way merges the per-CPU streams (each kept in arrival order, made
// monotonic if a producer did not guarantee it) by time with causal
// tie-breaks, and returns the merged order as arrival indices.
func (b *Builder) merge(ncpu int) []int32 {
	streams := make([]*cpuStream, ncpu)
	for i := range streams {
		streams[i] = &cpuStream{}
	}
	for i, c := range b.cpus {
		s := streams[c]
		s.idx = append(s.idx, int32(i))
	}
	for _, s := range streams {
		sorted := true
		for k := 1; k < len(s.idx); k++ {
			if b.times[s.idx[k]] < b.times[s.idx[k-1]] {
				sorted = false
				break
			}
		}
		if !sorted {
			sort.SliceStable(s.idx, func(i, j int) bool { return b.times[s.idx[i]] < b.times[s.idx[j]] })
		}
	}
	var live []*cpuStream
	for _, s := range streams {
		if len(s.idx) > 0 {
			live = append(live, s)
		}
	}
	perm := make([]int32, 0, len(b.times))
	if len(live) <= 16 {
		// Few CPUs: a linear scan of the stream heads beats a heap.
		for len(live) > 0 {
			best := 0
			for k := 1; k < len(live); k++ {
				if b.before(live[k].idx[live[k].pos], live[best].idx[live[best].pos]) {
					best = k
				}
			}
			s := live[best]
			perm = append(perm, s.idx[s.pos])
			s.pos++
			if s.pos == len(s.idx) {
				live = append(live[:best], live[best+1:]...)
			}
		}
		return perm
	}
	h := &mergeHeap{b: b, streams: live}
	heap.Init(h)
	for h.Len() > 0 {
		s := h.streams[0]
		perm = append(perm, s.idx[s.pos])
		s.pos++
		if s.pos == len(s.idx) {
			heap.Pop(h)
		} else {
			heap.Fix(h, 0)
		}
	}
	return perm
}

// permute puts the arrival columns in the order perm gives (event i
// becomes the one that arrived perm[i]-th) in place: it follows the
// permutation's cycles once, moving every column's element at each step,
// with a bit an event to mark those placed.
func (b *Builder) permute(perm []int32) {
	seen := make([]uint64, (len(perm)+63)/64)
	for i := range perm {
		if seen[i>>6]&(1<<(i&63)) != 0 {
			continue
		}
		t, c, k, x, st, p := b.times[i], b.cpus[i], b.kinds[i], b.ctxs[i], b.states[i], b.prios[i]
		tk, o, cm, oc, a, a2, g := b.tasks[i], b.others[i], b.comms[i], b.ocomms[i], b.args[i], b.args2[i], b.tgids[i]
		j := i
		for {
			seen[j>>6] |= 1 << (j & 63)
			n := int(perm[j])
			if n == i {
				break
			}
			b.times[j], b.cpus[j], b.kinds[j], b.ctxs[j], b.states[j], b.prios[j] = b.times[n], b.cpus[n], b.kinds[n], b.ctxs[n], b.states[n], b.prios[n]
			b.tasks[j], b.others[j], b.comms[j], b.ocomms[j] = b.tasks[n], b.others[n], b.comms[n], b.ocomms[n]
			b.args[j], b.args2[j], b.tgids[j] = b.args[n], b.args2[n], b.tgids[n]
			j = n
		}
		b.times[j], b.cpus[j], b.kinds[j], b.ctxs[j], b.states[j], b.prios[j] = t, c, k, x, st, p
		b.tasks[j], b.others[j], b.comms[j], b.ocomms[j], b.args[j], b.args2[j], b.tgids[j] = tk, o, cm, oc, a, a2, g
	}
}

// resolver maps pids to task instances while walking the merged events.
// Pids are small dense numbers (the kernel's pid_max is at most 4194304), so
// the current instance of a pid is a slice index; a pid above maxDensePID
// (a producer that is not the kernel) falls back to a map.
type resolver struct {
	tasks  []Task         // the instances
	taskOf []TaskID       // per event: its task's instance
	other  []TaskID       // per event: its other task's instance
	cur    []TaskID       // pid -> current instance, NoTask if none
	big    map[TID]TaskID // pids >= maxDensePID
	fresh  []bool         // by TaskID: created by fork/newtask, not yet run or woken
	dead   []bool         // by TaskID
	idle   []TaskID
}

// maxDensePID bounds the pids kept in resolver.cur: the kernel's
// PID_MAX_LIMIT on 64-bit (include/linux/threads.h).
const maxDensePID = 4 << 20

func newResolver() *resolver { return &resolver{} }

// current returns the current instance of pid (pid > 0), if any.
func (r *resolver) current(pid TID) (TaskID, bool) {
	if pid < maxDensePID {
		if int(pid) < len(r.cur) && r.cur[pid] != NoTask {
			return r.cur[pid], true
		}
		return NoTask, false
	}
	id, ok := r.big[pid]
	return id, ok
}

func (r *resolver) setCurrent(pid TID, id TaskID) {
	if pid < 0 {
		return
	}
	if pid >= maxDensePID {
		if r.big == nil {
			r.big = map[TID]TaskID{}
		}
		r.big[pid] = id
		return
	}
	if int(pid) >= len(r.cur) {
		n := max(2*len(r.cur), int(pid)+1, 1024)
		n = min(n, maxDensePID)
		old := len(r.cur)
		r.cur = append(r.cur, make([]TaskID, n-old)...)
		for i := old; i < n; i++ {
			r.cur[i] = NoTask
		}
	}
	r.cur[pid] = id
}

func (r *resolver) newTask(pid TID, t Time) TaskID {
	id := TaskID(len(r.tasks))
	r.tasks = append(r.tasks, Task{PID: pid, TGID: -1, First: t, Last: t, Prio: -1, CPU: NoCPU})
	r.fresh = append(r.fresh, false)
	r.dead = append(r.dead, false)
	r.setCurrent(pid, id)
	return id
}

// lookup returns the instance of pid at event i, creating one if needed.
func (r *resolver) lookup(pid TID, cpu int16, t Time) TaskID {
	if pid == NoTID || pid < 0 {
		return NoTask
	}
	if pid == 0 {
		for int(cpu) >= len(r.idle) {
			r.idle = append(r.idle, NoTask)
		}
		id := r.idle[cpu]
		if id == NoTask {
			id = TaskID(len(r.tasks))
			r.tasks = append(r.tasks, Task{PID: 0, TGID: 0, First: t, Last: t, Prio: 120, Idle: true, CPU: CPU(cpu)})
			r.fresh = append(r.fresh, false)
			r.dead = append(r.dead, false)
			r.idle[cpu] = id
		}
		return id
	}
	id, ok := r.current(pid)
	if !ok || r.dead[id] {
		id = r.newTask(pid, t)
	}
	return id
}

// finalTasks returns the instances once every event is resolved, each
// named by its latest comm.
func (r *resolver) finalTasks() []Task {
	tasks := slices.Clip(r.tasks)
	for i := range tasks {
		tk := &tasks[i]
		if len(tk.Comms) > 0 {
			tk.Comm = tk.Comms[len(tk.Comms)-1].Comm
		}
	}
	return tasks
}

func (r *resolver) setComm(id TaskID, t Time, c CommID) {
	if id == NoTask || c == NoComm {
		return
	}
	tk := &r.tasks[id]
	if n := len(tk.Comms); n > 0 && tk.Comms[n-1].Comm == c {
		return
	}
	tk.Comms = append(tk.Comms, CommChange{Time: t, Comm: c})
}

func (r *resolver) touch(id TaskID, t Time) {
	if id == NoTask {
		return
	}
	tk := &r.tasks[id]
	if t < tk.First {
		tk.First = t
	}
	if t > tk.Last {
		tk.Last = t
	}
}

// event resolves the next event in time order: its time, CPU, kind, comm,
// prio and prev state, and the pids, other comm and tgid it names.
func (r *resolver) event(t Time, cpu int16, k Kind, comm CommID, prio uint8, state State, pid, opid TID, ocomm CommID, tgid int32) {
	var task, other TaskID = NoTask, NoTask
	switch k {
	case KindFork, KindNewTask:
		other = r.lookup(opid, cpu, t)
		if id, ok := r.current(pid); ok && r.fresh[id] && !r.dead[id] {
			task = id // task_newtask and sched_process_fork of one clone
		} else {
			task = r.newTask(pid, t)
			r.fresh[task] = true
			r.tasks[task].Forked = true
		}
	case KindWakeupNew:
		if id, ok := r.current(pid); ok && r.fresh[id] && !r.dead[id] {
			task = id
		} else {
			task = r.newTask(pid, t)
		}
		r.fresh[task] = false
		other = r.lookup(opid, cpu, t)
	case KindSwitch:
		other = r.lookup(opid, cpu, t)
		task = r.lookup(pid, cpu, t)
		if task != NoTask {
			r.fresh[task] = false
		}
		if other != NoTask {
			r.setComm(other, t, ocomm)
		}
	case KindFree, KindExit:
		// The instance that just died, not a new one.
		if id, ok := r.current(pid); ok {
			task = id
		} else {
			task = r.lookup(pid, cpu, t)
		}
	default:
		task = r.lookup(pid, cpu, t)
		if k == KindWaking || k == KindWakeup || k == KindMarker || k == KindExec || k == KindSignal {
			other = r.lookup(opid, cpu, t)
		}
	}
	r.taskOf = append(r.taskOf, task)
	r.other = append(r.other, other)
	r.touch(task, t)
	r.touch(other, t)
	if task != NoTask {
		if k == KindRename {
			r.setComm(task, t, comm)
		} else if len(r.tasks[task].Comms) == 0 || k == KindExec || k == KindSwitch || k == KindFork || k == KindNewTask {
			r.setComm(task, t, comm)
		}
		if p := prio; p != NoPrio {
			r.tasks[task].Prio = int16(p)
		}
	}
	// The task running on the CPU carries the tgid column.
	if tgid >= 0 {
		run := NoTask
		switch k {
		case KindSwitch, KindWaking, KindWakeup, KindWakeupNew, KindMarker, KindExec, KindFork, KindNewTask, KindSignal:
			run = other // the header task: prev, the waker, the parent, the sender
		case KindExit:
			run = task
		}
		if run != NoTask && r.tasks[run].TGID < 0 && !r.tasks[run].Idle {
			r.tasks[run].TGID = tgid
		}
	}
	switch k {
	case KindExit:
		if task != NoTask {
			r.tasks[task].Exited = true
		}
	case KindFree:
		if task != NoTask && !r.tasks[task].Idle {
			r.dead[task] = true
		}
	case KindSwitch:
		if other != NoTask && state.Dead() && !r.tasks[other].Idle {
			r.dead[other] = true
		}
	}
}
