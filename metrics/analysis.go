package metrics

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Options configure Analyze.
type Options struct {
	// Window clips every figure; the zero Window means DefaultWindow.
	Window Window
	// Filter selects the tasks whose samples, waits and misplacement are
	// reported. Every task still counts for what CPUs were doing.
	Filter Filter
	// Topology of the traced machine; nil means tl.Topology, and when that
	// is nil too, tl.NCPU identical CPUs (noted in Analysis.Notes).
	Topology *topology.Topology
	// Affinity gives each task's allowed CPUs over time (affinity.Build);
	// nil: per-CPU kernel threads are bound by name, every other task is
	// free.
	Affinity *affinity.Map
	// AffinityAfter, when set, makes the allowed CPUs once the walk has
	// ended, in place of Affinity: from an inference (affinity.Inferrer)
	// that the same walk fed through Also, so that the inference costs no
	// walk of its own. An error it returns is Analyze's.
	AffinityAfter func() (*affinity.Map, error)
	// MinWindow: idle-with-runnable windows shorter than this many ns are
	// not counted, in the idle metric nor in misplaced (a). 0 counts all.
	MinWindow int64
	// OwnQueueList: own-queue idle windows at least this many ns long are
	// listed one by one; 0 means DefaultOwnQueueList, a negative value
	// lists every window.
	OwnQueueList int64
	// PELT configures the utilization estimate of the misfit test.
	PELT PELT
	// PinnedMinWaits is how many waits with an idle CPU available a task
	// that only ever ran on one CPU must have to be flagged possibly
	// pinned; 0 means DefaultPinnedMinWaits.
	PinnedMinWaits int
	// Also are other metrics the walk feeds (Feed), so that a caller that
	// wants them too walks the timeline once: an Accountant, whose Result
	// takes Analysis.Walk.
	Also []Sink
	// NoSamples: the caller reads no Latency.Samples (it stays nil), only
	// the distributions, windows and sums. The analysis then holds 48
	// bytes a sample instead of 88 (a sampleRec, not a Sample).
	NoSamples bool
	// TaskWakeups (with NoSamples): the latency the analysis gives is
	// Latency.Wakeups, each complete wakeup sample's task and duration (16
	// bytes), and the overall distribution of their durations
	// (Latency.Wakeup.Overall), for a caller that groups them its own way
	// (compare); the other distributions are not computed. A sample is
	// folded into Wakeups once the walk has decided that no sweep reads
	// it, so that the analysis holds 16 bytes a wakeup, not 48. Not with
	// Sketch.
	TaskWakeups bool
	// Sketch (with NoSamples): the latency percentiles are estimated from
	// sketches (DefEstimated), into which each sample is folded once the
	// walk has decided that no sweep reads it, so that the analysis holds
	// the samples of the waits that overlap idle time, not every one.
	// A streamed read asks for it unless --exact.
	Sketch bool
	// DropEvents: the caller reads nothing of the timeline's events after
	// Analyze (its tasks, markers and figures stay). Analyze then drops
	// them once its walk has ended (Timeline.DropEvents) and gives their
	// memory back to the system before the sweeps allocate. (Reusing it
	// instead would touch the pages that the columns' pre-sizing reserved
	// and never wrote: report on 1.26 GB of text peaks at 896 MiB after a
	// collection alone, 843 MiB this way.)
	DropEvents bool
}

// DefaultPinnedMinWaits is the default Options.PinnedMinWaits.
const DefaultPinnedMinWaits = 10

// Analysis is the result of Analyze: the three metrics of one timeline,
// measured in one walk.
type Analysis struct {
	Window    Window
	Topology  *topology.Topology
	Latency   *Latency
	Idle      *Idle
	Misplaced *Misplaced
	// Notes are assumptions the analysis had to make, for the reader.
	Notes []string
	// UnobservedNs is, per CPU, the time of the window in which what the
	// CPU ran is not known (before its stream starts, in lost-event gaps,
	// after a missing switch): neither busy nor idle in any figure.
	UnobservedNs []int64
	// Walk is what the walk counted besides spans.
	Walk timeline.WalkStats

	strips func() [][]StripBin
}

// Segment flags.
const (
	segClipStart uint8 = 1 << iota // started before the window: cut
	segClipEnd                     // ended after the window: cut
	segOpen                        // still open where it ends (trace end or gap)
	segAbut                        // the CPU's next segment starts where this one ends
)

