package replay

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/affinity"
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
	w, err := x.build()
	if err != nil {
		return nil, err
	}
	w.Speed = speeds
	w.Busy = busyOf(tl)
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
	}
	return x
}

// resolveSpeed returns the speed of every CPU of tl's machine under spec,
// and the assumption that says where it came from. SpeedAuto on a machine
// with more than one capacity class walks the trace once to collect the
// evidence calibrateSpeed weighs.
func resolveSpeed(tl *timeline.Timeline, topo *topology.Topology, spec SpeedSpec) ([]int, Assumption, error) {
	n := max(tl.NCPU, 1)
	class, perf := speedClasses(topo, n)
	base := make([]int, n)
	for i := range base {
		base[i] = perf[class[i]]
	}
	a := Assumption{Name: AssumeCPUSpeed}
	switch spec.Mode {
	case SpeedEqual:
		sp := make([]int, n)
		for i := range sp {
			sp[i] = topology.CapacityScale
		}
		a.Detail = "--cpu-speed equal: every CPU did work at speed 1024 whatever its capacity (an emulated guest, or capacities that are only labels)"
		return sp, a, nil
	case SpeedCapacity:
		a.Detail = "--cpu-speed capacity: every CPU did work at its capacity (" + speedText(class, perf) + ")"
		return base, a, nil
	case SpeedTable:
		for i := 0; i < n; i++ {
			if i >= len(spec.Table) || spec.Table[i] <= 0 {
				return nil, a, fmt.Errorf("cpu speed %s: CPU %d has no speed (the trace has %d CPUs)", spec.Source, i, n)
			}
		}
		if len(spec.Table) > n {
			for i := n; i < len(spec.Table); i++ {
				if spec.Table[i] > 0 {
					return nil, a, fmt.Errorf("cpu speed %s: CPU %d is not in the trace (%d CPUs)", spec.Source, i, n)
				}
			}
		}
		sp := slices.Clone(spec.Table[:n])
		tc, tp := make([]int, n), slices.Clone(sp)
		slices.Sort(tp)
		tp = slices.Compact(tp)
		slices.Reverse(tp)
		for i, v := range sp {
			tc[i] = slices.Index(tp, v)
		}
		a.Detail = "--cpu-speed " + spec.Source + ": " + speedText(tc, tp)
		return sp, a, nil
	case SpeedAuto:
	default:
		return nil, a, fmt.Errorf("replay: unknown speed mode %d", spec.Mode)
	}
	if len(perf) == 1 {
		a.Detail = fmt.Sprintf("every CPU has capacity %d: speed %d for all, nothing to calibrate", perf[0], perf[0])
		return base, a, nil
	}
	x := newExtractor(tl, base)
	x.collect(class, len(perf))
	x.run()
	fits, why := calibrateSpeed(perf, x.bursts, x.speedLives())
	sp := slices.Clone(base)
	var parts []string
	for k := 1; k < len(perf); k++ {
		cpus := cpusOfClass(class, k)
		if f := fits[k]; f != nil {
			for i := range sp {
				if class[i] == k {
					sp[i] = f.speed
				}
			}
			parts = append(parts, fmt.Sprintf("CPUs %s (capacity %d) calibrated to speed %d from %s", cpus, perf[k], f.speed, f.evidence))
			continue
		}
		parts = append(parts, fmt.Sprintf("CPUs %s (capacity %d) at speed %d, their capacity, by default: %s", cpus, perf[k], perf[k], why[k]))
	}
	a.Detail = fmt.Sprintf("CPUs %s (capacity %d) at speed %d; ", cpusOfClass(class, 0), perf[0], perf[0]) + strings.Join(parts, "; ") +
		" (without evidence a CPU is taken to run at its capacity, as the kernel's PELT scaling assumes; --cpu-speed equal|capacity|FILE overrides)"
	return sp, a, nil
}

