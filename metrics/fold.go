package metrics

import (
	"github.com/schedlens/schedlens/timeline"
)

// A folder holds the latency of the samples an analysis with
// Options.Sketch or Options.TaskWakeups has let go (docs/architecture.md,
// "Estimated percentiles on a streamed read"). When the walk decides the
// waits (decide), a record all of whose waits are decided and dropped is
// folded: added to its groups' sketches (Sketch) or, a complete wakeup,
// to the tasks' wakeups (TaskWakeups: 16 bytes instead of the record's
// 48), and to its task's runnable time, and let go. One with a wait kept
// stays, in order, for the sweeps, which read only those; so do the
// records still undecided at the walk's end. The latency phase adds the
// records left the same way.
type folder struct {
	kinds [2]*sketchKind // wakeups, preemptions; nil with TaskWakeups
	// wakeups are the folded complete wakeups, with TaskWakeups.
	wakeups  []TaskWait
	runnable []int64 // per task: the folded records' durations
	// recAt: c.recs[:recAt] are decided (each has a wait kept).
	recAt int
	// untilMatch: a streamed walk with a --comm filter, whose tasks may
	// match only at its end: a task's records are folded once it
	// matches (a name that matches is never lost), the others' wait for
	// the filter.
	untilMatch bool
	// folded counts the records folded.
	folded int64
}

// newFolder returns the folder of c; wakeups is the room to reserve for
// the complete wakeups with TaskWakeups.
func newFolder(c *collector, wakeups int) *folder {
	f := &folder{untilMatch: c.streamed && len(c.filter.Comms) > 0}
	if c.wakeups {
		f.wakeups = make([]TaskWait, 0, wakeups)
	} else {
		f.kinds = [2]*sketchKind{{}, {preempt: true}}
	}
	return f
}

// foldRecs folds the records decided since the last call; decide calls
// it once it has decided the waits, c.waits[from:waitAt] being those it
// kept this time. Waits come in the order of their records, so the
// records before the first undecided wait's have every wait decided.
func (c *collector) foldRecs(from int) {
	f, p := c.fold, c.prune
	end := len(c.recs)
	if p.waitAt < len(c.waits) {
		end = int(c.waits[p.waitAt].sample)
	}
	// A record with a wait kept last time and one undecided then was left
	// undecided: its kept waits come before from.
	k := from
	for k > 0 && int(c.waits[k-1].sample) >= f.recAt {
		k--
	}
	w := f.recAt
	for i := f.recAt; i < end; i++ {
		kept := false
		for ; k < p.waitAt && int(c.waits[k].sample) == i; k++ {
			c.waits[k].sample = int32(w)
			kept = true
		}
		r := &c.recs[i]
		if kept || !f.foldable(c, r.task) {
			c.recs[w] = *r
			w++
			continue
		}
		comm := timeline.CommID(0)
		if f.kinds[0] != nil {
			comm = c.tl.CommAt(r.task, r.start)
		}
		f.add(r, comm)
	}
	if shift := int32(end - w); shift > 0 {
		c.recs = c.recs[:w+copy(c.recs[w:], c.recs[end:])]
		for ; k < len(c.waits); k++ {
			c.waits[k].sample -= shift
		}
	}
	f.recAt = w
}

// foldable reports whether the records of task id may be folded: it is
// selected, and will be at the walk's end.
func (f *folder) foldable(c *collector, id timeline.TaskID) bool {
	return c.match[id] && (!f.untilMatch || c.filter.Match(c.tl, id))
}

// add folds record r, whose task was named comm when its wait started.
func (f *folder) add(r *sampleRec, comm timeline.CommID) {
	for int(r.task) >= len(f.runnable) {
		f.runnable = append(f.runnable, 0)
	}
	f.runnable[r.task] += r.dur
	f.folded++
	if f.kinds[0] == nil {
		if r.completeWakeup() {
			f.wakeups = append(f.wakeups, TaskWait{Task: r.task, DurNs: r.dur})
		}
		return
	}
	f.kinds[kindOf(r)].add(r, comm)
}

