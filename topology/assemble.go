package topology

import (
	"fmt"
	"slices"
	"strconv"
)

// rawCPU is what one topology.txt line or one sysfs cpuN directory says
// about a CPU, before grouping. Unknown values are nil lists, -1 ids and
// capacity 0.
type rawCPU struct {
	id          int
	offline     bool // no topology information at all (an offline CPU)
	pkg, die    int
	coreID      int
	clusterID   int      // -1 when absent or "no cluster" (65535, -1)
	threads     *cpuList // thread_siblings_list
	pkgCPUs     *cpuList // core_siblings_list / package_cpus_list
	clusterCPUs *cpuList // cluster_cpus_list
	llcCPUs     *cpuList // shared_cpu_list of the last-level cache
	node        int      // -1 unknown
	capacity    int      // 0 unknown
	where       func(msg string, cause error) error
}

// cpuList is a parsed CPU list with its canonical text, shared by every
// CPU that gives the same list (a package-wide list is read once, not
// once per CPU).
type cpuList struct {
	cpus []int
	key  string // FormatCPUList(cpus)
}

// listInterner parses CPU lists, sharing equal ones.
type listInterner map[string]*cpuList

func (li listInterner) parse(s string) (*cpuList, error) {
	if l, ok := li[s]; ok {
		return l, nil
	}
	cpus, err := ParseCPUList(s)
	if err != nil {
		return nil, err
	}
	l := &cpuList{cpus: cpus, key: FormatCPUList(cpus)}
	li[s] = l
	return l, nil
}

// noCluster reports whether a cluster_id value means "no cluster": the
// kernel prints -1 (arm64, BAD_APICID-less arches) or 65535 (x86's u16
// BAD_APICID in l2c_id) when firmware describes none.
func noCluster(id int) bool { return id < 0 || id == 0xffff }

// grouper assigns dense ids, in order of first use, to group keys.
type grouper map[string]int

func (g grouper) id(key string) int {
	if id, ok := g[key]; ok {
		return id
	}
	g[key] = len(g)
	return g[key]
}

