package replay

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Options configure a replay. The zero value is usable: HZ from the workload
// (else 250), no IPI delay, no jitter, run until the workload's end.
type Options struct {
	// Seed makes the run reproducible; the same workload, topology,
	// policy and seed give the same events.
	Seed uint64
	// HZ is the tick rate (CONFIG_HZ). 0 takes Workload.HZ, else 250.
	HZ int
	// End stops the run at this absolute time. 0 takes Workload.End when
	// it is after Workload.Start; otherwise the run lasts until no task can
	// run any more.
	End timeline.Time
	// IPIDelay is the latency of a resched or wake-list IPI, from the
	// sending CPU to the target acting on it (ns). IPIJitter adds a
	// uniformly drawn 0..IPIJitter ns to each IPI.
	IPIDelay  int64
	IPIJitter int64
	// IRQResched is the time from a wakeup raised by an interrupt (a timer
	// or device wake) that preempts the running task to the switch:
	// interrupt exit and schedule() (ns). 0: at once. An idle CPU takes
	// IdleExit instead.
	IRQResched int64
	// TaskResched is the same for a wakeup raised by a task (or a fork)
	// that preempts that task: on a kernel without full preemption the
	// waker switches out where it next checks need_resched, typically on
	// its way back to user space (ns). 0: at once.
	TaskResched int64
	// IdleExit is the time an idle CPU takes from a reschedule request
	// (a wakeup enqueued on it, an IPI taken) to the pick of its next
	// task: leaving the idle state and entering schedule() (ns). 0: at once.
	IdleExit int64
	// NoWakeList delivers every remote wakeup from the waker's CPU at once,
	// as with TTWU_QUEUE off (PREEMPT_RT); otherwise a wakeup to another LLC
	// or to a CPU with nothing running goes through the target's wake list
	// and arrives IPIDelay later.
	NoWakeList bool
	// KeepLatencies keeps every wakeup latency sample in TaskResult.
	KeepLatencies bool
	// MaxEvents stops a run that processes more simulation events than
	// this (0: 1<<40) with ErrTooManyEvents.
	MaxEvents int64
	// Discard runs without recording a timeline: Result.Timeline is nil,
	// the per-task results and counters are kept. For parameter sweeps and
	// for measuring the simulation alone.
	Discard bool
}

// DefaultOptions returns the options the command line uses: HZ 250, a 2 µs
// IPI with 2 µs of jitter.
func DefaultOptions() Options {
	return Options{HZ: 250, IPIDelay: 2000, IPIJitter: 2000}
}

// ErrTooManyEvents is returned when a run exceeds Options.MaxEvents.
var ErrTooManyEvents = errors.New("replay: too many simulation events")

// Result is the outcome of Simulate.
type Result struct {
	Timeline *timeline.Timeline
	Policy   string
	Tasks    []TaskResult
	// Counters are the engine's and the policy's event counts, by name
	// ("switch", "preempt", "migrate", "lb.newidle.pulled", ...).
	Counters map[string]int64
	Start    timeline.Time
	End      timeline.Time // when the run stopped
	Steps    int64         // simulation events processed
	Emitted  int64         // timeline events emitted
}

// TaskResult is what one task got in a replay.
type TaskResult struct {
	CPUTime    int64         // ns on a CPU
	Work       int64         // ns of capacity-1024 work done
	Demand     int64         // the workload's demand (its segments' total work)
	Finished   bool          // consumed its whole demand
	Exit       timeline.Time // when it exited, NoTime if it did not
	Wakeups    int64         // wakeups, forks and starts that made it runnable
	Preempted  int64         // involuntary switch-outs
	Migrations int64         // CPU changes
	Wait       int64         // ns runnable but not running
	LatencyN   int64         // wakeup latency samples (waking to switch-in)
	LatencySum int64         // ns
	LatencyMax int64         // ns
	Latencies  []int64       // every sample, when Options.KeepLatencies
}

// Run replays w on topo under pol and returns the simulated timeline.
func Run(w *Workload, topo *topology.Topology, pol Policy, opts Options) (*timeline.Timeline, error) {
	r, err := Simulate(w, topo, pol, opts)
	if err != nil {
		return nil, err
	}
	return r.Timeline, nil
}

// Simulate replays w on topo under pol and returns the timeline with
// per-task results and counters.
func Simulate(w *Workload, topo *topology.Topology, pol Policy, opts Options) (*Result, error) {
	if topo == nil || len(topo.CPUs) == 0 {
		return nil, errors.New("replay: no topology")
	}
	if err := topo.Validate(); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if err := w.Validate(len(topo.CPUs)); err != nil {
		return nil, fmt.Errorf("replay: workload: %w", err)
	}
	if opts.End == 0 && w.End <= w.Start {
		for i := range w.Tasks {
			if w.Tasks[i].End == EndRun {
				return nil, fmt.Errorf("replay: task %d (%s) runs until the replay ends, but the workload has no end: set Workload.End or Options.End", i, w.Tasks[i].Comm)
			}
		}
	}
	s, err := newSim(w, topo, pol, opts)
	if err != nil {
		return nil, err
	}
	if err := pol.Attach(s); err != nil {
		return nil, fmt.Errorf("replay: policy %s: %w", pol.Name(), err)
	}
	s.schedule0()
	if err := s.loop(); err != nil {
		return nil, err
	}
	return s.finish()
}

// event kinds of the simulation queue
const (
	evComplete   uint8 = iota // a: cpu, gen: completion generation
	evTick                    // a: cpu
	evTaskWake                // a: task, b: segment (timer, irq, outside or start)
	evDeliver                 // a: task, b: cpu (wake-list delivery)
	evIPI                     // a: cpu
	evPickResume              // a: cpu, gen
	evPolicy                  // a: cpu, b: kind, arg
	evStop                    // a: cpu
	evAffinity                // a: task, b: index into Task.Affinity
	evUnstall                 // a: task, gen: its stall generation (WakeOrdered)
)

// MaxOrderWait bounds how long a waker waits for its wakee's block under
// Workload.WakeOrdered; past it the wake is held for the wakee as without
// the rule.
const MaxOrderWait = 10_000_000 // ns

type event struct {
	at   timeline.Time
	seq  uint64
	kind uint8
	gen  uint32
	a, b int32
	arg  int64
}

type eventQueue []event

func (q eventQueue) less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}

