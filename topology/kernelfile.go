package topology

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// KernelFileName is the file next to a topology file that holds the
// kernel's own view (shared/tools/qemu/guest-init.sh writes it): Load
// reads it with ReadKernelView.
const KernelFileName = "sched-domains.txt"

// maxKernelLine bounds one line of a sched-domains.txt or /proc/schedstat;
// a domain line with every flag is under 400 bytes, a cpumask of 65536
// CPUs about 18 KiB.
const maxKernelLine = 256 << 10

// ReadKernelView reads a sched-domains.txt: the concatenation of
// /proc/schedstat, the debugfs domain names and flags, the cluster lists
// and the cache lists, in any order, as shared/tools/qemu/guest-init.sh
// writes them:
//
//	version 16
//	cpu0 0 0 0 0 0 0 11712969456 425463760 659
//	domain0 39 0 0 0 ...                        (version 17: domain0 MC 39 ...)
//	cpu0/domain0: name=MC flags=SD_BALANCE_NEWIDLE ... SD_SHARE_LLC
//	cpu0: cluster_cpus=0,3-5 package_cpus=0-5 die_cpus=
//	cpu0 index2: L2 Unified shared=0,3-5
//
// Blank lines and lines starting with '#' are skipped; any other line is
// an error. A domain line belongs to the cpuN line above it; its cpumask
// gives the span. A debugfs line must name a domain the schedstat lines
// list. name is the file name used in errors; the result's Source is
// empty.
func ReadKernelView(r io.Reader, name string) (*KernelView, error) {
	kr := newKernelReader(name)
	if err := kr.read(r); err != nil {
		return nil, err
	}
	return kr.finish()
}

// kernelReader collects a KernelView from lines of /proc/schedstat and
// sched-domains.txt and from debugfs entries.
type kernelReader struct {
	name    string // file name for errors
	version int    // schedstat version; 0 before the version line
	cpu     int    // CPU of the last schedstat cpuN line; -1 before one
	kv      KernelView
	at      map[[2]int]int // (cpu, level) -> index in kv.Domains
	lines   []int          // per kv.Domains entry, the line it came from
	debug   []debugEntry
	caches  map[[2]int]bool // (cpu, index) seen
	cluster map[int]bool    // cpu seen on a cluster line
}

// debugEntry is one cpuN/domainM of debugfs: its name and flags.
type debugEntry struct {
	cpu, level int
	name       string
	flags      []string
	file       string
	line       int
}

func newKernelReader(name string) *kernelReader {
	return &kernelReader{name: name, cpu: -1, at: map[[2]int]int{}, caches: map[[2]int]bool{}, cluster: map[int]bool{}}
}

func (kr *kernelReader) errAt(line int, record, msg string) error {
	return &ParseError{File: kr.name, Line: line, Record: record, Msg: msg, Err: ErrBadField}
}

// read feeds every line of r to line.
func (kr *kernelReader) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxKernelLine)
	n := 0
	for sc.Scan() {
		n++
		if err := kr.line(sc.Text(), n); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return kr.errAt(n+1, "", "line longer than 256 KiB")
		}
		return fmt.Errorf("reading %s: %w", kr.name, err)
	}
	return nil
}

