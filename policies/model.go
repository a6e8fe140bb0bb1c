package policies

import (
	"fmt"
	"math/bits"

	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
)

const (
	nice0Load     = 1024    // NICE_0_LOAD after scale_load_down
	weightIdle    = 3       // WEIGHT_IDLEPRIO (kernel/sched/sched.h): SCHED_IDLE
	capacityScale = 1024    // SCHED_CAPACITY_SCALE
	baseSliceNS   = 750_000 // normalized_sysctl_sched_base_slice (kernel/sched/fair.c)
	migrationCost = 500_000 // sysctl_sched_migration_cost (kernel/sched/fair.c)
	rrTimeslice   = 100_000_000
)

// task classes inside the model
const (
	clsFair uint8 = iota
	clsRT
)

// entity is the model's per-task state, and the state of the group
// entities that stand for task groups in the root queues.
type entity struct {
	cls     uint8
	policy  replay.SchedPolicy
	w       int64 // load weight (scaled down: nice 0 = 1024)
	rtPrio  int   // kernel prio for RT/DL tasks (lower is higher)
	cookie  uint64
	kthread bool
	grp     int32    // task group (index into Model.tg), -1 the root group; -1 for group entities
	gq      *groupRQ // group entities: the group queue the entity stands for; nil for tasks

	// EEVDF (fair)
	v, dl     int64
	vlag      int64 // saved lag; while running, the 6.6/6.12 protection marker
	vprot     int64 // 6.18 protection horizon
	vprotAlt  int64 // the horizon under the other RUN_TO_PARITY, when that knob is counted
	slice     int64
	onRQ      bool // queued on its CPU's run queue (running, runnable or delayed)
	delayed   bool // DELAY_DEQUEUE: asleep but still queued
	relDL     bool // PLACE_REL_DEADLINE: dl holds deadline - vruntime
	forked    bool // enqueued as a new task (WF_FORK) and not run yet
	cpu       int32
	execStart timeline.Time
	sumExec   int64
	pickExec  int64  // sum_exec_runtime at the last pick (prev_sum_exec_runtime)
	lbStamp   uint64 // position in cfs_tasks: higher = nearer the head

	// RT
	rtSeq   uint64
	rtSlice int64

	// PELT
	util, runnable, load float64
	peltLast             timeline.Time
	peltCPU              int32 // rq whose sums hold the task's contribution, -1 none
	utilEst              float64
	ueAdded              float64 // what util_est_enqueue added to the rq

	// wake_wide / select_idle_sibling memory
	wakeeFlips    int
	flipDecay     timeline.Time
	lastWakee     int32
	recentUsedCPU int32
}

// Model is the mainline Linux scheduler model for one Config. It
// implements replay.Policy. Build it with New; one Model serves one run.
type Model struct {
	cfg  Config
	s    *replay.Sim
	ncpu int

	ent   []entity // tasks, then group entities (initGroups)
	nTask int
	tg    []taskGroup
	rq    []*runQueue

	baseSlice int64
	normSlice int64 // normalized_sysctl_sched_base_slice of the modeled version
	migCost   int64
	nrMigrate int // sysctl_sched_nr_migrate
	cost      CostModel
	lbSeq     uint64
	rtSeq     uint64
	maxCap    int64
	asym      bool // SD_ASYM_CPUCAPACITY on some domain (sched_asym_cpucap_active); set by buildDomains
	smt       bool // SMT present (sched_smt_active)
	core      coreSched

	domains domainSet

	rtOverloaded int   // CPUs with two or more RT tasks (rto_count)
	nohzNext     int64 // nohz.next_balance, jiffies

	// scratch
	scratch []bool

	c counters
	k knobCounters
}

type counters struct {
	tickResched, wakePreempt, patchPreempt, needPreempt *int64
	wakePickDequeued                                    *int64
	lbPeriodic, lbIdle, lbNewidle, lbMoved, lbActive    *int64
	lbNewidleRuns, lbNewidleBail, lbNewidleNS, lbRedo   *int64
	lbIneligibleSkip, lbUtilSkip, lbFailedPasses        *int64
	coreForceIdle, coreIPI, coreSyncPicks, nohzKicks    *int64
	rtPush, rtPull, delayed, misfitSet, activeMisfit    *int64
	newidlePulled                                       *int64
	groupReweight, groupDelayed                         *int64
}

// New returns a model for cfg.
func New(cfg Config) (*Model, error) {
	if _, ok := KernelByVersion(cfg.Kernel); !ok {
		return nil, fmt.Errorf("policies: unknown kernel version %q", cfg.Kernel)
	}
	return &Model{cfg: cfg}, nil
}

