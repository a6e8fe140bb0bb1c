package parse

import "github.com/schedlens/schedlens/timeline"

// LostCPUs is the per-CPU bookkeeping of a reader whose format reports
// lost events as records of their own (perf script's LOST lines, perf.data's
// LOST and LOST_SAMPLES): each CPU's last record time, and a loss not yet
// handed out, which becomes a KindLost event before that CPU's next event
// (Take) or at the end of the input (Flush). The zero value is ready.
type LostCPUs struct {
	cpus  []lostCPU
	last  timeline.Time // latest record time over every CPU (valid when init)
	flush int
	init  bool
}

type lostCPU struct {
	last timeline.Time // time of the CPU's last record, NoTime if none
	n    int64         // pending lost count (-1 if unknown)
	from timeline.Time // the CPU's last record time when the loss was read
	at   timeline.Time // time the lost record carries
	has  bool
}

func (l *LostCPUs) grow(cpu int) {
	if !l.init {
		l.last, l.init = timeline.NoTime, true
	}
	for len(l.cpus) <= cpu {
		l.cpus = append(l.cpus, lostCPU{last: timeline.NoTime, from: timeline.NoTime})
	}
}

// Last returns the latest record time over every CPU, NoTime if none.
func (l *LostCPUs) Last() timeline.Time {
	if !l.init {
		return timeline.NoTime
	}
	return l.last
}

// LastOf returns the time of cpu's last record, NoTime if none.
func (l *LostCPUs) LastOf(cpu int) timeline.Time {
	if cpu < 0 || cpu >= len(l.cpus) {
		return timeline.NoTime
	}
	return l.cpus[cpu].last
}

// See records a record of cpu at t.
func (l *LostCPUs) See(cpu int, t timeline.Time) {
	l.grow(cpu)
	l.cpus[cpu].last = t
	if l.last == timeline.NoTime || t > l.last {
		l.last = t
	}
}

// Add records n events lost on cpu (n < 0: an unknown number) by a record
// at time at. Losses before the CPU's next event add up.
func (l *LostCPUs) Add(cpu int, n int64, at timeline.Time) {
	l.grow(cpu)
	c := &l.cpus[cpu]
	switch {
	case !c.has:
		c.has, c.n, c.from, c.at = true, n, c.last, at
	case c.n >= 0 && n >= 0:
		c.n += n
	default:
		c.n = -1
	}
}

// Take returns the loss pending on cpu, if any, as a KindLost event at t
// (the time of the event it precedes) into ev, and clears it.
func (l *LostCPUs) Take(cpu int, t timeline.Time, ev *timeline.Event) bool {
	if cpu < 0 || cpu >= len(l.cpus) || !l.cpus[cpu].has {
		return false
	}
	c := &l.cpus[cpu]
	c.has = false
	ev.Reset()
	ev.Kind, ev.CPU, ev.Time, ev.Start, ev.Arg = timeline.KindLost, timeline.CPU(cpu), t, c.from, c.n
	return true
}

// Flush hands out the losses still pending at the end of the input, one
// per call, as KindLost events at the CPU's last record (else the input's,
// else the lost record's time); false when none is left.
func (l *LostCPUs) Flush(ev *timeline.Event) bool {
	for ; l.flush < len(l.cpus); l.flush++ {
		c := &l.cpus[l.flush]
		if !c.has {
			continue
		}
		c.has = false
		t := c.last
		if t == timeline.NoTime {
			t = l.last
		}
		if t == timeline.NoTime {
			t = c.at
		}
		ev.Reset()
		ev.Kind, ev.CPU, ev.Time, ev.Start, ev.Arg = timeline.KindLost, timeline.CPU(l.flush), t, t, c.n
		l.flush++
		return true
	}
	return false
}
