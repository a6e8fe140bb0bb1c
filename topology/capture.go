package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Roots are the mount points Capture reads. An empty Proc or Debug is not
// read.
type Roots struct {
	Sys   string // sysfs: "/sys"
	Proc  string // procfs: "/proc" (schedstat, the kernel release)
	Debug string // debugfs: "/sys/kernel/debug" (sched/domains; root only)
}

// LiveRoots are the roots of a running Linux system.
func LiveRoots() Roots { return Roots{Sys: "/sys", Proc: "/proc", Debug: "/sys/kernel/debug"} }

// Capture reads the CPU topology of the running machine from the roots
// (tests pass fake trees). It reads, for every sysfs
// devices/system/cpu/cpuN:
//
//	topology/{core_id,physical_package_id,die_id,cluster_id}
//	topology/{thread_siblings_list,core_siblings_list,cluster_cpus_list}
//	cpu_capacity                                  (absent on most x86: 1024)
//	cache/index*/{level,type,shared_cpu_list}     (the highest level is the LLC)
//
// and devices/system/node/nodeN/{cpulist,distance} for NUMA nodes; from
// procfs, schedstat (the span of every sched domain) and
// sys/kernel/osrelease; from debugfs, sched/domains/cpuN/domainM/{name,flags}
// (present when debugfs is mounted, readable by root, and the kernel runs
// with sched_verbose). The caches, clusters, domains and release are kept
// in Topology.Kernel, so Domains returns the kernel's own levels when they
// were read. A CPU without a topology directory is offline and shown
// alone. What had to be assumed, or could not be read, is listed in
// Notes. The Source of the result is "sysfs:"+r.Sys.
func Capture(r Roots) (*Topology, error) {
	cpuDir := filepath.Join(r.Sys, "devices", "system", "cpu")
	ents, err := os.ReadDir(cpuDir)
	if err != nil {
		return nil, fmt.Errorf("reading CPU topology: %w", err)
	}
	var raws []rawCPU
	kv := &KernelView{}
	lists := listInterner{}
	for _, e := range ents {
		id, ok := cpuDirNumber(e.Name(), "cpu")
		if !ok {
			continue
		}
		raw, err := captureCPU(filepath.Join(cpuDir, e.Name()), id, lists, kv)
		if err != nil {
			return nil, err
		}
		raws = append(raws, raw)
	}
	if len(raws) == 0 {
		return nil, &ParseError{File: cpuDir, Msg: "no cpuN directories", Err: ErrBadField}
	}
	dist, err := captureNodes(filepath.Join(r.Sys, "devices", "system", "node"), raws)
	if err != nil {
		return nil, err
	}
	var notes []string
	if err := captureKernel(r, kv, &notes); err != nil {
		return nil, err
	}
	if err := kv.validate(len(raws)); err != nil {
		return nil, &ParseError{File: kv.Source, Msg: err.Error(), Err: err}
	}
	more, err := useKernelView(raws, kv, lists)
	if err != nil {
		return nil, err
	}
	t, err := assemble(raws)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) && pe.File == "" {
			pe.File = cpuDir
		}
		return nil, err
	}
	t.Source = "sysfs:" + r.Sys
	t.NodeDistances = dist
	t.Notes = append(t.Notes, more...)
	t.Notes = append(t.Notes, notes...)
	if err := t.Validate(); err != nil {
		return nil, &ParseError{File: filepath.Join(r.Sys, "devices", "system", "node"), Msg: err.Error(), Err: err}
	}
	if kv.Release != "" || len(kv.Caches) > 0 || len(kv.Clusters) > 0 || kv.HasDomains() {
		if err := t.attachKernel(kv); err != nil {
			return nil, &ParseError{File: kv.Source, Msg: err.Error(), Err: err}
		}
	}
	return t, nil
}