// sketchKind is a grouper's counterpart for one kind of wait: a sketch
// per group, added to one sample at a time.
type sketchKind struct {
	preempt bool
	st      LatencyStats // the censoring and FromWakeup
	ctx     [timeline.CtxNMI + 1]int64

	all, place, queue    durSketch
	hAll, hPlace, hQueue Histogram     // counted exactly
	tasks                []*taskSketch // by task
	comms                []*durSketch  // by comm id
	classes              [141]*durSketch
	cpus                 []*durSketch
}

type taskSketch struct {
	d                    durSketch
	censored, censoredNs int64
}

// grown returns s with index i, growing it with nils.
func grown[T any](s []*T, i int) []*T {
	for i >= len(s) {
		s = append(s, nil)
	}
	return s
}

// get returns (*s)[i], made if nil.
func get[T any](s []*T, i int) *T {
	if s[i] == nil {
		s[i] = new(T)
	}
	return s[i]
}

// add adds record r (named comm) as grouper.count and the fills do.
func (k *sketchKind) add(r *sampleRec, comm timeline.CommID) {
	st := &k.st
	if r.kind == SampleWakeup && r.noWaking() {
		st.FromWakeup++
	}
	k.tasks = grown(k.tasks, int(r.task))
	t := get(k.tasks, int(r.task))
	if r.censored() != CensoredNone {
		st.Censored.add(r)
		t.censored++
		t.censoredNs += r.dur
		return
	}
	x := sketchVal{v: r.dur}
	k.all.add(&x)
	k.hAll.add(r.dur)
	t.d.add(&x)
	k.comms = grown(k.comms, int(comm))
	get(k.comms, int(comm)).add(&x)
	get(k.classes[:], prioSlot(r.prio)).add(&x)
	if r.cpu >= 0 {
		k.cpus = grown(k.cpus, int(r.cpu))
		get(k.cpus, int(r.cpu)).add(&x)
	}
	if r.split() {
		k.place.add(&sketchVal{v: r.place})
		k.hPlace.add(r.place)
		q := r.dur - r.place
		k.queue.add(&sketchVal{v: q})
		k.hQueue.add(q)
	}
	if !k.preempt && int(r.wakerCtx()) < len(k.ctx) {
		k.ctx[r.wakerCtx()]++
	}
}

// stats returns the distributions, naming the groups from tl's final
// tasks; ncpu is the topology's CPUs (a sample on a CPU beyond has no
// CPU group, as in grouper).
func (k *sketchKind) stats(tl *timeline.Timeline, ncpu int) LatencyStats {
	st := k.st
	st.Overall = k.all.dist(k.hAll)
	st.Placement = k.place.dist(k.hPlace)
	st.Queue = k.queue.dist(k.hQueue)
	if !k.preempt {
		st.ByContext = contextCounts(&k.ctx)
	}
	gs := make([]GroupDist, 0, len(k.tasks))
	for id, t := range k.tasks {
		if t != nil {
			g := taskGroup(timeline.TaskID(id), tl.Tasks[id].PID, tl.TaskName(timeline.TaskID(id)))
			g.Dist, g.Censored, g.CensoredNs = t.d.dist(nil), t.censored, t.censoredNs
			gs = append(gs, g)
		}
	}
	st.setGrouping(byTask, gs)
	gs = make([]GroupDist, 0, len(k.comms))
	for id, d := range k.comms {
		if d != nil {
			g := commGroup(tl.Strings.Get(timeline.CommID(id)))
			g.Dist = d.dist(nil)
			gs = append(gs, g)
		}
	}
	st.setGrouping(byComm, gs)
	gs = make([]GroupDist, 0, len(k.classes))
	for p, d := range k.classes {
		if d != nil {
			g := classGroup(p)
			g.Dist = d.dist(nil)
			gs = append(gs, g)
		}
	}
	st.setGrouping(byClass, gs)
	gs = make([]GroupDist, 0, ncpu)
	for cpu, d := range k.cpus[:min(len(k.cpus), ncpu)] {
		if d != nil {
			g := cpuGroup(timeline.CPU(cpu))
			g.Dist = d.dist(nil)
			gs = append(gs, g)
		}
	}
	st.setGrouping(byCPU, gs)
	return st
}