func (q *eventQueue) push(e event) {
	*q = append(*q, e)
	h := *q
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *eventQueue) pop() event {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

// action is a point in a waker's work where it wakes or forks a task.
type action struct {
	work   int64 // units (work ns × 1024)
	target int32
	seg    int32
	fork   bool
	sync   bool
}

type taskRun struct {
	state     TaskState
	cpu       int32
	seg       int32
	segEnd    int64 // cumulative units at the end of the current segment
	done      int64 // cumulative units done
	actFrom   int32 // next action index into Sim.acts
	actTo     int32
	fired     []bool        // per segment: its wake has fired before the task blocked
	pending   int32         // WakeAnyWaker: task wakes issued to it not yet consumed
	blockedAt timeline.Time // when it last blocked at a segment's end
	stalled   bool          // WakeOrdered: waiting for stallFor to block
	stallFor  int32         // the wakee it waits for
	stallSeg  int32         // ... to block before this segment
	stallGen  uint32
	noStall   int32           // WakeOrdered: action index that fires without waiting (after a timeout)
	allowed   topology.CPUSet // current affinity (nil: all)
	nAllowed  int
	lastTmr   timeline.Time // expiry of the last periodic timer wake
	tmrSeg    int32         // segment that wake started
	waking    timeline.Time // pending latency sample start
	queued    timeline.Time // runnable since
	comm      timeline.CommID
	prio      int16
	// wakeMigrated: the CPU changed at the current wakeup
	wakeMigrated bool
	// movedAt: when the balancer (or an affinity change) last moved the
	// task while it was queued; NoTime once it ran after that
	movedAt timeline.Time
	res     TaskResult
}

type cpuRun struct {
	state       CPUState
	curr        int32 // executing task, -1
	onCPU       int32 // task last switched in (-1: swapper)
	outState    timeline.State
	runStart    timeline.Time
	capacity    int64
	gen         uint32 // completion generation
	pickGen     uint32
	needResched bool
	ipiPending  bool
	tickArmed   bool
	dirty       bool
	wakePending int32
	stops       []stopItem
	stopPending bool
	// deferred holds interrupt-driven events (wake-list IPIs, timer and
	// interrupt wakeups) that reached the CPU while it was between tasks:
	// __schedule runs with interrupts off, so they are handled once the
	// switch is done.
	deferred []event
	idleComm timeline.CommID
	stopComm timeline.CommID
	llc      int
}

// onStopper marks cpuRun.onCPU while the stopper (migration/N) runs.
const onStopper = -2

// StopperTID returns the pid the replay gives cpu's stopper thread
// (migration/N): above PID_MAX_LIMIT (4194304), so it never collides with
// a recorded pid.
func StopperTID(cpu int) timeline.TID { return timeline.TID(4194304 + cpu) }

type stopItem struct {
	kind int // < 0: engine work (affinity re-home of task arg)
	arg  int64
}

const stopAffinity = -1

// Sim is the running engine. Policies receive it in Attach and call its
// services; it is not safe for concurrent use.
type Sim struct {
	w    *Workload
	topo *topology.Topology
	pol  Policy
	opts Options

	now timeline.Time
	end timeline.Time
	// unobserved holds, per CPU, the recording's gaps in time order, and
	// gapAt the index of the first one not yet passed: events the model
	// emits inside a gap are left out of its timeline, as the recording
	// lost them.
	unobserved [][]timeline.Gap
	gapAt      []int
	tick       int64
	q          eventQueue
	seq        uint64
	ctx        int  // CPU the current handler runs on, -1 none
	inIRQ      bool // the handler is an interrupt-raised wake
	cpus       []cpuRun
	tasks      []taskRun
	acts       []action
	segs       [][]int64 // per task, cumulative units at each segment end
	dirty      []int32
	rng        *rand.Rand

	b                     *timeline.Builder
	strs                  *timeline.Strings
	emitted               int64
	steps                 int64
	counters              map[string]*int64
	cSwitch               *int64
	cPreempt              *int64
	cWake                 *int64
	cMigrate              *int64
	cIPI                  *int64
	cEarly                *int64
	cLate                 *int64
	cReschedGone          *int64
	cStall, cStallTimeout *int64
	cMoved                *int64
	cMovedNS              *int64
	err                   error
}

const unitShift = 10 // units = work ns << 10 (ns × capacity)

func newSim(w *Workload, topo *topology.Topology, pol Policy, opts Options) (*Sim, error) {
	s := &Sim{w: w, topo: topo, pol: pol, opts: opts, ctx: -1, counters: map[string]*int64{}}
	if len(w.Unobserved) > 0 {
		s.unobserved = make([][]timeline.Gap, len(topo.CPUs))
		s.gapAt = make([]int, len(topo.CPUs))
		for _, g := range w.Unobserved {
			if c := int(g.CPU); c >= 0 && c < len(topo.CPUs) && g.End > g.Start {
				s.unobserved[c] = append(s.unobserved[c], g)
			}
		}
		for _, gs := range s.unobserved {
			slices.SortFunc(gs, func(a, b timeline.Gap) int { return cmp.Compare(a.Start, b.Start) })
		}
	}
	hz := opts.HZ
	if hz <= 0 {
		hz = w.HZ
	}
	if hz <= 0 {
		hz = 250
	}
	if hz > 10000 {
		return nil, fmt.Errorf("replay: HZ %d out of range", hz)
	}
	s.opts.HZ = hz
	s.tick = 1_000_000_000 / int64(hz)
	s.now = w.Start
	s.end = opts.End
	if s.end == 0 && w.End > w.Start {
		s.end = w.End
	}
	if s.end == 0 {
		s.end = timeline.Time(math.MaxInt64)
	}
	if s.opts.MaxEvents <= 0 {
		s.opts.MaxEvents = 1 << 40
	}
	s.rng = rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	s.strs = timeline.NewStrings()
	s.b = timeline.NewBuilder(s.strs, len(topo.CPUs))
	s.cSwitch = s.Counter("switch")
	s.cPreempt = s.Counter("preempt")
	s.cWake = s.Counter("wakeup")
	s.cMigrate = s.Counter("migrate")
	s.cIPI = s.Counter("ipi")
	s.cEarly = s.Counter("wake-before-block")
	s.cLate = s.Counter("wake-by-other-after-oversleep")
	s.cReschedGone = s.Counter("resched-left-with-task")
	s.cStall = s.Counter("wake-ordered-stall")
	s.cStallTimeout = s.Counter("wake-ordered-stall-timeout")
	s.cMoved = s.Counter("migrate.queued")
	s.cMovedNS = s.Counter("migrate.queued.wait-ns")

	s.cpus = make([]cpuRun, len(topo.CPUs))
	for i := range s.cpus {
		c := &s.cpus[i]
		c.curr, c.onCPU = -1, -1
		c.capacity = int64(topo.CPUs[i].Capacity)
		c.idleComm = s.strs.IDString("swapper/" + strconv.Itoa(i))
		c.stopComm = s.strs.IDString("migration/" + strconv.Itoa(i))
		c.llc = topo.CPUs[i].Cluster
	}
	n := len(w.Tasks)
	s.tasks = make([]taskRun, n)
	s.segs = make([][]int64, n)
	// One backing array each for the cumulative segment ends, the fired
	// flags and the actions (counted per waker first).
	nseg := 0
	nact := make([]int32, n)
	for i := range w.Tasks {
		nseg += len(w.Tasks[i].Segments)
		for _, sg := range w.Tasks[i].Segments {
			if sg.Wake.Kind == WakeTask || sg.Wake.Kind == WakeFork {
				nact[sg.Wake.Waker]++
			}
		}
	}
	cumAll := make([]int64, nseg)
	firedAll := make([]bool, nseg)
	actStart := make([]int32, n+1)
	for i := range n {
		actStart[i+1] = actStart[i] + nact[i]
	}
	s.acts = make([]action, actStart[n])
	fill := slices.Clone(actStart[:n])
	for i := range w.Tasks {
		t := &w.Tasks[i]
		tr := &s.tasks[i]
		tr.cpu = int32(t.CPU)
		if tr.cpu < 0 {
			tr.cpu = 0
		}
		tr.comm = s.strs.IDString(t.Comm)
		tr.prio = int16(t.Prio)
		if t.Prio < 0 {
			tr.prio = -1
		}
		tr.fired, firedAll = firedAll[:len(t.Segments):len(t.Segments)], firedAll[len(t.Segments):]
		tr.waking, tr.queued, tr.lastTmr, tr.movedAt = timeline.NoTime, timeline.NoTime, timeline.NoTime, timeline.NoTime
		tr.tmrSeg = -1
		tr.noStall = -1
		tr.res.Exit = timeline.NoTime
		tr.res.Demand = t.Demand()
		s.setAllowed(i, t.CPUs)
		cum := cumAll[:len(t.Segments):len(t.Segments)]
		cumAll = cumAll[len(t.Segments):]
		var sum int64
		for j, sg := range t.Segments {
			if sg.Work > math.MaxInt64>>(unitShift+2) || sum > math.MaxInt64>>2 {
				return nil, fmt.Errorf("replay: task %d (%s) segment %d: work %d too large", i, t.Comm, j, sg.Work)
			}
			sum += sg.Work << unitShift
			cum[j] = sum
			wk := sg.Wake
			if wk.Kind == WakeTask || wk.Kind == WakeFork {
				s.acts[fill[wk.Waker]] = action{work: wk.Work << unitShift, target: int32(i), seg: int32(j), fork: wk.Kind == WakeFork, sync: wk.Sync}
				fill[wk.Waker]++
			}
		}
		s.segs[i] = cum
	}
	for i := range s.tasks {
		from, to := actStart[i], actStart[i+1]
		acts := s.acts[from:to]
		// Actions in the order the waker's work reaches them (stable: equal
		// points keep the workload's task order).
		if !slices.IsSortedFunc(acts, func(a, b action) int { return cmp.Compare(a.work, b.work) }) {
			slices.SortStableFunc(acts, func(a, b action) int { return cmp.Compare(a.work, b.work) })
		}
		s.tasks[i].actFrom, s.tasks[i].actTo = from, to
	}
	return s, nil
}

// schedule0 queues the time-driven events known up front, and marks every
// CPU's record as complete from the start (a "buffer started" event), so
// that the timeline's valid window starts with the workload.
func (s *Sim) schedule0() {
	for cpu := range s.cpus {
		s.emit(timeline.Event{Time: s.w.Start, CPU: timeline.CPU(cpu), Kind: timeline.KindBufferStart, Task: timeline.NoTID, Other: timeline.NoTID, Prio: -1, OPrio: -1})
	}
	for i := range s.w.Tasks {
		t := &s.w.Tasks[i]
		for j, sg := range t.Segments {
			switch sg.Wake.Kind {
			case WakeStart, WakeAt:
				at := max(sg.Wake.At, s.w.Start)
				s.push(event{at: at, kind: evTaskWake, a: int32(i), b: int32(j)})
			case WakeTimer, WakeIRQ:
				if j == 0 {
					// Asleep since the start: the timer runs from there.
					at := s.w.Start + timeline.Time(sg.Wake.Delay)
					if sg.Wake.Kind == WakeTimer && sg.Wake.Period > 0 {
						s.tasks[i].lastTmr, s.tasks[i].tmrSeg = at, 0
					}
					s.push(event{at: at, kind: evTaskWake, a: int32(i), b: 0})
				}
			}
		}
		for k, a := range t.Affinity {
			s.push(event{at: max(a.At, s.w.Start), kind: evAffinity, a: int32(i), b: int32(k)})
		}
	}
}

func (s *Sim) push(e event) {
	s.seq++
	e.seq = s.seq
	s.q.push(e)
}

func (s *Sim) loop() error {
	for len(s.q) > 0 {
		e := s.q.pop()
		if e.at > s.end {
			s.now = s.end
			break
		}
		if e.at > s.now {
			s.now = e.at
		}
		s.steps++
		if s.steps > s.opts.MaxEvents {
			return fmt.Errorf("%w: more than %d at %s", ErrTooManyEvents, s.opts.MaxEvents, s.now.Seconds())
		}
		s.dispatch(e)
		s.flush()
		s.ctx = -1
		if s.err != nil {
			return s.err
		}
	}
	return nil
}

func (s *Sim) dispatch(e event) {
	switch e.kind {
	case evComplete:
		cpu := int(e.a)
		s.ctx = cpu
		if s.cpus[cpu].gen == e.gen && s.cpus[cpu].state == CPURunning {
			s.complete(cpu)
		}
	case evTick:
		cpu := int(e.a)
		s.ctx = cpu
		c := &s.cpus[cpu]
		if c.state == CPURunning && s.dueNow(cpu) {
			// The task reaches its next point exactly at the tick: let it
			// get there first.
			s.complete(cpu)
			s.flush()
		}
		if c.state != CPURunning {
			c.tickArmed = false
			return
		}
		s.inIRQ = true
		s.pol.Tick(cpu)
		s.inIRQ = false
		if c.state == CPURunning {
			s.push(event{at: s.now + timeline.Time(s.tick), kind: evTick, a: int32(cpu)})
		} else {
			c.tickArmed = false
		}
	case evTaskWake:
		if cpu := s.irqCPU(int(e.a), int(e.b)); cpu >= 0 && s.cpus[cpu].state == CPUPicking {
			s.cpus[cpu].deferred = append(s.cpus[cpu].deferred, e)
			return
		}
		s.taskWakeEvent(int(e.a), int(e.b))
	case evDeliver:
		cpu := int(e.b)
		if s.cpus[cpu].state == CPUPicking {
			s.cpus[cpu].deferred = append(s.cpus[cpu].deferred, e)
			return
		}
		s.ctx = cpu
		s.cpus[cpu].wakePending--
		s.deliver(int(e.a), cpu, cpu)
	case evIPI:
		cpu := int(e.a)
		s.ctx = cpu
		c := &s.cpus[cpu]
		c.ipiPending = false
		if e.b >= 0 && c.curr != e.b {
			*s.cReschedGone++
			return // its task has left the CPU: the request went with it
		}
		c.needResched = true
		s.markDirty(cpu)
	case evPickResume:
		cpu := int(e.a)
		s.ctx = cpu
		c := &s.cpus[cpu]
		if c.state == CPUPicking && c.pickGen == e.gen {
			s.afterPick(cpu, s.pol.Pick(cpu, -1, false))
		}
	case evPolicy:
		cpu := int(e.a)
		s.ctx = cpu
		s.pol.Timer(cpu, int(e.b), e.arg)
	case evStop:
		cpu := int(e.a)
		s.ctx = cpu
		s.runStopper(cpu)
	case evAffinity:
		s.affinityEvent(int(e.a), int(e.b))
	case evUnstall:
		w := int(e.a)
		if wr := &s.tasks[w]; wr.stalled && wr.stallGen == e.gen {
			*s.cStallTimeout++
			wr.noStall = wr.actFrom // its wake is held for the wakee instead
			s.unstall(w, int(wr.cpu), -1)
		}
	}
}

// flush reschedules the CPUs marked during a handler.
func (s *Sim) flush() {
	for len(s.dirty) > 0 && s.err == nil {
		cpu := int(s.dirty[0])
		s.dirty = s.dirty[1:]
		c := &s.cpus[cpu]
		c.dirty = false
		prevCtx := s.ctx
		s.ctx = cpu
		if c.stopPending {
			s.runStopper(cpu)
		} else if c.needResched {
			s.resched(cpu)
		}
		s.ctx = prevCtx
	}
	s.dirty = s.dirty[:0]
}

func (s *Sim) markDirty(cpu int) {
	c := &s.cpus[cpu]
	if !c.dirty {
		c.dirty = true
		s.dirty = append(s.dirty, int32(cpu))
	}
}

func (s *Sim) ipiDelay() int64 {
	d := s.opts.IPIDelay
	if s.opts.IPIJitter > 0 {
		d += s.rng.Int64N(s.opts.IPIJitter + 1)
	}
	return d
}

func (s *Sim) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("replay: %s at %s: %s", s.pol.Name(), s.now.Seconds(), fmt.Sprintf(format, args...))
	}
}