// runSeg is a task on a CPU, clipped to the window.
type runSeg struct {
	start, end timeline.Time
	task       timeline.TaskID
	cpu        int32
	flags      uint8
	mask       uint16 // index in collector.maskTab of the task's allowed CPUs at start
}

// runFit is the misfit state of a runSeg, kept (in collector.fit, by the
// same index) only when capacities differ.
type runFit struct {
	u0     float64       // PELT utilization at start
	onset  timeline.Time // misfit from here on (never: maxTime)
	misfit int64         // misfit ns found by the sweep
}

// cpuSeg identifies the latest run or idle segment of a CPU.
type cpuSeg struct {
	end  timeline.Time
	idx  int32
	idle bool
}

// idleSeg is a CPU running its idle task, clipped to the window.
type idleSeg struct {
	start, end timeline.Time
	cpu        int32
	flags      uint8
}

// waitSeg is a stretch of a wait during which the task sits on one
// runqueue, clipped to the window.
type waitSeg struct {
	start, end timeline.Time
	task       timeline.TaskID
	q          int32 // runqueue CPU
	sample     int32 // index in samples
	inferred   bool  // q taken from where the task later ran, not from an event
	flags      uint8
	mask       uint16 // index in collector.maskTab of the task's allowed CPUs at start
}

const maxTime = timeline.Time(math.MaxInt64)

// collector gathers what the metrics need from one Walk.
type collector struct {
	tl      *timeline.Timeline
	win     Window
	topo    *topology.Topology
	caps    []int
	maxCap  int
	asym    bool
	match   []bool
	aff     *affinity.Map
	maskTab []cpuMask         // allowed-CPU sets, [0] = nil = free; segments index it
	maskIdx map[string]uint16 // maskTab by the set's text
	affSrc  []affinity.Source // per task: where its allowed CPUs come from
	place   placements
	placeAt []int32 // per task: first placement event not yet passed
	// prune decides during the walk which runs and waits the sweeps will
	// read (prune.go); nil keeps every one to the end.
	prune *pruner
	// fold, with Options.Sketch, holds the latency of the samples let go
	// during the walk (fold.go).
	fold *folder
	// streamed: fed by a StreamWalk, whose chunks bring the task
	// instances (Events); the placement events are kept per task from
	// them (pending) until a span passes them, every task's samples are
	// kept, and the filter applies at the end (filter).
	streamed bool
	summary  *timeline.Timeline
	pending  [][]placeEv
	filter   Filter
	ut       *utilTracker
	lastRun  []int32 // per task: CPU of its latest running span
	ranOn    []int32 // per task: the one CPU it ran on, -1 none, -2 several
	peak     []float64

	runs    []runSeg
	fit     []runFit // by run index, when asym
	smtNs   []int64  // by run index: SMT-contended ns, when the topology has SMT
	hasSMT  bool
	lastSeg []cpuSeg // per CPU, to mark abutting segments
	idles   []idleSeg
	waits   []waitSeg
	// samples are the waits as Latency.Samples gives them, unless
	// noSamples; recs what the analysis after the walk reads of them
	// (during the walk only when noSamples). waitSeg.sample indexes
	// either.
	samples   []Sample
	recs      []sampleRec
	noSamples bool
	wakeups   bool // Options.TaskWakeups
	walk      timeline.WalkStats
	qIdle     []int64 // per CPU: (a) time of the waits queued there
	names     []string
	named     []bool
	minWin    int64
}

// Analyze measures wakeup latency, preemption wait, idle-with-runnable
// windows and misplaced tasks over tl in one walk. It returns an error
// when the topology has fewer CPUs than the trace.
func Analyze(tl *timeline.Timeline, opts Options) (*Analysis, error) {
	a, c, err := prepare(tl, opts)
	if err != nil {
		return nil, err
	}
	ws := Feed(tl, append([]Sink{c}, opts.Also...)...)
	c.place, c.placeAt = placements{}, nil // the walk's alone
	if opts.AffinityAfter != nil {
		if opts.Affinity, err = opts.AffinityAfter(); err != nil {
			return nil, err
		}
	}
	if opts.DropEvents {
		tl.DropEvents()
		debug.FreeOSMemory()
	}
	return c.finish(a, ws, opts), nil
}

