package record

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/schedlens/schedlens/timeline"
)

// Options configure a recording.
type Options struct {
	// CPUs limits recording to these CPUs (events that happen on them);
	// nil records every CPU. CPU numbers must be below 1024.
	CPUs []int
	// Transport picks the kernel-to-user buffer; TransportAuto by default.
	Transport Transport
	// NoAttrs leaves out the tasks' allowed CPUs and task groups (for
	// measuring what capturing them costs).
	NoAttrs bool
	// maskWords, when positive, is how many words of a task's CPU mask the
	// BPF side reads instead of the possible CPUs' (tests use it to take
	// the multi-word path on small machines).
	maskWords int
	// BufferBytes is the size of each CPU's buffer (ring buffers are
	// rounded up to a power of two); 0 picks DefaultBufferBytes.
	BufferBytes int
	// Strings interns comms; Open creates one when nil.
	Strings *timeline.Strings
	// Progress, when set, is called from Run about every ProgressEvery.
	Progress func(Progress)
	// ProgressEvery defaults to 500 ms.
	ProgressEvery time.Duration
}

// Progress is a snapshot of a running recording.
type Progress struct {
	Elapsed time.Duration // since Run started reading
	Events  int64         // records read so far
	Rate    float64       // records per second over the last interval
	Lost    int64         // records dropped so far, all CPUs
}

// Stats describe a finished recording.
type Stats struct {
	Transport Transport
	Context   bool          // events carry the execution context (task/softirq/hardirq/nmi)
	Start     timeline.Time // first event, CLOCK_MONOTONIC ns; NoTime if none
	End       timeline.Time // last event
	Elapsed   time.Duration // wall time of the recording
	Events    int64         // events written (KindLost excluded)
	Tasks     int64         // tasks declared: the /proc walk plus those seen later
	Lost      []int64       // per CPU: records dropped because the buffer was full
	// KernelLost counts records the perf buffers themselves reported lost;
	// they are among Lost already.
	KernelLost uint64
	// Reordered counts events that reached user space after a later event
	// of their CPU had been written; their time was raised to keep each
	// CPU's events in order. Expected to be 0.
	Reordered int64
	// BadRecords counts records that could not be decoded (never expected).
	BadRecords int64
	// Affinity and Groups count the affinity and task-group changes
	// written (each task's first sight included).
	Affinity, Groups int64
	// AffinityHook reports that affinity changes were stamped when the
	// kernel made them (fexit on set_cpus_allowed_common); without it a
	// change is seen at the task's next wakeup, migration or switch-in.
	AffinityHook bool
	// CPUTime is the processor time (user + system) this process spent
	// while recording: reading, decoding and writing the trace.
	CPUTime time.Duration
	// BPFTime is the time the kernel spent in the BPF programs, when the
	// kernel keeps BPF statistics (sysctl kernel.bpf_stats_enabled=1);
	// else 0.
	BPFTime time.Duration
}

// TotalLost returns the sum of Lost.
func (s *Stats) TotalLost() int64 {
	var n int64
	for _, l := range s.Lost {
		n += l
	}
	return n
}

// Timing of the read loop.
const (
	// pollInterval is how often the kernel buffers are read: the BPF side
	// never wakes the reader, which saves a wakeup per burst of records.
	pollInterval = 50 * time.Millisecond
	// reorderWindow is how long a record is held back so that records of
	// the same CPU that reach the buffer late (nested tracepoints) can be
	// put before it.
	reorderWindow = 20 * time.Millisecond
)

// Recorder is a loaded and attached capture: from Open on, the kernel
// queues scheduler events until Run reads them.
type Recorder struct {
	opts   Options
	sys    System
	strs   *timeline.Strings
	probe  *probe
	src    source
	ran    bool
	closed bool
}

