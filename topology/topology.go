package topology

import (
	"errors"
	"fmt"
	"slices"
)

// CapacityScale is the capacity of the biggest CPU of a machine, the kernel's
// SCHED_CAPACITY_SCALE (1 << SCHED_CAPACITY_SHIFT, include/linux/sched.h).
const CapacityScale = 1024

// maxCPUs is MaxCPUs under the name this package's parsers use.
const maxCPUs = MaxCPUs

// MaxCPUs bounds CPU numbers (exclusive: CPUs 0 to MaxCPUs-1) everywhere:
// every trace reader (ftrace, perf, Perfetto), the timeline, the Perfetto
// writer, topology files and presets, CPU lists and masks. It is the
// largest NR_CPUS the kernel can be built with (arch/x86/Kconfig:
// NR_CPUS_RANGE_END is 8192 with CONFIG_MAXSMP; arch/powerpc allows 8192
// too), and it keeps a malformed list such as "0-4000000000", or one event
// naming a huge CPU, from sizing per-CPU state without limit.
const MaxCPUs = 8192

// Topology describes the logical CPUs of a machine. CPU i is CPUs[i].
//
// The zero values of the optional fields are meaningful: CLS 0 everywhere
// means no cluster level below the LLC, Perf 0 means "as fast as Capacity
// says", Prio 0 means no asym-packing priority, and no NodeDistances means
// every remote node is one hop away.
type Topology struct {
	CPUs   []CPU  `json:"cpus"`
	Source string `json:"source"` // where it came from: "trace", "file:PATH", "preset:NAME", "default"
	Name   string `json:"name,omitempty"`

	// NodeDistances[i][j] is the SLIT distance from NUMA node i to node j
	// (10 = local), as /sys/devices/system/node/nodeN/distance gives it.
	// Nil when unknown; rows of node ids that hold no CPU may be empty.
	NodeDistances [][]int `json:"node_distances,omitempty"`
	// Notes say what was inferred rather than read, for example "no
	// cpu_capacity: every CPU taken as 1024". Reports print them.
	Notes []string `json:"notes,omitempty"`
	// Kernel is what the recording machine's kernel reported (caches,
	// clusters, its sched domains, release); nil when nothing was read.
	// When it lists domains, Domains returns them.
	Kernel *KernelView `json:"kernel,omitempty"`
}

// CPU is one logical CPU.
type CPU struct {
	ID       int `json:"cpu"`
	Core     int `json:"core"`     // physical core id (unique across packages); SMT siblings share it
	Cluster  int `json:"cluster"`  // cluster / LLC domain id (unique across packages)
	Package  int `json:"package"`  // socket
	Node     int `json:"node"`     // NUMA node
	Capacity int `json:"capacity"` // 1024 = the biggest CPU, as the kernel's scheduler sees it

	// CLS identifies the scheduler cluster inside the LLC: CPUs that share
	// an L2 or a cluster_id (the kernel's CLS level, cluster_cpus_list).
	// Two CPUs are in one CLS when both CLS and Cluster are equal, so CLS 0
	// everywhere means "no level between core and LLC".
	CLS int `json:"cls,omitempty"`
	// Perf is the CPU's relative speed (1024 = fastest) when it differs
	// from what the scheduler sees as Capacity, as on a hybrid Intel part
	// with SMT on, where Linux leaves every capacity at 1024. 0 means
	// "equal to Capacity"; read it through Topology.Perf.
	Perf int `json:"perf,omitempty"`
	// Prio is the asym-packing (Intel ITMT) priority of the CPU: the
	// scheduler packs tasks onto the CPUs of highest priority. 0 = none.
	Prio int `json:"prio,omitempty"`
	// Offline marks a CPU that was offline when the topology was read
	// (sysfs lists it without a topology directory; topology.txt gives it
	// empty fields): its core, cache and capacity are unknown, and a
	// trace recorded then has nothing on it. A replay models only the
	// CPUs a trace can show (whatif.presentCPUs).
	Offline bool `json:"offline,omitempty"`
}