// ---- services for policies ----

// Now returns the current simulated time.
func (s *Sim) Now() timeline.Time { return s.now }

// Topology returns the simulated machine.
func (s *Sim) Topology() *topology.Topology { return s.topo }

// NCPU returns the number of CPUs.
func (s *Sim) NCPU() int { return len(s.cpus) }

// Workload returns the workload being replayed.
func (s *Sim) Workload() *Workload { return s.w }

// Task returns task t of the workload.
func (s *Sim) Task(t int) *Task { return &s.w.Tasks[t] }

// NTask returns the number of tasks.
func (s *Sim) NTask() int { return len(s.tasks) }

// HZ returns the tick rate and TickNS the tick period in ns.
func (s *Sim) HZ() int { return s.opts.HZ }

// TickNS returns the tick period (TICK_NSEC).
func (s *Sim) TickNS() int64 { return s.tick }

// Rand returns the run's deterministic random source.
func (s *Sim) Rand() *rand.Rand { return s.rng }

// Context returns the CPU whose handler is running (-1 outside handlers).
func (s *Sim) Context() int { return s.ctx }

// TaskCPU returns the CPU task t is on or last ran on.
func (s *Sim) TaskCPU(t int) int { return int(s.tasks[t].cpu) }

// TaskState returns the engine state of task t.
func (s *Sim) TaskState(t int) TaskState { return s.tasks[t].state }