// speedText lists CPUs by speed class: "CPUs 1-2 at 1024, 0,3-5 at 383".
func speedText(class, speed []int) string {
	var parts []string
	for k, v := range speed {
		parts = append(parts, fmt.Sprintf("%s at %d", cpusOfClass(class, k), v))
	}
	return "CPUs " + strings.Join(parts, ", ")
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
	kind   WakeKind
	waker  timeline.TaskID
	work   int64 // units
	at     timeline.Time
	delay  int64
	period int64
	cpu    int
	sync   bool
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
	segs      []xseg
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
	clsRun    []int64 // run time per speed class (only while collecting speed evidence)
	segCls    []int64 // clsRun when the current segment began
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
	taskPreempt   []int64           // wake-to-run of task-raised wakeups and forks that preempt their waker (ns)
	irqBusy       []int64           // wake-to-run of interrupt-raised wakeups that preempt the task running on their CPU (ns)
	nWaitingAtEnd int               // tasks woken or preempted, waiting when the recording ended
	cls           []int             // per CPU, its speed class; nil: no speed evidence is collected
	nclass        int
	bursts        []speedBurst // run time per class of each whole burst (wakeup to block)
}

// collect makes the walk gather speed evidence: CPU i is in class cls[i]
// of n.
func (x *extractor) collect(cls []int, n int) {
	x.cls, x.nclass = cls, n
}

// noteBurst records the burst task id just ended by blocking, when a
// recorded wakeup began it.
func (x *extractor) noteBurst(id timeline.TaskID) {
	xt := &x.xs[id]
	if x.cls == nil || xt.clsRun == nil || len(xt.segs) == 0 || xt.segs[len(xt.segs)-1].wake.kind == WakeStart {
		return
	}
	run := make([]int64, x.nclass)
	for k := range run {
		run[k] = xt.clsRun[k]
		if xt.segCls != nil {
			run[k] -= xt.segCls[k]
		}
	}
	x.bursts = append(x.bursts, speedBurst{task: int(id), run: run})
}

// speedLives returns the run time per class of every task forked and
// exited in the recording, keyed by parent and comm stem.
func (x *extractor) speedLives() []speedLife {
	var out []speedLife
	for id := range x.xs {
		xt := &x.xs[id]
		if xt.state != xDead || xt.clsRun == nil || len(xt.segs) == 0 || xt.segs[0].wake.kind != WakeFork {
			continue
		}
		key := strconv.Itoa(int(xt.segs[0].wake.waker)) + "/" + commStem(x.tl.TaskName(timeline.TaskID(id)))
		out = append(out, speedLife{key: key, run: slices.Clone(xt.clsRun)})
	}
	return out
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
	xt.segs = append(xt.segs, xseg{wake: xwake{kind: WakeStart, at: x.start, cpu: -1}})
	xt.firstCPU = cpu
	xt.segStart = 0
}

func (x *extractor) closeSeg(id timeline.TaskID) {
	xt := &x.xs[id]
	if n := len(xt.segs); n > 0 {
		xt.segs[n-1].work = xt.work - xt.segStart
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
			}
			x.noteWakeTarget(i, t)
		case timeline.KindWakeupNew:
			x.notePrio(tl.TaskOf[i], i)
			x.doWakeNew(i, t, cpu)
			x.noteWakeTarget(i, t)
		}
		x.lastSeen[cpu] = t
	}
	end := tl.End
	for id := range x.xs {
		xt := &x.xs[id]
		if len(xt.segs) == 0 {
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
			// The waker blocked right after waking next, and next takes
			// its CPU: the signature of a WF_SYNC wakeup (pipes, sockets:
			// wake_up_interruptible_sync_poll), which wake_affine turns
			// into "stay on the waker's CPU".
			if lw.waker == prev && lw.wakee == next && x.isTask(next) {
				if nx := &x.xs[next]; lw.seg < len(nx.segs) && nx.segs[lw.seg].wake.kind == WakeTask && nx.segs[lw.seg].wake.waker == prev {
					nx.segs[lw.seg].wake.sync = true
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
			xt.segs = append(xt.segs, xseg{wake: xwake{kind: WakeAt, at: t, cpu: cpu}})
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
			wk = xwake{kind: WakeAt, at: t, cpu: cpu}
			xt.external++
			break
		}
		delay := int64(0)
		if !first && xt.blockAt != timeline.NoTime {
			delay = int64(t - xt.blockAt)
		}
		wk = xwake{kind: WakeTimer, delay: delay, cpu: cpu}
		if first {
			wk = xwake{kind: WakeAt, at: t, cpu: cpu}
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
		wk = xwake{kind: WakeAt, at: t, cpu: cpu}
		xt.external++
	}
	if wk.kind == WakeTimer {
		x.notePeriodic(id, t, &wk)
	}
	if wk.kind == WakeTask && x.cur[cpu] == waker {
		x.lastWake[cpu] = xlastWake{waker: waker, wakee: id, seg: len(xt.segs)}
	}
	if first {
		xt.firstCPU = int(tl.Args[i])
		if xt.firstCPU < 0 {
			xt.firstCPU = cpu
		}
	}
	xt.segs = append(xt.segs, xseg{wake: wk})
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
// (or fork) that preempts the waker. prevState is the switch's prev_state.
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
	case nx.wokenCPU != cpu || !prevState.Runnable():
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
			if n := len(xt.segs); n > 0 && xt.segs[n-1].wake.kind == WakeTimer {
				xt.segs[n-1].wake.period = xt.lastIvl
			}
		}
		xt.lastIvl = ivl
	}
	xt.lastTimer = t
}