// StreamAnalysis is Analyze over a streamed walk (timeline.StreamWalk) of
// a summary Timeline: a Sink that the walk feeds, then Finish. It gives
// Analyze's result. What Analyze resolves before its walk waits for the
// trace's tasks: the filter applies at the end (every task's samples are
// kept until then), and so do the allowed CPUs (Finish takes the map,
// which an inference fed by the same walk may have made).
type StreamAnalysis struct {
	a    *Analysis
	c    *collector
	opts Options
}

// NewStreamAnalysis starts the analysis of summary Timeline tl, whose
// second read the caller feeds to Events and Span. opts.Affinity and
// opts.Also are not used (Finish takes the map; feed other sinks beside).
func NewStreamAnalysis(tl *timeline.Timeline, opts Options) (*StreamAnalysis, error) {
	if !tl.Summary() {
		return nil, errors.New("NewStreamAnalysis: not a summary timeline")
	}
	a, c, err := prepare(tl, opts)
	if err != nil {
		return nil, err
	}
	return &StreamAnalysis{a: a, c: c, opts: opts}, nil
}

// Events takes a chunk of the streamed walk, before its spans.
func (s *StreamAnalysis) Events(chunk *timeline.Timeline) { s.c.Events(chunk) }

// Span takes one span of the streamed walk.
func (s *StreamAnalysis) Span(sp *timeline.Span) { s.c.Span(sp) }

// Finish ends the analysis once the walk has ended (StreamWalk.Finish gave
// the summary Timeline its tasks): ws is what the walk counted, aff the
// allowed CPUs of the trace's tasks (nil: as Analyze without one).
func (s *StreamAnalysis) Finish(ws timeline.WalkStats, aff *affinity.Map) *Analysis {
	c := s.c
	c.tl = c.summary
	c.pending = nil
	c.applyFilter()
	opts := s.opts
	opts.Affinity = aff
	return c.finish(s.a, ws, opts)
}

// prepare resolves the window and the topology and starts the collector.
func prepare(tl *timeline.Timeline, opts Options) (*Analysis, *collector, error) {
	win := opts.Window
	if win == (Window{}) {
		win = DefaultWindow(tl)
	}
	a := &Analysis{Window: win}
	topo := opts.Topology
	if topo == nil {
		topo = tl.Topology
	}
	if topo == nil {
		topo = topology.Symmetric(max(tl.NCPU, 1))
		a.Notes = append(a.Notes, fmt.Sprintf("no topology given: %d identical CPUs assumed, one core each, one LLC", topo.NCPU()))
	}
	if topo.NCPU() < tl.NCPU {
		return nil, nil, fmt.Errorf("topology %s has %d CPUs but the trace has %d", topo.Source, topo.NCPU(), tl.NCPU)
	}
	a.Topology = topo
	return a, newCollector(tl, win, topo, opts), nil
}

// finish measures what the walk collected, with the timeline's final
// tasks in c.tl.
func (c *collector) finish(a *Analysis, ws timeline.WalkStats, opts Options) *Analysis {
	tl := c.tl
	c.walk, a.Walk = ws, ws
	cookies, markers, err := tl.Cookies()
	if err != nil {
		a.Notes = append(a.Notes, "core-scheduling cookies not read: "+err.Error())
		cookies, markers = nil, 0
	}
	c.aff = opts.Affinity
	if c.aff == nil || c.aff.Len() != len(tl.Tasks) {
		c.aff, _ = affinity.Build(tl, affinity.BuildOptions{NoInfer: true})
	}
	c.affSrc = make([]affinity.Source, len(tl.Tasks))
	for id := range tl.Tasks {
		c.affSrc[id] = c.aff.Source(timeline.TaskID(id))
	}
	c.assignMasks()
	c.makeRecs()
	c.nameSamples()
	// The latency distributions and the interval sweep read the samples
	// independently (the sweep writes only their records' idleNs, which
	// the distributions do not read): run them side by side.
	//
	// Between the phases a collection frees what the one before left: the
	// heap goal, twice the live heap (the collector's lists, sized for the
	// most the events allow), is never reached after the walk, so without
	// it every phase's arrays came on top of the last's (report --stream
	// on 1.26 GB of text: 742 -> 675 MB peak RSS, some milliseconds each).
	// A small analysis (what-if runs make many) skips them.
	big := len(c.recs)+len(c.waits)+len(c.runs) >= 1<<20
	done := make(chan *Latency, 1)
	go func() { done <- c.latency() }()
	sw := c.sweep(opts.MinWindow)
	a.Idle = c.idle(sw, opts)
	if big {
		runtime.GC()
	}
	a.Idle.OwnQueue = c.ownQueue(opts, cookies, markers)
	if big {
		runtime.GC()
	}
	a.Misplaced = c.misplaced(sw)
	a.Latency = <-done
	if !c.noSamples {
		n := len(c.recs)
		c.fillSamples()
		if n >= 1<<16 {
			// The records are garbage that the caller's next arrays
			// would come on top of (the HTML report on 1.26 GB of text:
			// 928 MiB peak RSS, 780 before the records).
			debug.FreeOSMemory()
		}
	}
	a.strips = func() [][]StripBin { return c.buildStrips(sw.windows, sw.periods) }
	a.UnobservedNs = c.unobserved()
	a.Notes = append(a.Notes, c.aff.Notes...)
	if n := a.Idle.PossiblyPinnedTasks; n > 0 {
		a.Notes = append(a.Notes, fmt.Sprintf("%d tasks ran on a single CPU across many waits while another CPU was idle: they may be pinned (pass --affinity FILE)", n))
	}
	return a
}

