package metrics

import (
	"slices"

	"github.com/schedlens/schedlens/timeline"
)

// The collector's walk: each span the walk closes (Span) becomes runs,
// idle segments, latency samples and the runqueue stretches of their
// waits (waitSegs), placed from the task's placement events (indexed
// before a loaded walk, kept per task from a streamed walk's chunks).

// placeEv is a sched_wakeup, sched_wakeup_new or sched_migrate_task: a task
// put on a runqueue.
type placeEv struct {
	t    timeline.Time
	cpu  int32
	kind timeline.Kind
}

// placements indexes placement events by task.
type placements struct {
	off []int32 // task i's events are evs[off[i]:off[i+1]]
	evs []placeEv
}

func indexPlacements(tl *timeline.Timeline) placements {
	n := len(tl.Tasks)
	off := make([]int32, n+1)
	for i := range tl.Kinds {
		if id, _, ok := placementAt(tl, i); ok {
			off[id+1]++
		}
	}
	for i := 1; i <= n; i++ {
		off[i] += off[i-1]
	}
	evs := make([]placeEv, off[n])
	fill := slices.Clone(off[:n])
	for i := range tl.Kinds {
		if id, e, ok := placementAt(tl, i); ok {
			evs[fill[id]] = e
			fill[id]++
		}
	}
	return placements{off: off, evs: evs}
}

// placementAt returns event i of tl as a placement of its task, if it is
// one.
func placementAt(tl *timeline.Timeline, i int) (timeline.TaskID, placeEv, bool) {
	k := tl.Kinds[i]
	if k != timeline.KindWakeup && k != timeline.KindWakeupNew && k != timeline.KindMigrate {
		return timeline.NoTask, placeEv{}, false
	}
	id := tl.TaskOf[i]
	return id, placeEv{t: tl.Times[i], cpu: tl.Args[i], kind: k}, id != timeline.NoTask
}

func (p *placements) of(id timeline.TaskID) []placeEv { return p.evs[p.off[id]:p.off[id+1]] }

// Events makes the collector a Sink. A loaded walk's events were indexed
// before it (newCollector): nothing to do beside it. A streamed walk's
// chunk brings new task instances and placement events, kept per task
// until a span of the task passes them.
func (c *collector) Events(chunk *timeline.Timeline) {
	if !c.streamed {
		return
	}
	c.tl = chunk
	c.grow(chunk.Tasks)
	for i := range chunk.Kinds {
		if id, e, ok := placementAt(chunk, i); ok {
			c.pending[id] = append(c.pending[id], e)
		}
	}
}

// Span is the Walk callback.
func (c *collector) Span(s *timeline.Span) {
	if c.prune != nil {
		c.prune.front.Span(s)
	}
	if s.Task == timeline.NoTask {
		return // a CPU whose running task is unknown: neither idle nor busy
	}
	tk := &c.tl.Tasks[s.Task]
	if c.streamed && len(c.pending[s.Task]) > 0 {
		c.trimPending(s.Task, s.Start)
	}
	if tk.Idle {
		if s.State == timeline.SpanRunning && s.CPU >= 0 {
			if st, en, f := c.clip(s.Start, s.End, s.Open()); en > st && int(s.CPU) < len(c.lastSeg) {
				c.abut(s.CPU, st, int32(len(c.idles)), true, en)
				c.idles = append(c.idles, idleSeg{start: st, end: en, cpu: int32(s.CPU), flags: f})
			}
		}
		return
	}
	running := s.State == timeline.SpanRunning && s.CPU >= 0
	capacity := 0
	if running {
		capacity = c.capOf(s.CPU)
	}
	// Utilization matters only where capacities differ (misfit).
	u0 := 0.0
	if c.asym {
		u0 = c.ut.span(s.Task, s.Start, s.End, capacity)
	}
	switch s.State {
	case timeline.SpanRunning:
		if s.CPU < 0 {
			return
		}
		c.lastRun[s.Task] = int32(s.CPU)
		switch r := c.ranOn[s.Task]; {
		case r == -1:
			c.ranOn[s.Task] = int32(s.CPU)
		case r >= 0 && r != int32(s.CPU):
			c.ranOn[s.Task] = -2
		}
		st, en, f := c.clip(s.Start, s.End, s.Open())
		if en <= st || int(s.CPU) >= len(c.lastSeg) {
			return
		}
		c.abut(s.CPU, st, int32(len(c.runs)), false, en)
		u := u0
		onset := maxTime
		if c.asym {
			if st > s.Start {
				u = c.ut.p.Run(u0, int64(st-s.Start), capacity)
			}
			if c.match[s.Task] {
				if ue := c.ut.p.Run(u, int64(en-st), capacity); ue > c.peak[s.Task] {
					c.peak[s.Task] = ue
				}
			}
		}
		if c.asym && capacity < c.maxCap {
			if d, ok := c.ut.p.RunUntil(u, fitThreshold(capacity), capacity); ok && st+timeline.Time(d) < en {
				onset = st + timeline.Time(d)
			}
		}
		c.runs = append(c.runs, runSeg{start: st, end: en, task: s.Task, cpu: int32(s.CPU), flags: f})
		if c.asym {
			c.fit = append(c.fit, runFit{u0: u, onset: onset})
		}
		c.maybeDecide()
	case timeline.SpanWoken, timeline.SpanPreempted:
		if !c.match[s.Task] {
			return
		}
		if s.End < c.win.Start || s.Start > c.win.End {
			return
		}
		c.addSample(s)
		c.maybeDecide()
	}
}