// Open checks the machine (see Check), reads the system description, then
// loads and attaches the BPF programs. The caller must Close the Recorder.
func Open(opts Options) (*Recorder, error) {
	if err := Check(); err != nil {
		return nil, err
	}
	ncpu, err := ebpfNCPU()
	if err != nil {
		return nil, err
	}
	sys, err := readSystem("/sys", ncpu)
	if err != nil {
		return nil, err
	}
	if opts.Strings == nil {
		opts.Strings = timeline.NewStrings()
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 500 * time.Millisecond
	}
	p, err := loadProbe(&opts, ncpu)
	if err != nil && opts.Transport == TransportAuto {
		// A kernel with ring buffers may still refuse them as inner maps
		// of the per-CPU array: perf buffers work wherever tp_btf does.
		perfOpts := opts
		perfOpts.Transport = TransportPerf
		if p2, err2 := loadProbe(&perfOpts, ncpu); err2 == nil {
			p, err = p2, nil
		}
	}
	if err != nil {
		return nil, err
	}
	r := &Recorder{opts: opts, sys: sys, strs: opts.Strings, probe: p}
	switch p.transport {
	case TransportRingBuf:
		r.src, err = newRingSource(p)
	default:
		r.src, err = newPerfSource(p)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	if err := p.attach(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// System returns the machine description to put in the trace.
func (r *Recorder) System() System { return r.sys }

// Strings returns the interner of the events' comms.
func (r *Recorder) Strings() *timeline.Strings { return r.strs }

// Transport returns the buffer in use.
func (r *Recorder) Transport() Transport { return r.probe.transport }

// Run streams the recording into sink until ctx is done:
//
//  1. declare every task found under /proc (the process tree at start);
//  2. call ready, if set (a command to trace is started there);
//  3. read the kernel buffer every pollInterval, writing events older
//     than the reorder window in time order, until ctx is done;
//  4. detach the programs, read what is left, and write the per-CPU loss
//     that no later event carried.
//
// Run returns the sink's or the buffer's first error; a cancelled ctx is
// the normal end, not an error. Run can be called once.
func (r *Recorder) Run(ctx context.Context, sink Sink, ready func() error) (Stats, error) {
	st := Stats{Transport: r.probe.transport, Context: r.probe.ctxMode != ctxModeNone, AffinityHook: r.probe.setCPUs,
		Start: timeline.NoTime, End: timeline.NoTime}
	if r.ran || r.closed {
		return st, errors.New("record: Run called twice")
	}
	r.ran = true
	s := newStream(sink, r.strs, r.sys.NCPU)
	s.groups = newCgroupFS("/proc")
	err := walkProc("/proc", func(t procTask) error { return s.declareInitial(t.pid, t.tgid, t.comm) })
	if err != nil {
		return st, fmt.Errorf("reading the process list: %w", err)
	}
	if ready != nil {
		if err := ready(); err != nil {
			return st, err
		}
	}

	cc := newCommCache(r.strs)
	var (
		d       decoded
		read    int64
		bad     int64
		lastErr error
	)
	push := func(b []byte) {
		if err := decodeRecord(b, cc, &d); err != nil {
			bad++
			lastErr = err
			return
		}
		read++
		if st.Start == timeline.NoTime || d.ev.Time < st.Start {
			st.Start = d.ev.Time
		}
		st.End = max(st.End, d.ev.Time)
		s.push(&d)
	}
	began := time.Now()
	cpu0 := cpuTime()
	lastProg, lastRead := began, int64(0)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		before := monoNow()
		emptied, err := r.src.drain(time.Now().Add(pollInterval), push)
		if err != nil {
			return st, err
		}
		if err := s.release(s.horizon(before, emptied)); err != nil {
			return st, err
		}
		if now := time.Now(); r.opts.Progress != nil && now.Sub(lastProg) >= r.opts.ProgressEvery {
			p := Progress{Elapsed: now.Sub(began), Events: read, Rate: float64(read-lastRead) / now.Sub(lastProg).Seconds()}
			for c := range s.lastLost {
				p.Lost += int64(s.lastLost[c])
			}
			r.opts.Progress(p)
			lastProg, lastRead = now, read
		}
		if emptied {
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		} // else behind: read on at once
		if ctx.Err() != nil {
			break
		}
	}
	st.Elapsed = time.Since(began)

	st.BPFTime = r.probe.runTime()
	if err := r.probe.detach(); err != nil {
		return st, fmt.Errorf("detaching: %w", err)
	}
	for {
		// With the programs detached nothing new arrives: read to the end.
		emptied, err := r.src.drain(time.Now().Add(pollInterval), push)
		if err != nil {
			return st, err
		}
		if emptied {
			break
		}
	}
	final, err := r.probe.dropped()
	if err != nil {
		return st, err
	}
	if err := s.finish(final); err != nil {
		return st, err
	}
	st.Events, st.Tasks, st.Reordered = s.events, s.tasks, s.reordered
	st.Affinity, st.Groups = s.affinity, s.groupsN
	st.CPUTime = cpuTime() - cpu0
	st.Lost = append([]int64(nil), s.lost...)
	st.KernelLost = r.src.kernelLost()
	st.BadRecords = bad
	if bad > 0 && read == 0 {
		return st, fmt.Errorf("no record could be decoded: %w", lastErr)
	}
	return st, nil
}

// Close detaches the programs and releases the buffers.
func (r *Recorder) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.src.close()
	return errors.Join(err, r.probe.Close())
}

// cpuTime returns the processor time this process used so far (not
// counting waited-for children such as a traced command).
func cpuTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// monoNow returns CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns.
func monoNow() timeline.Time {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return timeline.Time(time.Now().UnixNano()) // cannot happen on Linux
	}
	return timeline.Time(ts.Nano())
}