// captureKernel reads the kernel release and the sched domains: spans from
// r.Proc/schedstat, names and flags from r.Debug/sched/domains. What
// cannot be read is noted, not an error; malformed content is an error.
func captureKernel(r Roots, kv *KernelView, notes *[]string) error {
	var srcs []string
	kr := newKernelReader("")
	if r.Proc != "" {
		rel, ok, err := sysFile(filepath.Join(r.Proc, "sys", "kernel", "osrelease"))
		if err != nil {
			return err
		}
		if ok {
			kv.Release = rel
		}
		path := filepath.Join(r.Proc, "schedstat")
		kr.name = path
		f, err := os.Open(path)
		switch {
		case err == nil:
			err = kr.read(f)
			f.Close()
			if err != nil {
				return err
			}
			srcs = append(srcs, "procfs:"+r.Proc)
		case errors.Is(err, fs.ErrNotExist):
			*notes = append(*notes, fmt.Sprintf("no %s (a kernel without CONFIG_SCHEDSTATS): the kernel's sched domains were not captured, they are derived", path))
		default:
			return fmt.Errorf("reading %s: %w", path, err)
		}
	}
	if len(kr.kv.Domains) > 0 {
		n, dir := 0, ""
		if r.Debug != "" {
			dir = filepath.Join(r.Debug, "sched", "domains")
			var err error
			if n, err = captureDebugDomains(dir, kr); err != nil {
				return err
			}
		}
		switch {
		case r.Debug == "":
			*notes = append(*notes, "debugfs not read: the sched domains' names and flags were classified from the topology")
		case n == 0:
			*notes = append(*notes, fmt.Sprintf("%s not readable (debugfs needs root, and the kernel lists its domains there when booted with sched_verbose): the sched domains' names and flags were classified from the topology", dir))
		default:
			srcs = append(srcs, "debugfs:"+r.Debug)
		}
	}
	got, err := kr.finish()
	if err != nil {
		return err
	}
	kv.Domains = got.Domains
	if len(kv.Caches) > 0 || len(kv.Clusters) > 0 {
		srcs = append([]string{"sysfs"}, srcs...)
	}
	kv.Source = strings.Join(srcs, " ")
	return nil
}

// captureDebugDomains reads dir/cpuN/domainM/{name,flags} into kr and
// returns how many domains it read; 0 when dir cannot be read (debugfs
// not mounted, or not root).
func captureDebugDomains(dir string, kr *kernelReader) (int, error) {
	cpus, err := os.ReadDir(dir)
	if err != nil {
		return 0, nil
	}
	n := 0
	for _, c := range cpus {
		cpu, ok := cpuDirNumber(c.Name(), "cpu")
		if !ok {
			continue
		}
		doms, err := os.ReadDir(filepath.Join(dir, c.Name()))
		if err != nil {
			return 0, nil
		}
		for _, d := range doms {
			level, ok := cpuDirNumber(d.Name(), "domain")
			if !ok || level >= maxKernelLevels {
				continue
			}
			base := filepath.Join(dir, c.Name(), d.Name())
			name, okN, err := sysFile(filepath.Join(base, "name"))
			if err != nil {
				return 0, nil // not readable
			}
			flags, okF, err := sysFile(filepath.Join(base, "flags"))
			if err != nil {
				return 0, nil
			}
			if !okN && !okF {
				continue
			}
			e := debugEntry{cpu: cpu, level: level, name: name, flags: strings.Fields(flags), file: base}
			if err := kr.addDebug(e, fmt.Sprintf("cpu%d/domain%d", cpu, level)); err != nil {
				return 0, err
			}
			n++
		}
	}
	return n, nil
}

// cpuDirNumber parses "cpu12" (or "node3") into 12.
func cpuDirNumber(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || n >= maxCPUs || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}

// sysFile reads one sysfs attribute; a missing file gives ("", false, nil).
func sysFile(path string) (string, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading %s: %w", path, err)
	}
	return strings.TrimSpace(string(b)), true, nil
}