// Symmetric returns n identical CPUs, one core each, one LLC, one package.
func Symmetric(n int) *Topology {
	t := &Topology{Source: "default", Name: "symmetric"}
	for i := 0; i < n; i++ {
		t.CPUs = append(t.CPUs, CPU{ID: i, Core: i, Capacity: 1024})
	}
	return t
}

// NCPU returns the number of logical CPUs.
func (t *Topology) NCPU() int { return len(t.CPUs) }

// valid reports whether cpu is a CPU number of t.
func (t *Topology) valid(cpu int) bool { return cpu >= 0 && cpu < len(t.CPUs) }

// Clone returns a deep copy of t.
func (t *Topology) Clone() *Topology {
	c := *t
	c.CPUs = slices.Clone(t.CPUs)
	c.Notes = slices.Clone(t.Notes)
	c.Kernel = t.Kernel.Clone()
	if t.NodeDistances != nil {
		c.NodeDistances = make([][]int, len(t.NodeDistances))
		for i, row := range t.NodeDistances {
			c.NodeDistances[i] = slices.Clone(row)
		}
	}
	return &c
}

// MaxCapacity returns the highest CPU capacity, 1024 on a valid topology,
// or 0 when t has no CPUs.
func (t *Topology) MaxCapacity() int {
	m := 0
	for _, c := range t.CPUs {
		m = max(m, c.Capacity)
	}
	return m
}

// Asymmetric reports whether the CPUs differ in capacity, the condition
// under which the kernel sets SD_ASYM_CPUCAPACITY and tracks misfit tasks.
// A hybrid part whose capacities all read 1024 (Intel with SMT on) is not
// asymmetric in this sense; see Perf and Prio.
func (t *Topology) Asymmetric() bool {
	for _, c := range t.CPUs {
		if c.Capacity != t.CPUs[0].Capacity {
			return true
		}
	}
	return false
}

// Perf returns the relative speed of cpu (1024 = fastest): CPU.Perf when
// set, else its Capacity. It returns 0 for a CPU number outside t.
func (t *Topology) Perf(cpu int) int {
	if !t.valid(cpu) {
		return 0
	}
	if p := t.CPUs[cpu].Perf; p != 0 {
		return p
	}
	return t.CPUs[cpu].Capacity
}

// Siblings returns the SMT siblings of cpu in ascending order, cpu itself
// included (as the kernel's thread_siblings_list), so a CPU without SMT
// gets a one-element list. It returns nil for a CPU number outside t. The
// slice is freshly allocated.
func (t *Topology) Siblings(cpu int) []int {
	if !t.valid(cpu) {
		return nil
	}
	core := t.CPUs[cpu].Core
	return t.collect(func(c *CPU) bool { return c.Core == core })
}

// LLC returns the CPUs that share cpu's last-level cache, ascending and
// cpu included; nil for a CPU number outside t. The slice is freshly
// allocated.
func (t *Topology) LLC(cpu int) []int {
	if !t.valid(cpu) {
		return nil
	}
	llc := t.CPUs[cpu].Cluster
	return t.collect(func(c *CPU) bool { return c.Cluster == llc })
}

// NodeCPUs returns the CPUs on cpu's NUMA node, ascending and cpu
// included; nil for a CPU number outside t.
func (t *Topology) NodeCPUs(cpu int) []int {
	if !t.valid(cpu) {
		return nil
	}
	node := t.CPUs[cpu].Node
	return t.collect(func(c *CPU) bool { return c.Node == node })
}

func (t *Topology) collect(keep func(*CPU) bool) []int {
	var out []int
	for i := range t.CPUs {
		if keep(&t.CPUs[i]) {
			out = append(out, i)
		}
	}
	return out
}

// Relation is the topological distance between two CPUs, the classes the
// idle-with-runnable metric reports.
type Relation uint8