// line parses one line of a sched-domains.txt (or of /proc/schedstat).
func (kr *kernelReader) line(text string, n int) error {
	f := strings.Fields(text)
	if len(f) == 0 || strings.HasPrefix(f[0], "#") {
		return nil
	}
	switch head := f[0]; {
	case head == "version":
		v, err := strconv.Atoi(strings.Join(f[1:], " "))
		if err != nil || v < 1 {
			return kr.errAt(n, "", fmt.Sprintf("want \"version N\" (the /proc/schedstat version); got %q", text))
		}
		kr.version = v
	case head == "timestamp":
	case strings.HasPrefix(head, "domain"):
		return kr.schedstatDomain(f, n)
	case strings.HasPrefix(head, "cpu") && strings.Contains(head, "/"):
		return kr.debugLine(text, n)
	case strings.HasPrefix(head, "cpu") && strings.HasSuffix(head, ":"):
		return kr.clusterLine(f, n)
	case strings.HasPrefix(head, "cpu") && len(f) > 1 && strings.HasPrefix(f[1], "index"):
		return kr.cacheLine(f, n)
	case strings.HasPrefix(head, "cpu"):
		cpu, ok := cpuDirNumber(head, "cpu")
		if !ok {
			return kr.errAt(n, "", fmt.Sprintf("want a schedstat line \"cpuN ...\"; got %q", head))
		}
		kr.cpu = cpu
	default:
		return kr.errAt(n, "", fmt.Sprintf("unrecognized line %q: want /proc/schedstat lines (version, timestamp, cpuN, domainN), \"cpuN/domainM: name=... flags=...\", \"cpuN: cluster_cpus=...\" or \"cpuN indexM: L2 Unified shared=...\"", truncate(text, 60)))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// isHexMask reports whether s has the form of a %*pb cpumask.
func isHexMask(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F' || r == ',') {
			return false
		}
	}
	return true
}

// schedstatDomain parses "domainN MASK ..." (schedstat versions up to 16)
// or "domainN NAME MASK ..." (version 17, Linux 6.14 and later); without a
// version line, a second field that is no cpumask is taken as the name.
func (kr *kernelReader) schedstatDomain(f []string, n int) error {
	level, ok := cpuDirNumber(f[0], "domain")
	record := fmt.Sprintf("cpu%d/%s", kr.cpu, f[0])
	switch {
	case !ok || level >= maxKernelLevels:
		return kr.errAt(n, "", fmt.Sprintf("want domainN with N below %d; got %q", maxKernelLevels, f[0]))
	case kr.cpu < 0:
		return kr.errAt(n, f[0], "domain line before any cpuN line")
	case len(f) < 2:
		return kr.errAt(n, record, "domain line without a cpumask")
	}
	name, mask := "", f[1]
	if kr.version >= 17 || (kr.version == 0 && !isHexMask(f[1]) && len(f) > 2) {
		if len(f) < 3 {
			return kr.errAt(n, record, "want \"domainN NAME CPUMASK ...\" (schedstat version 17)")
		}
		name, mask = f[1], f[2]
		if !validDomainName(name) {
			return kr.errAt(n, record, fmt.Sprintf("want a domain name such as MC; got %q", name))
		}
	}
	cpus, err := ParseCPUMask(mask)
	if err != nil {
		return kr.errAt(n, record, err.Error())
	}
	return kr.addDomain(KernelDomain{CPU: kr.cpu, Level: level, Name: name, Span: NewCPUSet(cpus...)}, n, record)
}

// addDomain records a domain with its span, checking that levels come in
// order and spans grow.
func (kr *kernelReader) addDomain(d KernelDomain, n int, record string) error {
	key := [2]int{d.CPU, d.Level}
	if _, dup := kr.at[key]; dup {
		return kr.errAt(n, record, "domain listed twice")
	}
	if d.Level > 0 {
		below, ok := kr.at[[2]int{d.CPU, d.Level - 1}]
		if !ok {
			return kr.errAt(n, record, fmt.Sprintf("domain%d without domain%d below it", d.Level, d.Level-1))
		}
		b := kr.kv.Domains[below].Span
		if d.Span.Count() <= b.Count() || !subset(b, d.Span) {
			return kr.errAt(n, record, fmt.Sprintf("span %s does not strictly contain domain%d's %s", d.Span, d.Level-1, b))
		}
	}
	if !d.Span.Has(d.CPU) {
		return kr.errAt(n, record, fmt.Sprintf("span %s does not contain cpu %d", d.Span, d.CPU))
	}
	kr.at[key] = len(kr.kv.Domains)
	kr.kv.Domains = append(kr.kv.Domains, d)
	kr.lines = append(kr.lines, n)
	return nil
}