func sysInt(path string, required bool) (int, bool, error) {
	s, ok, err := sysFile(path)
	if err != nil || !ok {
		if !ok && err == nil && required {
			err = &ParseError{File: path, Msg: "file missing", Err: ErrBadField}
		}
		return 0, false, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, false, &ParseError{File: path, Msg: fmt.Sprintf("want an integer; got %q", s), Err: ErrBadField}
	}
	return n, true, nil
}

func sysList(path string, required bool, lists listInterner) (*cpuList, error) {
	s, ok, err := sysFile(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		if required {
			return nil, &ParseError{File: path, Msg: "file missing", Err: ErrBadField}
		}
		return nil, nil
	}
	l, err := lists.parse(s)
	if err != nil {
		return nil, &ParseError{File: path, Msg: fmt.Sprintf("want a CPU list like 0-3,8; got %q", s), Err: ErrBadField}
	}
	return l, nil
}

func captureCPU(dir string, id int, lists listInterner, kv *KernelView) (rawCPU, error) {
	r := rawCPU{id: id, pkg: -1, die: -1, coreID: -1, clusterID: -1, node: -1}
	r.where = func(msg string, cause error) error {
		return &ParseError{File: dir, Msg: msg, Err: cause}
	}
	top := filepath.Join(dir, "topology")
	if st, err := os.Stat(top); err != nil || !st.IsDir() {
		r.offline = true
		return r, nil
	}
	var err error
	if r.coreID, _, err = sysInt(filepath.Join(top, "core_id"), true); err != nil {
		return r, err
	}
	if r.pkg, _, err = sysInt(filepath.Join(top, "physical_package_id"), true); err != nil {
		return r, err
	}
	if r.pkg < 0 {
		r.pkg = 0 // arm64 before 5.x printed -1 without a socket description
	}
	if d, ok, err := sysInt(filepath.Join(top, "die_id"), false); err != nil {
		return r, err
	} else if ok {
		r.die = d
	}
	if c, ok, err := sysInt(filepath.Join(top, "cluster_id"), false); err != nil {
		return r, err
	} else if ok {
		r.clusterID = c
	}
	if r.threads, err = sysList(filepath.Join(top, "thread_siblings_list"), true, lists); err != nil {
		return r, err
	}
	if r.pkgCPUs, err = sysList(filepath.Join(top, "core_siblings_list"), false, lists); err != nil {
		return r, err
	}
	if r.pkgCPUs == nil {
		if r.pkgCPUs, err = sysList(filepath.Join(top, "package_cpus_list"), true, lists); err != nil {
			return r, err
		}
	}
	if r.clusterCPUs, err = sysList(filepath.Join(top, "cluster_cpus_list"), false, lists); err != nil {
		return r, err
	}
	if ci := (ClusterInfo{CPU: id, ID: -1}); r.clusterCPUs != nil || !noCluster(r.clusterID) {
		if !noCluster(r.clusterID) {
			ci.ID = r.clusterID
		}
		if r.clusterCPUs != nil {
			ci.CPUs = NewCPUSet(r.clusterCPUs.cpus...)
		}
		kv.Clusters = append(kv.Clusters, ci)
	}
	if c, ok, err := sysInt(filepath.Join(dir, "cpu_capacity"), false); err != nil {
		return r, err
	} else if ok {
		if c < 1 || c > CapacityScale {
			return r, &ParseError{File: filepath.Join(dir, "cpu_capacity"), Msg: fmt.Sprintf("want 1..%d; got %d", CapacityScale, c), Err: ErrBadField}
		}
		r.capacity = c
	}
	caches, err := captureCaches(filepath.Join(dir, "cache"), id)
	kv.Caches = append(kv.Caches, caches...)
	return r, err
}