// AnalyzeAccount is Analyze and Account over the same window, measured in
// one walk.
func AnalyzeAccount(tl *timeline.Timeline, opts Options) (*Analysis, *Accounting, error) {
	win := opts.Window
	if win == (Window{}) {
		win = DefaultWindow(tl)
	}
	acc := NewAccountant(tl, win)
	opts.Also = append(opts.Also[:len(opts.Also):len(opts.Also)], acc)
	an, err := Analyze(tl, opts)
	if err != nil {
		return nil, nil, err
	}
	return an, acc.Result(an.Walk), nil
}

// streamedShare is how many switches a streamed walk reserves room for, as
// idle spans' ends and as preemptions, before its lists grow.
const streamedShare = 1 << 18

func newCollector(tl *timeline.Timeline, win Window, topo *topology.Topology, opts Options) *collector {
	c := &collector{tl: tl, win: win, topo: topo, maskTab: []cpuMask{nil}, maskIdx: map[string]uint16{},
		streamed: tl.Summary(), filter: opts.Filter, noSamples: opts.NoSamples, wakeups: opts.TaskWakeups}
	if c.streamed {
		c.summary = tl
	}
	c.caps = make([]int, topo.NCPU())
	for i, cpu := range topo.CPUs {
		c.caps[i] = cpu.Capacity
		c.maxCap = max(c.maxCap, cpu.Capacity)
	}
	c.asym = topo.Asymmetric()
	ncpu := topo.NCPU()
	c.qIdle = make([]int64, ncpu)
	c.minWin = max(opts.MinWindow, 0)
	c.ut = newUtilTracker(0, opts.PELT)
	c.grow(tl.Tasks)
	c.names, c.named = make([]string, tl.Strings.Len()), make([]bool, tl.Strings.Len())
	// Size the segment lists from the events: a switch ends at most one
	// run; idle spans end at switches away from idle; waits start at a
	// waking (or wakeup), a wakeup_new or a switch-out in R/R+. A streamed
	// walk has only the counts of each kind: it reserves room for the
	// waits that wakeups start and for streamedShare switches as idle ends
	// and preemptions, and the lists grow past that (reserved for every
	// switch, they cost the zeroing and a GC goal of all of it).
	switches := int(tl.KindCounts[timeline.KindSwitch])
	sw := switches + ncpu
	toIdle, preempt := ncpu+min(switches, streamedShare), min(switches, streamedShare)
	if !c.streamed {
		c.place = indexPlacements(tl)
		toIdle, preempt = ncpu, 0
		for i, k := range tl.Kinds {
			if k != timeline.KindSwitch {
				continue
			}
			if o := tl.Other[i]; o != timeline.NoTask && tl.Tasks[o].Idle {
				toIdle++
			} else if tl.States[i].Runnable() {
				preempt++
			}
		}
	}
	wakes := int(tl.KindCounts[timeline.KindWaking])
	if !tl.HasWaking {
		wakes = int(tl.KindCounts[timeline.KindWakeup])
	}
	nsamples := wakes + int(tl.KindCounts[timeline.KindWakeupNew]) + preempt + len(tl.Tasks)
	if c.streamed {
		nsamples += int(tl.KindCounts[timeline.KindFork]) + ncpu // the tasks to come
	}
	// Runs and waits are decided as the walk goes (prune.go), so their
	// lists hold the undecided and the kept ones, seldom all: sized for
	// every one, they cost their zeroing and a GC goal as large.
	decided := 4 * pruneEvery
	if pruneEvery > 0 && !c.asym {
		sw = min(sw, decided)
	}
	c.runs = make([]runSeg, 0, sw)
	if c.asym {
		c.fit = make([]runFit, 0, sw)
	}
	cores := map[int]bool{}
	for _, cpu := range topo.CPUs {
		if cores[cpu.Core] {
			c.hasSMT = true
		}
		cores[cpu.Core] = true
	}
	c.lastSeg = make([]cpuSeg, ncpu)
	for i := range c.lastSeg {
		c.lastSeg[i].idx = -1
	}
	if pruneEvery > 0 {
		c.prune = newPruner(tl, ncpu, len(c.match))
	}
	c.idles = make([]idleSeg, 0, toIdle)
	nwaits := nsamples + nsamples/8
	if pruneEvery > 0 {
		nwaits = min(nwaits, decided)
	}
	c.waits = make([]waitSeg, 0, nwaits)
	// With NoSamples and Sketch or TaskWakeups the records are folded as
	// the walk decides their waits (fold.go): their list then holds the
	// undecided and the kept ones, as the waits' does.
	if c.noSamples && (opts.Sketch || c.wakeups) {
		c.fold = newFolder(c, nsamples)
		nrecs := nsamples
		if pruneEvery > 0 {
			nrecs = min(nrecs, decided)
		}
		c.recs = make([]sampleRec, 0, nrecs)
	} else if c.noSamples {
		c.recs = make([]sampleRec, 0, nsamples)
	} else {
		c.samples = make([]Sample, 0, nsamples)
	}
	return c
}

