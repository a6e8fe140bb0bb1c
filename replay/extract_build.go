package replay

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/internal/blocks"
	"github.com/schedlens/schedlens/timeline"
)

// The end of extraction: the workload built from what the walk gathered,
// with its allowed CPUs and its assumptions.

func (x *extractor) build() (*Workload, error) {
	tl := x.tl
	w := &Workload{Start: x.start, End: max(tl.End, x.start+1), WakeAfterBlock: true, Unobserved: append([]timeline.Gap(nil), tl.Gaps...)}
	index := make([]int, len(x.xs))
	for id := range x.xs {
		index[id] = -1
		if x.xs[id].segs.Len() > 0 {
			index[id] = len(w.Tasks)
			w.Tasks = append(w.Tasks, Task{})
		}
	}
	var nRun, nExt, nIRQ, nPrio, nTimer, nIPC, nKilled int
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
		if tk.End == EndExit && xt.state == xDead && xt.sigAt != timeline.NoTime {
			tk.KillAt = xt.sigAt
			nKilled++
			tk.Flags = append(tk.Flags, AssumeKilledAt)
		}
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
		tk.Segments = make([]Segment, 0, xt.segs.Len())
		for _, sg := range xt.segs.All() {
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
					wk.Waker = int32(wi)
					wk.Work = sg.wake.work >> unitShift
					if wk.Kind == WakeTask && sg.wake.cost > 0 {
						wk.Cost, wk.CostIPI = sg.wake.cost, sg.wake.ipi
						if wk.CostIPI {
							x.costIPI = append(x.costIPI, wk.Cost)
						} else {
							x.costPlain = append(x.costPlain, wk.Cost)
						}
					}
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
		// Its segments are the workload's now: the collector can take
		// the extractor's as the next tasks' are made.
		xt.segs = blocks.List[xseg]{}
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
				if int(wk.Waker) == k {
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
		cookieAssumption(0, 0, 0),
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
		TaskPreemptNs: median(x.taskPreempt), TaskPreempt: len(x.taskPreempt), TaskPreemptQ: delayDist(x.taskPreempt),
		BusyIPINs: median(x.busyRemote), BusyIPI: len(x.busyRemote), BusyIPIQ: delayDist(x.busyRemote)}
	w.WakeCosts = WakeCosts{PlainNs: median(x.costPlain), Plain: len(x.costPlain), PlainQ: delayDist(x.costPlain),
		IPINs: median(x.costIPI), IPI: len(x.costIPI), IPIQ: delayDist(x.costIPI)}
	w.Assumptions = append(w.Assumptions, Assumption{Name: AssumeWakeCost, Detail: w.WakeCosts.text()})
	w.Assumptions = append(w.Assumptions, Assumption{Name: AssumeWakeDelays, Detail: "leaving idle, the wakeup IPI and an interrupt's preemption cost what the recording shows, each delay drawn from its recorded wake-to-run times (20 quantiles) when there are enough: " +
		delaysText(w.WakeDelays, x.idleLocal, x.idleRemote, x.irqBusy, x.taskPreempt, x.busyRemote)})
	w.TickRuns = TickRuns{N: len(x.tickRuns), MedianNs: median(x.tickRuns)}
	_, why := w.TickHZ()
	w.Assumptions = append(w.Assumptions, Assumption{Name: AssumeTick, Detail: why})
	if x.nWaitingAtEnd > 0 {
		w.Assumptions = append(w.Assumptions, Assumption{Name: AssumeWaitingAtEnd, Detail: "tasks waiting when the recording ended (woken and not yet run, or preempted and waiting longer than ever before in the recording) demand what they ran and no more", Tasks: x.nWaitingAtEnd})
	}
	if nKilled > 0 {
		w.Assumptions = append(w.Assumptions, Assumption{Name: AssumeKilledAt, Detail: "tasks a signal ended (delivered while they ran or waited to run, and they exited without blocking) end at the signal's recorded time, not when their recorded work is done: a timer's kill (timeout) comes at its time whatever the schedule; a kill that followed its sender's work would come earlier or later in the model", Tasks: nKilled})
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
