package replay

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Spec is a scenario read by ParseSpec: a workload written as small
// per-task programs, with the machine, the tick rate and the length of the
// run it is meant for.
//
// The format is line based; '#' starts a comment. Top-level lines:
//
//	name NAME                 workload name
//	hz N                      tick rate
//	end DURATION              stop the run at this time (from 0)
//	seed N                    random seed
//	policy TEXT               the policy the scenario is about (free text for tools)
//	topology symmetric N      N identical CPUs, one LLC
//	topology smt CORES THREADS  CORES cores of THREADS SMT siblings, one LLC
//	cpu ID [core=N] [llc=N] [cls=N] [pkg=N] [node=N] [cap=N]
//	assume NAME DETAIL...     record an Assumption
//	group NAME [weight N | nice N]  a task group: a cgroup with cpu.weight N
//	                          (1..10000, default 100), or an autogroup of
//	                          nice N (-20..19)
//	task NAME [xN] [OPTION...]  start a task (xN: N copies; names, options,
//	                          durations and CPU lists may use {i}, {i+1},
//	                          {(i+1)%4}, {100+50*(i%3)}, ...)
//
// Task options: nice N, prio N, rt N (rt_priority, prio = 99-N),
// policy normal|batch|idle|fifo|rr, cpus LIST, cookie N, kthread, on CPU,
// tid N, tgid N, start TIME, start fork, group NAME (a declared group;
// default the root group).
//
// Task body, one statement per line:
//
//	run DURATION          consume work (ns of a capacity-1024 CPU)
//	wake TASK [sync]      at this point of its work, wake TASK's matching "wait"
//	wait TASK             block until TASK wakes it (the k-th "wait T" of a task
//	                      pairs with T's k-th "wake" of it)
//	sleep DURATION        block; a timer wakes it DURATION later
//	irq DURATION [cpu N]  block; an interrupt wakes it DURATION later
//	periodic DURATION     block until the next expiry of a periodic timer
//	until TIME            block until an outside event at TIME
//	fork TASK             create TASK (declared "start fork")
//	affinity TIME LIST|all  change the allowed CPUs at TIME
//	repeat N {            repeat the lines up to the matching "}"
//	exit | block | forever  what the task does at the end (default exit)
//
// Durations and times take a unit: ns, us, ms, s ("1.5ms"); a bare number
// is ns.
type Spec struct {
	Name     string
	Workload *Workload
	Topology *topology.Topology // nil when the spec names none
	Policy   string
	HZ       int
	End      timeline.Time
	Seed     uint64
}

// Options returns replay options for the spec: DefaultOptions with the
// spec's HZ, end and seed.
func (sp *Spec) Options() Options {
	o := DefaultOptions()
	if sp.HZ > 0 {
		o.HZ = sp.HZ
	}
	o.End = sp.End
	o.Seed = sp.Seed
	return o
}

// SpecError is a positioned error in a spec file.
//
//	scenarios/001.spec:12: task hog: option "nice": want -20..19, got "40"
type SpecError struct {
	File   string
	Line   int
	Record string
	Msg    string
}