// assemble turns per-CPU records into a Topology: it checks that the CPU
// numbers are 0..n-1, groups CPUs into cores, LLCs and clusters from the
// sibling lists (checking that the lists agree), and fills what is
// missing with stated defaults (recorded in Notes).
func assemble(raws []rawCPU) (*Topology, error) {
	slices.SortStableFunc(raws, func(a, b rawCPU) int { return a.id - b.id })
	for i := range raws {
		r := &raws[i]
		if r.id != i {
			if i > 0 && r.id == raws[i-1].id {
				return nil, r.where(fmt.Sprintf("cpu %d listed twice", r.id), ErrInconsistent)
			}
			return nil, r.where(fmt.Sprintf("cpu %d missing: CPUs must be numbered 0..%d without gaps, next is %d", i, len(raws)-1, r.id), ErrInconsistent)
		}
	}
	n := len(raws)
	t := &Topology{CPUs: make([]CPU, n)}
	note := func(s string) {
		if !slices.Contains(t.Notes, s) {
			t.Notes = append(t.Notes, s)
		}
	}

	// agree checks that list, as seen by r, contains r and that every
	// online member reports the same list through get. Each distinct list
	// is checked once, so a package-wide list costs O(n), not O(n^2).
	checked := map[*cpuList]bool{}
	agree := func(r *rawCPU, field string, list *cpuList, get func(*rawCPU) *cpuList) error {
		if !slices.Contains(list.cpus, r.id) {
			return r.where(fmt.Sprintf("field %s: %s does not contain cpu %d itself", field, list.key, r.id), ErrInconsistent)
		}
		if checked[list] {
			return nil
		}
		for _, m := range list.cpus {
			if m >= n {
				return r.where(fmt.Sprintf("field %s: %s names cpu %d, but there are %d CPUs", field, list.key, m, n), ErrInconsistent)
			}
			o := &raws[m]
			if o.offline {
				continue
			}
			if other := get(o); other != nil && other.key != list.key {
				return r.where(fmt.Sprintf("field %s: cpu %d says %s, cpu %d says %s", field, r.id, list.key, m, other.key), ErrInconsistent)
			}
		}
		checked[list] = true
		return nil
	}

	cores, llcs, clusters := grouper{}, grouper{}, grouper{}
	packages := map[int]bool{}
	unknownNode, knownNode := false, false
	for i := range raws {
		r := &raws[i]
		c := &t.CPUs[i]
		c.ID = i
		if r.offline {
			key := "offline" + strconv.Itoa(i)
			c.Core, c.Cluster, c.CLS = cores.id(key), llcs.id(key), clusters.id(key)
			c.Package, c.Node, c.Capacity = max(r.pkg, 0), max(r.node, 0), CapacityScale
			c.Offline = true
			note(fmt.Sprintf("cpu %d was offline: its core, cache and capacity are unknown; shown alone with capacity 1024", i))
			continue
		}
		c.Package = r.pkg
		packages[r.pkg] = true

		// Core: the SMT sibling set when known, else (package, die, core_id).
		if r.threads != nil {
			if err := agree(r, "thread_siblings", r.threads, func(o *rawCPU) *cpuList { return o.threads }); err != nil {
				return nil, err
			}
			c.Core = cores.id("t" + r.threads.key)
		} else {
			c.Core = cores.id(fmt.Sprintf("p%d/d%d/c%d", r.pkg, r.die, r.coreID))
		}

		// LLC: the last-level cache's shared_cpu_list, else the package.
		switch {
		case r.llcCPUs != nil:
			if err := agree(r, "cache shared_cpu_list", r.llcCPUs, func(o *rawCPU) *cpuList { return o.llcCPUs }); err != nil {
				return nil, err
			}
			c.Cluster = llcs.id("l" + r.llcCPUs.key)
		case r.pkgCPUs != nil:
			if err := agree(r, "core_siblings", r.pkgCPUs, func(o *rawCPU) *cpuList { return o.pkgCPUs }); err != nil {
				return nil, err
			}
			c.Cluster = llcs.id("l" + r.pkgCPUs.key)
			note("no cache information: the LLC is taken to be the package (core_siblings)")
		default:
			c.Cluster = llcs.id(fmt.Sprintf("p%d", r.pkg))
			note("no cache information: the LLC is taken to be the package (core_siblings)")
		}

		// CLS: cluster_cpus_list when known, else a real cluster_id.
		switch {
		case r.clusterCPUs != nil:
			if !slices.Contains(r.clusterCPUs.cpus, r.id) {
				return nil, r.where(fmt.Sprintf("field cluster_cpus: %s does not contain cpu %d itself", r.clusterCPUs.key, r.id), ErrInconsistent)
			}
			c.CLS = clusters.id("c" + r.clusterCPUs.key)
		case !noCluster(r.clusterID):
			c.CLS = clusters.id(fmt.Sprintf("p%d/d%d/k%d", r.pkg, r.die, r.clusterID))
		default:
			c.CLS = clusters.id("")
		}

		if r.node >= 0 {
			c.Node = r.node
			knownNode = true
		} else {
			unknownNode = true
		}
		if r.capacity > 0 {
			c.Capacity = r.capacity
		} else {
			c.Capacity = CapacityScale
			note("no cpu_capacity: every CPU without one is taken as 1024")
		}
	}

	if unknownNode {
		switch {
		case knownNode:
			note("some CPUs have no NUMA node: they are put on node 0")
			for i := range raws {
				if raws[i].node < 0 && !raws[i].offline {
					t.CPUs[i].Node = 0
				}
			}
		case len(packages) > 1:
			note("no NUMA information: one node per package assumed")
			pkgs := make([]int, 0, len(packages))
			for p := range packages {
				pkgs = append(pkgs, p)
			}
			slices.Sort(pkgs)
			for i := range t.CPUs {
				if !raws[i].offline {
					t.CPUs[i].Node = slices.Index(pkgs, t.CPUs[i].Package)
				}
			}
		default:
			note("no NUMA information: one node assumed")
		}
	}
	if err := t.Validate(); err != nil {
		return nil, &ParseError{Msg: err.Error(), Err: err}
	}
	return t, nil
}