// MustParse returns a model for Parse(s) and panics on a bad description;
// for tests and fixed tables.
func MustParse(s string) *Model {
	cfg, err := Parse(s)
	if err != nil {
		panic(err)
	}
	m, err := New(cfg)
	if err != nil {
		panic(err)
	}
	return m
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Name returns the canonical policy description, e.g. "6.12,+resched-ineligible".
func (m *Model) Name() string { return m.cfg.String() }

// Attach sizes the model for a run.
func (m *Model) Attach(s *replay.Sim) error {
	m.s = s
	m.ncpu = s.NCPU()
	topo := s.Topology()
	// sysctl_sched_base_slice scaled by get_update_sysctl_factor with
	// SCHED_TUNABLESCALING_LOG: 1 + ilog2(min(ncpu, 8)).
	m.normSlice = baseSliceNS
	if k, ok := KernelByVersion(m.cfg.Kernel); ok && k.BaseSlice > 0 {
		m.normSlice = k.BaseSlice
	}
	m.baseSlice = m.normSlice * int64(bits.Len(uint(min(m.ncpu, 8)))) // 1 + ilog2(n)
	if v, ok := m.cfg.Tunables.Get(TunBaseSlice); ok {
		m.baseSlice = v
	}
	m.migCost = migrationCost
	if v, ok := m.cfg.Tunables.Get(TunMigrationCost); ok {
		m.migCost = v
	}
	m.nrMigrate = nrMigrate
	if v, ok := m.cfg.Tunables.Get(TunNrMigrate); ok {
		m.nrMigrate = int(v)
	}
	m.cost = m.cfg.Cost
	if m.cost == (CostModel{}) {
		m.cost = DefaultCost
	}
	m.maxCap = int64(topo.MaxCapacity())
	m.rq = make([]*runQueue, m.ncpu)
	for i := range m.rq {
		m.rq[i] = newRunQueue(i, int64(topo.CPUs[i].Capacity))
	}
	if err := m.buildDomains(); err != nil {
		return err
	}
	groups := s.Workload().Groups
	m.nTask = s.NTask()
	m.ent = make([]entity, m.nTask+len(groups)*m.ncpu)
	for i := range m.nTask {
		m.initEntity(i)
	}
	if len(groups) > 0 {
		m.initGroups(groups)
	}
	m.core.init(m)
	m.initCounters()
	m.initKnobs()
	return nil
}

func (m *Model) initCounters() {
	c := &m.c
	s := m.s
	c.tickResched = s.Counter("eevdf.tick-resched")
	c.wakePreempt = s.Counter("eevdf.wakeup-preempt")
	c.wakePickDequeued = s.Counter("eevdf.wakeup-pick-dequeued-delayed")
	c.patchPreempt = s.Counter("patch.resched-ineligible.preempt")
	c.needPreempt = s.Counter("eevdf.need-preempt")
	c.lbPeriodic = s.Counter("lb.periodic.passes")
	c.lbIdle = s.Counter("lb.idle.passes")
	c.lbNewidle = s.Counter("lb.newidle.passes")
	c.lbMoved = s.Counter("lb.moved")
	c.lbActive = s.Counter("lb.active")
	c.lbNewidleRuns = s.Counter("lb.newidle.runs")
	c.lbNewidleBail = s.Counter("lb.newidle.bailouts")
	c.lbNewidleNS = s.Counter("lb.newidle.ns")
	c.lbRedo = s.Counter("lb.redo")
	c.lbIneligibleSkip = s.Counter("patch.lb-eligible-first.skipped")
	c.lbUtilSkip = s.Counter("lb.util.skipped")
	c.lbFailedPasses = s.Counter("lb.failed")
	c.coreForceIdle = s.Counter("core.forced-idle")
	c.coreIPI = s.Counter("patch.coresched-idle-ipi.kicks")
	c.coreSyncPicks = s.Counter("core.sync-picks")
	c.nohzKicks = s.Counter("lb.nohz.kicks")
	c.rtPush = s.Counter("rt.push")
	c.rtPull = s.Counter("rt.pull")
	c.delayed = s.Counter("eevdf.delayed-dequeue")
	c.misfitSet = s.Counter("lb.misfit.set")
	c.activeMisfit = s.Counter("lb.active.misfit")
	c.newidlePulled = s.Counter("lb.newidle.pulled")
	c.groupReweight = s.Counter("group.reweight")
	c.groupDelayed = s.Counter("group.delayed-dequeue")
}

func (m *Model) initEntity(i int) {
	tk := m.s.Task(i)
	e := &m.ent[i]
	e.cpu = int32(m.s.TaskCPU(i))
	e.peltCPU = -1
	e.lastWakee = -1
	e.recentUsedCPU = e.cpu
	e.cookie = tk.Cookie
	e.kthread = tk.PerCPUKthread
	e.policy = tk.EffectivePolicy()
	e.grp = -1
	switch tk.Class() {
	case replay.ClassRT:
		e.cls = clsRT
		e.rtPrio = tk.Prio
		if e.rtPrio > 99 {
			e.rtPrio = 99
		}
	case replay.ClassDeadline:
		// SCHED_DEADLINE is modeled as the highest RT priority.
		e.cls = clsRT
		e.rtPrio = -1
	default:
		e.cls = clsFair
		if e.policy == replay.PolicyIdle {
			e.w = weightIdle
		} else {
			e.w = replay.NiceWeight(tk.Nice())
		}
		e.grp = int32(tk.Group - 1)
	}
	e.slice = m.baseSlice
	e.rtSlice = rrTimeslice
}

func (m *Model) now() timeline.Time { return m.s.Now() }

// jiffies is the current tick count.
func (m *Model) jiffies() int64 { return int64(m.now()) / m.s.TickNS() }

// ---- replay.Policy ----

// NrRunning returns rq->nr_running.
func (m *Model) NrRunning(cpu int) int {
	rq := m.rq[cpu]
	return rq.hNr + rq.rtNr
}

// Enqueue makes t runnable on cpu.
func (m *Model) Enqueue(cpu, t int, flags replay.EnqueueFlags) {
	rq := m.rq[cpu]
	e := &m.ent[t]
	m.core.taskSeq(cpu)
	m.syncRQ(rq)
	m.peltEnqueue(rq, t)
	e.cpu = int32(cpu)
	e.forked = flags&replay.EnqNew != 0
	if e.cls == clsRT {
		m.enqueueRT(rq, t, flags)
	} else {
		m.enqueueFair(rq, t, flags)
	}
	if flags&replay.EnqWakeup != 0 && rq.idleStamp != 0 {
		// ttwu_do_activate: feed avg_idle with how long the CPU idled.
		delta := int64(m.now() - rq.idleStamp)
		maxIdle := 2 * rq.maxIdleBalanceCost
		rq.avgIdle += (delta - rq.avgIdle) / 8
		if rq.avgIdle > maxIdle {
			rq.avgIdle = maxIdle
		}
		rq.idleStamp = 0
	}
	if flags&replay.EnqWakeup != 0 && e.cls == clsRT {
		m.rtTaskWoken(rq, t)
	}
}

// Dequeue takes t off cpu.
func (m *Model) Dequeue(cpu, t int, flags replay.DequeueFlags) {
	rq := m.rq[cpu]
	e := &m.ent[t]
	m.core.taskSeq(cpu)
	m.syncRQ(rq)
	if e.cls == clsRT {
		m.dequeueRT(rq, t)
	} else {
		m.dequeueFair(rq, t, flags)
	}
	if flags&replay.DeqMigrate != 0 || flags&replay.DeqExit != 0 {
		m.peltDetach(rq, t)
	}
	if int(rq.curr) == t && !(e.cls == clsFair && e.onRQ) {
		rq.curr = -1
	}
}

// Requeue handles the wakeup of a task the model still holds queued
// (DELAY_DEQUEUE): it is requeued where it sleeps, without CPU selection.
func (m *Model) Requeue(t int) (int, bool) {
	e := &m.ent[t]
	if e.cls != clsFair || !e.onRQ || !e.delayed {
		return 0, false
	}
	cpu := int(e.cpu)
	rq := m.rq[cpu]
	m.core.taskSeq(cpu)
	m.syncRQ(rq)
	m.requeueDelayed(m.taskQ(rq, t), t)
	return cpu, true
}

// WakeupPreempt is wakeup_preempt: does t, just enqueued on cpu, preempt
// the running task?
func (m *Model) WakeupPreempt(cpu, t int) bool {
	rq := m.rq[cpu]
	curr := int(rq.curr)
	if curr < 0 || curr == t {
		return false
	}
	ce, pe := &m.ent[curr], &m.ent[t]
	switch {
	case pe.cls == clsRT && ce.cls != clsRT:
		return true
	case pe.cls == clsRT:
		return pe.rtPrio < ce.rtPrio
	case ce.cls == clsRT:
		return false
	}
	return m.checkPreemptWakeupFair(rq, curr, t)
}

// Pick chooses cpu's next task.
func (m *Model) Pick(cpu, prev int, prevQueued bool) replay.Pick {
	rq := m.rq[cpu]
	m.syncRQ(rq)
	if rq.ni.active {
		return m.newidleContinue(rq)
	}
	if m.core.enabled && m.core.multi(cpu) {
		if p, ok := m.core.pick(cpu, prev); ok {
			return p
		}
	}
	next := m.pickLocal(rq, prev)
	if next >= 0 {
		return replay.Pick{Task: next}
	}
	return m.newidleStart(rq)
}

// PutPrev takes cpu's running task off the CPU; it stays queued.
func (m *Model) PutPrev(cpu, prev int) {
	rq := m.rq[cpu]
	m.syncRQ(rq)
	m.putPrev(rq, prev, -1)
}

// Tick is scheduler_tick on a busy CPU.
func (m *Model) Tick(cpu int) {
	rq := m.rq[cpu]
	m.syncRQ(rq)
	curr := int(rq.curr)
	if curr >= 0 {
		e := &m.ent[curr]
		if e.cls == clsFair {
			m.tickFair(rq, curr)
		} else {
			m.tickRT(rq, curr)
		}
		m.updateMisfit(rq, curr)
		m.core.tick(cpu, curr)
	}
	m.balanceTrigger(rq)
}

// Timer delivers the model's own timed callbacks.
func (m *Model) Timer(cpu, kind int, arg int64) {
	switch kind {
	case timerNohzBalance:
		m.nohzIdleBalance(cpu)
	}
}

// Stop runs stopper work: active balancing.
func (m *Model) Stop(cpu, kind int, arg int64) {
	switch kind {
	case stopActiveBalance:
		m.activeBalanceStop(cpu, int(arg))
	}
}

// SelectCPU is select_task_rq for the task's class.
func (m *Model) SelectCPU(t, from, waker int, flags replay.WakeFlags) int {
	if m.ent[t].cls == clsRT {
		return m.selectRT(t, from)
	}
	return m.selectFair(t, from, waker, flags)
}

// ---- class dispatch ----

// pickLocal is pick_next_task without core scheduling: RT first, then fair.
// It returns -1 when nothing is runnable; prev has been put back.
func (m *Model) pickLocal(rq *runQueue, prev int) int {
	if m.rtOverloaded > 0 && (rq.rtNr == 0 || (prev >= 0 && m.ent[prev].cls == clsRT)) {
		m.pullRT(rq)
	}
	if rq.rtNr > 0 {
		next := m.pickRT(rq)
		if next != prev || int(rq.curr) != prev {
			m.putPrevIfOther(rq, prev, next, next)
			m.setNext(rq, next)
		}
		return next
	}
	if rq.nrQueued > 0 {
		next := m.pickFair(rq)
		if next >= 0 {
			if next != prev || int(rq.curr) != prev {
				m.putPrevIfOther(rq, prev, next, next)
				m.setNext(rq, next)
			}
			return next
		}
	}
	m.putPrevIfOther(rq, prev, -1, -1)
	return -1
}

// putPrevIfOther puts prev back unless it is next. keep is as for putPrev.
// A task of a group that left the CPU by blocking (Dequeue) is no longer
// rq.curr, but its group's entity is still the root queue's current one:
// that level is put here, as put_prev_task_fair puts every level of prev.
func (m *Model) putPrevIfOther(rq *runQueue, prev, next, keep int) {
	if prev < 0 || prev == next {
		return
	}
	if int(rq.curr) == prev {
		m.putPrev(rq, prev, keep)
		return
	}
	if e := &m.ent[prev]; e.grp >= 0 && e.cls == clsFair && int(e.cpu) == rq.cpu {
		m.putPrevFair(rq, prev, keep)
	}
}

// putPrev takes prev off the CPU. keep is the task about to run when the
// pick is pick_next_task_fair's, which leaves the group entity prev and
// keep share current; -1 puts every level.
func (m *Model) putPrev(rq *runQueue, prev, keep int) {
	if int(rq.curr) != prev {
		return
	}
	e := &m.ent[prev]
	m.peltUpdateTask(prev)
	if e.cls == clsFair {
		m.putPrevFair(rq, prev, keep)
	}
	rq.curr = -1
}

func (m *Model) setNext(rq *runQueue, next int) {
	m.peltUpdateTask(next)
	e := &m.ent[next]
	if e.cls == clsFair {
		m.setNextFair(rq, next)
	}
	e.execStart = m.now()
	rq.curr = int32(next)
	m.updateMisfit(rq, next)
}

// allowed reports whether t may run on cpu.
func (m *Model) allowed(t, cpu int) bool { return m.s.Allowed(t, cpu) }

// maxAllowedCapacity is p->max_allowed_capacity.
func (m *Model) maxAllowedCapacity(t int) int64 {
	var c int64
	for cpu := 0; cpu < m.ncpu; cpu++ {
		if m.allowed(t, cpu) && m.rq[cpu].capOrig > c {
			c = m.rq[cpu].capOrig
		}
	}
	return c
}