// delayDist is the distribution of the samples of at most maxDelayNs (nil
// with fewer than minDelaySamples of them).
func delayDist(v []int64) DelayDist {
	var kept []int64
	for _, d := range v {
		if d <= maxDelayNs {
			kept = append(kept, d)
		}
	}
	return NewDelayDist(kept)
}

func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

func usText(ns int64, n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(ns)/1000, 'f', 1, 64) + " us"
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
		wk = xwake{kind: WakeAt, at: t, cpu: cpu}
		xt.external++
	}
	xt.firstCPU = int(tl.Args[i])
	if xt.firstCPU < 0 {
		xt.firstCPU = cpu
	}
	xt.segs = append(xt.segs, xseg{wake: wk})
	by := timeline.NoTask
	if wk.kind == WakeFork {
		by = parent
	}
	x.markWoken(xt, t, cpu, by, timeline.NoTask)
}

// noteWakeTarget records that event i, a wakeup, targeted a CPU: a run
// there that a wakeup may have ended is no tick evidence.
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

func (x *extractor) build() (*Workload, error) {
	tl := x.tl
	w := &Workload{Start: x.start, End: max(tl.End, x.start+1), WakeAfterBlock: true, Unobserved: append([]timeline.Gap(nil), tl.Gaps...)}
	index := make([]int, len(x.xs))
	for id := range x.xs {
		index[id] = -1
		if len(x.xs[id].segs) > 0 {
			index[id] = len(w.Tasks)
			w.Tasks = append(w.Tasks, Task{})
		}
	}
	var nRun, nExt, nIRQ, nPrio, nTimer, nIPC int
	var nAff [affinity.Inferred + 1]int
	for id := range x.xs {
		k := index[id]
		if k < 0 {
			continue
		}
		xt := &x.xs[id]
		src := &tl.Tasks[id]
		tk := &w.Tasks[k]
		tk.TID = src.PID
		tk.TGID = src.TGID
		tk.Comm = tl.TaskName(timeline.TaskID(id))
		tk.Prio = 120
		best := -1
		for p, n := range xt.prios {
			if n > best || (n == best && int(p) < tk.Prio) {
				best, tk.Prio = n, int(p)
			}
		}
		if len(xt.prios) > 1 {
			nPrio++
		}
		tk.CPU = xt.firstCPU
		if tk.CPU >= tl.NCPU {
			tk.CPU = -1
		}
		x.allowed(tk, timeline.TaskID(id), w.Start, &nAff)
		tk.End = xt.ended
		if tk.End == EndRun {
			nRun++
			tk.Flags = append(tk.Flags, AssumeRunAtEnd)
		}
		if xt.external > 0 {
			nExt++
			tk.Flags = append(tk.Flags, AssumeExternalWaker)
		}
		if xt.irqGuess {
			nIRQ++
			tk.Flags = append(tk.Flags, AssumeIRQWaker)
		}
		for _, sg := range xt.segs {
			wk := Wake{Kind: sg.wake.kind, At: sg.wake.at, Delay: sg.wake.delay, Period: sg.wake.period, CPU: sg.wake.cpu, Sync: sg.wake.sync && sg.wake.kind == WakeTask}
			if sg.wake.kind == WakeTask && !wk.Sync && x.ipc(sg.wake.waker, timeline.TaskID(id)) {
				wk.Sync = true
				nIPC++
			}
			switch wk.Kind {
			case WakeTask, WakeFork:
				wk.CPU = -1
				if wk.Kind == WakeTask {
					wk.Slept, wk.Delay = wk.Delay, 0
				}
				if wi := index[sg.wake.waker]; wi >= 0 {
					wk.Waker = wi
					wk.Work = sg.wake.work >> unitShift
				} else {
					wk = Wake{Kind: WakeAt, At: tl.Start, CPU: -1}
				}
			case WakeTimer:
				nTimer++
			case WakeStart:
				wk.CPU = -1
			}
			tk.Segments = append(tk.Segments, Segment{Wake: wk, Work: max(sg.work>>unitShift, 0)})
		}
		// A waker's recorded work point cannot exceed what it did.
	}
	demand := make([]int64, len(w.Tasks))
	for k := range w.Tasks {
		demand[k] = w.Tasks[k].Demand()
	}
	for k := range w.Tasks {
		for j := range w.Tasks[k].Segments {
			wk := &w.Tasks[k].Segments[j].Wake
			if wk.Kind == WakeTask || wk.Kind == WakeFork {
				if d := demand[wk.Waker]; wk.Work > d && w.Tasks[wk.Waker].End != EndRun {
					wk.Work = d
				}
				if wk.Waker == k {
					*wk = Wake{Kind: WakeAt, At: w.Start, CPU: -1}
				}
			}
		}
	}
	w.Assumptions = []Assumption{
		{Name: AssumeFMax, Detail: "CPUs ran at full frequency: work = time x speed / 1024 (speeds: cpu-speed)"},
		{Name: AssumePrioMajority, Detail: "nice from the most frequent prio of each task", Tasks: nPrio},
		{Name: AssumeNoSync, Detail: fmt.Sprintf("WF_SYNC is not traced: %d wakeups of one process by another are taken as sync (pipes and sockets wake with WF_SYNC), wakeups within a thread group as non-sync (futexes do not), unless the waker blocked right after it and the wakee took the waker's CPU (sync-pair)", nIPC)},
		{Name: AssumeWakeAfterBlock, Detail: "every recorded wake ended a recorded sleep: a wake that fires before its wakee has blocked in the replay waits for the block, then wakes it at once"},
		{Name: AssumeNoCookies, Detail: "core-scheduling cookies are not traced: none assumed"},
		{Name: AssumePolicyNormal, Detail: "SCHED_BATCH/SCHED_IDLE look like SCHED_NORMAL; prio < 100 is taken as SCHED_FIFO"},
		{Name: AssumeStartQueued, Detail: "tasks present at the valid start are queued there on the CPU they were first seen on, with no lag"},
		{Name: AssumeTimerNotTask, Detail: fmt.Sprintf("%d wakeups from interrupt context or an idle CPU replay at the recorded delay after the sleep began", nTimer)},
	}
	w.Assumptions = append(w.Assumptions, x.affinityAssumption(nAff))
	if x.nSync > 0 {
		w.Assumptions = append(w.Assumptions, Assumption{Name: AssumeSyncPair, Detail: fmt.Sprintf("%d wakeups whose waker blocked right after them and whose wakee took the waker's CPU are taken as WF_SYNC", x.nSync)})
	}
	if nRun > 0 {
		w.Assumptions = append(w.Assumptions, Assumption{Name: AssumeRunAtEnd, Detail: "tasks running when the recording ended, or preempted and waiting no longer than usual for them, keep demanding CPU until the replay ends", Tasks: nRun})
	}
	w.WakeDelays = WakeDelays{LocalNs: median(x.idleLocal), Local: len(x.idleLocal), LocalQ: delayDist(x.idleLocal),
		RemoteNs: median(x.idleRemote), Remote: len(x.idleRemote), RemoteQ: delayDist(x.idleRemote),
		IRQPreemptNs: median(x.irqBusy), IRQPreempt: len(x.irqBusy), IRQPreemptQ: delayDist(x.irqBusy),
		TaskPreemptNs: median(x.taskPreempt), TaskPreempt: len(x.taskPreempt), TaskPreemptQ: delayDist(x.taskPreempt)}
	w.Assumptions = append(w.Assumptions, Assumption{Name: AssumeWakeDelays, Detail: "leaving idle, the wakeup IPI and an interrupt's preemption cost what the recording shows, each delay drawn from its recorded wake-to-run times (20 quantiles) when there are enough: " +
		delaysText(w.WakeDelays, x.idleLocal, x.idleRemote, x.irqBusy, x.taskPreempt)})
	w.TickRuns = TickRuns{N: len(x.tickRuns), MedianNs: median(x.tickRuns)}
	_, why := w.TickHZ()
	w.Assumptions = append(w.Assumptions, Assumption{Name: AssumeTick, Detail: why})
	if x.nWaitingAtEnd > 0 {
		w.Assumptions = append(w.Assumptions, Assumption{Name: AssumeWaitingAtEnd, Detail: "tasks waiting when the recording ended (woken and not yet run, or preempted and waiting longer than ever before in the recording) demand what they ran and no more", Tasks: x.nWaitingAtEnd})
	}
	if nExt > 0 {
		w.Assumptions = append(w.Assumptions, Assumption{Name: AssumeExternalWaker, Detail: "wakeups by a task the trace does not show running replay at the recorded time", Tasks: nExt})
	}
	if nIRQ > 0 {
		w.Assumptions = append(w.Assumptions, Assumption{Name: AssumeIRQWaker, Detail: "the trace has no context flags: a wakeup recorded while a task ran is attributed to that task, though an interrupt may have caused it", Tasks: nIRQ})
	}
	if x.unseen > 0 {
		w.Assumptions = append(w.Assumptions, Assumption{Name: "unseen-switch", Detail: fmt.Sprintf("%d runs ended without a recorded switch-out: each is counted up to its CPU's last event before the next switch", x.unseen)})
	}
	if x.lost || len(tl.Gaps) > 0 {
		w.Assumptions = append(w.Assumptions, Assumption{Name: AssumeLostGaps, Detail: "events were lost or buffers clipped: demand across the gaps is estimated from the surrounding switches"})
	}
	if err := w.Validate(0); err != nil {
		return nil, fmt.Errorf("replay: extract: %w", err)
	}
	return w, nil
}