// lastLevelCache returns the cache of caches (one CPU's) that is its LLC:
// the data or unified cache of the highest level, unified preferred on a
// tie; nil when there is none.
func lastLevelCache(caches []CacheInfo) *CacheInfo {
	var best *CacheInfo
	for i := range caches {
		c := &caches[i]
		if c.Type == "Instruction" {
			continue
		}
		if best == nil || c.Level > best.Level || (c.Level == best.Level && c.Type == "Unified" && best.Type != "Unified") {
			best = c
		}
	}
	return best
}

// useKernelView fills in the per-CPU records what kv knows: the LLC from
// the caches' shared_cpu_list (the last level, see lastLevelCache) and the
// cluster from cluster_cpus_list or cluster_id. Without cache information,
// the LLC is the span of each CPU's highest SD_SHARE_LLC domain when the
// kernel listed one for every online CPU (the kernel's sd_llc). It returns
// the notes to add.
func useKernelView(raws []rawCPU, kv *KernelView, lists listInterner) ([]string, error) {
	byID := map[int]*rawCPU{}
	for i := range raws {
		if !raws[i].offline {
			byID[raws[i].id] = &raws[i]
		}
	}
	set := func(dst **cpuList, s CPUSet) error {
		l, err := lists.parse(s.String())
		if err != nil {
			return err
		}
		*dst = l
		return nil
	}
	caches := map[int][]CacheInfo{}
	for _, c := range kv.Caches {
		caches[c.CPU] = append(caches[c.CPU], c)
	}
	for cpu, cs := range caches {
		r := byID[cpu]
		if r == nil {
			continue
		}
		if llc := lastLevelCache(cs); llc != nil {
			if err := set(&r.llcCPUs, llc.Shared); err != nil {
				return nil, err
			}
		}
	}
	for _, cl := range kv.Clusters {
		r := byID[cl.CPU]
		if r == nil {
			continue
		}
		if !cl.CPUs.Empty() {
			if err := set(&r.clusterCPUs, cl.CPUs); err != nil {
				return nil, err
			}
		}
		if cl.ID >= 0 {
			r.clusterID = cl.ID
		}
	}
	if len(caches) > 0 || !kv.HasDomains() {
		return nil, nil
	}
	sdLLC := map[int]KernelDomain{}
	for _, d := range kv.Domains {
		if KernelFlags(d.Flags)&ShareLLC == 0 {
			continue
		}
		if cur, ok := sdLLC[d.CPU]; !ok || d.Level > cur.Level {
			sdLLC[d.CPU] = d
		}
	}
	for cpu := range byID {
		if _, ok := sdLLC[cpu]; !ok {
			return nil, nil
		}
	}
	for cpu, r := range byID {
		if err := set(&r.llcCPUs, sdLLC[cpu].Span); err != nil {
			return nil, err
		}
	}
	return []string{"no cache information: the LLC is taken from the kernel's SD_SHARE_LLC domains"}, nil
}

// attachKernel sets t.Kernel to kv and checks it against t (Validate).
// When kv lists domains that differ from the derived ones, a note says
// where.
func (t *Topology) attachKernel(kv *KernelView) error {
	t.Kernel = kv
	if err := t.Validate(); err != nil {
		t.Kernel = nil
		return err
	}
	if n := t.kernelDomainsNote(); n != "" && !slices.Contains(t.Notes, n) {
		t.Notes = append(t.Notes, n)
	}
	return nil
}
