package topology

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// textKeys are the fields of a topology.txt line, in the order
// capture-ftrace.sh writes them; required ones must be present.
var textKeys = []struct {
	key      string
	required bool
}{
	{"cpu", true},
	{"core_id", true},
	{"package", true},
	{"die", false},
	{"cluster", false},
	{"thread_siblings", true},
	{"core_siblings", true},
	{"capacity", false},
}

// maxTextLine bounds one topology.txt line; a real line is under 200 bytes.
const maxTextLine = 64 << 10

// ReadText reads a topology.txt snapshot, one line per CPU as
// capture-ftrace.sh writes it:
//
//	cpu=0 core_id=0 package=0 die=0 cluster=65535 thread_siblings=0-1 core_siblings=0-7 capacity=
//
// Lines may come in any order (the script's glob lists cpu10 before cpu2);
// blank lines and lines starting with '#' are skipped. name is the file
// name used in errors. The file has no cache or NUMA information: the LLC
// is the core_siblings (package) group, an empty capacity is 1024, a
// cluster of 65535 or -1 means none, and NUMA nodes are one per package;
// Topology.Notes records each such inference. A line whose fields other
// than cpu are all empty (the script's output for an offline CPU) gives a
// CPU alone in its core and LLC. The Source of the result is empty.
//
// Load also reads the sched-domains.txt next to the file, when there is
// one, for the caches, clusters and sched domains this file lacks.
func ReadText(r io.Reader, name string) (*Topology, error) {
	return readText(r, name, nil, "")
}

// readText is ReadText with the kernel's view kv (read from kvName) used
// for what topology.txt does not say (useKernelView) and attached to the
// result; kv may be nil.
func readText(r io.Reader, name string, kv *KernelView, kvName string) (*Topology, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxTextLine)
	var raws []rawCPU
	lists := listInterner{}
	lineNo := 0
	for sc.Scan() {
		lineNo++
		trimmed := bytes.TrimSpace(sc.Bytes())
		if len(trimmed) == 0 || trimmed[0] == '#' {
			continue
		}
		raw, err := parseTextLine(string(trimmed), name, lineNo, lists)
		if err != nil {
			return nil, err
		}
		raws = append(raws, raw)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ParseError{File: name, Line: lineNo + 1, Msg: "line longer than 64 KiB", Err: ErrBadField}
		}
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(raws) == 0 {
		return nil, &ParseError{File: name, Msg: "no CPU lines: want lines like \"cpu=0 core_id=0 package=0 ...\"", Err: ErrBadField}
	}
	var notes []string
	if kv != nil {
		if err := kv.validate(len(raws)); err != nil {
			return nil, &ParseError{File: kvName, Msg: err.Error(), Err: err}
		}
		var err error
		if notes, err = useKernelView(raws, kv, lists); err != nil {
			return nil, &ParseError{File: kvName, Msg: err.Error(), Err: ErrBadField}
		}
	}
	t, err := assemble(raws)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) && pe.File == "" {
			pe.File = name
		}
		return nil, err
	}
	t.Notes = append(t.Notes, notes...)
	if kv != nil {
		if err := t.attachKernel(kv); err != nil {
			return nil, &ParseError{File: kvName, Msg: err.Error(), Err: err}
		}
	}
	return t, nil
}

func parseTextLine(line, name string, lineNo int, lists listInterner) (rawCPU, error) {
	r := rawCPU{id: -1, pkg: -1, die: -1, coreID: -1, clusterID: -1, node: -1}
	record := ""
	fail := func(msg string, cause error) error {
		return &ParseError{File: name, Line: lineNo, Record: record, Msg: msg, Err: cause}
	}
	r.where = func(msg string, cause error) error {
		return &ParseError{File: name, Line: lineNo, Record: fmt.Sprintf("cpu=%d", r.id), Msg: msg, Err: cause}
	}
	vals := map[string]string{}
	for _, f := range strings.Fields(line) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return r, fail(fmt.Sprintf("want key=value fields; got %q", f), ErrBadField)
		}
		known := false
		for _, tk := range textKeys {
			known = known || tk.key == k
		}
		if !known {
			return r, fail(fmt.Sprintf("unknown field %q: want cpu, core_id, package, die, cluster, thread_siblings, core_siblings, capacity", k), ErrBadField)
		}
		if _, dup := vals[k]; dup {
			return r, fail(fmt.Sprintf("field %s given twice", k), ErrBadField)
		}
		vals[k] = v
	}
	if v, ok := vals["cpu"]; ok {
		record = "cpu=" + v
	}
	for _, tk := range textKeys {
		if _, ok := vals[tk.key]; tk.required && !ok {
			return r, fail(fmt.Sprintf("field %s missing", tk.key), ErrBadField)
		}
	}
	id, err := strconv.Atoi(vals["cpu"])
	if err != nil || id < 0 || id >= maxCPUs {
		return r, fail(fmt.Sprintf("field cpu: want a CPU number below %d; got %q", maxCPUs, vals["cpu"]), ErrBadField)
	}
	r.id = id

	// An offline CPU has no topology directory: the script prints empty
	// values for everything but cpu.
	empty := 0
	for _, k := range []string{"core_id", "package", "thread_siblings", "core_siblings"} {
		if vals[k] == "" {
			empty++
		}
	}
	if empty == 4 {
		r.offline = true
		return r, nil
	}

	intField := func(k string, dst *int, optional bool) error {
		v := vals[k]
		if v == "" && optional {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < -1 {
			return fail(fmt.Sprintf("field %s: want an integer; got %q", k, v), ErrBadField)
		}
		*dst = n
		return nil
	}
	listField := func(k string, dst **cpuList) error {
		l, err := lists.parse(vals[k])
		if err != nil {
			return fail(fmt.Sprintf("field %s: want a CPU list like 0-1; got %q", k, vals[k]), ErrBadField)
		}
		*dst = l
		return nil
	}
	if err := intField("core_id", &r.coreID, false); err != nil {
		return r, err
	}
	if err := intField("package", &r.pkg, false); err != nil {
		return r, err
	}
	if r.pkg < 0 {
		return r, fail(fmt.Sprintf("field package: want a package number; got %q", vals["package"]), ErrBadField)
	}
	if err := intField("die", &r.die, true); err != nil {
		return r, err
	}
	if err := intField("cluster", &r.clusterID, true); err != nil {
		return r, err
	}
	if err := listField("thread_siblings", &r.threads); err != nil {
		return r, err
	}
	if err := listField("core_siblings", &r.pkgCPUs); err != nil {
		return r, err
	}
	if v := vals["capacity"]; v != "" {
		c, err := strconv.Atoi(v)
		if err != nil || c < 1 || c > CapacityScale {
			return r, fail(fmt.Sprintf("field capacity: want 1..%d or empty; got %q", CapacityScale, v), ErrBadField)
		}
		r.capacity = c
	}
	return r, nil
}
