package replay

import "github.com/schedlens/schedlens/timeline"

// MaxOrderWait bounds how long a waker waits for its wakee's block under
// WakeOrdered; past it the wake is issued as without the rule.
const MaxOrderWait = 10_000_000 // ns

// wakeAny is wakeSeg under WakeAny for a task wake of task t: it ends t's
// next sleep that a task wake ended in the recording if t sleeps there
// now, and is counted for that sleep otherwise.
func (s *Sim) wakeAny(t, cpu, waker int, sync bool) {
	tr := &s.tasks[t]
	segs := s.w.Tasks[t].Segments
	if next := int(tr.seg) + 1; tr.state == TaskBlocked && next < len(segs) && segs[next].Wake.Kind == WakeTask {
		s.wake(t, next, cpu, waker, sync, false)
		return
	}
	if tr.state != TaskDone {
		tr.pending++
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

// unstall resumes stalled waker w on cpu, woken by waker (-1: the
// timeout); the wake it stalled on fires when it runs.
func (s *Sim) unstall(w, cpu, waker int) {
	wr := &s.tasks[w]
	wr.stalled = false
	s.ctx = cpu
	s.wake(w, int(wr.seg), cpu, waker, false, false)
}
