package topology

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// DomainFlags are the sched-domain flags schedlens models, named after the
// kernel's SD_* flags (include/linux/sched/sd_flags.h).
type DomainFlags uint16

// Domain flags.
const (
	ShareCapacity    DomainFlags = 1 << iota // SD_SHARE_CPUCAPACITY: SMT siblings share a core
	ShareLLC                                 // SD_SHARE_LLC: the span shares a last-level cache
	ClusterFlag                              // SD_CLUSTER: CPUs sharing an L2 or cluster tag
	AsymCapacity                             // SD_ASYM_CPUCAPACITY: the span has CPUs of different capacity
	AsymCapacityFull                         // SD_ASYM_CPUCAPACITY_FULL: the span has every capacity of the machine
	AsymPacking                              // SD_ASYM_PACKING: CPUs of different priority (ITMT)
	NUMAFlag                                 // SD_NUMA: the span crosses NUMA nodes
)

var flagNames = []struct {
	f    DomainFlags
	name string
}{
	{ShareCapacity, "share-capacity"},
	{ShareLLC, "share-llc"},
	{ClusterFlag, "cluster"},
	{AsymCapacity, "asym-capacity"},
	{AsymCapacityFull, "asym-capacity-full"},
	{AsymPacking, "asym-packing"},
	{NUMAFlag, "numa"},
}

// Names returns the names of the set flags in a fixed order:
// "share-capacity", "share-llc", "cluster", "asym-capacity",
// "asym-capacity-full", "asym-packing", "numa".
func (f DomainFlags) Names() []string {
	out := []string{}
	for _, n := range flagNames {
		if f&n.f != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// String joins Names with commas; "-" when no flag is set.
func (f DomainFlags) String() string {
	if f == 0 {
		return "-"
	}
	return strings.Join(f.Names(), ",")
}

// MarshalJSON writes the flags as an array of Names.
func (f DomainFlags) MarshalJSON() ([]byte, error) { return json.Marshal(f.Names()) }

// UnmarshalJSON reads an array of Names.
func (f *DomainFlags) UnmarshalJSON(b []byte) error {
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return err
	}
	*f = 0
	for _, s := range names {
		found := false
		for _, n := range flagNames {
			if n.name == s {
				*f |= n.f
				found = true
			}
		}
		if !found {
			return fmt.Errorf("unknown domain flag %q", s)
		}
	}
	return nil
}

// Domain is one sched-domain level.
type Domain struct {
	// Name is the kernel's level name: "SMT", "CLS", "MC", "PKG" or
	// "NUMA" (every NUMA level is called NUMA, as in the kernel); from a
	// kernel listing, whatever name the kernel gave.
	Name string `json:"name"`
	// Flags are the flags of the level: the union of CPUFlags.
	Flags DomainFlags `json:"flags"`
	// Spans[cpu] lists the CPUs of cpu's domain at this level, ascending;
	// nil where the level is degenerate for cpu (the kernel removes it).
	// The CPUs of one group share one slice: do not modify it.
	Spans [][]int `json:"spans"`
	// CPUFlags[cpu] are the flags of cpu's domain at this level, as the
	// kernel sets them per domain (asym-capacity, for one, depends on the
	// span); 0 where Spans[cpu] is nil. Read them through FlagsOf.
	CPUFlags []DomainFlags `json:"cpu_flags,omitempty"`
}

// FlagsOf returns the flags of cpu's domain at this level: CPUFlags[cpu]
// when known, else the level's Flags; 0 where the level is degenerate for
// cpu or cpu is out of range.
func (d Domain) FlagsOf(cpu int) DomainFlags {
	if cpu < 0 || cpu >= len(d.Spans) || d.Spans[cpu] == nil {
		return 0
	}
	if cpu < len(d.CPUFlags) {
		return d.CPUFlags[cpu]
	}
	return d.Flags
}

// Groups returns the distinct non-nil spans of d, ordered by their lowest
// CPU.
func (d Domain) Groups() [][]int {
	var out [][]int
	slice := map[*int]bool{}  // span slices seen (the CPUs of a group share one)
	seen := map[string]bool{} // spans listed, by content
	for _, s := range d.Spans {
		if len(s) == 0 || slice[&s[0]] {
			continue
		}
		slice[&s[0]] = true
		k := FormatCPUList(s)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b []int) int { return a[0] - b[0] })
	return out
}

// Domains returns the sched-domain levels of t, lowest first: the
// kernel's own listing when t.Kernel has one (see KernelView; a domain
// recorded without a name or flags gets them from the topology), else
// DerivedDomains. DomainSource says which. An invalid topology (see
// Validate) gives nil.
func (t *Topology) Domains() []Domain { return t.domains() }