// Allowed reports whether task t may run on cpu under its current affinity.
func (s *Sim) Allowed(t, cpu int) bool {
	a := s.tasks[t].allowed
	return len(a) == 0 || a.Has(cpu)
}

// AllowedCount returns how many CPUs task t may run on.
func (s *Sim) AllowedCount(t int) int { return s.tasks[t].nAllowed }

// Curr returns the task executing on cpu, -1 when the CPU idles or is
// between tasks.
func (s *Sim) Curr(cpu int) int { return int(s.cpus[cpu].curr) }

// CPUState returns what cpu is doing.
func (s *Sim) CPUState(cpu int) CPUState { return s.cpus[cpu].state }

// WakePending returns the number of wakeups on their way to cpu's wake list
// (the kernel's ttwu_pending).
func (s *Sim) WakePending(cpu int) int { return int(s.cpus[cpu].wakePending) }

// NeedResched reports whether cpu has a reschedule pending.
func (s *Sim) NeedResched(cpu int) bool { return s.cpus[cpu].needResched || s.cpus[cpu].ipiPending }

// SameLLC reports whether two CPUs share a last-level cache.
func (s *Sim) SameLLC(a, b int) bool { return s.cpus[a].llc == s.cpus[b].llc }

// Counter returns the counter called name, creating it at 0. Counters end up
// in Result.Counters.
func (s *Sim) Counter(name string) *int64 {
	if c, ok := s.counters[name]; ok {
		return c
	}
	c := new(int64)
	s.counters[name] = c
	return c
}

// Resched asks cpu to reschedule: at once when called from cpu's own
// handler, after an IPI otherwise.
func (s *Sim) Resched(cpu int) {
	c := &s.cpus[cpu]
	if c.needResched {
		return
	}
	local := s.opts.TaskResched
	if s.inIRQ {
		local = s.opts.IRQResched
	}
	if cpu == s.ctx && (local <= 0 || c.state != CPURunning) {
		c.needResched = true
		s.markDirty(cpu)
		return
	}
	if c.ipiPending {
		return
	}
	d := s.ipiDelay()
	if cpu == s.ctx {
		d = local // the interrupt or the waker's system call returns, then schedule()
	} else {
		*s.cIPI++
	}
	if d <= 0 {
		c.needResched = true
		s.markDirty(cpu)
		return
	}
	c.ipiPending = true
	// The kernel's need_resched flag is the running task's: if that task
	// leaves the CPU before the request takes effect, it goes with it.
	target := int32(-1)
	if c.state == CPURunning {
		target = c.curr
	}
	s.push(event{at: s.now + timeline.Time(d), kind: evIPI, a: int32(cpu), b: target})
}

// After calls the policy's Timer(cpu, kind, arg) at time at (not before now).
func (s *Sim) After(at timeline.Time, cpu, kind int, arg int64) {
	if at < s.now {
		at = s.now
	}
	s.push(event{at: at, kind: evPolicy, a: int32(cpu), b: int32(kind), arg: arg})
}

// StopCPU runs the policy's Stop(cpu, kind, arg) on cpu as the kernel's
// stopper would: the running task is preempted and put back first. It
// takes an IPI when cpu is not the calling handler's CPU.
func (s *Sim) StopCPU(cpu, kind int, arg int64) {
	s.addStop(cpu, stopItem{kind: kind, arg: arg})
}

func (s *Sim) addStop(cpu int, it stopItem) {
	c := &s.cpus[cpu]
	c.stops = append(c.stops, it)
	if c.stopPending {
		return
	}
	c.stopPending = true
	if cpu == s.ctx {
		s.markDirty(cpu)
		return
	}
	*s.cIPI++
	s.push(event{at: s.now + timeline.Time(s.ipiDelay()), kind: evStop, a: int32(cpu)})
}

// Migrate moves queued (runnable, not running) task t to dst: the policy's
// Dequeue on the old CPU, a sched_migrate_task event, Enqueue on dst and the
// preemption check there. It reports false, doing nothing, when t is not
// queued or dst is not allowed.
func (s *Sim) Migrate(t, dst int) bool {
	tr := &s.tasks[t]
	if tr.state != TaskQueued || !s.Allowed(t, dst) {
		return false
	}
	src := int(tr.cpu)
	if src == dst {
		return true
	}
	if s.cpus[src].onCPU == int32(t) {
		return false // still on its CPU until the switch completes
	}
	s.pol.Dequeue(src, t, DeqMigrate)
	s.emitMigrate(t, src, dst)
	tr.cpu = int32(dst)
	tr.movedAt = s.now
	*s.cMoved++
	s.pol.Enqueue(dst, t, EnqMigrated)
	s.checkPreempt(dst, t)
	return true
}

// ---- task progress ----

func (s *Sim) setAllowed(t int, set topology.CPUSet) {
	tr := &s.tasks[t]
	n := len(s.cpus)
	cnt := 0
	var clean topology.CPUSet
	for _, c := range set.CPUs() {
		if c < n {
			clean = clean.With(c)
			cnt++
		}
	}
	if cnt == 0 || cnt == n {
		tr.allowed, tr.nAllowed = nil, n
		return
	}
	tr.allowed, tr.nAllowed = clean, cnt
}

func (s *Sim) firstAllowed(t int) int {
	a := s.tasks[t].allowed
	if len(a) == 0 {
		return 0
	}
	return a.First()
}

// account charges the running task of cpu up to now.
func (s *Sim) account(cpu int) {
	c := &s.cpus[cpu]
	if c.curr < 0 {
		return
	}
	d := int64(s.now - c.runStart)
	if d > 0 {
		tr := &s.tasks[c.curr]
		tr.done += d * c.capacity
		tr.res.CPUTime += d
	}
	c.runStart = s.now
}

// dueNow reports whether cpu's running task has reached its next action or
// the end of its segment.
func (s *Sim) dueNow(cpu int) bool {
	c := &s.cpus[cpu]
	tr := &s.tasks[c.curr]
	done := tr.done + int64(s.now-c.runStart)*c.capacity
	target := tr.segEnd
	if tr.actFrom < tr.actTo {
		target = min(target, s.acts[tr.actFrom].work)
	}
	return done >= target
}

// armCompletion schedules the next point where cpu's running task reaches
// an action or the end of its segment.
func (s *Sim) armCompletion(cpu int) {
	c := &s.cpus[cpu]
	c.gen++
	tr := &s.tasks[c.curr]
	target := tr.segEnd
	if tr.actFrom < tr.actTo {
		if a := s.acts[tr.actFrom].work; a < target {
			target = a
		}
	}
	if target >= math.MaxInt64/4 {
		return // runs until the end
	}
	rem := target - tr.done
	dt := int64(0)
	if rem > 0 {
		dt = (rem + c.capacity - 1) / c.capacity
	}
	s.push(event{at: s.now + timeline.Time(dt), kind: evComplete, a: int32(cpu), gen: c.gen})
}

func (s *Sim) startSegment(t, seg int) {
	tr := &s.tasks[t]
	tr.seg = int32(seg)
	tk := &s.w.Tasks[t]
	if seg == len(tk.Segments)-1 && tk.End == EndRun {
		tr.segEnd = math.MaxInt64 / 2
	} else {
		tr.segEnd = s.segs[t][seg]
	}
}

