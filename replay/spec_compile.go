package replay

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Compiling a parsed spec into a Workload: task options, then the
// unrolling of each task body into its steps.

// compiled per-task state
type ctask struct {
	name     string
	line     int
	tk       Task
	forkOnly bool
	startAt  timeline.Time
	body     []specStmt
	copyIdx  int
	// waits per waker name, in order: index into tk.Segments
	waits map[string][]int
	// pending: segment indices whose wake is a "wait" to resolve
}

type wakeRec struct {
	work int64
	sync bool
	line int
}

func (p *specParser) compile() (*Spec, error) {
	sp := p.sp
	if len(p.cpus) > 0 {
		p.topo = &topology.Topology{Source: "spec", Name: sp.Name, CPUs: p.cpus}
	}
	if p.topo != nil {
		if err := p.topo.Validate(); err != nil {
			return nil, p.errf(1, "topology", "%v", err)
		}
		sp.Topology = p.topo
	}
	// 1. Expand templates into concrete tasks.
	var tasks []*ctask
	index := map[string]int{}
	for _, st := range p.tasks {
		for i := 0; i < st.count; i++ {
			name, err := expand(st.name, i)
			if err != nil {
				return nil, p.errf(st.line, "task "+st.name, "%v", err)
			}
			if _, dup := index[name]; dup {
				return nil, p.errf(st.line, "task "+name, "declared twice")
			}
			ct := &ctask{name: name, line: st.line, body: st.body, copyIdx: i, waits: map[string][]int{}}
			ct.tk = Task{Comm: name, Prio: 120, CPU: -1, TGID: -1}
			if err := p.taskOptions(ct, st.opts, i); err != nil {
				return nil, err
			}
			index[name] = len(tasks)
			tasks = append(tasks, ct)
		}
	}
	// 2. Unroll bodies: segments, wakes issued, forks.
	wakes := map[[2]int][]wakeRec{} // (waker, wakee) -> wakes in order
	forks := map[int]wakeRec{}      // child -> fork point
	forkParent := map[int]int{}
	total, ops := 0, 0
	for ti, ct := range tasks {
		u := &unroller{p: p, ct: ct, ti: ti, index: index, wakes: wakes, forks: forks, forkParent: forkParent, total: &total, ops: &ops}
		first := Wake{Kind: WakeStart, At: ct.startAt, CPU: -1}
		if ct.forkOnly {
			first = Wake{Kind: WakeFork, CPU: -1}
		}
		u.segs = []Segment{{Wake: first}}
		u.fresh = !ct.forkOnly
		if err := u.run(ct.body); err != nil {
			return nil, err
		}
		ct.tk.Segments = u.segs
		if u.endSet {
			ct.tk.End = u.end
		}
	}
	// 3. Resolve waits and forks.
	for ti, ct := range tasks {
		for wakerName, segIdx := range ct.waits {
			wi := index[wakerName]
			recs := wakes[[2]int{wi, ti}]
			if len(recs) != len(segIdx) {
				return nil, p.errf(ct.line, "task "+ct.name, "waits for %s %d time(s) but %s wakes it %d time(s)", wakerName, len(segIdx), wakerName, len(recs))
			}
			for k, si := range segIdx {
				wk := &ct.tk.Segments[si].Wake
				*wk = Wake{Kind: WakeTask, Waker: int32(wi), Work: recs[k].work, Sync: recs[k].sync, CPU: -1}
			}
		}
		if ct.forkOnly {
			rec, ok := forks[ti]
			if !ok {
				return nil, p.errf(ct.line, "task "+ct.name, "declared \"start fork\" but no task forks it")
			}
			ct.tk.Segments[0].Wake = Wake{Kind: WakeFork, Waker: int32(forkParent[ti]), Work: rec.work, CPU: -1}
		}
	}
	keys := make([][2]int, 0, len(wakes))
	for key := range wakes {
		keys = append(keys, key)
	}
	slices.SortFunc(keys, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	for _, key := range keys {
		recs := wakes[key]
		if len(tasks[key[1]].waits[tasks[key[0]].name]) == 0 && len(recs) > 0 {
			return nil, p.errf(recs[0].line, "wake "+tasks[key[1]].name, "%s wakes %s %d time(s) but %s never waits for it", tasks[key[0]].name, tasks[key[1]].name, len(recs), tasks[key[1]].name)
		}
	}
	w := &Workload{Name: sp.Name, HZ: sp.HZ, End: sp.End, Assumptions: p.asm, Groups: p.groups}
	for i, ct := range tasks {
		if ct.tk.TID <= 0 {
			ct.tk.TID = timeline.TID(1000 + i)
		}
		if ct.tk.TGID < 0 {
			ct.tk.TGID = int32(ct.tk.TID)
		}
		w.Tasks = append(w.Tasks, ct.tk)
	}
	ncpu := 0
	if sp.Topology != nil {
		ncpu = len(sp.Topology.CPUs)
	}
	if err := w.Validate(ncpu); err != nil {
		return nil, p.errf(1, "workload", "%v", err)
	}
	sp.Workload = w
	return sp, nil
}

func (p *specParser) taskOptions(ct *ctask, opts []string, copyIdx int) error {
	rec := "task " + ct.name
	for k := 0; k < len(opts); k++ {
		o := opts[k]
		arg := func() (string, error) {
			if k+1 >= len(opts) {
				return "", p.errf(ct.line, rec, "option %q needs a value", o)
			}
			k++
			v, err := expand(opts[k], copyIdx)
			if err != nil {
				return "", p.errf(ct.line, rec, "%v", err)
			}
			return v, nil
		}
		num := func(lo, hi int) (int, error) {
			v, err := arg()
			if err != nil {
				return 0, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < lo || n > hi {
				return 0, p.errf(ct.line, rec, "option %q: want %d..%d, got %q", o, lo, hi, v)
			}
			return n, nil
		}
		switch o {
		case "nice":
			n, err := num(-20, 19)
			if err != nil {
				return err
			}
			ct.tk.Prio = 120 + n
		case "prio":
			n, err := num(-1, 139)
			if err != nil {
				return err
			}
			ct.tk.Prio = n
		case "rt":
			n, err := num(1, 99)
			if err != nil {
				return err
			}
			ct.tk.Prio = 99 - n
			if ct.tk.Policy == PolicyDefault {
				ct.tk.Policy = PolicyFIFO
			}
		case "policy":
			v, err := arg()
			if err != nil {
				return err
			}
			if err := ct.tk.Policy.UnmarshalText([]byte(v)); err != nil {
				return p.errf(ct.line, rec, "%v", err)
			}
		case "cpus":
			v, err := arg()
			if err != nil {
				return err
			}
			set, err := topology.ParseCPUSet(v)
			if err != nil {
				return p.errf(ct.line, rec, "%v", err)
			}
			ct.tk.CPUs = set
		case "cookie":
			v, err := arg()
			if err != nil {
				return err
			}
			c, err := strconv.ParseUint(v, 0, 64)
			if err != nil {
				return p.errf(ct.line, rec, "option cookie: want a number, got %q", v)
			}
			ct.tk.Cookie = c
		case "kthread":
			ct.tk.PerCPUKthread = true
		case "group":
			v, err := arg()
			if err != nil {
				return err
			}
			id := slices.IndexFunc(p.groups, func(g Group) bool { return g.Name == v }) + 1
			if id == 0 {
				return p.errf(ct.line, rec, "option group: no group %q declared", v)
			}
			ct.tk.Group = id
		case "on":
			n, err := num(0, topology.MaxCPUs-1)
			if err != nil {
				return err
			}
			ct.tk.CPU = n
		case "tid":
			n, err := num(1, math.MaxInt32)
			if err != nil {
				return err
			}
			ct.tk.TID = timeline.TID(n)
		case "tgid":
			n, err := num(1, math.MaxInt32)
			if err != nil {
				return err
			}
			ct.tk.TGID = int32(n)
		case "start":
			v, err := arg()
			if err != nil {
				return err
			}
			if v == "fork" {
				ct.forkOnly = true
				continue
			}
			d, err := parseDuration(v)
			if err != nil {
				return p.errf(ct.line, rec, "option start: want a time or \"fork\", got %q", v)
			}
			ct.startAt = timeline.Time(d)
		default:
			return p.errf(ct.line, rec, "unknown option %q", o)
		}
	}
	if ct.tk.Policy == PolicyRR || ct.tk.Policy == PolicyFIFO {
		if ct.tk.Prio >= 100 {
			ct.tk.Prio = 98 // rt_priority 1 unless "rt N" said otherwise
		}
	}
	return nil
}

type unroller struct {
	p          *specParser
	ct         *ctask
	ti         int
	index      map[string]int
	wakes      map[[2]int][]wakeRec
	forks      map[int]wakeRec
	forkParent map[int]int
	total      *int
	ops        *int
	segs       []Segment
	cum        int64 // cumulative work (ns)
	fresh      bool  // nothing happened yet in the first segment
	end        TaskEnd
	endSet     bool
	ended      bool
}

func (u *unroller) errf(line int, rec, format string, args ...any) error {
	return u.p.errf(line, rec, format, args...)
}

func (u *unroller) target(st specStmt) (int, string, error) {
	if len(st.args) < 1 {
		return 0, "", u.errf(st.line, st.op, "want a task name")
	}
	if len(st.args) > 1 && st.op != "wake" {
		return 0, "", u.errf(st.line, st.op, "want one task name, got %q", strings.Join(st.args, " "))
	}
	name, err := expand(st.args[0], u.ct.copyIdx)
	if err != nil {
		return 0, "", u.errf(st.line, st.op, "%v", err)
	}
	ti, ok := u.index[name]
	if !ok {
		return 0, "", u.errf(st.line, st.op, "no task named %q", name)
	}
	if ti == u.ti {
		return 0, "", u.errf(st.line, st.op, "a task cannot %s itself", st.op)
	}
	return ti, name, nil
}

func (u *unroller) dur(st specStmt) (int64, error) {
	if len(st.args) < 1 {
		return 0, u.errf(st.line, st.op, "want a duration")
	}
	if len(st.args) > 1 && st.op != "irq" {
		return 0, u.errf(st.line, st.op, "want one duration like 10us, got %q", strings.Join(st.args, " "))
	}
	arg, err := expand(st.args[0], u.ct.copyIdx)
	if err != nil {
		return 0, u.errf(st.line, st.op, "%v", err)
	}
	d, err := parseDuration(arg)
	if err != nil {
		return 0, u.errf(st.line, st.op, "want a duration like 10us, got %q", arg)
	}
	return d, nil
}

// block ends the current segment; the next one starts with wk. In a task
// that did nothing yet, the block is where it starts: wk becomes the first
// segment's wake.
func (u *unroller) block(wk Wake) int {
	if u.fresh {
		u.fresh = false
		start := u.ct.startAt
		switch wk.Kind {
		case WakeTimer, WakeIRQ:
			if start > 0 {
				wk = Wake{Kind: WakeAt, At: start + timeline.Time(wk.Delay), CPU: wk.CPU}
			}
		}
		u.segs[0].Wake = wk
		return 0
	}
	u.segs = append(u.segs, Segment{Wake: wk})
	*u.total++
	return len(u.segs) - 1
}

func (u *unroller) run(body []specStmt) error {
	for _, st := range body {
		if u.ended {
			return u.errf(st.line, st.op, "statement after the task's end")
		}
		*u.ops++
		if *u.total > maxSpecSegments || *u.ops > maxSpecOps {
			return u.errf(st.line, st.op, "%v: more than %d segments or %d statements after unrolling", errSpecLimit, maxSpecSegments, maxSpecOps)
		}
		rec := st.op
		switch st.op {
		case "run":
			d, err := u.dur(st)
			if err != nil {
				return err
			}
			u.segs[len(u.segs)-1].Work += d
			u.cum += d
			u.fresh = false
		case "wake":
			ti, _, err := u.target(st)
			if err != nil {
				return err
			}
			sync := len(st.args) > 1 && st.args[1] == "sync"
			if len(st.args) > 2 || (len(st.args) == 2 && !sync) {
				return u.errf(st.line, rec, "want \"wake TASK [sync]\"")
			}
			k := [2]int{u.ti, ti}
			u.wakes[k] = append(u.wakes[k], wakeRec{work: u.cum, sync: sync, line: st.line})
			u.fresh = false
		case "fork":
			ti, name, err := u.target(st)
			if err != nil {
				return err
			}
			if _, dup := u.forks[ti]; dup {
				return u.errf(st.line, rec, "task %s is forked twice", name)
			}
			u.forks[ti] = wakeRec{work: u.cum, line: st.line}
			u.forkParent[ti] = u.ti
			u.fresh = false
		case "wait":
			_, name, err := u.target(st)
			if err != nil {
				return err
			}
			si := u.block(Wake{Kind: WakeTask, CPU: -1})
			u.ct.waits[name] = append(u.ct.waits[name], si)
		case "sleep", "irq", "periodic":
			d, err := u.dur(st)
			if err != nil {
				return err
			}
			wk := Wake{Kind: WakeTimer, Delay: d, CPU: -1}
			switch st.op {
			case "irq":
				wk.Kind = WakeIRQ
				if len(st.args) == 3 && st.args[1] == "cpu" {
					n, err := strconv.Atoi(st.args[2])
					if err != nil || n < 0 || n >= topology.MaxCPUs {
						return u.errf(st.line, rec, "cpu: want a CPU number, got %q", st.args[2])
					}
					wk.CPU = int32(n)
				} else if len(st.args) != 1 {
					return u.errf(st.line, rec, "want \"irq DURATION [cpu N]\"")
				}
			case "periodic":
				wk.Period = d
			}
			u.block(wk)
		case "until":
			d, err := u.dur(st)
			if err != nil {
				return err
			}
			u.block(Wake{Kind: WakeAt, At: timeline.Time(d), CPU: -1})
		case "affinity":
			if len(st.args) != 2 {
				return u.errf(st.line, rec, "want \"affinity TIME LIST\"")
			}
			d, err := parseDuration(st.args[0])
			if err != nil {
				return u.errf(st.line, rec, "want a time, got %q", st.args[0])
			}
			var set topology.CPUSet
			if st.args[1] != "all" {
				v, err := expand(st.args[1], u.ct.copyIdx)
				if err == nil {
					set, err = topology.ParseCPUSet(v)
				}
				if err != nil {
					return u.errf(st.line, rec, "%v", err)
				}
			}
			u.ct.tk.Affinity = append(u.ct.tk.Affinity, AffinityChange{At: timeline.Time(d), CPUs: set})
		case "repeat":
			for k := 0; k < st.n; k++ {
				if err := u.run(st.body); err != nil {
					return err
				}
			}
		case "exit", "block", "forever":
			u.endSet, u.ended = true, true
			u.end = map[string]TaskEnd{"exit": EndExit, "block": EndSleep, "forever": EndRun}[st.op]
		default:
			return u.errf(st.line, rec, "unknown statement: want run, wake, wait, sleep, irq, periodic, until, fork, affinity, repeat, exit, block or forever")
		}
	}
	return nil
}
