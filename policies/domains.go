package policies

import (
	"fmt"
	"slices"

	"github.com/schedlens/schedlens/topology"
)

// schedDomain is one CPU's instance of a sched-domain level, with the
// tunables of sd_init (kernel/sched/topology.c): intervals in ms,
// imbalance_pct, cache_nice_tries, busy_factor.
type schedDomain struct {
	cpu    int
	level  int
	name   string
	span   []int
	inSpan []bool
	groups []*schedGroup // groups[0] holds cpu (the local group)
	parent *schedDomain
	child  *schedDomain

	shareCap, shareLLC, asym, asymFull, numa bool
	preferSibling                            bool
	wakeAffine                               bool

	imbalancePct    int64
	cacheNiceTries  int
	busyFactor      int64
	minInterval     int64 // ms
	maxInterval     int64 // ms
	balanceInterval int64 // ms
	lastBalance     int64 // jiffies
	nrBalanceFailed int

	maxNewidleLBCost   int64 // ns
	lastDecayMaxLBCost int64 // jiffies
}

// schedGroup is a group of a domain level: the span of a child domain. One
// object is shared by every CPU whose domain contains it, like the kernel's
// sched_group_capacity.
type schedGroup struct {
	cpus      []int
	inGroup   []bool
	weight    int
	cores     int
	smt       bool // the group is an SMT core (child has SD_SHARE_CPUCAPACITY)
	imbalance bool // sgc->imbalance
	capacity  int64
	minCap    int64
	maxCap    int64
}

type domainSet struct {
	llcSize  []int // per CPU, span of the highest SHARE_LLC domain (1 if none)
	sdLLC    []*schedDomain
	sdAsym   []*schedDomain        // lowest domain with SD_ASYM_CPUCAPACITY_FULL
	llcIdle  map[string]*llcShared // by LLC span
	llcOf    []*llcShared
	maxLevel int
}

// llcShared is sched_domain_shared of an LLC: the idle-core hint and the
// SIS_UTIL scan depth.
type llcShared struct {
	hasIdleCores bool
	nrIdleScan   int
	cpus         []int
}

