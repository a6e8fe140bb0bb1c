package replay

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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
			g.Autogroup = true
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
