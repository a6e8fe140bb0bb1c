package record

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// compareEnv names the capture-ftrace.sh script that enables
// TestCompareFtrace (shared/tools/capture-ftrace.sh in the project).
const compareEnv = "SCHEDLENS_COMPARE_FTRACE"

// switchRec is one sched_switch of a capture.
type switchRec struct {
	t          timeline.Time
	prev, next timeline.TID
}

// wakeRec is one sched_waking of a capture.
type wakeRec struct {
	t   timeline.Time
	ctx timeline.Context
}

type wakeKey struct {
	cpu         timeline.CPU
	task, waker timeline.TID
}

// capture is the switches of one trace, per CPU in time order, with the
// comm of each task, and its wakings.
type capture struct {
	cpus        map[timeline.CPU][]switchRec
	wakings     map[wakeKey][]wakeRec
	comms       map[timeline.TID]string
	tgids       map[timeline.TID]int32 // from the trace's process tree
	first, last timeline.Time
	lost        int64
}

func readSwitches(t *testing.T, path string) *capture {
	t.Helper()
	s, err := ingest.Open(path, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := &capture{cpus: map[timeline.CPU][]switchRec{}, wakings: map[wakeKey][]wakeRec{}, comms: map[timeline.TID]string{}, first: timeline.NoTime, last: timeline.NoTime}
	var ev timeline.Event
	for {
		err := s.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if ev.Kind == timeline.KindLost {
			c.lost += max(ev.Arg, 1)
			continue
		}
		if c.first == timeline.NoTime || ev.Time < c.first {
			c.first = ev.Time
		}
		c.last = max(c.last, ev.Time)
		if ev.Kind == timeline.KindWaking {
			k := wakeKey{ev.CPU, ev.Task, ev.Other}
			c.wakings[k] = append(c.wakings[k], wakeRec{ev.Time, ev.Ctx})
		}
		if ev.Kind == timeline.KindSwitch {
			c.cpus[ev.CPU] = append(c.cpus[ev.CPU], switchRec{ev.Time, ev.Other, ev.Task})
			c.comms[ev.Task] = s.Strings().Get(ev.Comm)
		}
	}
	for cpu := range c.cpus {
		slices.SortStableFunc(c.cpus[cpu], func(a, b switchRec) int { return cmp.Compare(a.t, b.t) })
	}
	c.tgids = map[timeline.TID]int32{}
	for tid, ti := range s.Meta().Tasks {
		c.tgids[tid] = ti.TGID
	}
	return c
}

// interval is one stretch of a task on a CPU: between a switch that puts
// it there and the next switch on that CPU, which takes it off.
type interval struct {
	cpu        timeline.CPU
	tid        timeline.TID
	start, end timeline.Time
}

// taskRun is what the comparison measures per task.
type taskRun struct {
	switches  int64         // switch-outs inside the window
	run       time.Duration // sum of the task's intervals inside the window
	intervals int64         // how many intervals run sums
}

// measure returns, per task, switch-outs and run time over [from, to], and
// the intervals. An interval counts only when both its switches are in the
// window and agree (the first one's next is the second one's prev): where a
// capture dropped a switch, the stretch around it is unknown.
func (c *capture) measure(from, to timeline.Time) (map[timeline.TID]*taskRun, []interval) {
	tasks := map[timeline.TID]*taskRun{}
	get := func(tid timeline.TID) *taskRun {
		tr := tasks[tid]
		if tr == nil {
			tr = &taskRun{}
			tasks[tid] = tr
		}
		return tr
	}
	var ivs []interval
	for cpu, sws := range c.cpus {
		for i, s := range sws {
			if s.t < from || s.t > to {
				continue
			}
			if s.prev != 0 {
				get(s.prev).switches++
			}
			if i > 0 && sws[i-1].t >= from && sws[i-1].next == s.prev && s.prev != 0 {
				get(s.prev).run += s.t.Sub(sws[i-1].t)
				get(s.prev).intervals++
				ivs = append(ivs, interval{cpu, s.prev, sws[i-1].t, s.t})
			}
		}
	}
	return tasks, ivs
}

// matchIntervals pairs the intervals of two captures that cover the same
// stretch (same CPU and task, both ends within tol), and returns, per task,
// the run time each capture gives the paired stretches, plus the number of
// intervals each capture has that the other lacks.
func matchIntervals(a, b []interval, tol timeline.Time) (ra, rb map[timeline.TID]time.Duration, onlyA, onlyB int) {
	type key struct {
		cpu timeline.CPU
		tid timeline.TID
	}
	idx := map[key][]interval{}
	for _, iv := range b {
		k := key{iv.cpu, iv.tid}
		idx[k] = append(idx[k], iv)
	}
	for k := range idx {
		slices.SortFunc(idx[k], func(x, y interval) int { return cmp.Compare(x.start, y.start) })
	}
	used := map[key][]bool{}
	ra, rb = map[timeline.TID]time.Duration{}, map[timeline.TID]time.Duration{}
	matched := 0
	for _, iv := range a {
		k := key{iv.cpu, iv.tid}
		list := idx[k]
		if used[k] == nil {
			used[k] = make([]bool, len(list))
		}
		j, _ := slices.BinarySearchFunc(list, iv.start-tol, func(x interval, t timeline.Time) int { return cmp.Compare(x.start, t) })
		found := false
		for ; j < len(list) && list[j].start <= iv.start+tol; j++ {
			o := list[j]
			if used[k][j] || o.end < iv.end-tol || o.end > iv.end+tol {
				continue
			}
			used[k][j] = true
			ra[iv.tid] += iv.end.Sub(iv.start)
			rb[iv.tid] += o.end.Sub(o.start)
			found = true
			matched++
			break
		}
		if !found {
			onlyA++
		}
	}
	return ra, rb, onlyA, len(b) - matched
}

// contextAgreement pairs each waking of a with the nearest waking of b by
// the same waker of the same task on the same CPU (within tol) and counts
// how many pairs name the same execution context.
func contextAgreement(a, b *capture, tol timeline.Time) (same, paired int, diffs map[string]int) {
	diffs = map[string]int{}
	for k, ws := range a.wakings {
		other := b.wakings[k]
		for _, w := range ws {
			best, bestD := -1, tol+1
			for j, o := range other {
				if d := max(o.t-w.t, w.t-o.t); d < bestD {
					best, bestD = j, d
				}
			}
			if best < 0 {
				continue
			}
			paired++
			if other[best].ctx == w.ctx {
				same++
			} else {
				diffs[w.ctx.String()+"/"+other[best].ctx.String()]++
			}
		}
	}
	return same, paired, diffs
}

// discontinuities counts switches whose prev is not the previous switch's
// next on that CPU: switches the capture dropped, by the task left behind.
func (c *capture) discontinuities() map[string]int {
	out := map[string]int{}
	for _, sws := range c.cpus {
		for i := 1; i < len(sws); i++ {
			if sws[i-1].next != sws[i].prev {
				who := c.comms[sws[i-1].next]
				if sws[i-1].next == 0 {
					who = "idle"
				}
				out[who]++
			}
		}
	}
	return out
}

// TestCompareFtrace records hackbench with raw ftrace (a tracefs instance,
// CLOCK=mono, through capture-ftrace.sh) and with eBPF at the same time,
// and checks that per-task run time and switch counts agree within 2% for
// tasks with at least 100 switches. Opt in with
//
//	SCHEDLENS_COMPARE_FTRACE=/path/to/capture-ftrace.sh go test -run CompareFtrace -v ./record
//
// SCHEDLENS_COMPARE_WORKLOAD overrides the workload (default
// "hackbench -g 4 -l 400"); SCHEDLENS_COMPARE_ORDER=ftrace-first attaches
// the eBPF programs after ftrace's instead of before; SCHEDLENS_COMPARE_DIR
// keeps both captures there.
func TestCompareFtrace(t *testing.T) {
	script := os.Getenv(compareEnv)
	if script == "" {
		t.Skipf("set %s to the path of capture-ftrace.sh to compare with raw ftrace", compareEnv)
	}
	needRecord(t, "hackbench")
	workload := strings.Fields(os.Getenv("SCHEDLENS_COMPARE_WORKLOAD"))
	if len(workload) == 0 {
		workload = []string{"hackbench", "-g", "4", "-l", "400"}
	}
	dir := os.Getenv("SCHEDLENS_COMPARE_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	pf := filepath.Join(dir, "ebpf.pftrace")
	ftDir := filepath.Join(dir, "ftrace")
	ftraceFirst := os.Getenv("SCHEDLENS_COMPARE_ORDER") == "ftrace-first"

	// The workload waits for a file, so that both captures run before it
	// starts, in the chosen order.
	goFile := filepath.Join(dir, "go")
	args := append([]string{script, ftDir, "--", "bash", "-c", `while [ ! -e "$0" ]; do sleep 0.005; done; exec "$@"`, goFile}, workload...)
	cmd := exec.Command("bash", args...)
	cmd.Env = append(os.Environ(), "CLOCK=mono")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out

	// Tracepoint probes run in the order they were registered, and the
	// second capture's timestamps include the first one's probe time.
	var r *Recorder
	var err error
	if !ftraceFirst {
		if r, err = Open(Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if ftraceFirst {
		on := fmt.Sprintf("/sys/kernel/tracing/instances/capture%d/tracing_on", cmd.Process.Pid)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if b, _ := os.ReadFile(on); strings.TrimSpace(string(b)) == "1" {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("ftrace instance never came on (%s)", on)
			}
		}
		if r, err = Open(Options{}); err != nil {
			cmd.Process.Kill()
			t.Fatal(err)
		}
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		st  Stats
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := r.WriteFile(ctx, pf, nil, FileOptions{}, func() error { return os.WriteFile(goFile, nil, 0o644) })
		done <- result{st, err}
	}()
	err = cmd.Wait()
	cancel()
	res := <-done
	if err != nil {
		t.Fatalf("capture-ftrace.sh: %v\n%s", err, out.String())
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	order := "eBPF probes before ftrace's"
	if ftraceFirst {
		order = "ftrace's probes before eBPF's"
	}
	t.Logf("%s; eBPF: %d events, lost %v; ftrace: %s", order, res.st.Events, res.st.Lost, strings.TrimSpace(out.String()))

	ftc := readSwitches(t, filepath.Join(ftDir, "trace.txt"))
	bpc := readSwitches(t, pf)
	from, to := max(ftc.first, bpc.first), min(ftc.last, bpc.last)
	t.Logf("window %s..%s s (%.3f s), lost: ftrace %d, eBPF %d", from.Seconds(), to.Seconds(), to.Sub(from).Seconds(), ftc.lost, bpc.lost)
	t.Logf("switches that do not follow the previous one on their CPU (dropped by the capture), by the task left running: ftrace %v, eBPF %v",
		ftc.discontinuities(), bpc.discontinuities())
	same, paired, diffs := contextAgreement(bpc, ftc, 100*timeline.Time(time.Microsecond))
	t.Logf("sched_waking execution context (task/softirq/hardirq) agrees on %d of %d wakings seen by both (eBPF/ftrace differences: %v)", same, paired, diffs)
	if paired == 0 || float64(same) < 0.99*float64(paired) {
		t.Errorf("execution context agrees on %d of %d wakings, want 99%%", same, paired)
	}
	ft, ftIv := ftc.measure(from, to)
	bp, bpIv := bpc.measure(from, to)
	bpRun, ftRun, onlyBP, onlyFT := matchIntervals(bpIv, ftIv, 2*timeline.Time(time.Millisecond))
	t.Logf("on-CPU intervals: ftrace %d, eBPF %d; only in eBPF %d, only in ftrace %d", len(ftIv), len(bpIv), onlyBP, onlyFT)

	// Compared: tasks with 100 switches, except this process's own threads
	// (the recorder: what it does depends on being measured). Run time
	// may differ by 2% or by 1 us per interval, the resolution of ftrace's
	// text timestamps, whichever is more.
	var pids []timeline.TID
	var self []string
	for pid, f := range ft {
		if f.switches < 100 {
			continue
		}
		if bpc.tgids[pid] == int32(os.Getpid()) {
			self = append(self, fmt.Sprint(pid))
			continue
		}
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	if len(pids) == 0 {
		t.Fatalf("no task with 100 switches in the ftrace capture")
	}
	var worst [3]float64
	var sum [3]float64
	bad := 0
	for _, pid := range pids {
		f, b := ft[pid], bp[pid]
		if b == nil {
			b = &taskRun{}
		}
		d := [3]float64{
			rel(float64(b.switches), float64(f.switches)),
			rel(float64(b.run), float64(f.run)),
			rel(float64(bpRun[pid]), float64(ftRun[pid])),
		}
		for i := range d {
			worst[i] = max(worst[i], d[i])
			sum[i] += d[i]
		}
		line := fmt.Sprintf("%7d %-16s switch-outs %6d / %6d (%5.2f%%)  run %9.3f / %9.3f ms (%5.2f%%)  same intervals %9.3f / %9.3f ms (%5.2f%%, %d intervals)",
			pid, ftc.comms[pid], f.switches, b.switches, 100*d[0], msec(f.run), msec(b.run), 100*d[1], msec(ftRun[pid]), msec(bpRun[pid]), 100*d[2], f.intervals)
		allow := max(0.02*float64(ftRun[pid]), float64(f.intervals)*float64(time.Microsecond))
		switch {
		case d[0] > 0.02 || math.Abs(float64(bpRun[pid]-ftRun[pid])) > allow:
			bad++
			t.Errorf("over 2%%: %s", line)
		case d[1] > 0.02 || d[2] > 0.02 || os.Getenv("SCHEDLENS_COMPARE_ALL") != "":
			t.Log(line)
		}
	}
	n := float64(len(pids))
	t.Logf("%d tasks with >= 100 switches (not counting this process's threads %v), ftrace / eBPF: switch-outs differ by %.3f%% on average (worst %.3f%%); "+
		"run time by %.3f%% (worst %.3f%%); run time of the intervals both saw by %.3f%% (worst %.3f%%); %d tasks out of tolerance",
		len(pids), self, 100*sum[0]/n, 100*worst[0], 100*sum[1]/n, 100*worst[1], 100*sum[2]/n, 100*worst[2], bad)
}

// rel returns |got-want|/want (0 when both are 0).
func rel(got, want float64) float64 {
	if want == 0 {
		if got == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(got-want) / want
}

func msec(d time.Duration) float64 { return float64(d) / 1e6 }
