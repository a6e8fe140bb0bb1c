package replay

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// action is a point in a waker's work where it wakes or forks a task: the
// wake of segment seg of task target, whose Wake says how.
type action struct {
	target int32
	seg    int32
}

// taskRun is the engine's state of one task.
type taskRun struct {
	state   TaskState
	cpu     int32
	seg     int32
	segEnd  int64 // cumulative units at the end of the current segment
	done    int64 // cumulative units done
	actFrom int32 // next action index into Sim.acts
	actTo   int32
	// actCap caps the work point of the actions left (a kill: they come
	// with the exit); the actions are the Plan's, shared by the runs.
	actCap int64
	// actWork is the work point of the next action (acts[actFrom]),
	// math.MaxInt64 when none is left (loadAction).
	actWork   int64
	fired     []bool        // per segment: its wake has fired before the task blocked
	pending   int32         // WakeAny: task wakes issued to it not yet consumed
	affLater  int32         // 1 + the Task.Affinity index due before the task started: applied at its first run
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
	// killed: a signal ended the task (Task.KillAt); its current segment
	// is its last.
	killed bool
	res    TaskResult
}

// cpuRun is the engine's state of one CPU.
type cpuRun struct {
	state       CPUState
	curr        int32 // executing task, -1
	onCPU       int32 // task last switched in (-1: swapper)
	outState    timeline.State
	runStart    timeline.Time
	speed       int64  // work rate: Workload.Speed, else topology.Perf (1024 = fastest)
	gen         uint32 // completion generation
	pickGen     uint32
	needResched bool
	ipiPending  bool
	exitPaid    bool // a wakeup's IdleWakeDist delay reached the idle CPU: its exit from idle is paid
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

// Sim is the running engine. Policies receive it in Attach and call its
// services; it is not safe for concurrent use.
type Sim struct {
	w    *Workload
	topo *topology.Topology
	pol  Policy
	opts Options

	now timeline.Time
	end timeline.Time
	// exitsLeft counts the tasks that exit in the workload and have not
	// yet (Options.Overrun).
	exitsLeft int
	// overrunning is set once the run has gone past the workload's end.
	overrunning bool
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
	segs       [][]int64 // per task, cumulative units at each segment end (the Plan's)
	dirty      []int32
	rng        *rand.Rand

	b                     *timeline.Builder
	log                   *timeline.EventLog // with Options.Log
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
	cKilled, cKillMissed  *int64
	cCostMore, cCostLess  *int64
	cStopAtEnd            *int64
	cLate                 *int64
	cReschedGone          *int64
	cStall, cStallTimeout *int64
	cMoved                *int64
	cMovedNS              *int64
	err                   error
}

const unitShift = 10 // units = work ns << 10 (ns × capacity)

// newSim sizes the engine for w on topo: the tick, the stop time, the
// counters, per-CPU and per-task state, and per waker its wakes and forks
// in the order its work reaches them.
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
	if hz > MaxHZ {
		return nil, fmt.Errorf("replay: HZ %d out of range", hz)
	}
	s.opts.HZ = hz
	s.tick = 1_000_000_000 / int64(hz)
	if err := checkTicks(w.Busy, s.tick, hz); err != nil {
		return nil, err
	}
	s.now = w.Start
	s.end = opts.End
	for i := range w.Tasks {
		if w.Tasks[i].End == EndExit {
			s.exitsLeft++
		}
	}
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
	if opts.Log {
		// The events go to the log, their summary to the Builder.
		s.log = &timeline.EventLog{}
		s.b = timeline.NewSummaryBuilder(s.strs, len(topo.CPUs))
	} else {
		s.b = timeline.NewBuilder(s.strs, len(topo.CPUs))
		s.b.RequireOrder() // emit hands out events in time order
		s.b.Grow(eventEstimate(w))
	}
	s.cSwitch = s.Counter("switch")
	s.cPreempt = s.Counter("preempt")
	s.cWake = s.Counter("wakeup")
	s.cMigrate = s.Counter("migrate")
	s.cIPI = s.Counter("ipi")
	s.cEarly = s.Counter("wake-before-block")
	s.cKilled = s.Counter("killed")
	s.cCostMore = s.Counter("wake-cost.ipi-added")
	s.cCostLess = s.Counter("wake-cost.ipi-saved")
	s.cStopAtEnd = s.Counter("running-at-end.stopped")
	s.cKillMissed = s.Counter("kill.not-runnable")
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
		c.speed = int64(topo.Perf(i))
		if len(w.Speed) == len(topo.CPUs) && w.Speed[i] > 0 {
			c.speed = int64(w.Speed[i])
		}
		c.idleComm = s.strs.IDString("swapper/" + strconv.Itoa(i))
		c.stopComm = s.strs.IDString("migration/" + strconv.Itoa(i))
		c.llc = topo.CPUs[i].Cluster
	}
	n := len(w.Tasks)
	plan := opts.Plan
	if plan == nil {
		var err error
		if plan, err = NewPlan(w); err != nil {
			return nil, err
		}
	} else if !plan.fits(w) {
		return nil, fmt.Errorf("replay: Options.Plan was built for another workload")
	}
	s.segs, s.acts = plan.segs, plan.acts
	s.tasks = make([]taskRun, n)
	firedAll := make([]bool, plan.nseg)
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
		tr.actFrom, tr.actTo = plan.actStart[i], plan.actStart[i+1]
		tr.actCap = math.MaxInt64
		s.loadAction(tr)
	}
	return s, nil
}

// eventEstimate is how many events a run of w is likely to emit, for
// sizing the modeled timeline's columns before the run: a segment's wake
// is a sched_waking and a sched_wakeup, its run at least one switch, and
// preemptions, migrations and idle switches add about as many again. A
// run that emits more grows the columns as before; capacity it never
// writes costs address space, not resident memory (timeline.Builder.Grow).
func eventEstimate(w *Workload) int {
	n := 0
	for i := range w.Tasks {
		n += 4*len(w.Tasks[i].Segments) + 4
	}
	return n
}
