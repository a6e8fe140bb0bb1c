package topology

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// KernelView is what the recording machine's kernel said about its CPUs
// and sched domains, kept as read:
//
//   - Caches: every cpuN/cache/indexM (level, type, shared_cpu_list);
//   - Clusters: cluster_id and cluster_cpus_list per CPU;
//   - Domains: per CPU and level, the span from /proc/schedstat's domain
//     lines and the name and flags from debugfs sched/domains;
//   - Release: the kernel release (uname -r), when known.
//
// Capture fills it on a live system; Load reads it from the
// sched-domains.txt next to a topology file (ReadKernelView). When it lists
// domains, Topology.Domains returns the kernel's levels instead of
// deriving them (DomainSource says which).
type KernelView struct {
	Release  string         `json:"release,omitempty"`
	Source   string         `json:"source,omitempty"` // "file:PATH", or the procfs and debugfs roots read
	Caches   []CacheInfo    `json:"caches,omitempty"`
	Clusters []ClusterInfo  `json:"clusters,omitempty"`
	Domains  []KernelDomain `json:"domains,omitempty"`
}

// CacheInfo is one cache of one CPU (cpuN/cache/indexM).
type CacheInfo struct {
	CPU    int    `json:"cpu"`
	Index  int    `json:"index"`
	Level  int    `json:"level"`
	Type   string `json:"type"`   // "Data", "Instruction" or "Unified"
	Shared CPUSet `json:"shared"` // shared_cpu_list: the CPUs using this cache, the CPU included
}

// ClusterInfo is one CPU's cluster as sysfs gives it.
type ClusterInfo struct {
	CPU  int    `json:"cpu"`
	ID   int    `json:"id"`             // cluster_id; -1 when absent or "no cluster" (-1, 65535)
	CPUs CPUSet `json:"cpus,omitempty"` // cluster_cpus_list; empty when absent
}

// KernelDomain is one sched domain of one CPU as the kernel listed it.
type KernelDomain struct {
	CPU   int    `json:"cpu"`
	Level int    `json:"level"`          // M of cpuN/domainM: 0 is the lowest
	Name  string `json:"name,omitempty"` // "SMT", "MC", ...; empty when not recorded
	Span  CPUSet `json:"span"`           // the domain's cpumask
	// Flags are the SD_* names debugfs prints, such as "SD_SHARE_LLC";
	// nil when not recorded (then the flags are classified from the
	// topology, see Domains).
	Flags []string `json:"flags,omitempty"`
}

// maxKernelLevels bounds the domain levels of one CPU; real machines have
// fewer than ten.
const maxKernelLevels = 64

// sdFlags maps the kernel's SD_* flag names (include/linux/sched/sd_flags.h)
// to the flags schedlens models. SD_SHARE_PKG_RESOURCES is SD_SHARE_LLC's
// name before Linux 6.10. Other SD_* names are kept in KernelDomain.Flags
// and not modelled.
var sdFlags = map[string]DomainFlags{
	"SD_SHARE_CPUCAPACITY":     ShareCapacity,
	"SD_SHARE_LLC":             ShareLLC,
	"SD_SHARE_PKG_RESOURCES":   ShareLLC,
	"SD_CLUSTER":               ClusterFlag,
	"SD_ASYM_CPUCAPACITY":      AsymCapacity,
	"SD_ASYM_CPUCAPACITY_FULL": AsymCapacityFull,
	"SD_ASYM_PACKING":          AsymPacking,
	"SD_NUMA":                  NUMAFlag,
}

// KernelFlags returns the modelled flags among SD_* names.
func KernelFlags(names []string) DomainFlags {
	var f DomainFlags
	for _, n := range names {
		f |= sdFlags[n]
	}
	return f
}