// complete handles the running task of cpu reaching an action or its
// segment's end.
func (s *Sim) complete(cpu int) {
	c := &s.cpus[cpu]
	s.account(cpu)
	t := int(c.curr)
	tr := &s.tasks[t]
	s.runActions(t)
	if s.cpus[cpu].curr != int32(t) || tr.state != TaskRunning {
		return
	}
	if tr.done < tr.segEnd {
		s.armCompletion(cpu)
		return
	}
	tr.done = tr.segEnd
	s.endSegment(cpu, t)
}

// runActions fires the wakes and forks of task t that its work has reached.
func (s *Sim) runActions(t int) {
	tr := &s.tasks[t]
	for tr.actFrom < tr.actTo && s.acts[tr.actFrom].work <= tr.done {
		a := s.acts[tr.actFrom]
		if s.w.WakeOrdered && !a.fork && tr.noStall != tr.actFrom && s.mustWait(int(a.target), int(a.seg)) {
			s.stall(t, int(a.target), int(a.seg))
			return
		}
		tr.actFrom++
		if a.fork {
			s.fork(t, int(a.target))
		} else {
			s.taskWake(int(a.target), int(a.seg), int(tr.cpu), t, a.sync)
		}
	}
}

func (s *Sim) endSegment(cpu, t int) {
	tr := &s.tasks[t]
	tk := &s.w.Tasks[t]
	seg := int(tr.seg)
	if s.w.WakeAnyWaker && seg+1 < len(tk.Segments) && tk.Segments[seg+1].Wake.Kind == WakeTask && tr.pending > 0 {
		tr.pending--
		tr.fired[seg+1] = true
	}
	if seg+1 < len(tk.Segments) && tr.fired[seg+1] && s.w.WakeAfterBlock {
		// Woken before it could block, in a workload whose recorded wakes
		// all ended a sleep: it blocks, then the held wake fires at once.
		*s.cEarly++
		c := &s.cpus[cpu]
		tr.fired[seg+1] = false
		s.pol.Dequeue(cpu, t, DeqSleep)
		tr.state = TaskBlocked
		c.curr = -1
		c.outState = timeline.StateInterrupt
		s.pick(cpu, t, false)
		s.ctx = cpu
		s.wake(t, seg+1, cpu, -1, false, false)
		return
	}
	if seg+1 < len(tk.Segments) && tr.fired[seg+1] {
		// Woken before it could block: it goes on without sleeping.
		*s.cEarly++
		tr.res.Wakeups++
		s.startSegment(t, seg+1)
		s.armCompletion(cpu)
		return
	}
	c := &s.cpus[cpu]
	if seg+1 == len(tk.Segments) && tk.End == EndExit {
		s.emit(timeline.Event{Time: s.now, CPU: timeline.CPU(cpu), Kind: timeline.KindExit, Task: tk.TID, Comm: tr.comm, Prio: tr.prio, TGID: tk.TGID})
		s.pol.Dequeue(cpu, t, DeqExit)
		tr.state = TaskDone
		tr.res.Exit = s.now
		tr.res.Finished = true
		c.curr = -1
		c.outState = timeline.StateExitDead
		if tk.TGID == int32(tk.TID) {
			c.outState = timeline.StateZombie
		}
		s.pick(cpu, t, false)
		if s.w.WakeOrdered {
			s.releaseWaiters(t, cpu)
		}
		return
	}
	s.pol.Dequeue(cpu, t, DeqSleep)
	tr.state = TaskBlocked
	tr.blockedAt = s.now
	c.curr = -1
	c.outState = timeline.StateInterrupt
	if seg+1 == len(tk.Segments) {
		tr.state = TaskDone
		tr.res.Finished = true
	} else {
		s.armTimer(t, seg+1)
	}
	s.pick(cpu, t, false)
	if s.w.WakeOrdered {
		s.releaseWaiters(t, cpu)
	}
}

// mustWait reports whether a task wake aimed at segment seg of target comes
// before target has blocked for it (WakeOrdered).
func (s *Sim) mustWait(target, seg int) bool {
	tr := &s.tasks[target]
	if tr.state == TaskDone || seg <= int(tr.seg) {
		return false // done, or a wake for a segment already begun
	}
	return !(tr.state == TaskBlocked && !tr.stalled && int(tr.seg)+1 == seg)
}

// stall takes running task t off its CPU until target blocks before
// segment seg (or MaxOrderWait passes); the wake it was about to issue
// fires when it runs again.
func (s *Sim) stall(t, target, seg int) {
	tr := &s.tasks[t]
	cpu := int(tr.cpu)
	c := &s.cpus[cpu]
	*s.cStall++
	s.pol.Dequeue(cpu, t, DeqSleep)
	tr.state = TaskBlocked
	tr.stalled, tr.stallFor, tr.stallSeg = true, int32(target), int32(seg)
	tr.stallGen++
	c.curr = -1
	c.outState = timeline.StateInterrupt
	s.push(event{at: s.now + MaxOrderWait, kind: evUnstall, a: int32(t), gen: tr.stallGen})
	s.pick(cpu, t, false)
}

// releaseWaiters resumes the tasks stalled until t blocked.
func (s *Sim) releaseWaiters(t, cpu int) {
	next := int(s.tasks[t].seg) + 1
	for w := range s.tasks {
		wr := &s.tasks[w]
		if wr.stalled && int(wr.stallFor) == t && int(wr.stallSeg) <= next {
			s.unstall(w, cpu, t)
		}
	}
}

func (s *Sim) unstall(w, cpu, waker int) {
	wr := &s.tasks[w]
	wr.stalled = false
	s.ctx = cpu
	s.wake(w, int(wr.seg), cpu, waker, false, false)
}

// armTimer queues the timer or interrupt that ends the sleep before
// segment seg, if that is its cause.
func (s *Sim) armTimer(t, seg int) {
	tr := &s.tasks[t]
	wk := s.w.Tasks[t].Segments[seg].Wake
	switch wk.Kind {
	case WakeTimer, WakeIRQ:
	default:
		return
	}
	at := s.now + timeline.Time(wk.Delay)
	if wk.Kind == WakeTimer && wk.Period > 0 {
		if tr.tmrSeg == int32(seg-1) && tr.lastTmr != timeline.NoTime {
			at = tr.lastTmr + timeline.Time(wk.Period)
		}
		tr.lastTmr, tr.tmrSeg = at, int32(seg)
	}
	s.push(event{at: max(at, s.now), kind: evTaskWake, a: int32(t), b: int32(seg)})
}

// irqCPU returns the CPU a time-driven wake of task t's segment seg is
// raised on, or -1 for the start of a task (no interrupt involved).
func (s *Sim) irqCPU(t, seg int) int {
	tr := &s.tasks[t]
	wk := s.w.Tasks[t].Segments[seg].Wake
	if seg == 0 && tr.state == TaskNew && wk.Kind == WakeStart {
		return -1
	}
	cpu := wk.CPU
	if cpu < 0 || cpu >= len(s.cpus) {
		cpu = int(tr.cpu)
	}
	return cpu
}

// runDeferred replays the interrupt-driven events cpu postponed while it
// was between tasks.
func (s *Sim) runDeferred(cpu int) {
	c := &s.cpus[cpu]
	for len(c.deferred) > 0 && c.state != CPUPicking {
		e := c.deferred[0]
		c.deferred = c.deferred[1:]
		prev := s.ctx
		s.dispatch(e)
		s.ctx = prev
	}
	if len(c.deferred) == 0 {
		c.deferred = nil
	}
}

