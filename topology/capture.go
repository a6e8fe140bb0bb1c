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

// Capture reads the CPU topology of the running machine from a sysfs tree
// mounted at sysRoot ("/sys" on a live system; tests pass a fake tree).
// It reads, for every devices/system/cpu/cpuN:
//
//	topology/{core_id,physical_package_id,die_id,cluster_id}
//	topology/{thread_siblings_list,core_siblings_list,cluster_cpus_list}
//	cpu_capacity                                  (absent on most x86: 1024)
//	cache/index*/{level,type,shared_cpu_list}     (the highest level is the LLC)
//
// and devices/system/node/nodeN/{cpulist,distance} for NUMA nodes. A CPU
// without a topology directory is offline and shown alone. What had to be
// assumed is listed in Notes. The Source of the result is "sysfs:"+sysRoot.
func Capture(sysRoot string) (*Topology, error) {
	cpuDir := filepath.Join(sysRoot, "devices", "system", "cpu")
	ents, err := os.ReadDir(cpuDir)
	if err != nil {
		return nil, fmt.Errorf("reading CPU topology: %w", err)
	}
	var raws []rawCPU
	lists := listInterner{}
	for _, e := range ents {
		id, ok := cpuDirNumber(e.Name(), "cpu")
		if !ok {
			continue
		}
		raw, err := captureCPU(filepath.Join(cpuDir, e.Name()), id, lists)
		if err != nil {
			return nil, err
		}
		raws = append(raws, raw)
	}
	if len(raws) == 0 {
		return nil, &ParseError{File: cpuDir, Msg: "no cpuN directories", Err: ErrBadField}
	}
	dist, err := captureNodes(filepath.Join(sysRoot, "devices", "system", "node"), raws)
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
	t.Source = "sysfs:" + sysRoot
	t.NodeDistances = dist
	if err := t.Validate(); err != nil {
		return nil, &ParseError{File: filepath.Join(sysRoot, "devices", "system", "node"), Msg: err.Error(), Err: err}
	}
	return t, nil
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

func captureCPU(dir string, id int, lists listInterner) (rawCPU, error) {
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
	if c, ok, err := sysInt(filepath.Join(dir, "cpu_capacity"), false); err != nil {
		return r, err
	} else if ok {
		if c < 1 || c > CapacityScale {
			return r, &ParseError{File: filepath.Join(dir, "cpu_capacity"), Msg: fmt.Sprintf("want 1..%d; got %d", CapacityScale, c), Err: ErrBadField}
		}
		r.capacity = c
	}
	r.llcCPUs, err = captureLLC(filepath.Join(dir, "cache"), lists)
	return r, err
}

// captureLLC returns the shared_cpu_list of the highest-level data or
// unified cache under dir (cache/index*), preferring unified on a tie, or
// nil when there is no cache information.
func captureLLC(dir string, lists listInterner) (*cpuList, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	var best *cpuList
	bestLevel, bestUnified := -1, false
	for _, e := range ents {
		if _, ok := cpuDirNumber(e.Name(), "index"); !ok {
			continue
		}
		idx := filepath.Join(dir, e.Name())
		level, ok, err := sysInt(filepath.Join(idx, "level"), false)
		if err != nil {
			return nil, err
		}
		typ, _, err := sysFile(filepath.Join(idx, "type"))
		if err != nil {
			return nil, err
		}
		if !ok || typ == "Instruction" {
			continue
		}
		unified := typ == "Unified"
		if level < bestLevel || (level == bestLevel && (bestUnified || !unified)) {
			continue
		}
		shared, err := sysList(filepath.Join(idx, "shared_cpu_list"), true, lists)
		if err != nil {
			return nil, err
		}
		best, bestLevel, bestUnified = shared, level, unified
	}
	return best, nil
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