// captureCaches returns the caches of cpu under dir (cache/index*), in
// index order; none when there is no cache information.
func captureCaches(dir string, cpu int) ([]CacheInfo, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	var out []CacheInfo
	for _, e := range ents {
		index, ok := cpuDirNumber(e.Name(), "index")
		if !ok {
			continue
		}
		idx := filepath.Join(dir, e.Name())
		level, ok, err := sysInt(filepath.Join(idx, "level"), false)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		typ, _, err := sysFile(filepath.Join(idx, "type"))
		if err != nil {
			return nil, err
		}
		if typ != "Data" && typ != "Instruction" && typ != "Unified" {
			return nil, &ParseError{File: filepath.Join(idx, "type"), Msg: fmt.Sprintf("want Data, Instruction or Unified; got %q", typ), Err: ErrBadField}
		}
		if level < 1 || level > 15 {
			return nil, &ParseError{File: filepath.Join(idx, "level"), Msg: fmt.Sprintf("want 1..15; got %d", level), Err: ErrBadField}
		}
		path := filepath.Join(idx, "shared_cpu_list")
		s, ok, err := sysFile(path)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, &ParseError{File: path, Msg: "file missing", Err: ErrBadField}
		}
		shared, err := ParseCPUList(s)
		if err != nil {
			return nil, &ParseError{File: path, Msg: fmt.Sprintf("want a CPU list like 0-3,8; got %q", s), Err: ErrBadField}
		}
		if !slices.Contains(shared, cpu) {
			return nil, &ParseError{File: path, Msg: fmt.Sprintf("%s does not contain cpu %d itself", s, cpu), Err: ErrInconsistent}
		}
		out = append(out, CacheInfo{CPU: cpu, Index: index, Level: level, Type: typ, Shared: NewCPUSet(shared...)})
	}
	slices.SortFunc(out, func(a, b CacheInfo) int { return a.Index - b.Index })
	return out, nil
}

// captureNodes sets the node of every CPU listed in nodeDir/node*/cpulist
// and returns the node distance matrix, or nil when there is no node
// directory (a kernel without CONFIG_NUMA).
func captureNodes(nodeDir string, raws []rawCPU) ([][]int, error) {
	ents, err := os.ReadDir(nodeDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", nodeDir, err)
	}
	var nodes []int
	for _, e := range ents {
		if id, ok := cpuDirNumber(e.Name(), "node"); ok {
			nodes = append(nodes, id)
		}
	}
	slices.Sort(nodes)
	if len(nodes) == 0 {
		return nil, nil
	}
	byID := map[int]*rawCPU{}
	for i := range raws {
		byID[raws[i].id] = &raws[i]
	}
	dist := make([][]int, nodes[len(nodes)-1]+1)
	for _, nd := range nodes {
		dir := filepath.Join(nodeDir, "node"+strconv.Itoa(nd))
		s, ok, err := sysFile(filepath.Join(dir, "cpulist"))
		if err != nil {
			return nil, err
		}
		if ok && s != "" { // a memory-only node has an empty cpulist
			cpus, err := ParseCPUList(s)
			if err != nil {
				return nil, &ParseError{File: filepath.Join(dir, "cpulist"), Msg: fmt.Sprintf("want a CPU list like 0-3,8; got %q", s), Err: ErrBadField}
			}
			for _, c := range cpus {
				if r := byID[c]; r != nil {
					r.node = nd
				}
			}
		}
		// distance lists the distances to every online node in id order.
		ds, ok, err := sysFile(filepath.Join(dir, "distance"))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, nil // no distances: the default one-hop model
		}
		fields := strings.Fields(ds)
		if len(fields) != len(nodes) {
			return nil, &ParseError{File: filepath.Join(dir, "distance"), Msg: fmt.Sprintf("want %d distances, one per node; got %q", len(nodes), ds), Err: ErrBadField}
		}
		row := make([]int, len(dist))
		for j, f := range fields {
			d, err := strconv.Atoi(f)
			if err != nil || d <= 0 {
				return nil, &ParseError{File: filepath.Join(dir, "distance"), Msg: fmt.Sprintf("want positive integers; got %q", ds), Err: ErrBadField}
			}
			row[nodes[j]] = d
		}
		dist[nd] = row
	}
	// Rows of missing node ids stay empty; columns of missing ids are 0,
	// which Validate rejects only for nodes that hold CPUs.
	return dist, nil
}