// taskWakeEvent handles a time-driven wake (start, timer, interrupt,
// outside event) of task t's segment seg.
func (s *Sim) taskWakeEvent(t, seg int) {
	tr := &s.tasks[t]
	tk := &s.w.Tasks[t]
	wk := tk.Segments[seg].Wake
	if wk.Kind == WakeAt {
		// An absolute wake anchors a periodic series that follows it.
		tr.lastTmr, tr.tmrSeg = wk.At, int32(seg)
	}
	if seg == 0 && tr.state == TaskNew {
		if wk.Kind == WakeTimer || wk.Kind == WakeIRQ {
			tr.state = TaskBlocked
			tr.seg = -1
		} else {
			s.start(t, wk)
			return
		}
	}
	cpu := wk.CPU
	if cpu < 0 || cpu >= len(s.cpus) {
		cpu = int(tr.cpu)
	}
	s.ctx = cpu
	waker := int(s.cpus[cpu].curr)
	s.inIRQ = true
	s.wakeSeg(t, seg, cpu, waker, false, true)
	s.inIRQ = false
}

// taskWake is a wake issued by task waker running on cpu.
func (s *Sim) taskWake(t, seg, cpu, waker int, sync bool) {
	tr := &s.tasks[t]
	if seg == 0 && tr.state == TaskNew {
		// A first segment woken by another task: the task existed asleep.
		tr.state = TaskBlocked
		tr.seg = -1
	}
	s.wakeSeg(t, seg, cpu, waker, sync, false)
}

func (s *Sim) wakeSeg(t, seg, cpu, waker int, sync, irq bool) {
	tr := &s.tasks[t]
	if s.w.WakeLateAny && !irq && seg > 0 && s.w.Tasks[t].Segments[seg].Wake.Kind == WakeTask {
		s.wakeLate(t, seg, cpu, waker, sync)
		return
	}
	if s.w.WakeAnyWaker && !irq && seg > 0 && s.w.Tasks[t].Segments[seg].Wake.Kind == WakeTask {
		// Any task wake ends the wakee's next sleep that a task ends.
		if next := int(tr.seg) + 1; tr.state == TaskBlocked && next < len(s.w.Tasks[t].Segments) && s.w.Tasks[t].Segments[next].Wake.Kind == WakeTask {
			s.wake(t, next, cpu, waker, sync, irq)
			return
		}
		if tr.state != TaskDone {
			tr.pending++
		}
		return
	}
	if tr.state == TaskBlocked && !tr.stalled && int(tr.seg)+1 == seg {
		s.wake(t, seg, cpu, waker, sync, irq)
		return
	}
	if tr.state != TaskDone && seg < len(tr.fired) {
		tr.fired[seg] = true
	}
}

// wakeLate is wakeSeg under WakeLateAny for a task wake aimed at segment
// seg of task t.
func (s *Sim) wakeLate(t, seg, cpu, waker int, sync bool) {
	tr := &s.tasks[t]
	segs := s.w.Tasks[t].Segments
	next := int(tr.seg) + 1
	if tr.state == TaskDone {
		return
	}
	if seg < next || tr.fired[seg] {
		// Its sleep was ended by another wake: it goes to the first sleep
		// a task wake ends that has none yet.
		seg = -1
		for j := next; j < len(segs); j++ {
			if segs[j].Wake.Kind == WakeTask && !tr.fired[j] {
				seg = j
				break
			}
		}
		if seg < 0 {
			return
		}
	}
	if tr.state == TaskBlocked && next < len(segs) && segs[next].Wake.Kind == WakeTask && !tr.fired[next] {
		if seg == next {
			s.wake(t, next, cpu, waker, sync, false)
			return
		}
		if sl := segs[next].Wake.Slept; sl > 0 && int64(s.now-tr.blockedAt) > sl {
			// Overslept its recorded waker: this wake ends the sleep, and
			// the recorded one, when it comes, takes this one's place.
			*s.cLate++
			s.wake(t, next, cpu, waker, sync, false)
			return
		}
	}
	tr.fired[seg] = true
}

// start makes a task that exists from time At (WakeStart) or from an
// outside event (WakeAt on a first segment) runnable.
func (s *Sim) start(t int, wk Wake) {
	tr := &s.tasks[t]
	tk := &s.w.Tasks[t]
	if wk.Kind == WakeAt {
		tr.state = TaskBlocked
		tr.seg = -1
		cpu := wk.CPU
		if cpu < 0 || cpu >= len(s.cpus) {
			cpu = int(tr.cpu)
		}
		s.ctx = cpu
		s.wake(t, 0, cpu, int(s.cpus[cpu].curr), false, true)
		return
	}
	cpu := tk.CPU
	if cpu < 0 || !s.Allowed(t, cpu) {
		from := s.firstAllowed(t)
		tr.cpu = int32(from)
		cpu = s.pol.SelectCPU(t, from, -1, WakeForkFlag|WakeStartup)
		if cpu < 0 || cpu >= len(s.cpus) || !s.Allowed(t, cpu) {
			cpu = from
		}
	}
	s.ctx = cpu
	tr.cpu = int32(cpu)
	s.startSegment(t, 0)
	tr.state = TaskQueued
	tr.queued = s.now
	tr.res.Wakeups++
	s.pol.Enqueue(cpu, t, EnqNew)
	if s.now > s.w.Start {
		tr.waking = s.now
		s.emit(timeline.Event{Time: s.now, CPU: timeline.CPU(cpu), Kind: timeline.KindWakeupNew, Task: tk.TID, Comm: tr.comm, Prio: tr.prio, Arg: int64(cpu), Other: 0, OComm: s.cpus[cpu].idleComm, TGID: tk.TGID})
	}
	s.checkPreempt(cpu, t)
}

// fork starts child as a new task of parent.
func (s *Sim) fork(parent, child int) {
	tr := &s.tasks[child]
	if tr.state != TaskNew {
		return
	}
	pr := &s.tasks[parent]
	ptk := &s.w.Tasks[parent]
	tk := &s.w.Tasks[child]
	from := int(pr.cpu)
	tr.cpu = int32(from)
	s.emit(timeline.Event{Time: s.now, CPU: timeline.CPU(from), Kind: timeline.KindFork, Task: tk.TID, Comm: tr.comm, Other: ptk.TID, OComm: pr.comm, Prio: -1, OPrio: pr.prio, TGID: ptk.TGID})
	cpu := from
	if tr.nAllowed > 1 || !s.Allowed(child, from) {
		cpu = s.pol.SelectCPU(child, from, parent, WakeForkFlag)
	}
	if cpu < 0 || cpu >= len(s.cpus) || !s.Allowed(child, cpu) {
		cpu = s.firstAllowed(child)
		if s.Allowed(child, from) {
			cpu = from
		}
	}
	tr.cpu = int32(cpu)
	s.startSegment(child, 0)
	tr.state = TaskQueued
	tr.queued = s.now
	tr.waking = s.now
	tr.res.Wakeups++
	s.pol.Enqueue(cpu, child, EnqNew)
	s.emit(timeline.Event{Time: s.now, CPU: timeline.CPU(from), Kind: timeline.KindWakeupNew, Task: tk.TID, Comm: tr.comm, Prio: tr.prio, Arg: int64(cpu), Other: ptk.TID, OComm: pr.comm, OPrio: pr.prio, TGID: ptk.TGID})
	s.checkPreempt(cpu, child)
}