// DerivedDomains derives the sched-domain levels the kernel would build on
// t, lowest first, from its CPUs alone (ignoring a kernel listing). A
// topology whose CPUs are invalid (see Validate) gives nil.
//
// The model follows default_topology and sched_init_numa in
// kernel/sched/topology.c:
//  1. Candidate levels, each a span per CPU: SMT (the core, flags
//     share-capacity and share-llc), CLS (the CPUs of the same CLS inside
//     the LLC; cluster, share-llc), MC (the LLC; share-llc), PKG (the NUMA
//     node, as the kernel's cpu_cpu_mask), then one NUMA level per
//     distinct remote distance: the CPUs of every node at most that far.
//  2. Per CPU, a level is degenerate and dropped when its span is that
//     CPU alone or equals the span of the level kept below it
//     (sd_degenerate, sd_parent_degenerate); CLS is also dropped where it
//     spans the whole LLC, so that MC stands for the LLC (arm64's
//     cpu_clustergroup_mask does the same). A level dropped for every CPU
//     is not returned.
//  3. asym-capacity is set on a level where some CPU's span holds CPUs of
//     different capacity, asym-capacity-full where a span holds every
//     capacity of the machine (asym_cpu_capacity_classify); asym-packing
//     on a level above SMT whose span holds different Prio values.
//
// Flags are per level: a flag is set when it holds for the span of at
// least one CPU.
func (t *Topology) DerivedDomains() []Domain {
	if t.validateCPUs() != nil {
		return nil
	}
	return t.derivedDomains()
}

func (t *Topology) derivedDomains() []Domain {
	n := len(t.CPUs)
	nCaps := t.capacityClasses()
	llcSize := map[int]int{}
	nodeCPUs := map[int][]int{}
	for i, c := range t.CPUs {
		llcSize[c.Cluster]++
		nodeCPUs[c.Node] = append(nodeCPUs[c.Node], i)
	}
	nodes := make([]int, 0, len(nodeCPUs))
	for nd := range nodeCPUs {
		nodes = append(nodes, nd)
	}
	slices.Sort(nodes)

	// A level maps each CPU to a group key; CPUs with one key share a
	// span. NUMA spans are unions of nodes, computed per node.
	type level struct {
		name  string
		flags DomainFlags
		key   func(c *CPU) [2]int
		dist  int // NUMA levels: nodes at most this far are in the span
	}
	levels := []level{
		{name: "SMT", flags: ShareCapacity | ShareLLC, key: func(c *CPU) [2]int { return [2]int{c.Core, 0} }},
		{name: "CLS", flags: ClusterFlag | ShareLLC, key: func(c *CPU) [2]int { return [2]int{c.Cluster, c.CLS} }},
		{name: "MC", flags: ShareLLC, key: func(c *CPU) [2]int { return [2]int{c.Cluster, 0} }},
		{name: "PKG", key: func(c *CPU) [2]int { return [2]int{c.Node, 0} }},
	}
	var dists []int
	for _, a := range nodes {
		for _, b := range nodes {
			if a != b {
				dists = append(dists, t.nodeDistance(a, b))
			}
		}
	}
	slices.Sort(dists)
	for _, d := range slices.Compact(dists) {
		levels = append(levels, level{name: "NUMA", flags: NUMAFlag, key: func(c *CPU) [2]int { return [2]int{c.Node, 0} }, dist: d})
	}

	below := make([]int, n) // per CPU, the size of the span kept last (spans nest)
	var out []Domain
	for _, lv := range levels {
		groups := map[[2]int][]int{}
		if lv.dist == 0 {
			for i := range t.CPUs {
				k := lv.key(&t.CPUs[i])
				groups[k] = append(groups[k], i)
			}
		} else {
			for _, a := range nodes {
				var span []int
				for _, b := range nodes {
					if a == b || t.nodeDistance(a, b) <= lv.dist {
						span = append(span, nodeCPUs[b]...)
					}
				}
				slices.Sort(span)
				groups[[2]int{a, 0}] = span
			}
		}
		// Flags of each group's span, computed once per group.
		groupFlags := map[[2]int]DomainFlags{}
		for k, span := range groups {
			groupFlags[k] = lv.flags | t.spanFlags(span, lv.name == "SMT", nCaps)
		}
		dom := Domain{Name: lv.name, Flags: lv.flags, Spans: make([][]int, n), CPUFlags: make([]DomainFlags, n)}
		kept := false
		for i := range t.CPUs {
			k := lv.key(&t.CPUs[i])
			span := groups[k]
			if len(span) <= 1 || len(span) == below[i] {
				continue
			}
			if lv.name == "CLS" && len(span) == llcSize[t.CPUs[i].Cluster] {
				continue // CLS spanning the whole LLC: MC stands for it
			}
			dom.Spans[i] = span
			dom.CPUFlags[i] = groupFlags[k]
			dom.Flags |= groupFlags[k]
			below[i] = len(span)
			kept = true
		}
		if kept {
			out = append(out, dom)
		}
	}
	return out
}