// grow makes room for the task instances known (all of a loaded
// Timeline's at once, a streamed walk's as its chunks bring them). A
// loaded walk's tasks are matched against the filter here; a streamed
// walk's all match until applyFilter.
func (c *collector) grow(tasks []timeline.Task) {
	for id := len(c.match); id < len(tasks); id++ {
		m := !tasks[id].Idle
		// A task's pid is known from the start, its names only at the
		// walk's end.
		if m && (!c.streamed || len(c.filter.Comms) == 0) {
			m = c.filter.Match(c.tl, timeline.TaskID(id))
		}
		c.match = append(c.match, m)
		c.lastRun = append(c.lastRun, -1)
		c.ranOn = append(c.ranOn, -1)
		c.peak = append(c.peak, 0)
		c.placeAt = append(c.placeAt, 0)
		c.ut.u = append(c.ut.u, 0)
		c.ut.at = append(c.ut.at, timeline.NoTime)
		if c.prune != nil {
			c.prune.taskRunNs = append(c.prune.taskRunNs, 0)
		}
		if c.streamed {
			c.pending = append(c.pending, nil)
		}
	}
}

// applyFilter drops, at the end of a streamed walk, the samples and waits
// of the tasks the filter does not select, and their peak utilization.
func (c *collector) applyFilter() {
	tl := c.tl
	c.grow(tl.Tasks)
	all := true // every task that can have samples matches
	for id := range tl.Tasks {
		if c.match[id] {
			c.match[id] = c.filter.Match(tl, timeline.TaskID(id))
		}
		if !c.match[id] {
			c.peak[id] = 0
			all = all && tl.Tasks[id].Idle
		}
	}
	if all {
		return
	}
	idx := make([]int32, max(len(c.samples), len(c.recs))) // new index of each sample, -1 dropped
	c.samples = keepMatching(c.samples, func(s *Sample) timeline.TaskID { return s.Task }, c.match, idx)
	c.recs = keepMatching(c.recs, func(r *sampleRec) timeline.TaskID { return r.task }, c.match, idx)
	w := 0
	for i := range c.waits {
		if k := idx[c.waits[i].sample]; k >= 0 {
			c.waits[w] = c.waits[i]
			c.waits[w].sample = k
			w++
		}
	}
	c.waits = c.waits[:w]
}

// nameSamples gives every sample its task's name when the wait started.
// A task's first name holds from its start, so the names wait for the
// walk's end: a streamed walk learns it late.
func (c *collector) nameSamples() {
	for i := range c.recs {
		r := &c.recs[i]
		r.comm = c.tl.CommAt(r.task, r.start)
	}
}