// wake makes blocked task t runnable for segment seg; the wake is issued on
// cpu by waker (-1: an interrupt or the idle task).
func (s *Sim) wake(t, seg, cpu, waker int, sync, irq bool) {
	tr := &s.tasks[t]
	tk := &s.w.Tasks[t]
	*s.cWake++
	tr.res.Wakeups++
	ev := timeline.Event{Time: s.now, CPU: timeline.CPU(cpu), Kind: timeline.KindWaking, Task: tk.TID, Comm: tr.comm, Prio: tr.prio, Arg: int64(tr.cpu), Ctx: timeline.CtxTask}
	s.setOther(&ev, cpu)
	if irq {
		ev.Ctx = timeline.CtxHardirq
	}
	s.emit(ev)
	tr.waking = s.now
	s.startSegment(t, seg)
	if rq, ok := s.pol.Requeue(t); ok {
		tr.state = TaskQueued
		tr.queued = s.now
		ev.Kind = timeline.KindWakeup
		ev.Arg = int64(rq)
		s.emit(ev)
		if !s.Allowed(t, rq) {
			dst := s.pol.SelectCPU(t, rq, waker, WakeAffinity)
			if dst < 0 || dst >= len(s.cpus) || !s.Allowed(t, dst) {
				dst = s.firstAllowed(t)
			}
			s.Migrate(t, dst)
			return
		}
		s.checkPreempt(rq, t)
		return
	}
	prev := int(tr.cpu)
	dst := prev
	if s.cpus[prev].onCPU == int32(t) {
		// Still the switched-in task of a CPU that is between tasks (its
		// newidle balancing runs): the kernel cannot move it before the
		// switch completes (p->on_cpu) and queues the wakeup on that CPU.
		tr.state = TaskWaking
		if prev != cpu {
			s.queueWake(t, prev)
			return
		}
		s.deliver(t, prev, cpu)
		return
	}
	if tr.nAllowed > 1 || !s.Allowed(t, prev) {
		f := WakeTTWU
		if sync {
			f |= WakeSyncFlag
		}
		dst = s.pol.SelectCPU(t, cpu, waker, f)
		if dst < 0 || dst >= len(s.cpus) || !s.Allowed(t, dst) {
			dst = prev
			if !s.Allowed(t, dst) {
				dst = s.firstAllowed(t)
			}
		}
	}
	if dst != prev {
		s.emitMigrate(t, prev, dst)
		tr.cpu = int32(dst)
		tr.wakeMigrated = true
	}
	tr.state = TaskWaking
	if dst != cpu && (s.cpus[dst].state == CPUPicking ||
		(!s.opts.NoWakeList && (!s.SameLLC(dst, cpu) || s.pol.NrRunning(dst) == 0))) {
		s.queueWake(t, dst)
		return
	}
	s.deliver(t, dst, cpu)
}

// queueWake puts a wakeup on dst's wake list (ttwu_queue_wakelist): it is
// pending (ttwu_pending) at once and enqueued when dst takes the IPI.
func (s *Sim) queueWake(t, dst int) {
	s.cpus[dst].wakePending++
	*s.cIPI++
	s.push(event{at: s.now + timeline.Time(s.ipiDelay()), kind: evDeliver, a: int32(t), b: int32(dst)})
}

// deliver enqueues a waking task on cpu; the sched_wakeup event is recorded
// on emitCPU.
func (s *Sim) deliver(t, cpu, emitCPU int) {
	tr := &s.tasks[t]
	tk := &s.w.Tasks[t]
	if tr.state != TaskWaking {
		return
	}
	tr.state = TaskQueued
	tr.queued = s.now
	f := EnqWakeup
	if tr.wakeMigrated {
		f |= EnqMigrated
		tr.wakeMigrated = false
	}
	tr.cpu = int32(cpu)
	s.pol.Enqueue(cpu, t, f)
	ev := timeline.Event{Time: s.now, CPU: timeline.CPU(emitCPU), Kind: timeline.KindWakeup, Task: tk.TID, Comm: tr.comm, Prio: tr.prio, Arg: int64(cpu), Ctx: timeline.CtxTask}
	s.setOther(&ev, emitCPU)
	s.emit(ev)
	s.checkPreempt(cpu, t)
}

// checkPreempt runs the wakeup-preemption check for t just enqueued on cpu.
func (s *Sim) checkPreempt(cpu, t int) {
	c := &s.cpus[cpu]
	switch c.state {
	case CPUIdle:
		s.Resched(cpu)
	case CPURunning:
		if c.needResched {
			return
		}
		if s.pol.WakeupPreempt(cpu, t) {
			s.Resched(cpu)
		}
	}
}

func (s *Sim) affinityEvent(t, k int) {
	tk := &s.w.Tasks[t]
	tr := &s.tasks[t]
	s.setAllowed(t, tk.Affinity[k].CPUs)
	cpu := int(tr.cpu)
	if s.Allowed(t, cpu) {
		return
	}
	switch tr.state {
	case TaskQueued:
		s.ctx = cpu
		dst := s.pol.SelectCPU(t, cpu, -1, WakeAffinity)
		if dst < 0 || dst >= len(s.cpus) || !s.Allowed(t, dst) {
			dst = s.firstAllowed(t)
		}
		s.Migrate(t, dst)
	case TaskRunning:
		s.addStop(cpu, stopItem{kind: stopAffinity, arg: int64(t)})
	}
}

// runStopper runs the stop work queued for cpu.
func (s *Sim) runStopper(cpu int) {
	c := &s.cpus[cpu]
	if !c.stopPending {
		return
	}
	c.stopPending = false
	items := c.stops
	c.stops = nil
	wasRunning := c.state == CPURunning
	if wasRunning {
		s.account(cpu)
		prev := int(c.curr)
		s.pol.PutPrev(cpu, prev)
		s.offCPU(cpu, prev)
		// The stopper thread is woken and takes the CPU: prev leaves it now.
		wk := timeline.Event{Time: s.now, CPU: timeline.CPU(cpu), Kind: timeline.KindWaking, Task: StopperTID(cpu), Comm: c.stopComm, Prio: 0, Arg: int64(cpu), Ctx: timeline.CtxTask}
		s.setOther(&wk, cpu)
		s.emit(wk)
		wk.Kind = timeline.KindWakeup
		s.emit(wk)
		s.emitSwitchTo(cpu, StopperTID(cpu), c.stopComm, 0)
		c.onCPU = onStopper
		c.outState = timeline.StateInterrupt
	}
	for _, it := range items {
		if it.kind == stopAffinity {
			t := int(it.arg)
			tr := &s.tasks[t]
			if tr.state == TaskQueued && !s.Allowed(t, int(tr.cpu)) {
				dst := s.pol.SelectCPU(t, cpu, -1, WakeAffinity)
				if dst < 0 || dst >= len(s.cpus) || !s.Allowed(t, dst) {
					dst = s.firstAllowed(t)
				}
				s.Migrate(t, dst)
			}
			continue
		}
		s.pol.Stop(cpu, it.kind, it.arg)
	}
	if wasRunning {
		c.needResched = false
		s.pick(cpu, -1, false)
	}
}

// offCPU marks cpu's running task prev as preempted (still runnable).
func (s *Sim) offCPU(cpu, prev int) {
	c := &s.cpus[cpu]
	tr := &s.tasks[prev]
	tr.state = TaskQueued
	tr.queued = s.now
	c.curr = -1
	c.gen++
	c.outState = timeline.StatePreempted
	c.state = CPUPicking
}

// resched is schedule() on cpu after a resched request.
func (s *Sim) resched(cpu int) {
	c := &s.cpus[cpu]
	c.needResched = false
	switch c.state {
	case CPUPicking:
		return
	case CPUIdle:
		if s.opts.IdleExit > 0 {
			c.state = CPUPicking
			c.pickGen++
			s.push(event{at: s.now + timeline.Time(s.opts.IdleExit), kind: evPickResume, a: int32(cpu), gen: c.pickGen})
			return
		}
		s.pick(cpu, -1, false)
	case CPURunning:
		s.account(cpu)
		prev := int(c.curr)
		s.offCPU(cpu, prev)
		s.pick(cpu, prev, true)
	}
}

// pick asks the policy for cpu's next task.
func (s *Sim) pick(cpu, prev int, prevQueued bool) {
	c := &s.cpus[cpu]
	c.state = CPUPicking
	s.afterPick(cpu, s.pol.Pick(cpu, prev, prevQueued))
}