func (e *SpecError) Error() string {
	f := e.File
	if f == "" {
		f = "<spec>"
	}
	if e.Record != "" {
		return fmt.Sprintf("%s:%d: %s: %s", f, e.Line, e.Record, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", f, e.Line, e.Msg)
}

// errSpecLimit is the cause reported for specs that unroll too far.
var errSpecLimit = errors.New("spec too large")

// maxSpecSegments and maxSpecOps bound the unrolled size of a spec and
// the work of unrolling it.
const (
	maxSpecSegments = 4_000_000
	maxSpecOps      = 10_000_000
)

type specStmt struct {
	line int
	op   string
	args []string
	n    int
	body []specStmt
}

type specTask struct {
	line  int
	name  string
	count int
	opts  []string
	body  []specStmt
}

type specParser struct {
	file string
	sp   *Spec
	cpus []topology.CPU
	topo *topology.Topology
	asm  []Assumption
	// task groups in declaration order
	groups []Group
	// tasks in declaration order
	tasks []*specTask
}

func (p *specParser) errf(line int, record, format string, args ...any) error {
	return &SpecError{File: p.file, Line: line, Record: record, Msg: fmt.Sprintf(format, args...)}
}

// ParseSpec reads a scenario spec; name is used in error messages.
func ParseSpec(r io.Reader, name string) (*Spec, error) {
	p := &specParser{file: name, sp: &Spec{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	var cur *specTask
	var stack []*[]specStmt
	var openLines []int
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if !utf8.ValidString(line) {
			return nil, p.errf(lineNo, "", "not valid UTF-8 text")
		}
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		kw := f[0]
		switch kw {
		case "task":
			if len(stack) > 1 {
				return nil, p.errf(openLines[len(openLines)-1], "repeat", "block not closed before the next task")
			}
			if len(f) < 2 {
				return nil, p.errf(lineNo, "task", "want a task name")
			}
			t := &specTask{line: lineNo, name: f[1], count: 1}
			rest := f[2:]
			if len(rest) > 0 && strings.HasPrefix(rest[0], "x") {
				if n, err := strconv.Atoi(rest[0][1:]); err == nil {
					if n < 1 || n > 100000 {
						return nil, p.errf(lineNo, "task "+t.name, "copies %q: want x1..x100000", rest[0])
					}
					t.count = n
					rest = rest[1:]
				}
			}
			t.opts = rest
			p.tasks = append(p.tasks, t)
			cur = t
			stack = []*[]specStmt{&t.body}
			openLines = []int{lineNo}
			continue
		case "name", "hz", "end", "seed", "policy", "topology", "cpu", "assume", "group":
			if cur != nil && len(stack) > 1 {
				return nil, p.errf(lineNo, kw, "top-level line inside a repeat block")
			}
			cur = nil
			stack = nil
			if err := p.topLine(lineNo, f); err != nil {
				return nil, err
			}
			continue
		}
		if cur == nil {
			return nil, p.errf(lineNo, kw, "unknown top-level keyword, or a task statement outside a task")
		}
		if kw == "}" {
			if len(f) != 1 || len(stack) < 2 {
				return nil, p.errf(lineNo, "}", "no repeat block to close")
			}
			stack = stack[:len(stack)-1]
			openLines = openLines[:len(openLines)-1]
			continue
		}
		st := specStmt{line: lineNo, op: kw, args: f[1:]}
		top := stack[len(stack)-1]
		if kw == "repeat" {
			if len(f) != 3 || f[2] != "{" {
				return nil, p.errf(lineNo, "repeat", "want \"repeat N {\", got %q", strings.Join(f, " "))
			}
			n, err := strconv.Atoi(f[1])
			if err != nil || n < 0 || n > 100_000_000 {
				return nil, p.errf(lineNo, "repeat", "count %q: want 0..100000000", f[1])
			}
			st.n = n
			*top = append(*top, st)
			last := &(*top)[len(*top)-1]
			stack = append(stack, &last.body)
			openLines = append(openLines, lineNo)
			continue
		}
		*top = append(*top, st)
	}
	if err := sc.Err(); err != nil {
		return nil, p.errf(lineNo+1, "", "reading: %v", err)
	}
	if len(stack) > 1 {
		return nil, p.errf(openLines[len(openLines)-1], "repeat", "block not closed at end of file")
	}
	return p.compile()
}

func (p *specParser) topLine(line int, f []string) error {
	sp := p.sp
	kw := f[0]
	need := func(n int) error {
		if len(f) < n+1 {
			return p.errf(line, kw, "want %d argument(s), got %d", n, len(f)-1)
		}
		return nil
	}
	switch kw {
	case "name":
		if err := need(1); err != nil {
			return err
		}
		sp.Name = strings.Join(f[1:], " ")
	case "hz":
		if err := need(1); err != nil {
			return err
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 1 || n > MaxHZ {
			return p.errf(line, kw, "want 1..%d, got %q", MaxHZ, f[1])
		}
		sp.HZ = n
	case "end":
		if err := need(1); err != nil {
			return err
		}
		d, err := parseDuration(f[1])
		if err != nil || d <= 0 {
			return p.errf(line, kw, "want a positive duration like 5s, got %q", f[1])
		}
		sp.End = timeline.Time(d)
	case "seed":
		if err := need(1); err != nil {
			return err
		}
		n, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return p.errf(line, kw, "want an unsigned integer, got %q", f[1])
		}
		sp.Seed = n
	case "policy":
		if err := need(1); err != nil {
			return err
		}
		sp.Policy = strings.Join(f[1:], " ")
	case "assume":
		if err := need(1); err != nil {
			return err
		}
		p.asm = append(p.asm, Assumption{Name: f[1], Detail: strings.Join(f[2:], " ")})
	case "group":
		return p.groupLine(line, f)
	case "topology":
		if err := need(2); err != nil {
			return err
		}
		if p.topo != nil || len(p.cpus) > 0 {
			return p.errf(line, kw, "topology given twice")
		}
		switch f[1] {
		case "symmetric":
			n, err := strconv.Atoi(f[2])
			if err != nil || n < 1 || n > 4096 {
				return p.errf(line, kw, "symmetric: want 1..4096 CPUs, got %q", f[2])
			}
			p.topo = topology.Symmetric(n)
			p.topo.Source = "spec"
		case "smt":
			if err := need(3); err != nil {
				return err
			}
			cores, err1 := strconv.Atoi(f[2])
			thr, err2 := strconv.Atoi(f[3])
			if err1 != nil || err2 != nil || cores < 1 || thr < 1 || cores*thr > 4096 {
				return p.errf(line, kw, "smt: want CORES THREADS with at most 4096 CPUs, got %q %q", f[2], f[3])
			}
			t := &topology.Topology{Source: "spec", Name: fmt.Sprintf("smt-%dx%d", cores, thr)}
			// Linux numbers the first thread of every core first, then the
			// second threads (x86 enumeration): CPU c and c+cores are siblings.
			for th := 0; th < thr; th++ {
				for c := 0; c < cores; c++ {
					id := th*cores + c
					t.CPUs = append(t.CPUs, topology.CPU{ID: id, Core: c, Capacity: 1024})
				}
			}
			p.topo = t
		default:
			return p.errf(line, kw, "want symmetric or smt, got %q", f[1])
		}
	case "cpu":
		if p.topo != nil {
			return p.errf(line, kw, "cpu lines cannot follow a topology line")
		}
		if err := need(1); err != nil {
			return err
		}
		id, err := strconv.Atoi(f[1])
		if err != nil || id != len(p.cpus) {
			return p.errf(line, kw, "want CPU %d next, got %q", len(p.cpus), f[1])
		}
		c := topology.CPU{ID: id, Core: id, Capacity: 1024}
		for _, kv := range f[2:] {
			k, v, ok := strings.Cut(kv, "=")
			n, err := strconv.Atoi(v)
			if !ok || err != nil || n < 0 {
				return p.errf(line, kw, "want key=number, got %q", kv)
			}
			switch k {
			case "core":
				c.Core = n
			case "llc":
				c.Cluster = n
			case "cls":
				c.CLS = n
			case "pkg":
				c.Package = n
			case "node":
				c.Node = n
			case "cap":
				c.Capacity = n
			default:
				return p.errf(line, kw, "unknown key %q: want core, llc, cls, pkg, node or cap", k)
			}
		}
		p.cpus = append(p.cpus, c)
	}
	return nil
}

// groupLine reads "group NAME [weight N | nice N]".
func (p *specParser) groupLine(line int, f []string) error {
	if len(f) != 2 && len(f) != 4 {
		return p.errf(line, "group", "want \"group NAME [weight N | nice N]\", got %q", strings.Join(f, " "))
	}
	g := Group{ID: len(p.groups) + 1, Name: f[1], Weight: NiceWeight(0)}
	if slices.ContainsFunc(p.groups, func(o Group) bool { return o.Name == g.Name }) {
		return p.errf(line, "group "+g.Name, "declared twice")
	}
	if len(f) == 4 {
		n, err := strconv.Atoi(f[3])
		if err != nil {
			return p.errf(line, "group "+g.Name, "%s: want a number, got %q", f[2], f[3])
		}
		switch f[2] {
		case "weight":
			g.Weight, err = CgroupWeight(n)
		case "nice":
			g.Weight, err = AutogroupWeight(n)
		default:
			return p.errf(line, "group "+g.Name, "want weight or nice, got %q", f[2])
		}
		if err != nil {
			return p.errf(line, "group "+g.Name, "%v", err)
		}
	}
	p.groups = append(p.groups, g)
	return nil
}

// parseDuration reads "1.5ms", "20us", "3s", "100ns" or a bare number of ns.
func parseDuration(s string) (int64, error) {
	num, mult := s, 1.0
	for _, u := range []struct {
		suf string
		m   float64
	}{{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}} {
		if strings.HasSuffix(s, u.suf) {
			num, mult = strings.TrimSuffix(s, u.suf), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("bad duration %q", s)
	}
	r := v * mult
	if r < 0 || r > 1e18 {
		return 0, fmt.Errorf("duration %q out of range", s)
	}
	return int64(math.Round(r)), nil
}

// expand substitutes {expr} templates with i.
func expand(s string, i int) (string, error) {
	if !strings.Contains(s, "{") {
		return s, nil
	}
	var b strings.Builder
	for {
		a := strings.IndexByte(s, '{')
		if a < 0 {
			b.WriteString(s)
			break
		}
		z := strings.IndexByte(s[a:], '}')
		if z < 0 {
			return "", fmt.Errorf("unclosed { in %q", s)
		}
		b.WriteString(s[:a])
		v, err := evalExpr(s[a+1:a+z], i)
		if err != nil {
			return "", err
		}
		b.WriteString(strconv.Itoa(v))
		s = s[a+z+1:]
	}
	return b.String(), nil
}

// evalExpr evaluates an integer expression over i with + - * / % and
// parentheses.
func evalExpr(src string, i int) (int, error) {
	e := &exprParser{s: strings.ReplaceAll(src, " ", ""), i: i}
	v, err := e.sum()
	if err != nil {
		return 0, err
	}
	if e.pos != len(e.s) {
		return 0, fmt.Errorf("bad expression {%s}", src)
	}
	return v, nil
}

type exprParser struct {
	s   string
	pos int
	i   int
}

func (e *exprParser) sum() (int, error) {
	v, err := e.product()
	for err == nil && e.pos < len(e.s) && (e.s[e.pos] == '+' || e.s[e.pos] == '-') {
		op := e.s[e.pos]
		e.pos++
		var w int
		w, err = e.product()
		if op == '+' {
			v += w
		} else {
			v -= w
		}
	}
	return v, err
}

func (e *exprParser) product() (int, error) {
	v, err := e.atom()
	for err == nil && e.pos < len(e.s) && (e.s[e.pos] == '*' || e.s[e.pos] == '/' || e.s[e.pos] == '%') {
		op := e.s[e.pos]
		e.pos++
		var w int
		w, err = e.atom()
		if err != nil {
			break
		}
		switch op {
		case '*':
			v *= w
		case '/', '%':
			if w == 0 {
				return 0, fmt.Errorf("division by zero in {%s}", e.s)
			}
			if op == '/' {
				v /= w
			} else {
				v %= w
			}
		}
	}
	return v, err
}

func (e *exprParser) atom() (int, error) {
	if e.pos >= len(e.s) {
		return 0, fmt.Errorf("bad expression {%s}", e.s)
	}
	switch c := e.s[e.pos]; {
	case c == '(':
		e.pos++
		v, err := e.sum()
		if err != nil {
			return 0, err
		}
		if e.pos >= len(e.s) || e.s[e.pos] != ')' {
			return 0, fmt.Errorf("missing ) in {%s}", e.s)
		}
		e.pos++
		return v, nil
	case c == 'i':
		e.pos++
		return e.i, nil
	case c >= '0' && c <= '9':
		st := e.pos
		for e.pos < len(e.s) && e.s[e.pos] >= '0' && e.s[e.pos] <= '9' {
			e.pos++
		}
		return strconv.Atoi(e.s[st:e.pos])
	}
	return 0, fmt.Errorf("bad expression {%s}", e.s)
}

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
				*wk = Wake{Kind: WakeTask, Waker: wi, Work: recs[k].work, Sync: recs[k].sync, CPU: -1}
			}
		}
		if ct.forkOnly {
			rec, ok := forks[ti]
			if !ok {
				return nil, p.errf(ct.line, "task "+ct.name, "declared \"start fork\" but no task forks it")
			}
			ct.tk.Segments[0].Wake = Wake{Kind: WakeFork, Waker: forkParent[ti], Work: rec.work, CPU: -1}
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
					wk.CPU = n
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
