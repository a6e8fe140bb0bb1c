package replay

import (
	"fmt"
	"regexp"
	"runtime/debug"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/internal/blocks"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Extract builds the workload a recorded timeline implies: for every task
// instance seen in the valid window, its bursts of CPU demand (scaled by the
// capacity of the CPU each burst ran on) and what ended each sleep.
//
// Outline:
//  1. Walk the events from tl.ValidStart in time order. A task switched in
//     runs until it is switched out; the time is work × capacity/1024.
//  2. A switch-out in R or R+ keeps the task runnable; X or Z ends it; any
//     other state closes the current segment (the task blocks).
//  3. The wakeup (sched_waking, or sched_wakeup when the trace has no
//     waking events) that ends a sleep is attributed: to the task running
//     on the waking CPU when the event was in task context, at that task's
//     work so far (WakeTask); to a timer or interrupt when it was in
//     hardirq, softirq or NMI context, or the waking CPU was idle, or the
//     waker is ksoftirqd (WakeTimer with the recorded delay after the
//     block; a series of equal intervals becomes a periodic timer); to an
//     outside event at the recorded time otherwise (WakeAt).
//  4. sched_wakeup_new starts a forked task at its parent's work
//     (WakeFork). Tasks already present at the valid start are queued at it
//     (WakeStart) on the CPU they were first seen on.
//  5. At the end, a running or runnable task keeps demanding CPU (EndRun),
//     a sleeping one sleeps for good (EndSleep), an exited one exits.
//
// Preconditions: tl comes from timeline.Builder. topo may be nil: the
// timeline's own topology is used, else every CPU is taken as capacity 1024.
// What the trace cannot say is listed in Workload.Assumptions.
func Extract(tl *timeline.Timeline, topo *topology.Topology) (*Workload, error) {
	return ExtractWith(tl, topo, ExtractOptions{})
}

// ExtractOptions carries what the recording machine imposed that the
// timeline itself does not hold.
type ExtractOptions struct {
	// Affinity gives each task's allowed CPUs over time (affinity.Build);
	// nil: per-CPU kernel threads are pinned by name, every other task is
	// free.
	Affinity *affinity.Map
	// Speed says how fast each CPU did the recorded work (the zero value
	// calibrates it from the trace, see SpeedMode). The demand of a burst
	// is its run time x speed/1024, and Workload.Speed keeps the speeds
	// so that the replay runs each CPU at the same rate.
	Speed SpeedSpec
	// DropEvents: the caller reads nothing of the timeline's events after
	// ExtractWith. They are dropped (Timeline.DropEvents) once read, and
	// their memory given back, before the workload is built from what
	// was read, so that the two are not held together.
	DropEvents bool
}

// ExtractWith is Extract with what the recording machine imposed.
func ExtractWith(tl *timeline.Timeline, topo *topology.Topology, opts ExtractOptions) (*Workload, error) {
	if tl == nil || tl.Len() == 0 {
		return nil, fmt.Errorf("replay: extract: empty timeline")
	}
	if topo == nil {
		topo = tl.Topology
	}
	defaultTopo := topo == nil
	speeds, note, err := resolveSpeed(tl, topo, opts.Speed)
	if err != nil {
		return nil, err
	}
	x := newExtractor(tl, speeds)
	x.aff = opts.Affinity
	if x.aff == nil || x.aff.Len() != len(tl.Tasks) {
		m, err := affinity.Build(tl, affinity.BuildOptions{NoInfer: true})
		if err != nil {
			return nil, fmt.Errorf("replay: extract: %w", err)
		}
		x.aff = m
	}
	x.run()
	busy := busyOf(tl)
	if opts.DropEvents {
		tl.DropEvents()
		debug.FreeOSMemory()
	}
	w, err := x.build()
	if err != nil {
		return nil, err
	}
	tagged, unknown, markers, err := markCookies(w, tl)
	if err != nil {
		return nil, err
	}
	for i := range w.Assumptions {
		if w.Assumptions[i].Name == AssumeNoCookies {
			w.Assumptions[i] = cookieAssumption(tagged, unknown, markers)
		}
	}
	w.Speed = speeds
	w.Busy = busy
	w.Assumptions = append(w.Assumptions, note)
	extractGroups(w, tl)
	if defaultTopo {
		w.Assumptions = append(w.Assumptions, Assumption{Name: "topology-default", Detail: "the trace carries no topology: every CPU is taken as capacity 1024"})
	}
	return w, nil
}

func newExtractor(tl *timeline.Timeline, speeds []int) *extractor {
	n := max(tl.NCPU, 1)
	caps := make([]int64, n)
	for i := range caps {
		caps[i] = 1024
		if i < len(speeds) && speeds[i] > 0 {
			caps[i] = int64(speeds[i])
		}
	}
	x := &extractor{tl: tl, caps: caps, start: tl.ValidStart, xs: make([]xtask, len(tl.Tasks)), forkParent: map[timeline.TaskID]timeline.TaskID{},
		cur: make([]timeline.TaskID, n), lastSeen: make([]timeline.Time, n), switched: make([]bool, n),
		lastWake: make([]xlastWake, n), idleSince: make([]timeline.Time, n)}
	x.wakeAt = make([]timeline.Time, n)
	for i := range x.cur {
		x.wakeAt[i] = timeline.NoTime
		x.cur[i] = timeline.NoTask
		x.lastSeen[i] = timeline.NoTime
		x.lastWake[i] = xlastWake{waker: timeline.NoTask, wakee: timeline.NoTask}
		x.idleSince[i] = timeline.NoTime
	}
	if x.start == timeline.NoTime {
		x.start = tl.Start
	}
	for i := range x.xs {
		x.xs[i].runStart = timeline.NoTime
		x.xs[i].lastTimer = timeline.NoTime
		x.xs[i].waitFrom = timeline.NoTime
		x.xs[i].wokenAt = timeline.NoTime
		x.xs[i].sigAt = timeline.NoTime
		x.xs[i].costSeg = -1
	}
	return x
}

type xstate uint8

const (
	xUnknown xstate = iota
	xRunning
	xRunnable
	xSleeping
	xDead
)

type xwake struct {
	waker timeline.TaskID
	cpu   int32
	kind  WakeKind
	sync  bool
	ipi   bool  // for a task wake: a wakeup onto another CPU whose wakee preempted the task there (a resched IPI was sent)
	work  int64 // units
	at    timeline.Time
	delay int64
	// period of a periodic timer
	period int64
	cost   int64 // for a task wake, the waker's sched_waking to sched_wakeup on its CPU (ns); 0: not measured
}

type xseg struct {
	wake xwake
	work int64 // units
}

type xtask struct {
	state     xstate
	cpu       int
	runStart  timeline.Time
	work      int64 // cumulative units
	segStart  int64
	segs      blocks.List[xseg] // in blocks: a slice grown to a task's tens of thousands left four times their size as garbage
	blockAt   timeline.Time
	ended     TaskEnd
	prios     map[int16]int
	firstCPU  int
	lastTimer timeline.Time
	lastIvl   int64
	irqGuess  bool            // woken by a task with no context information
	wokenAt   timeline.Time   // its last wakeup from sleep (NoTime once it ran)
	wokenCPU  int             // the CPU that wakeup was raised on
	wokenOver timeline.TaskID // for an interrupt-raised wakeup, the task then running on wokenCPU
	wokenBy   timeline.TaskID // for a task-raised wakeup or fork, the waker
	preempted bool            // runnable because it was switched out in R or R+
	plainR    bool            // ... in R: it stayed TASK_RUNNING, so no wakeup can follow before it runs
	waitFrom  timeline.Time   // when it last became runnable
	maxWait   int64           // its longest completed wait (ns)
	external  int
	clsRun    []int64       // run time per speed class (only while collecting speed evidence)
	segCls    []int64       // clsRun when the current segment began
	sigAt     timeline.Time // a delivered signal since it last blocked (NoTime: none)
	costSeg   int           // the segment whose task wake awaits its sched_wakeup on the waker's CPU (-1: none)
}

type extractor struct {
	tl            *timeline.Timeline
	aff           *affinity.Map
	wakeAt        []timeline.Time // per CPU, the last wakeup that targeted it
	tickRuns      []int64         // runs ended by a task that waited through them, with no wakeup onto the CPU (ns)
	caps          []int64
	start         timeline.Time
	xs            []xtask
	forkParent    map[timeline.TaskID]timeline.TaskID
	lost          bool
	cur           []timeline.TaskID // per CPU, the task the trace last switched in
	lastSeen      []timeline.Time   // per CPU, its last event
	switched      []bool            // per CPU, a switch was seen
	unseen        int               // runs whose end was not recorded
	lastWake      []xlastWake       // per CPU, the last task wake issued by its current task
	nSync         int               // wakes taken as WF_SYNC
	idleSince     []timeline.Time   // per CPU, when its idle task was switched in (NoTime: not idle)
	idleLocal     []int64           // wake-to-run of wakeups onto an idle CPU, raised on it (ns)
	idleRemote    []int64           // ... raised on another CPU (ns)
	costPlain     []int64           // Wake.Cost of task wakes that sent no resched IPI (ns)
	costIPI       []int64           // ... that did
	busyRemote    []int64           // wake-to-run of wakeups raised on another CPU that preempt the task running on theirs (ns)
	taskPreempt   []int64           // wake-to-run of task-raised wakeups and forks that preempt their waker (ns)
	irqBusy       []int64           // wake-to-run of interrupt-raised wakeups that preempt the task running on their CPU (ns)
	nWaitingAtEnd int               // tasks woken or preempted, waiting when the recording ended
	cls           []int             // per CPU, its speed class; nil: no speed evidence is collected
	nclass        int
	bursts        []speedBurst // run time per class of each whole burst (wakeup to block)
}

// xlastWake is a task wake issued on a CPU: if the waker blocks and the
// wakee is switched in next on that CPU, the wake was a sync wakeup.
type xlastWake struct {
	waker, wakee timeline.TaskID
	seg          int // index of the wakee's segment it started
}

func (x *extractor) capOf(cpu int) int64 {
	if cpu >= 0 && cpu < len(x.caps) {
		return x.caps[cpu]
	}
	return 1024
}

func (x *extractor) isTask(id timeline.TaskID) bool {
	return id != timeline.NoTask && int(id) < len(x.tl.Tasks) && !x.tl.Tasks[id].Idle
}

// workNow returns task id's cumulative work at time t (units).
func (x *extractor) workNow(id timeline.TaskID, t timeline.Time) int64 {
	xt := &x.xs[id]
	if xt.state == xRunning && xt.runStart != timeline.NoTime && t > xt.runStart {
		return xt.work + int64(t-xt.runStart)*x.capOf(xt.cpu)
	}
	return xt.work
}

func (x *extractor) stopRunning(id timeline.TaskID, t timeline.Time) {
	xt := &x.xs[id]
	if xt.state == xRunning && xt.runStart != timeline.NoTime && t > xt.runStart {
		xt.work += int64(t-xt.runStart) * x.capOf(xt.cpu)
		if x.cls != nil && xt.cpu >= 0 && xt.cpu < len(x.cls) {
			if xt.clsRun == nil {
				xt.clsRun = make([]int64, x.nclass)
			}
			xt.clsRun[x.cls[xt.cpu]] += int64(t - xt.runStart)
		}
	}
	xt.runStart = timeline.NoTime
}

// begin starts a task first seen at time t: it existed at the valid start.
func (x *extractor) begin(id timeline.TaskID, cpu int) {
	xt := &x.xs[id]
	xt.segs.Add(xseg{wake: xwake{kind: WakeStart, at: x.start, cpu: -1}})
	xt.firstCPU = cpu
	xt.segStart = 0
}

func (x *extractor) closeSeg(id timeline.TaskID) {
	xt := &x.xs[id]
	if last := xt.segs.Last(); last != nil {
		last.work = xt.work - xt.segStart
	}
	xt.segStart = xt.work
	if xt.clsRun != nil {
		xt.segCls = append(xt.segCls[:0], xt.clsRun...)
	}
}

func (x *extractor) notePrio(id timeline.TaskID, i int) {
	p := x.tl.Prios[i]
	if p == timeline.NoPrio || !x.isTask(id) {
		return
	}
	xt := &x.xs[id]
	if xt.prios == nil {
		xt.prios = map[int16]int{}
	}
	xt.prios[int16(p)]++
}

func (x *extractor) run() {
	tl := x.tl
	for i := 0; i < tl.Len(); i++ {
		t := tl.Times[i]
		if t < x.start {
			continue
		}
		cpu := int(tl.CPUs[i])
		if cpu >= len(x.cur) {
			continue
		}
		switch tl.Kinds[i] {
		case timeline.KindLost:
			x.lost = true
			x.dropRun(cpu, tl.Times[i])
		case timeline.KindFork, timeline.KindNewTask:
			if x.isTask(tl.TaskOf[i]) && tl.Kinds[i] == timeline.KindFork {
				x.forkParent[tl.TaskOf[i]] = tl.Other[i]
			}
			x.reveal(tl.Other[i], cpu)
		case timeline.KindSwitch:
			x.doSwitch(i, t, cpu)
		case timeline.KindWaking:
			x.notePrio(tl.TaskOf[i], i)
			x.doWake(i, t, cpu)
			x.noteWakeTarget(i, t)
		case timeline.KindWakeup:
			x.notePrio(tl.TaskOf[i], i)
			if !tl.HasWaking {
				x.doWake(i, t, cpu)
			} else {
				x.noteWakeCost(i, t, cpu)
			}
			x.noteWakeTarget(i, t)
		case timeline.KindWakeupNew:
			x.notePrio(tl.TaskOf[i], i)
			x.doWakeNew(i, t, cpu)
			x.noteWakeTarget(i, t)
		case timeline.KindSignal:
			x.doSignal(i, t)
		}
		x.lastSeen[cpu] = t
	}
	end := tl.End
	for id := range x.xs {
		xt := &x.xs[id]
		if xt.segs.Len() == 0 {
			continue
		}
		switch xt.state {
		case xRunning:
			x.stopRunning(timeline.TaskID(id), end)
			x.closeSeg(timeline.TaskID(id))
			xt.ended = EndRun
		case xRunnable, xUnknown:
			x.closeSeg(timeline.TaskID(id))
			xt.ended = EndRun
			if xt.state == xRunnable && (!xt.preempted || xt.waitFrom == timeline.NoTime || int64(end-xt.waitFrom) > xt.maxWait) {
				// Woken and not yet run at the end, or preempted and
				// waiting longer than it ever waited before: nothing
				// shows more demand than it ran (a woken RT thread, or a
				// thread whose runs the trace misses, kept demanding
				// would take a CPU for the rest of the replay). A task
				// preempted within its usual wait is CPU-bound and keeps
				// demanding.
				xt.ended = EndSleep
				x.nWaitingAtEnd++
			}
		case xSleeping:
			xt.ended = EndSleep
		case xDead:
			xt.ended = EndExit
		}
	}
}

// reveal handles task id seen running on cpu (as an event's header task or
// as a switch's prev) before any switch-in of it was seen: it ran there
// since the workload's start when every CPU was recorded from the start,
// else since the CPU's data began, or, if the CPU already switched since, since
// its previous event (the switch-in was not recorded).
func (x *extractor) reveal(id timeline.TaskID, cpu int) {
	if !x.isTask(id) || x.xs[id].state != xUnknown {
		return
	}
	x.begin(id, cpu)
	xt := &x.xs[id]
	from := x.start
	if x.tl.ValidStartRule != timeline.StartFirstEvent {
		// Only a CPU the trace proves was recorded from the start (as
		// timeline.Walk decides) shows its first task running since then.
		from = max(from, x.tl.CPUFirst[cpu])
	}
	if x.switched[cpu] {
		from = max(from, x.lastSeen[cpu])
		x.unseen++
	}
	xt.state = xRunning
	xt.cpu = cpu
	xt.runStart = from
	x.cur[cpu] = id
}

// dropRun ends the run of the task the trace last put on cpu when the
// trace does not show where it ended (a lost switch, a gap): the run is
// counted up to the CPU's last recorded event, and the task is taken as
// asleep from there.
func (x *extractor) dropRun(cpu int, t timeline.Time) {
	id := x.cur[cpu]
	x.cur[cpu] = timeline.NoTask
	if !x.isTask(id) {
		return
	}
	xt := &x.xs[id]
	if xt.state != xRunning || xt.cpu != cpu {
		return
	}
	end := x.lastSeen[cpu]
	if end == timeline.NoTime || end < xt.runStart {
		end = xt.runStart
	}
	x.stopRunning(id, end)
	x.closeSeg(id)
	xt.state = xSleeping
	xt.blockAt = end
	xt.sigAt = timeline.NoTime
	x.unseen++
}

func (x *extractor) doSwitch(i int, t timeline.Time, cpu int) {
	tl := x.tl
	prev, next := tl.Other[i], tl.TaskOf[i]
	if c := x.cur[cpu]; c != timeline.NoTask && c != prev {
		x.dropRun(cpu, t)
	}
	if x.isTask(next) && x.xs[next].state == xRunning && x.xs[next].cpu != cpu {
		// Switched in here while the trace still has it on another CPU.
		x.dropRun(x.xs[next].cpu, t)
	}
	if x.isTask(next) {
		x.noteWakeDelay(next, prev, cpu, t, tl.States[i])
		x.xs[next].wokenAt = timeline.NoTime
	}
	x.idleSince[cpu] = timeline.NoTime
	if next != timeline.NoTask && int(next) < len(tl.Tasks) && tl.Tasks[next].Idle {
		x.idleSince[cpu] = t
	}
	x.cur[cpu] = next
	x.switched[cpu] = true
	lw := x.lastWake[cpu]
	x.lastWake[cpu] = xlastWake{waker: timeline.NoTask, wakee: timeline.NoTask}
	if x.isTask(prev) {
		xt := &x.xs[prev]
		x.reveal(prev, cpu)
		st := tl.States[i]
		if xt.state == xRunning && st.Runnable() && xt.runStart != timeline.NoTime && xt.runStart > x.start &&
			(x.wakeAt[cpu] == timeline.NoTime || x.wakeAt[cpu] < xt.runStart) && x.isTask(next) {
			// Preempted by a task that waited through the whole run, with
			// no wakeup onto this CPU meanwhile: the tick ended the run.
			if nx := &x.xs[next]; nx.state == xRunnable && nx.waitFrom != timeline.NoTime && nx.waitFrom <= xt.runStart {
				x.tickRuns = append(x.tickRuns, int64(t-xt.runStart))
			}
		}
		if xt.state == xRunning {
			x.stopRunning(prev, t)
		}
		switch {
		case st.Runnable():
			xt.state = xRunnable
			xt.preempted, xt.waitFrom = true, t
			xt.plainR = st&timeline.StatePreempted == 0
		case st.Dead():
			x.closeSeg(prev)
			xt.state = xDead
		default:
			x.noteBurst(prev)
			x.closeSeg(prev)
			xt.state = xSleeping
			xt.blockAt = t
			xt.sigAt = timeline.NoTime
			// The waker blocked right after waking next, and next takes
			// its CPU: the signature of a WF_SYNC wakeup (pipes, sockets:
			// wake_up_interruptible_sync_poll), which wake_affine turns
			// into "stay on the waker's CPU".
			if lw.waker == prev && lw.wakee == next && x.isTask(next) {
				if nx := &x.xs[next]; lw.seg < nx.segs.Len() && nx.segs.At(lw.seg).wake.kind == WakeTask && nx.segs.At(lw.seg).wake.waker == prev {
					nx.segs.At(lw.seg).wake.sync = true
					x.nSync++
				}
			}
		}
	}
	if x.isTask(next) {
		x.notePrio(next, i)
		xt := &x.xs[next]
		switch xt.state {
		case xUnknown:
			x.begin(next, cpu)
		case xSleeping:
			// Switched in with no wakeup seen (lost or missing event).
			xt.segs.Add(xseg{wake: xwake{kind: WakeAt, at: t, cpu: int32(cpu)}})
			xt.external++
		case xDead:
			return
		case xRunnable:
			if xt.waitFrom != timeline.NoTime {
				xt.maxWait = max(xt.maxWait, int64(t-xt.waitFrom))
			}
		}
		xt.waitFrom = timeline.NoTime
		xt.state = xRunning
		xt.cpu = cpu
		xt.runStart = t
	}
}

var ksoftirqd = regexp.MustCompile(`^ksoftirqd/\d+$`)

func (x *extractor) doWake(i int, t timeline.Time, cpu int) {
	tl := x.tl
	id := tl.TaskOf[i]
	if !x.isTask(id) {
		return
	}
	xt := &x.xs[id]
	switch xt.state {
	case xRunnable:
		if xt.preempted && !xt.plainR {
			return // preempted (R+) before it could block: ttwu finds it queued
		}
		// Woken already, or queued in R since its switch-out:
		// try_to_wake_up traces only a task that is not TASK_RUNNING, so
		// it ran and blocked unseen (timeline.IncWokenQueued). The unseen
		// run is not counted.
		x.closeSeg(id)
		xt.state = xSleeping
		xt.blockAt = timeline.NoTime
		xt.sigAt = timeline.NoTime
		x.unseen++
	case xRunning, xDead:
		return // not a wakeup of a sleeping task
	}
	first := xt.state == xUnknown
	waker := tl.Other[i]
	ctx := tl.Ctxs[i]
	if ctx == timeline.CtxTask || ctx == timeline.CtxUnknown {
		x.reveal(waker, cpu)
	}
	var wk xwake
	irq := ctx == timeline.CtxHardirq || ctx == timeline.CtxSoftirq || ctx == timeline.CtxNMI
	switch {
	case irq || waker == timeline.NoTask || (int(waker) < len(tl.Tasks) && tl.Tasks[waker].Idle) ||
		(x.isTask(waker) && ksoftirqd.MatchString(tl.TaskName(waker))):
		if waker == timeline.NoTask && !irq {
			wk = xwake{kind: WakeAt, at: t, cpu: int32(cpu)}
			xt.external++
			break
		}
		delay := int64(0)
		if !first && xt.blockAt != timeline.NoTime {
			delay = int64(t - xt.blockAt)
		}
		wk = xwake{kind: WakeTimer, delay: delay, cpu: int32(cpu)}
		if first {
			wk = xwake{kind: WakeAt, at: t, cpu: int32(cpu)}
		}
	case x.isTask(waker) && x.xs[waker].state == xRunning && waker != id:
		wk = xwake{kind: WakeTask, waker: waker, work: x.workNow(waker, t)}
		if !first && xt.blockAt != timeline.NoTime {
			wk.delay = int64(t - xt.blockAt) // the recorded sleep
		}
		if ctx == timeline.CtxUnknown {
			xt.irqGuess = true
		}
	default:
		wk = xwake{kind: WakeAt, at: t, cpu: int32(cpu)}
		xt.external++
	}
	if wk.kind == WakeTimer {
		x.notePeriodic(id, t, &wk)
	}
	if wk.kind == WakeTask && x.cur[cpu] == waker {
		x.lastWake[cpu] = xlastWake{waker: waker, wakee: id, seg: xt.segs.Len()}
	}
	if first {
		xt.firstCPU = int(tl.Args[i])
		if xt.firstCPU < 0 {
			xt.firstCPU = cpu
		}
	}
	xt.costSeg = -1
	if wk.kind == WakeTask && ctx == timeline.CtxTask && x.cur[cpu] == waker {
		xt.costSeg = xt.segs.Len()
	}
	xt.segs.Add(xseg{wake: wk})
	by, over := timeline.NoTask, timeline.NoTask
	if wk.kind == WakeTask {
		by = waker
	}
	if irq {
		over = x.cur[cpu]
	}
	x.markWoken(xt, t, cpu, by, over)
}

// noteWakeDelay records, when next is switched in on cpu at t for the
// first time since a wakeup, the wake-to-run time in the class it belongs
// to (Workload.WakeDelays): onto an idle CPU, raised there or elsewhere; an
// interrupt's wakeup that preempts the task it interrupted; a task's wakeup
// (or fork) that preempts the waker; a wakeup raised on another CPU that
// preempts the task running here. prevState is the switch's prev_state.
func (x *extractor) noteWakeDelay(next, prev timeline.TaskID, cpu int, t timeline.Time, prevState timeline.State) {
	nx := &x.xs[next]
	if nx.wokenAt == timeline.NoTime || nx.state != xRunnable || nx.preempted || prev == timeline.NoTask || int(prev) >= len(x.tl.Tasks) {
		return
	}
	d := int64(t - nx.wokenAt)
	switch {
	case x.tl.Tasks[prev].Idle:
		if x.idleSince[cpu] == timeline.NoTime || x.idleSince[cpu] > nx.wokenAt {
			return // the CPU was not idle when the wakeup came
		}
		if nx.wokenCPU == cpu {
			x.idleLocal = append(x.idleLocal, d)
		} else {
			x.idleRemote = append(x.idleRemote, d)
		}
	case !prevState.Runnable():
	case nx.wokenCPU != cpu:
		// Raised elsewhere, it preempted the task running here: the
		// waker's wakeup (a resched IPI sent from inside it, which on a
		// virtual machine exits to the host), the IPI's delivery and the
		// switch.
		x.busyRemote = append(x.busyRemote, d)
		if last := nx.segs.Last(); last != nil && last.wake.kind == WakeTask {
			last.wake.ipi = true
		}
	case nx.wokenOver == prev:
		x.irqBusy = append(x.irqBusy, d)
	case nx.wokenBy == prev:
		x.taskPreempt = append(x.taskPreempt, d)
	}
}

// markWoken notes the wakeup at t raised on cpu that made xt runnable,
// for noteWakeDelay: by, when it is a task (or a parent) running there, or
// over, the task an interrupt-raised wakeup interrupted.
func (x *extractor) markWoken(xt *xtask, t timeline.Time, cpu int, by, over timeline.TaskID) {
	xt.state = xRunnable
	xt.preempted, xt.waitFrom = false, t
	xt.wokenAt, xt.wokenCPU, xt.wokenOver, xt.wokenBy = t, cpu, timeline.NoTask, timeline.NoTask
	if x.isTask(over) {
		xt.wokenOver = over
	}
	if by != timeline.NoTask && x.cur[cpu] == by {
		xt.wokenBy = by
	}
}

// notePeriodic turns a timer wake into a periodic one when it repeats the
// previous interval within 1%.
func (x *extractor) notePeriodic(id timeline.TaskID, t timeline.Time, wk *xwake) {
	xt := &x.xs[id]
	if xt.lastTimer != timeline.NoTime {
		ivl := int64(t - xt.lastTimer)
		if xt.lastIvl > 50_000 && ivl > 0 && absInt64(ivl-xt.lastIvl)*100 <= xt.lastIvl {
			wk.period = ivl
			if last := xt.segs.Last(); last != nil && last.wake.kind == WakeTimer {
				last.wake.period = xt.lastIvl
			}
		}
		xt.lastIvl = ivl
	}
	xt.lastTimer = t
}

func absInt64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func (x *extractor) doWakeNew(i int, t timeline.Time, cpu int) {
	tl := x.tl
	id := tl.TaskOf[i]
	if !x.isTask(id) {
		return
	}
	xt := &x.xs[id]
	if xt.state != xUnknown {
		return
	}
	parent, ok := x.forkParent[id]
	if !ok {
		parent = tl.Other[i]
	}
	var wk xwake
	if x.isTask(parent) && x.xs[parent].state == xRunning {
		wk = xwake{kind: WakeFork, waker: parent, work: x.workNow(parent, t)}
	} else {
		wk = xwake{kind: WakeAt, at: t, cpu: int32(cpu)}
		xt.external++
	}
	xt.firstCPU = int(tl.Args[i])
	if xt.firstCPU < 0 {
		xt.firstCPU = cpu
	}
	xt.segs.Add(xseg{wake: wk})
	by := timeline.NoTask
	if wk.kind == WakeFork {
		by = parent
	}
	x.markWoken(xt, t, cpu, by, timeline.NoTask)
}

// noteWakeTarget records that event i, a wakeup, targeted a CPU: a run
// there that a wakeup may have ended is no tick evidence.
// noteWakeCost measures, at the sched_wakeup of a task a running task woke
// (its sched_waking), the time between the two when both are on the
// waker's CPU: try_to_wake_up in the waker's context, which its run time
// includes, the resched IPI it may send among it (Wake.Cost). A wakeup
// queued on the target's wake list is emitted there and not measured.
func (x *extractor) noteWakeCost(i int, t timeline.Time, cpu int) {
	id := x.tl.TaskOf[i]
	if !x.isTask(id) {
		return
	}
	xt := &x.xs[id]
	if xt.costSeg < 0 || xt.costSeg >= xt.segs.Len() {
		return
	}
	sg := xt.segs.At(xt.costSeg)
	xt.costSeg = -1
	if xt.state != xRunnable || xt.wokenCPU != cpu || t < xt.wokenAt || int64(t-xt.wokenAt) > maxDelayNs {
		return
	}
	sg.wake.cost = max(int64(t-xt.wokenAt), 1)
}

func (x *extractor) noteWakeTarget(i int, t timeline.Time) {
	if c := int(x.tl.Args[i]); c >= 0 && c < len(x.wakeAt) {
		x.wakeAt[c] = t
	}
}

// ipc reports whether a wakeup of wakee by waker is taken as an IPC wakeup
// (pipe, socket), which the kernel issues with WF_SYNC: the two are in
// different thread groups, or a thread group is not known. A wakeup within
// a thread group is taken as a futex wakeup, which is not sync.
func (x *extractor) ipc(waker, wakee timeline.TaskID) bool {
	if !x.isTask(waker) || !x.isTask(wakee) {
		return false
	}
	a, b := x.tl.Tasks[waker].TGID, x.tl.Tasks[wakee].TGID
	if a <= 0 || b <= 0 {
		return true
	}
	return a != b
}

// doSignal notes a delivered signal (signal_generate with result 0) to a
// task that runs or waits to run: if the task then exits without blocking,
// the signal ended it (Task.KillAt). A group signal reaches every thread
// of the target's thread group.
func (x *extractor) doSignal(i int, t timeline.Time) {
	tl := x.tl
	if tl.Args2[i]&0xff != 0 {
		return // ignored, already pending or not queued
	}
	if !fatalByDefault(tl.Args[i]) {
		return
	}
	target := tl.TaskOf[i]
	if !x.isTask(target) {
		return
	}
	mark := func(id timeline.TaskID) {
		if xt := &x.xs[id]; xt.state == xRunning || xt.state == xRunnable {
			xt.sigAt = t
		}
	}
	mark(target)
	if tl.Args2[i]>>8&1 != 0 {
		if tg := tl.Tasks[target].TGID; tg > 0 {
			for id := range x.xs {
				if timeline.TaskID(id) != target && tl.Tasks[id].TGID == tg && x.isTask(timeline.TaskID(id)) {
					mark(timeline.TaskID(id))
				}
			}
		}
	}
}

// fatalByDefault reports whether signal sig ends a task that has no handler
// for it: every signal but those the kernel ignores (SIGCHLD, SIGCONT,
// SIGURG, SIGWINCH) or stops on (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU) by
// default (SIG_KERNEL_IGNORE_MASK and SIG_KERNEL_STOP_MASK,
// include/linux/signal.h; x86 and arm64 numbers).
func fatalByDefault(sig int32) bool {
	switch sig {
	case 17, 18, 23, 28, 19, 20, 21, 22:
		return false
	}
	return sig > 0
}