// makeRecs makes the records of the Samples kept during the walk.
func (c *collector) makeRecs() {
	if c.noSamples {
		return
	}
	c.recs = make([]sampleRec, len(c.samples))
	for i := range c.samples {
		c.recs[i] = recOf(&c.samples[i])
	}
}

// fillSamples writes what the analysis found into the Samples (their
// names and IdleCPUNs) and lets go of the records.
func (c *collector) fillSamples() {
	for i := range c.samples {
		s, r := &c.samples[i], &c.recs[i]
		s.CommID, s.IdleCPUNs = r.comm, r.idleNs
		if s.Waker != timeline.NoTask {
			s.WakerCommID = c.tl.CommAt(s.Waker, s.Start)
		}
	}
	c.recs = nil
}

// pidOf returns the pid of task instance id.
func (c *collector) pidOf(id timeline.TaskID) timeline.TID { return c.tl.Tasks[id].PID }

// assignMasks gives every run and wait the allowed CPUs of its task at its
// start, once the affinity map is known.
func (c *collector) assignMasks() {
	for i := range c.runs {
		r := &c.runs[i]
		r.mask = c.maskAt(r.task, r.start)
	}
	for i := range c.waits {
		w := &c.waits[i]
		w.mask = c.maskAt(w.task, w.start)
	}
}

// unobserved returns per CPU the window time covered by neither a run nor
// an idle segment.
func (c *collector) unobserved() []int64 {
	span := int64(c.win.End - c.win.Start)
	out := make([]int64, c.topo.NCPU())
	for i := range out {
		out[i] = span
	}
	for i := range c.runs {
		if r := &c.runs[i]; int(r.cpu) < len(out) {
			out[r.cpu] -= int64(r.end - r.start)
		}
	}
	if c.prune != nil {
		for cpu, d := range c.prune.cpuRunNs {
			out[cpu] -= d
		}
	}
	for i := range c.idles {
		if s := &c.idles[i]; int(s.cpu) < len(out) {
			out[s.cpu] -= int64(s.end - s.start)
		}
	}
	for i := range out {
		out[i] = max(out[i], 0)
	}
	return out
}

// maskAt returns the maskTab index of task id's allowed CPUs at t.
func (c *collector) maskAt(id timeline.TaskID, t timeline.Time) uint16 {
	cpus, _ := c.aff.At(id, t)
	if cpus.Empty() {
		return 0
	}
	key := cpus.String()
	if k, ok := c.maskIdx[key]; ok {
		return k
	}
	if len(c.maskTab) > math.MaxUint16 {
		return 0 // more distinct sets than a segment can name: taken as free
	}
	m := newMask(c.topo.NCPU())
	for _, x := range cpus.CPUs() {
		m.set(x)
	}
	k := uint16(len(c.maskTab))
	c.maskTab = append(c.maskTab, m)
	c.maskIdx[key] = k
	return k
}

// abut records a new segment of cpu starting at st; when the CPU's previous
// segment ends exactly there, that segment's end is implied by this start
// and the sweep needs no event for it.
func (c *collector) abut(cpu timeline.CPU, st timeline.Time, idx int32, idle bool, end timeline.Time) {
	l := &c.lastSeg[cpu]
	if l.idx >= 0 && l.end == st {
		if l.idle {
			c.idles[l.idx].flags |= segAbut
		} else {
			c.runs[l.idx].flags |= segAbut
		}
	}
	*l = cpuSeg{end: end, idx: idx, idle: idle}
}

// name resolves a comm id through a cache (Strings.Get takes a lock).
func (c *collector) name(id timeline.CommID) string {
	if int(id) >= len(c.names) {
		return c.tl.Strings.Get(id)
	}
	if !c.named[id] {
		c.names[id], c.named[id] = c.tl.Strings.Get(id), true
	}
	return c.names[id]
}

// clip returns [s,e] clipped to the window and the segment flags.
func (c *collector) clip(s, e timeline.Time, open bool) (timeline.Time, timeline.Time, uint8) {
	var f uint8
	if s < c.win.Start {
		s, f = c.win.Start, f|segClipStart
	}
	if e > c.win.End {
		e, f = c.win.End, f|segClipEnd
	}
	if open {
		f |= segOpen
	}
	return s, e, f
}

func (c *collector) capOf(cpu timeline.CPU) int {
	if cpu >= 0 && int(cpu) < len(c.caps) {
		return c.caps[cpu]
	}
	return capacityScale
}