// addSample records one wakeup-latency or preemption-wait sample and the
// runqueue stretches of its wait.
func (c *collector) addSample(s *timeline.Span) {
	tl := c.tl
	st, en, f := c.clip(s.Start, s.End, s.Open())
	smp := Sample{
		Task: s.Task, PID: tl.Tasks[s.Task].PID,
		Start: s.Start, Wakeup: timeline.NoTime, End: s.End, DurNs: int64(en - st),
		WakeCPU: timeline.NoCPU, TargetCPU: timeline.NoCPU, CPU: s.CPU, Waker: timeline.NoTask, WakerPID: timeline.NoTID,
		Prio: s.Prio,
	}
	if smp.DurNs < 0 {
		smp.DurNs = 0
	}
	switch {
	case f&(segClipStart|segClipEnd) != 0:
		smp.Censored = CensoredWindow
	case s.Open() && s.End >= tl.End:
		smp.Censored = CensoredTraceEnd
	case s.Open():
		smp.Censored = CensoredGap
	}
	if s.Open() {
		smp.CPU = timeline.NoCPU
	}
	if s.State == timeline.SpanPreempted {
		smp.Kind = SamplePreempt
		if s.Flags&timeline.SpanAfterRace != 0 {
			smp.AfterRace = true
		}
	} else {
		smp.Kind = SampleWakeup
		if s.Flags&timeline.SpanWokenNew != 0 {
			smp.Kind = SampleWakeupNew
		}
		smp.NoWaking = smp.Kind == SampleWakeup && (s.Flags&timeline.SpanNoWaking != 0 || !tl.HasWaking)
		smp.WakeCPU, smp.TargetCPU = s.WakeCPU, s.Target
		smp.Waker, smp.WakerCtx = s.Waker, s.WakerCtx
		if s.Waker != timeline.NoTask {
			smp.WakerPID = tl.Tasks[s.Waker].PID
		}
		if s.Enqueue != timeline.NoTime {
			smp.Wakeup = s.Enqueue
			if !smp.NoWaking && smp.Kind == SampleWakeup && s.Enqueue >= s.Start && smp.Censored == CensoredNone {
				smp.split = true
			}
		}
	}
	idx := int32(len(c.samples))
	if c.noSamples {
		idx = int32(len(c.recs))
		c.recs = append(c.recs, recOf(&smp))
	} else {
		c.samples = append(c.samples, smp)
	}
	c.waitSegs(s, idx)
}

// placementsFrom returns the placement events of span s's task and the
// index of the first at or after its start, passing (and, streamed,
// dropping) those before.
func (c *collector) placementsFrom(s *timeline.Span) ([]placeEv, int) {
	if c.streamed {
		return c.trimPending(s.Task, s.Start), 0
	}
	evs := c.place.of(s.Task)
	i := int(c.placeAt[s.Task])
	for i < len(evs) && evs[i].t < s.Start {
		i++
	}
	c.placeAt[s.Task] = int32(i)
	return evs, i
}

// trimPending drops a streamed walk's placement events of task id before
// t, which no later span of the task can reach, and returns the rest.
func (c *collector) trimPending(id timeline.TaskID, t timeline.Time) []placeEv {
	evs := c.pending[id]
	i := 0
	for i < len(evs) && evs[i].t < t {
		i++
	}
	if i > 0 {
		evs = evs[:copy(evs, evs[i:])] // the array is reused: no garbage
		c.pending[id] = evs
	}
	return evs
}

// waitSegs splits a wait into runqueue stretches: the CPU the task was
// queued on, from sched_wakeup / wakeup_new targets, migrations and the CPU
// a preempted task left. Between sched_waking and sched_wakeup the task is
// being placed and on no runqueue. With no placement event the runqueue is
// taken from where the task ran next (inferred).
func (c *collector) waitSegs(s *timeline.Span, sample int32) {
	// The task's spans come in time order, so its placement events are
	// consumed from a cursor rather than searched.
	evs, i := c.placementsFrom(s)
	q, inferred := int32(-1), false
	preempt := s.State == timeline.SpanPreempted
	race := s.Flags&timeline.SpanAfterRace != 0
	woke := false
	switch {
	case preempt:
		q = c.lastRun[s.Task]
		woke = !race
	case !c.tl.HasWakeup:
		// No sched_wakeup in the trace: the runqueue is not recorded.
		q, inferred = int32(s.CPU), true
		if s.CPU < 0 {
			q = int32(s.Target)
		}
		woke = true
	}
	if q < 0 && preempt {
		q, inferred = int32(s.CPU), true
	}
	from := s.Start
	emit := func(to timeline.Time) {
		if q >= 0 && to > from {
			st, en, f := c.clip(from, to, s.Open() && to == s.End)
			if en > st {
				c.waits = append(c.waits, waitSeg{start: st, end: en, task: s.Task, q: q, sample: sample, inferred: inferred, flags: f})
			}
		}
		from = to
	}
	for ; i < len(evs) && evs[i].t <= s.End; i++ {
		e := evs[i]
		if e.kind != timeline.KindMigrate {
			if woke {
				continue // a second wakeup while queued, or a preempted task's
			}
			woke = true
		}
		if e.cpu == q || e.cpu < 0 {
			continue
		}
		emit(e.t)
		q, inferred = e.cpu, false
	}
	if !woke && q < 0 {
		// A wakeup whose sched_wakeup is missing: queued, on the CPU it
		// ran on next.
		q, inferred = int32(s.CPU), true
		if s.CPU < 0 {
			q = int32(s.Target)
		}
	}
	emit(s.End)
}