// validSDName reports whether s looks like an SD_* flag name.
func validSDName(s string) bool {
	if !strings.HasPrefix(s, "SD_") || len(s) == 3 || len(s) > 64 {
		return false
	}
	for _, r := range s[3:] {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// validDomainName reports whether s can be a level name: the kernel's are
// short upper-case words (SMT, CLS, MC, PKG, DIE, NUMA, CACHE).
func validDomainName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// Clone returns a deep copy of k.
func (k *KernelView) Clone() *KernelView {
	if k == nil {
		return nil
	}
	c := *k
	c.Caches = slices.Clone(k.Caches)
	for i := range c.Caches {
		c.Caches[i].Shared = slices.Clone(k.Caches[i].Shared)
	}
	c.Clusters = slices.Clone(k.Clusters)
	for i := range c.Clusters {
		c.Clusters[i].CPUs = slices.Clone(k.Clusters[i].CPUs)
	}
	c.Domains = slices.Clone(k.Domains)
	for i := range c.Domains {
		c.Domains[i].Span = slices.Clone(k.Domains[i].Span)
		c.Domains[i].Flags = slices.Clone(k.Domains[i].Flags)
	}
	return &c
}

// HasDomains reports whether k lists sched domains.
func (k *KernelView) HasDomains() bool { return k != nil && len(k.Domains) > 0 }

// validate checks the caches and clusters of k against a topology of n
// CPUs: CPU numbers below n, lists holding their CPU. The domains are
// checked by perCPU.
func (k *KernelView) validate(n int) error {
	for i, c := range k.Caches {
		switch {
		case c.CPU < 0 || c.CPU >= n:
			return invalid("kernel caches[%d]: cpu %d, want 0..%d", i, c.CPU, n-1)
		case c.Index < 0 || c.Level < 1 || c.Level > 15:
			return invalid("kernel caches[%d]: cpu %d index %d level %d, want an index from 0 and a level from 1 to 15", i, c.CPU, c.Index, c.Level)
		case c.Type != "Data" && c.Type != "Instruction" && c.Type != "Unified":
			return invalid("kernel caches[%d]: cpu %d index %d type %q, want Data, Instruction or Unified", i, c.CPU, c.Index, c.Type)
		case !c.Shared.Has(c.CPU) || !inRangeSet(c.Shared, n):
			return invalid("kernel caches[%d]: cpu %d index %d shared %q must hold cpu %d and CPUs below %d", i, c.CPU, c.Index, c.Shared, c.CPU, n)
		}
	}
	for i, c := range k.Clusters {
		switch {
		case c.CPU < 0 || c.CPU >= n:
			return invalid("kernel clusters[%d]: cpu %d, want 0..%d", i, c.CPU, n-1)
		case c.ID < -1:
			return invalid("kernel clusters[%d]: cpu %d cluster id %d, want -1 (none) or more", i, c.CPU, c.ID)
		case !c.CPUs.Empty() && (!c.CPUs.Has(c.CPU) || !inRangeSet(c.CPUs, n)):
			return invalid("kernel clusters[%d]: cpu %d cluster cpus %q must hold cpu %d and CPUs below %d", i, c.CPU, c.CPUs, c.CPU, n)
		}
	}
	return nil
}

// perCPU returns the domains of each CPU, lowest first, after checking
// them (see validate).
func (k *KernelView) perCPU(n int) ([][]KernelDomain, error) {
	out := make([][]KernelDomain, n)
	for i, d := range k.Domains {
		where := fmt.Sprintf("kernel domains[%d] (cpu%d/domain%d)", i, d.CPU, d.Level)
		switch {
		case d.CPU < 0 || d.CPU >= n:
			return nil, invalid("%s: cpu %d, want 0..%d", where, d.CPU, n-1)
		case d.Level < 0 || d.Level >= maxKernelLevels:
			return nil, invalid("%s: level %d, want 0..%d", where, d.Level, maxKernelLevels-1)
		case !d.Span.Has(d.CPU) || !inRangeSet(d.Span, n):
			return nil, invalid("%s: span %q must hold cpu %d and CPUs below %d", where, d.Span, d.CPU, n)
		case d.Name != "" && !validDomainName(d.Name):
			return nil, invalid("%s: name %q, want a word such as MC", where, d.Name)
		}
		for _, f := range d.Flags {
			if !validSDName(f) {
				return nil, invalid("%s: flag %q, want an SD_* name", where, f)
			}
		}
		out[d.CPU] = append(out[d.CPU], d)
	}
	for cpu, ds := range out {
		slices.SortStableFunc(ds, func(a, b KernelDomain) int { return a.Level - b.Level })
		var below CPUSet
		for i, d := range ds {
			if d.Level != i {
				if i > 0 && d.Level == ds[i-1].Level {
					return nil, invalid("kernel domains: cpu%d/domain%d listed twice", cpu, d.Level)
				}
				return nil, invalid("kernel domains: cpu%d has domain%d but no domain%d", cpu, d.Level, i)
			}
			if d.Span.Count() <= below.Count() || !subset(below, d.Span) {
				return nil, invalid("kernel domains: cpu%d/domain%d span %s does not strictly contain domain%d's %s", cpu, d.Level, d.Span, i-1, below)
			}
			below = d.Span
		}
	}
	return out, nil
}

func inRangeSet(s CPUSet, n int) bool { return s.Max() < n }

// subset reports whether every CPU of a is in b.
func subset(a, b CPUSet) bool {
	for i, w := range a {
		var bw uint64
		if i < len(b) {
			bw = b[i]
		}
		if w&^bw != 0 {
			return false
		}
	}
	return true
}

// kernelDomains builds the levels of the kernel's listing, lowest first.
// Each CPU's domains are matched to levels by name (the k-th domain of a
// name on a CPU is level "name#k"), and the levels are ordered so that
// every CPU's domains come in its own order. A domain without a recorded
// name or flags gets them from classifySpan. It checks the domains
// (perCPU) and that the CPUs agree on the order of the levels.
func (t *Topology) kernelDomains() ([]Domain, error) {
	n := len(t.CPUs)
	per, err := t.Kernel.perCPU(n)
	if err != nil {
		return nil, err
	}
	type entry struct {
		span  []int
		flags DomainFlags
	}
	keys := make([][]string, n)
	entries := make([][]entry, n)
	spans := map[string][]int{} // one slice per distinct span (setKey)
	var cls *clsInfo
	var order []string         // level keys in order of first appearance
	known := map[string]bool{} // keys in order
	after := map[string]map[string]bool{}
	for cpu, ds := range per {
		seen := map[string]int{}
		prev := ""
		for _, d := range ds {
			k := setKey(d.Span)
			span, ok := spans[k]
			if !ok {
				span = d.Span.CPUs()
				spans[k] = span
			}
			name, flags := d.Name, KernelFlags(d.Flags)
			if name == "" || d.Flags == nil {
				if cls == nil {
					cls = t.newCLSInfo()
				}
				cn, cf := t.classifySpan(cpu, span, cls)
				if name == "" {
					name = cn
				}
				if d.Flags == nil {
					flags = cf
				}
			}
			key := name + "#" + strconv.Itoa(seen[name])
			seen[name]++
			if !known[key] {
				known[key] = true
				order = append(order, key)
				after[key] = map[string]bool{}
			}
			if prev != "" {
				after[prev][key] = true
			}
			prev = key
			keys[cpu] = append(keys[cpu], key)
			entries[cpu] = append(entries[cpu], entry{span, flags})
		}
	}
	// Order the levels: a level comes after every level some CPU has
	// below it; ties go to the level seen first.
	indeg := map[string]int{}
	for _, succ := range after {
		for s := range succ {
			indeg[s]++
		}
	}
	var sorted []string
	done := map[string]bool{}
	for len(sorted) < len(order) {
		next := ""
		for _, k := range order {
			if !done[k] && indeg[k] == 0 {
				next = k
				break
			}
		}
		if next == "" {
			return nil, invalid("kernel domains: the CPUs list their levels in contradictory orders (%s)", strings.Join(order, ", "))
		}
		done[next] = true
		sorted = append(sorted, next)
		for s := range after[next] {
			indeg[s]--
		}
	}
	index := map[string]int{}
	out := make([]Domain, len(sorted))
	for i, k := range sorted {
		index[k] = i
		out[i] = Domain{Name: k[:strings.LastIndexByte(k, '#')], Spans: make([][]int, n), CPUFlags: make([]DomainFlags, n)}
	}
	for cpu := range n {
		for j, e := range entries[cpu] {
			d := &out[index[keys[cpu][j]]]
			d.Spans[cpu] = e.span
			d.CPUFlags[cpu] = e.flags
			d.Flags |= e.flags
		}
	}
	return out, nil
}

// setKey returns a map key for the CPUs of s (its words, trailing zero
// words dropped).
func setKey(s CPUSet) string {
	for len(s) > 0 && s[len(s)-1] == 0 {
		s = s[:len(s)-1]
	}
	b := make([]byte, 0, 8*len(s))
	for _, w := range s {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return string(b)
}

// clsInfo holds what classifySpan needs about the whole machine, computed
// once: the LLCs holding more than one CLS, and the number of capacities.
type clsInfo struct {
	split map[int]bool // LLC (Cluster) id -> it has several CLS
	nCaps int
}

func (t *Topology) newCLSInfo() *clsInfo {
	first := map[int]int{} // LLC -> CLS of its first CPU
	ci := &clsInfo{split: map[int]bool{}, nCaps: t.capacityClasses()}
	for i := range t.CPUs {
		c := &t.CPUs[i]
		if f, ok := first[c.Cluster]; !ok {
			first[c.Cluster] = c.CLS
		} else if f != c.CLS {
			ci.split[c.Cluster] = true
		}
	}
	return ci
}

// classifySpan names a domain of cpu spanning span, and gives its flags,
// from the topology alone: the core (SMT: share-capacity, share-llc), the
// CLS inside the LLC (CLS: cluster, share-llc), the LLC (MC: share-llc),
// the NUMA node (PKG) or more (NUMA: numa), plus the asymmetry flags of
// the span (spanFlags). It names the domains of a listing that has spans
// but no names (a /proc/schedstat of version 16 or older without debugfs).
func (t *Topology) classifySpan(cpu int, span []int, ci *clsInfo) (string, DomainFlags) {
	c := &t.CPUs[cpu]
	all := func(same func(o *CPU) bool) bool {
		for _, x := range span {
			if !same(&t.CPUs[x]) {
				return false
			}
		}
		return true
	}
	name, flags := "NUMA", NUMAFlag
	switch {
	case all(func(o *CPU) bool { return o.Core == c.Core }):
		name, flags = "SMT", ShareCapacity|ShareLLC
	case ci.split[c.Cluster] && all(func(o *CPU) bool { return o.Cluster == c.Cluster && o.CLS == c.CLS }):
		name, flags = "CLS", ClusterFlag|ShareLLC
	case all(func(o *CPU) bool { return o.Cluster == c.Cluster }):
		name, flags = "MC", ShareLLC
	case all(func(o *CPU) bool { return o.Node == c.Node }):
		name, flags = "PKG", 0
	}
	return name, flags | t.spanFlags(span, name == "SMT", ci.nCaps)
}

// capacityClasses returns the number of distinct CPU capacities of t.
func (t *Topology) capacityClasses() int {
	var seen []int
	for i := range t.CPUs {
		if c := t.CPUs[i].Capacity; !slices.Contains(seen, c) {
			seen = append(seen, c)
		}
	}
	return len(seen)
}

// spanFlags returns the asymmetry flags of a domain spanning span:
// asym-capacity when it holds CPUs of different capacity, with
// asym-capacity-full when it holds every capacity of the machine
// (nCaps distinct capacities; asym_cpu_capacity_classify in
// kernel/sched/topology.c), and asym-packing when it holds different ITMT
// priorities above SMT.
func (t *Topology) spanFlags(span []int, smt bool, nCaps int) DomainFlags {
	var caps, prios []int
	for _, x := range span {
		c := &t.CPUs[x]
		if !slices.Contains(caps, c.Capacity) {
			caps = append(caps, c.Capacity)
		}
		if !slices.Contains(prios, c.Prio) {
			prios = append(prios, c.Prio)
		}
	}
	var f DomainFlags
	if len(caps) > 1 {
		f |= AsymCapacity
		if len(caps) == nCaps {
			f |= AsymCapacityFull
		}
	}
	if len(prios) > 1 && !smt {
		f |= AsymPacking
	}
	return f
}

// UsesKernelDomains reports whether Domains returns the kernel's own
// listing (t.Kernel lists domains) rather than derived levels.
func (t *Topology) UsesKernelDomains() bool { return t.Kernel.HasDomains() }

// DomainSource says where Domains comes from, for reports: "the kernel's
// listing (SOURCE)" or "derived from the CPU topology".
func (t *Topology) DomainSource() string {
	if t.UsesKernelDomains() {
		if t.Kernel.Source != "" {
			return "the kernel's listing (" + t.Kernel.Source + ")"
		}
		return "the kernel's listing"
	}
	return "derived from the CPU topology"
}

// kernelDomainsNote compares the kernel's listing with the derived levels
// and returns a note naming the first difference, or "" when they agree
// (per CPU: names, spans and modelled flags) or t has no listing.
func (t *Topology) kernelDomainsNote() string {
	if !t.UsesKernelDomains() {
		return ""
	}
	kern, err := t.kernelDomains()
	if err != nil {
		return ""
	}
	derived := t.DerivedDomains()
	type lv struct {
		name  string
		span  []int
		flags DomainFlags
	}
	stack := func(ds []Domain, cpu int) []lv {
		var out []lv
		for _, d := range ds {
			if d.Spans[cpu] != nil {
				out = append(out, lv{d.Name, d.Spans[cpu], d.FlagsOf(cpu)})
			}
		}
		return out
	}
	show := func(l []lv, i int) string {
		if i >= len(l) {
			return "none"
		}
		return fmt.Sprintf("%s %s [%s]", l[i].name, FormatCPUList(l[i].span), l[i].flags)
	}
	same := map[[2]*int]bool{} // span pairs compared, by first element
	equal := func(a, b []int) bool {
		key := [2]*int{&a[0], &b[0]}
		eq, ok := same[key]
		if !ok {
			eq = slices.Equal(a, b)
			same[key] = eq
		}
		return eq
	}
	for cpu := range t.CPUs {
		k, d := stack(kern, cpu), stack(derived, cpu)
		for i := 0; i < max(len(k), len(d)); i++ {
			if i < len(k) && i < len(d) && k[i].name == d[i].name && k[i].flags == d[i].flags && equal(k[i].span, d[i].span) {
				continue
			}
			return fmt.Sprintf("the kernel's sched domains differ from those derived from the CPU topology (cpu %d domain%d: kernel %s, derived %s); the kernel's are used",
				cpu, i, show(k, i), show(d, i))
		}
	}
	return ""
}