// buildDomains builds each CPU's sched domains from topo.Domains(): the
// kernel's own listing when the topology carries one, else the levels
// derived from the CPUs. Levels, spans and the flags of each CPU's domain
// (SD_SHARE_CPUCAPACITY, SD_SHARE_LLC, SD_ASYM_CPUCAPACITY(_FULL),
// SD_NUMA) come from there; the LLC of a CPU (sd_llc, its
// sched_domain_shared) is the span of its highest SD_SHARE_LLC domain, the
// CPU alone without one, as update_top_cache_domain sets it.
func (m *Model) buildDomains() error {
	topo := m.s.Topology()
	levels := topo.Domains()
	if levels == nil && topo.NCPU() > 1 {
		if err := topo.Validate(); err != nil {
			return fmt.Errorf("sched domains: %w", err)
		}
	}
	n := m.ncpu
	ds := &m.domains
	ds.llcSize = make([]int, n)
	ds.sdLLC = make([]*schedDomain, n)
	ds.sdAsym = make([]*schedDomain, n)
	ds.llcOf = make([]*llcShared, n)
	ds.llcIdle = map[string]*llcShared{}
	m.asym = false
	for cpu := range n {
		ds.llcSize[cpu] = 1
	}
	groups := map[string]*schedGroup{}
	for cpu := range n {
		var prev *schedDomain
		for li, lv := range levels {
			span := lv.Spans[cpu]
			if span == nil {
				continue
			}
			sd := &schedDomain{cpu: cpu, level: li, name: lv.Name, span: span, inSpan: make([]bool, n)}
			for _, c := range span {
				sd.inSpan[c] = true
			}
			flags := lv.FlagsOf(cpu)
			sd.shareCap = flags&topology.ShareCapacity != 0
			sd.shareLLC = flags&topology.ShareLLC != 0
			sd.numa = flags&topology.NUMAFlag != 0
			sd.asym = flags&topology.AsymCapacity != 0
			sd.asymFull = flags&topology.AsymCapacityFull != 0
			w := int64(len(span))
			// sd_init: min_interval = weight, max_interval = 2 × weight,
			// balance_interval = weight (ms), busy_factor 16,
			// imbalance_pct 117 (110 for SMT), cache_nice_tries 1 (0 SMT,
			// 2 NUMA); PREFER_SIBLING everywhere but NUMA.
			sd.minInterval, sd.maxInterval, sd.balanceInterval = w, 2*w, w
			sd.busyFactor = 16
			sd.imbalancePct = 117
			sd.cacheNiceTries = 1
			sd.preferSibling = true
			sd.wakeAffine = true
			switch {
			case sd.shareCap:
				sd.imbalancePct = 110
				sd.cacheNiceTries = 0
			case sd.shareLLC:
			case sd.numa:
				sd.cacheNiceTries = 2
				sd.preferSibling = false
			}
			if sd.asym && prev != nil {
				prev.preferSibling = false
			}
			// groups: the child spans (or single CPUs) inside span
			seen := map[int]bool{}
			child := func(c int) []int {
				var best []int
				for lj := li - 1; lj >= 0; lj-- {
					if s := levels[lj].Spans[c]; s != nil {
						best = s
						break
					}
				}
				if best == nil {
					best = []int{c}
				}
				return best
			}
			var gl []*schedGroup
			order := append([]int{cpu}, span...)
			for _, c := range order {
				cs := child(c)
				if seen[cs[0]] {
					continue
				}
				for _, x := range cs {
					seen[x] = true
				}
				key := fmt.Sprintf("%d:%v", li, cs)
				g, ok := groups[key]
				if !ok {
					g = &schedGroup{cpus: cs, inGroup: make([]bool, n), weight: len(cs)}
					for _, x := range cs {
						g.inGroup[x] = true
					}
					cores := map[int]bool{}
					for _, x := range cs {
						cores[topo.CPUs[x].Core] = true
					}
					g.cores = len(cores)
					g.smt = len(cs) > 1 && len(cores) == 1
					groups[key] = g
				}
				gl = append(gl, g)
			}
			sd.groups = gl
			if len(gl) < 2 {
				continue // a single group: degenerate
			}
			if prev != nil {
				prev.parent = sd
				sd.child = prev
			}
			m.rq[cpu].sd = append(m.rq[cpu].sd, sd)
			prev = sd
			if sd.shareLLC {
				ds.sdLLC[cpu] = sd
				ds.llcSize[cpu] = len(span)
			}
			if sd.asymFull && ds.sdAsym[cpu] == nil {
				ds.sdAsym[cpu] = sd
			}
			// sched_asym_cpucapacity: some domain has SD_ASYM_CPUCAPACITY
			m.asym = m.asym || sd.asym
		}
		if len(m.rq[cpu].sd) > ds.maxLevel {
			ds.maxLevel = len(m.rq[cpu].sd)
		}
	}
	for cpu := range n {
		for _, sd := range m.rq[cpu].sd {
			if !slices.Contains(sd.span, cpu) {
				return fmt.Errorf("domain %s of CPU %d does not contain it", sd.name, cpu)
			}
		}
	}
	// sd_llc_shared: one per distinct LLC span; the SIS_UTIL scan depth
	// starts at the span's size.
	for cpu := range n {
		span := []int{cpu}
		if sd := ds.sdLLC[cpu]; sd != nil {
			span = sd.span
		}
		key := topology.FormatCPUList(span)
		sh, ok := ds.llcIdle[key]
		if !ok {
			sh = &llcShared{nrIdleScan: len(span), cpus: span}
			ds.llcIdle[key] = sh
		}
		ds.llcOf[cpu] = sh
	}
	m.smt = false
	for cpu := range n {
		if len(topo.Siblings(cpu)) > 1 {
			m.smt = true
		}
	}
	return nil
}

// balanceInterval is get_sd_balance_interval in jiffies.
func (m *Model) balanceInterval(sd *schedDomain, busy bool) int64 {
	ms := sd.balanceInterval
	if busy {
		ms *= sd.busyFactor
	}
	hz := int64(m.s.HZ())
	j := (ms*hz + 999) / 1000 // msecs_to_jiffies rounds up
	if busy {
		j--
	}
	maxJ := hz * int64(m.ncpu) / 10 // max_load_balance_interval
	return min(max(j, 1), max(maxJ, 1))
}

// lowestSharedDomain returns the lowest domain of cpu whose span holds
// other.
func (m *Model) lowestSharedDomain(cpu, other int) *schedDomain {
	for _, sd := range m.rq[cpu].sd {
		if sd.inSpan[other] {
			return sd
		}
	}
	return nil
}