// Relations, nearest first. UnknownRelation is the zero value and what
// Relation returns for a CPU number outside the topology.
const (
	UnknownRelation Relation = iota
	Same                     // the same logical CPU
	SMT                      // SMT siblings: one physical core
	LLC                      // different cores sharing the last-level cache
	CrossLLC                 // different LLCs on one NUMA node
	CrossNUMA                // different NUMA nodes
)

var relationNames = [...]string{
	UnknownRelation: "unknown",
	Same:            "same",
	SMT:             "smt",
	LLC:             "llc",
	CrossLLC:        "cross_llc",
	CrossNUMA:       "cross_numa",
}

// Relations lists the known relations, nearest first.
var Relations = []Relation{Same, SMT, LLC, CrossLLC, CrossNUMA}

// String returns the stable name: "same", "smt", "llc", "cross_llc",
// "cross_numa" or "unknown". Reports and JSON keys use these names.
func (r Relation) String() string {
	if int(r) < len(relationNames) {
		return relationNames[r]
	}
	return fmt.Sprintf("Relation(%d)", uint8(r))
}

// MarshalText implements encoding.TextMarshaler with String.
func (r Relation) MarshalText() ([]byte, error) {
	if int(r) >= len(relationNames) {
		return nil, fmt.Errorf("topology: bad Relation %d", uint8(r))
	}
	return []byte(relationNames[r]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler for the String names.
func (r *Relation) UnmarshalText(b []byte) error {
	for i, n := range relationNames {
		if n == string(b) {
			*r = Relation(i)
			return nil
		}
	}
	return fmt.Errorf("topology: unknown relation %q", b)
}

// Relation returns how close CPUs a and b are: Same, SMT (one core), LLC
// (one last-level cache), CrossLLC (one NUMA node) or CrossNUMA. It does
// not allocate. It returns UnknownRelation when a or b is not a CPU of t.
func (t *Topology) Relation(a, b int) Relation {
	if !t.valid(a) || !t.valid(b) {
		return UnknownRelation
	}
	ca, cb := &t.CPUs[a], &t.CPUs[b]
	switch {
	case a == b:
		return Same
	case ca.Core == cb.Core:
		return SMT
	case ca.Cluster == cb.Cluster:
		return LLC
	case ca.Node == cb.Node:
		return CrossLLC
	default:
		return CrossNUMA
	}
}

// ErrInvalid is wrapped by every error Validate returns.
var ErrInvalid = errors.New("invalid topology")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// Validate checks the invariants the rest of schedlens relies on:
//   - at least one CPU, and CPUs[i].ID == i;
//   - no negative ids; capacities in 1..1024 with the biggest at 1024;
//     Perf 0 or in 1..1024; Prio not negative;
//   - the CPUs of one core share an LLC, a CLS, a package, a node and a
//     capacity;
//   - the CPUs of one LLC share a package and a node;
//   - NodeDistances, when present, covers every node of a CPU, with the
//     smallest distance of each row on its diagonal;
//   - Kernel, when present, names only CPUs of t; its caches and clusters
//     hold their CPU; per CPU, its domains are numbered 0, 1, ... with
//     spans that hold the CPU and grow strictly, and the CPUs agree on the
//     order of the levels.
func (t *Topology) Validate() error {
	if err := t.validateCPUs(); err != nil {
		return err
	}
	if t.Kernel != nil {
		if err := t.Kernel.validate(len(t.CPUs)); err != nil {
			return err
		}
		if t.Kernel.HasDomains() {
			if _, err := t.kernelDomains(); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateCPUs checks everything Validate does but the kernel view.
func (t *Topology) validateCPUs() error {
	if len(t.CPUs) == 0 {
		return invalid("no CPUs")
	}
	if len(t.CPUs) > maxCPUs {
		return invalid("%d CPUs, at most %d supported", len(t.CPUs), maxCPUs)
	}
	maxCap := 0
	for i, c := range t.CPUs {
		if c.ID != i {
			return invalid("CPUs[%d] has cpu %d: CPUs must be listed 0, 1, 2, ... without gaps", i, c.ID)
		}
		switch {
		case c.Core < 0, c.Cluster < 0, c.Package < 0, c.Node < 0, c.CLS < 0:
			return invalid("cpu %d: negative core, cluster, cls, package or node id", i)
		case c.Capacity < 1 || c.Capacity > CapacityScale:
			return invalid("cpu %d: capacity %d, want 1..%d", i, c.Capacity, CapacityScale)
		case c.Perf < 0 || c.Perf > CapacityScale:
			return invalid("cpu %d: perf %d, want 0 (same as capacity) or 1..%d", i, c.Perf, CapacityScale)
		case c.Prio < 0:
			return invalid("cpu %d: negative prio %d", i, c.Prio)
		}
		maxCap = max(maxCap, c.Capacity)
	}
	if maxCap != CapacityScale {
		return invalid("highest capacity is %d: capacities are scaled so that the biggest CPU is %d", maxCap, CapacityScale)
	}
	core := map[int]int{} // core id -> first CPU
	llc := map[int]int{}  // LLC id -> first CPU
	for i, c := range t.CPUs {
		if j, ok := core[c.Core]; ok {
			d := t.CPUs[j]
			if d.Cluster != c.Cluster || d.CLS != c.CLS || d.Package != c.Package || d.Node != c.Node || d.Capacity != c.Capacity {
				return invalid("cpus %d and %d share core %d but differ in LLC, cls, package, node or capacity", j, i, c.Core)
			}
		} else {
			core[c.Core] = i
		}
		if j, ok := llc[c.Cluster]; ok {
			d := t.CPUs[j]
			if d.Package != c.Package || d.Node != c.Node {
				return invalid("cpus %d and %d share LLC %d but differ in package or node", j, i, c.Cluster)
			}
		} else {
			llc[c.Cluster] = i
		}
	}
	if t.NodeDistances != nil {
		for i, c := range t.CPUs {
			n := c.Node
			if n >= len(t.NodeDistances) || len(t.NodeDistances[n]) != len(t.NodeDistances) {
				return invalid("cpu %d: node %d has no full row in node_distances (%d rows)", i, n, len(t.NodeDistances))
			}
		}
		for n, row := range t.NodeDistances {
			if len(row) == 0 {
				continue
			}
			if len(row) != len(t.NodeDistances) {
				return invalid("node_distances row %d has %d entries, want %d", n, len(row), len(t.NodeDistances))
			}
			for m, d := range row {
				if len(t.NodeDistances[m]) == 0 {
					continue // a node id that does not exist
				}
				if d <= 0 {
					return invalid("node_distances[%d][%d] = %d, want > 0", n, m, d)
				}
				if d < row[n] {
					return invalid("node_distances[%d][%d] = %d is below the local distance %d", n, m, d, row[n])
				}
			}
		}
	}
	return nil
}

// domains is Domains after the checks of Validate, done once.
func (t *Topology) domains() []Domain {
	if t.validateCPUs() != nil {
		return nil
	}
	if t.Kernel == nil {
		return t.derivedDomains()
	}
	if t.Kernel.validate(len(t.CPUs)) != nil {
		return nil
	}
	if !t.Kernel.HasDomains() {
		return t.derivedDomains()
	}
	d, err := t.kernelDomains()
	if err != nil {
		return nil
	}
	return d
}

// nodeDistance returns the distance between nodes a and b: from
// NodeDistances when known, else 10 local and 20 remote (the kernel's
// LOCAL_DISTANCE and REMOTE_DISTANCE, include/linux/topology.h).
func (t *Topology) nodeDistance(a, b int) int {
	if a < len(t.NodeDistances) && b < len(t.NodeDistances[a]) {
		return t.NodeDistances[a][b]
	}
	if a == b {
		return 10
	}
	return 20
}