func (s *Sim) afterPick(cpu int, p Pick) {
	c := &s.cpus[cpu]
	if p.Delay > 0 {
		c.state = CPUPicking
		c.pickGen++
		s.push(event{at: s.now + timeline.Time(p.Delay), kind: evPickResume, a: int32(cpu), gen: c.pickGen})
		return
	}
	next := p.Task
	if next >= 0 {
		if next >= len(s.tasks) {
			s.fail("policy picked task %d on CPU %d, out of range", next, cpu)
			return
		}
		tr := &s.tasks[next]
		if tr.state != TaskQueued || int(tr.cpu) != cpu {
			s.fail("policy picked task %d (%s) on CPU %d, but it is %v on CPU %d", next, s.w.Tasks[next].Comm, cpu, tr.state, tr.cpu)
			return
		}
	}
	c.needResched = false
	if int32(next) != c.onCPU {
		s.emitSwitch(cpu, next)
	}
	if next < 0 {
		c.state = CPUIdle
		c.curr = -1
		c.onCPU = -1
		s.runDeferred(cpu)
		return
	}
	tr := &s.tasks[next]
	if tr.queued != timeline.NoTime {
		tr.res.Wait += int64(s.now - tr.queued)
		tr.queued = timeline.NoTime
	}
	if tr.movedAt != timeline.NoTime {
		*s.cMovedNS += int64(s.now - tr.movedAt)
		tr.movedAt = timeline.NoTime
	}
	if tr.waking != timeline.NoTime {
		lat := int64(s.now - tr.waking)
		tr.res.LatencyN++
		tr.res.LatencySum += lat
		tr.res.LatencyMax = max(tr.res.LatencyMax, lat)
		if s.opts.KeepLatencies {
			tr.res.Latencies = append(tr.res.Latencies, lat)
		}
		tr.waking = timeline.NoTime
	}
	tr.state = TaskRunning
	c.state = CPURunning
	c.curr = int32(next)
	c.onCPU = int32(next)
	c.runStart = s.now
	s.armCompletion(cpu)
	if !c.tickArmed {
		c.tickArmed = true
		next := (int64(s.now)/s.tick + 1) * s.tick
		s.push(event{at: timeline.Time(next), kind: evTick, a: int32(cpu)})
	}
	if len(c.deferred) > 0 {
		s.runDeferred(cpu)
	}
}

// ---- event record ----

func (s *Sim) emit(ev timeline.Event) {
	s.emitted++
	if s.opts.Discard {
		return
	}
	if ev.Start == 0 {
		ev.Start = timeline.NoTime
	}
	if ev.TGID == 0 && ev.Kind != timeline.KindSwitch {
		ev.TGID = -1
	}
	if s.unobserved != nil && s.hidden(int(ev.CPU), ev.Time) {
		return
	}
	s.b.Add(ev)
}

// hidden reports whether time t on cpu falls strictly inside one of the
// recording's gaps. Events are emitted in time order, so a cursor per CPU
// suffices.
func (s *Sim) hidden(cpu int, t timeline.Time) bool {
	if cpu < 0 || cpu >= len(s.unobserved) {
		return false
	}
	gs := s.unobserved[cpu]
	i := s.gapAt[cpu]
	for i < len(gs) && gs[i].End <= t {
		i++
	}
	s.gapAt[cpu] = i
	return i < len(gs) && gs[i].Start < t
}

// setOther fills the event's Other with the task running on cpu (the idle
// task when none).
func (s *Sim) setOther(ev *timeline.Event, cpu int) {
	c := &s.cpus[cpu]
	if c.onCPU == onStopper {
		ev.Other, ev.OComm, ev.OPrio = StopperTID(cpu), c.stopComm, 0
		return
	}
	if c.onCPU >= 0 {
		o := int(c.onCPU)
		ev.Other = s.w.Tasks[o].TID
		ev.OComm = s.tasks[o].comm
		ev.OPrio = s.tasks[o].prio
		return
	}
	ev.Other = 0
	ev.OComm = c.idleComm
	ev.OPrio = 120
}

func (s *Sim) emitMigrate(t, src, dst int) {
	tr := &s.tasks[t]
	tk := &s.w.Tasks[t]
	tr.res.Migrations++
	*s.cMigrate++
	at := s.ctx
	if at < 0 {
		at = src
	}
	s.emit(timeline.Event{Time: s.now, CPU: timeline.CPU(at), Kind: timeline.KindMigrate, Task: tk.TID, Comm: tr.comm, Prio: tr.prio, Arg: int64(dst), Arg2: int64(src), Other: timeline.NoTID, OPrio: -1, TGID: -1})
}

func (s *Sim) emitSwitch(cpu, next int) {
	c := &s.cpus[cpu]
	if next >= 0 {
		s.emitSwitchTo(cpu, s.w.Tasks[next].TID, s.tasks[next].comm, s.tasks[next].prio)
		return
	}
	s.emitSwitchTo(cpu, 0, c.idleComm, 120)
}

// emitSwitchTo records a sched_switch on cpu from its current task to
// (tid, comm, prio).
func (s *Sim) emitSwitchTo(cpu int, tid timeline.TID, comm timeline.CommID, prio int16) {
	c := &s.cpus[cpu]
	*s.cSwitch++
	ev := timeline.Event{Time: s.now, CPU: timeline.CPU(cpu), Kind: timeline.KindSwitch, Ctx: timeline.CtxTask, TGID: -1}
	switch {
	case c.onCPU == onStopper:
		ev.Other = StopperTID(cpu)
		ev.OComm = c.stopComm
		ev.OPrio = 0
		ev.State = timeline.StateInterrupt
		ev.TGID = int32(ev.Other)
	case c.onCPU >= 0:
		p := int(c.onCPU)
		ev.Other = s.w.Tasks[p].TID
		ev.OComm = s.tasks[p].comm
		ev.OPrio = s.tasks[p].prio
		ev.State = c.outState
		ev.TGID = s.w.Tasks[p].TGID
		if c.outState == timeline.StatePreempted {
			*s.cPreempt++
			s.tasks[p].res.Preempted++
		}
	default:
		ev.Other = 0
		ev.OComm = c.idleComm
		ev.OPrio = 120
		ev.State = timeline.StateRunnable
		ev.TGID = 0
	}
	ev.Task, ev.Comm, ev.Prio = tid, comm, prio
	s.emit(ev)
}

func (s *Sim) finish() (*Result, error) {
	for cpu := range s.cpus {
		if s.cpus[cpu].state == CPURunning {
			s.account(cpu)
		}
	}
	var tl *timeline.Timeline
	if !s.opts.Discard {
		var err error
		if tl, err = s.b.Finish(); err != nil {
			return nil, fmt.Errorf("replay: building timeline: %w", err)
		}
		tl.Topology = s.topo
		for _, g := range s.w.Unobserved {
			if int(g.CPU) < tl.NCPU {
				tl.Gaps = append(tl.Gaps, g)
			}
		}
		slices.SortStableFunc(tl.Gaps, func(a, b timeline.Gap) int { return cmp.Compare(a.End, b.End) })
	}
	r := &Result{Timeline: tl, Policy: s.pol.Name(), Start: s.w.Start, End: s.now, Steps: s.steps, Emitted: s.emitted, Counters: map[string]int64{}}
	for name, c := range s.counters {
		r.Counters[name] = *c
	}
	r.Tasks = make([]TaskResult, len(s.tasks))
	for i := range s.tasks {
		tr := &s.tasks[i]
		res := tr.res
		res.Work = tr.done >> unitShift
		if s.w.Tasks[i].End == EndRun {
			res.Finished = false
		}
		r.Tasks[i] = res
	}
	return r, nil
}