// debugLine parses "cpuN/domainM: name=NAME flags=SD_A SD_B ...".
func (kr *kernelReader) debugLine(text string, n int) error {
	head, rest, ok := strings.Cut(text, ":")
	head = strings.TrimSpace(head)
	cs, ds, _ := strings.Cut(head, "/")
	cpu, ok1 := cpuDirNumber(cs, "cpu")
	level, ok2 := cpuDirNumber(ds, "domain")
	if !ok || !ok1 || !ok2 || level >= maxKernelLevels {
		return kr.errAt(n, "", fmt.Sprintf("want \"cpuN/domainM: name=... flags=...\"; got %q", truncate(text, 60)))
	}
	e := debugEntry{cpu: cpu, level: level, file: kr.name, line: n}
	key := ""
	for _, tok := range strings.Fields(rest) {
		if k, v, isKV := strings.Cut(tok, "="); isKV && (k == "name" || k == "flags") {
			key = k
			if k == "name" {
				e.name = v
			} else if v != "" {
				e.flags = append(e.flags, v)
			}
			continue
		}
		if key != "flags" {
			return kr.errAt(n, head, fmt.Sprintf("want name=NAME flags=SD_...; got %q", tok))
		}
		e.flags = append(e.flags, tok)
	}
	return kr.addDebug(e, head)
}

// addDebug records the name and flags of a domain, from a debugfs line or
// files.
func (kr *kernelReader) addDebug(e debugEntry, record string) error {
	fail := func(msg string) error {
		return &ParseError{File: e.file, Line: e.line, Record: record, Msg: msg, Err: ErrBadField}
	}
	if e.name != "" && !validDomainName(e.name) {
		return fail(fmt.Sprintf("want a domain name such as MC; got %q", e.name))
	}
	for _, fl := range e.flags {
		if !validSDName(fl) {
			return fail(fmt.Sprintf("want SD_* flag names; got %q", fl))
		}
	}
	kr.debug = append(kr.debug, e)
	return nil
}

// clusterLine parses "cpuN: cluster_cpus=LIST package_cpus=LIST die_cpus=LIST".
func (kr *kernelReader) clusterLine(f []string, n int) error {
	cpu, ok := cpuDirNumber(strings.TrimSuffix(f[0], ":"), "cpu")
	if !ok {
		return kr.errAt(n, "", fmt.Sprintf("want \"cpuN: cluster_cpus=...\"; got %q", f[0]))
	}
	record := "cpu" + strconv.Itoa(cpu)
	if kr.cluster[cpu] {
		return kr.errAt(n, record, "cluster line given twice")
	}
	kr.cluster[cpu] = true
	ci := ClusterInfo{CPU: cpu, ID: -1}
	for _, tok := range f[1:] {
		k, v, ok := strings.Cut(tok, "=")
		switch {
		case !ok:
			return kr.errAt(n, record, fmt.Sprintf("want key=value fields; got %q", tok))
		case k == "cluster_id":
			id, err := strconv.Atoi(v)
			if v != "" && err != nil {
				return kr.errAt(n, record, fmt.Sprintf("field cluster_id: want an integer; got %q", v))
			}
			if v != "" && !noCluster(id) {
				ci.ID = id
			}
		case k == "cluster_cpus" || k == "package_cpus" || k == "die_cpus":
			if v == "" {
				continue
			}
			cpus, err := ParseCPUList(v)
			if err != nil {
				return kr.errAt(n, record, fmt.Sprintf("field %s: %v", k, err))
			}
			if !slices.Contains(cpus, cpu) {
				return kr.errAt(n, record, fmt.Sprintf("field %s: %s does not contain cpu %d", k, v, cpu))
			}
			if k == "cluster_cpus" {
				ci.CPUs = NewCPUSet(cpus...)
			}
		default:
			return kr.errAt(n, record, fmt.Sprintf("unknown field %q: want cluster_cpus, cluster_id, package_cpus, die_cpus", k))
		}
	}
	if ci.ID >= 0 || !ci.CPUs.Empty() {
		kr.kv.Clusters = append(kr.kv.Clusters, ci)
	}
	return nil
}