// allowed gives tk (task instance id of the timeline) its allowed CPUs from
// the affinity map: the set in force at the workload's start as CPUs
// (a change at timeline.NoTime holds from the task's start), later ones as
// Affinity changes. It counts the task under its map source in n.
func (x *extractor) allowed(tk *Task, id timeline.TaskID, start timeline.Time, n *[affinity.Inferred + 1]int) {
	src := x.aff.Source(id)
	n[src]++
	for _, c := range x.aff.Changes(id) {
		if c.At <= start {
			tk.CPUs = c.CPUs
			continue
		}
		tk.Affinity = append(tk.Affinity, AffinityChange{At: c.At, CPUs: c.CPUs})
	}
	if src == affinity.Kthread && tk.CPUs.Count() == 1 && len(tk.Affinity) == 0 {
		tk.PerCPUKthread = true
		tk.CPU = tk.CPUs.First()
	}
	if !tk.CPUs.Empty() && tk.CPU >= 0 && !tk.CPUs.Has(tk.CPU) {
		tk.CPU = tk.CPUs.First() // first seen before the mask took hold
	}
}

// affinityAssumption says where the replay's allowed CPUs come from.
func (x *extractor) affinityAssumption(n [affinity.Inferred + 1]int) Assumption {
	var parts []string
	for _, s := range []affinity.Source{affinity.File, affinity.Recorded, affinity.Kthread, affinity.Inferred, affinity.Assumed} {
		if n[s] == 0 {
			continue
		}
		what := map[affinity.Source]string{
			affinity.File:     "from the affinity file",
			affinity.Recorded: "as the recorder saw them",
			affinity.Kthread:  "per-CPU kernel threads bound to the CPU their name carries",
			affinity.Inferred: "inferred pinned from the trace (see the affinity notes)",
			affinity.Assumed:  "free to run on every CPU (nothing says otherwise)",
		}[s]
		parts = append(parts, fmt.Sprintf("%d %s", n[s], what))
	}
	d := "allowed CPUs per task: " + strings.Join(parts, "; ")
	for _, note := range x.aff.Notes {
		d += "; " + note
	}
	return Assumption{Name: AssumeAffinity, Detail: d}
}
