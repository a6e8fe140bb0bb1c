package replay

// fifoPolicy is a minimal Policy for engine tests: one FIFO queue per CPU,
// no preemption except a round-robin slice, wakeups stay on their previous
// CPU unless an idle allowed CPU exists. It is deliberately simple so that
// schedules can be computed by hand.
type fifoPolicy struct {
	s     *Sim
	q     [][]int // per CPU, queued tasks (running one excluded)
	curr  []int
	slice int64 // 0: run to block
	start []int64
	// counters for assertions
	ticks int
}

func newFIFO(slice int64) *fifoPolicy { return &fifoPolicy{slice: slice} }

func (p *fifoPolicy) Name() string { return "test-fifo" }

func (p *fifoPolicy) Attach(s *Sim) error {
	p.s = s
	p.q = make([][]int, s.NCPU())
	p.curr = make([]int, s.NCPU())
	p.start = make([]int64, s.NCPU())
	for i := range p.curr {
		p.curr[i] = -1
	}
	return nil
}

func (p *fifoPolicy) SelectCPU(t, from, waker int, flags WakeFlags) int {
	prev := p.s.TaskCPU(t)
	if p.s.Allowed(t, prev) && p.NrRunning(prev) == 0 && p.s.CPUState(prev) == CPUIdle {
		return prev
	}
	for c := 0; c < p.s.NCPU(); c++ {
		if p.s.Allowed(t, c) && p.NrRunning(c) == 0 && p.s.CPUState(c) == CPUIdle {
			return c
		}
	}
	if p.s.Allowed(t, prev) {
		return prev
	}
	for c := 0; c < p.s.NCPU(); c++ {
		if p.s.Allowed(t, c) {
			return c
		}
	}
	return prev
}

func (p *fifoPolicy) Enqueue(cpu, t int, flags EnqueueFlags) { p.q[cpu] = append(p.q[cpu], t) }

func (p *fifoPolicy) Dequeue(cpu, t int, flags DequeueFlags) {
	if p.curr[cpu] == t {
		p.curr[cpu] = -1
		return
	}
	for i, x := range p.q[cpu] {
		if x == t {
			p.q[cpu] = append(p.q[cpu][:i], p.q[cpu][i+1:]...)
			return
		}
	}
}

func (p *fifoPolicy) Requeue(t int) (int, bool) { return 0, false }

func (p *fifoPolicy) WakeupPreempt(cpu, t int) bool { return false }

func (p *fifoPolicy) Pick(cpu, prev int, prevQueued bool) Pick {
	if prev >= 0 && prevQueued {
		p.q[cpu] = append(p.q[cpu], prev)
	}
	p.curr[cpu] = -1
	if len(p.q[cpu]) == 0 {
		return Pick{Task: -1}
	}
	t := p.q[cpu][0]
	p.q[cpu] = p.q[cpu][1:]
	p.curr[cpu] = t
	p.start[cpu] = int64(p.s.Now())
	return Pick{Task: t}
}

func (p *fifoPolicy) PutPrev(cpu, prev int) {
	p.q[cpu] = append(p.q[cpu], prev)
	p.curr[cpu] = -1
}

func (p *fifoPolicy) Tick(cpu int) {
	p.ticks++
	if p.slice > 0 && len(p.q[cpu]) > 0 && int64(p.s.Now())-p.start[cpu] >= p.slice {
		p.s.Resched(cpu)
	}
}

func (p *fifoPolicy) Timer(cpu, kind int, arg int64) {}

func (p *fifoPolicy) Stop(cpu, kind int, arg int64) {}

func (p *fifoPolicy) NrRunning(cpu int) int {
	n := len(p.q[cpu])
	if p.curr[cpu] >= 0 {
		n++
	}
	return n
}
