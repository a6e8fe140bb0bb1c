package replay

import "github.com/schedlens/schedlens/timeline"

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
	evKill                    // a: task (Task.KillAt)
)

// event is one entry of the simulation queue; a, b, gen and arg mean what
// its kind says.
type event struct {
	at   timeline.Time
	seq  uint64
	kind uint8
	gen  uint32
	a, b int32
	arg  int64
}

// eventQueue is a binary min-heap of events ordered by (at, seq): events
// at the same time run in the order they were pushed.
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

// push queues e after every event already queued for the same time.
func (s *Sim) push(e event) {
	s.seq++
	e.seq = s.seq
	s.q.push(e)
}