// cacheLine parses "cpuN indexM: L2 Unified shared=LIST".
func (kr *kernelReader) cacheLine(f []string, n int) error {
	cpu, ok1 := cpuDirNumber(f[0], "cpu")
	idx, ok2 := cpuDirNumber(strings.TrimSuffix(f[1], ":"), "index")
	if !ok1 || !ok2 || !strings.HasSuffix(f[1], ":") || len(f) != 5 {
		return kr.errAt(n, "", fmt.Sprintf("want \"cpuN indexM: L2 Unified shared=LIST\"; got %q", truncate(strings.Join(f, " "), 60)))
	}
	record := fmt.Sprintf("cpu%d index%d", cpu, idx)
	if kr.caches[[2]int{cpu, idx}] {
		return kr.errAt(n, record, "cache listed twice")
	}
	kr.caches[[2]int{cpu, idx}] = true
	level, err := strconv.Atoi(strings.TrimPrefix(f[2], "L"))
	if err != nil || !strings.HasPrefix(f[2], "L") || level < 1 || level > 15 {
		return kr.errAt(n, record, fmt.Sprintf("want a level L1..L15; got %q", f[2]))
	}
	typ := f[3]
	if typ != "Data" && typ != "Instruction" && typ != "Unified" {
		return kr.errAt(n, record, fmt.Sprintf("want the type Data, Instruction or Unified; got %q", typ))
	}
	list, ok := strings.CutPrefix(f[4], "shared=")
	if !ok {
		return kr.errAt(n, record, fmt.Sprintf("want shared=LIST; got %q", f[4]))
	}
	cpus, err := ParseCPUList(list)
	if err != nil {
		return kr.errAt(n, record, fmt.Sprintf("field shared: %v", err))
	}
	if !slices.Contains(cpus, cpu) {
		return kr.errAt(n, record, fmt.Sprintf("field shared: %s does not contain cpu %d", list, cpu))
	}
	kr.kv.Caches = append(kr.kv.Caches, CacheInfo{CPU: cpu, Index: idx, Level: level, Type: typ, Shared: NewCPUSet(cpus...)})
	return nil
}

// finish joins the debugfs names and flags to the schedstat domains and
// returns the view.
func (kr *kernelReader) finish() (*KernelView, error) {
	named := map[[2]int]bool{}
	for _, e := range kr.debug {
		record := fmt.Sprintf("cpu%d/domain%d", e.cpu, e.level)
		fail := func(msg string) error {
			return &ParseError{File: e.file, Line: e.line, Record: record, Msg: msg, Err: ErrInconsistent}
		}
		if named[[2]int{e.cpu, e.level}] {
			return nil, fail("name and flags given twice")
		}
		named[[2]int{e.cpu, e.level}] = true
		i, ok := kr.at[[2]int{e.cpu, e.level}]
		if !ok {
			if len(kr.kv.Domains) == 0 {
				return nil, fail("a domain name and flags without the /proc/schedstat domain lines that give its span")
			}
			return nil, fail("no such domain in the /proc/schedstat lines")
		}
		d := &kr.kv.Domains[i]
		if d.Name != "" && e.name != "" && d.Name != e.name {
			return nil, fail(fmt.Sprintf("named %s here and %s in /proc/schedstat (line %d)", e.name, d.Name, kr.lines[i]))
		}
		if e.name != "" {
			d.Name = e.name
		}
		if len(e.flags) > 0 {
			d.Flags = e.flags
		}
	}
	kv := kr.kv
	return &kv, nil
}
