package policies

import (
	"fmt"
	"iter"
	"slices"

	"github.com/schedlens/schedlens/topology"
)

// schedDomain is one CPU's instance of a sched-domain level, with the
// tunables of sd_init (kernel/sched/topology.c): intervals in ms,
// imbalance_pct, cache_nice_tries, busy_factor.
type schedDomain struct {
	cpu   int
	level int
	name  string
	span  []int
	// spanID numbers span among the distinct spans of its level; spanOf
	// (shared by the level) holds each CPU's own span's number, so where
	// the level's spans partition the CPUs (partition) membership is one
	// comparison, else a binary search of span.
	spanID    int32
	spanOf    []int32
	partition bool
	// groups are the groups of span in the order of their lowest CPU,
	// shared by every CPU with this span; groups[local] holds cpu.
	groups []*schedGroup
	local  int
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
	cpus      []int // ascending
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
	sdAsym   []*schedDomain          // lowest domain with SD_ASYM_CPUCAPACITY_FULL
	llcIdle  map[[2]int32]*llcShared // by LLC domain level and span number
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

// contains reports whether c is in the domain's span.
func (sd *schedDomain) contains(c int) bool {
	if sd.partition {
		return sd.spanOf[c] == sd.spanID
	}
	_, ok := slices.BinarySearch(sd.span, c)
	return ok
}

// localGroup is the group that holds the domain's CPU.
func (sd *schedDomain) localGroup() *schedGroup { return sd.groups[sd.local] }

// orderedGroups yields the domain's groups, the local one first (with
// true), then the others by their lowest CPU: the order the domain's own
// group list had when each CPU built it, starting from itself.
func (sd *schedDomain) orderedGroups() iter.Seq2[*schedGroup, bool] {
	return func(yield func(*schedGroup, bool) bool) {
		if !yield(sd.groups[sd.local], true) {
			return
		}
		for i, g := range sd.groups {
			if i != sd.local && !yield(g, false) {
				return
			}
		}
	}
}

// contains reports whether c is in the group.
func (g *schedGroup) contains(c int) bool {
	_, ok := slices.BinarySearch(g.cpus, c)
	return ok
}

// levelSpans numbers the distinct spans of one domain level.
type levelSpans struct {
	of        []int32 // per CPU: its span's number, -1 without a domain here
	spans     [][]int // by number
	partition bool    // every CPU of each span has that span as its own
}

// numberSpans numbers the spans of a level in time linear in the CPUs when
// CPUs of one span share its slice (as derived domains do); spans with
// equal contents get one number.
func numberSpans(lv topology.Domain, n int) (levelSpans, error) {
	ls := levelSpans{of: make([]int32, n), partition: true}
	type key struct{ first, n int }
	byKey := map[key][]int32{}
	for cpu := range n {
		ls.of[cpu] = -1
		if cpu >= len(lv.Spans) || lv.Spans[cpu] == nil {
			continue
		}
		span := lv.Spans[cpu]
		if !slices.IsSorted(span) || span[0] < 0 || span[len(span)-1] >= n {
			return ls, fmt.Errorf("domain %s of CPU %d: span %v is not ascending CPUs below %d", lv.Name, cpu, span, n)
		}
		if _, ok := slices.BinarySearch(span, cpu); !ok {
			return ls, fmt.Errorf("domain %s of CPU %d does not contain it", lv.Name, cpu)
		}
		k := key{span[0], len(span)}
		id := int32(-1)
		for _, cand := range byKey[k] {
			if s := ls.spans[cand]; &s[0] == &span[0] || slices.Equal(s, span) {
				id = cand
				break
			}
		}
		if id < 0 {
			id = int32(len(ls.spans))
			ls.spans = append(ls.spans, span)
			byKey[k] = append(byKey[k], id)
		}
		ls.of[cpu] = id
	}
	for id, span := range ls.spans {
		for _, c := range span {
			if ls.of[c] != int32(id) {
				ls.partition = false
			}
		}
	}
	return ls, nil
}

// buildDomains builds each CPU's sched domains from topo.Domains(): the
// kernel's own listing when the topology carries one, else the levels
// derived from the CPUs. Levels, spans and the flags of each CPU's domain
// (SD_SHARE_CPUCAPACITY, SD_SHARE_LLC, SD_ASYM_CPUCAPACITY(_FULL),
// SD_NUMA) come from there; the LLC of a CPU (sd_llc, its
// sched_domain_shared) is the span of its highest SD_SHARE_LLC domain, the
// CPU alone without one, as update_top_cache_domain sets it.
//
// Time and memory are linear in the CPUs (times the levels) where the
// spans of a level partition the CPUs: the groups of a span and their
// order are built once per distinct span and shared, membership is a span
// number per CPU and level, not a CPU-indexed array per domain.
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
	ds.llcIdle = map[[2]int32]*llcShared{}
	m.asym = false
	for cpu := range n {
		ds.llcSize[cpu] = 1
	}
	numbered := make([]levelSpans, len(levels))
	for li, lv := range levels {
		ls, err := numberSpans(lv, n)
		if err != nil {
			return fmt.Errorf("sched domains: %w", err)
		}
		numbered[li] = ls
	}
	// The group that CPU c stands in at level li: its span at the nearest
	// level below li where it has a domain, else c alone. Groups are
	// shared by every domain whose span holds them.
	type groupKey struct{ level, below, id int }
	groups := map[groupKey]*schedGroup{}
	groupOf := func(li, c int) *schedGroup {
		k := groupKey{li, -1, c}
		cs := []int{c}
		for lj := li - 1; lj >= 0; lj-- {
			if id := numbered[lj].of[c]; id >= 0 {
				k = groupKey{li, lj, int(id)}
				cs = numbered[lj].spans[id]
				break
			}
		}
		g, ok := groups[k]
		if !ok {
			g = &schedGroup{cpus: cs, weight: len(cs)}
			cores := map[int]bool{}
			for _, x := range cs {
				cores[topo.CPUs[x].Core] = true
			}
			g.cores = len(cores)
			g.smt = len(cs) > 1 && len(cores) == 1
			groups[k] = g
		}
		return g
	}
	// The groups of each distinct span, by their lowest CPU.
	type spanKey struct{ level, id int }
	spanGroups := map[spanKey][]*schedGroup{}
	groupsOf := func(li int, id int32) []*schedGroup {
		k := spanKey{li, int(id)}
		if gl, ok := spanGroups[k]; ok {
			return gl
		}
		var gl []*schedGroup
		seen := map[*schedGroup]bool{}
		for _, c := range numbered[li].spans[id] {
			g := groupOf(li, c)
			if !seen[g] {
				seen[g] = true
				gl = append(gl, g)
			}
		}
		spanGroups[k] = gl
		return gl
	}
	for cpu := range n {
		var prev *schedDomain
		for li, lv := range levels {
			id := numbered[li].of[cpu]
			if id < 0 {
				continue
			}
			span := numbered[li].spans[id]
			sd := &schedDomain{cpu: cpu, level: li, name: lv.Name, span: span,
				spanID: id, spanOf: numbered[li].of, partition: numbered[li].partition}
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
			sd.groups = groupsOf(li, id)
			sd.local = slices.Index(sd.groups, groupOf(li, cpu))
			if len(sd.groups) < 2 {
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
	// sd_llc_shared: one per distinct LLC span; the SIS_UTIL scan depth
	// starts at the span's size.
	for cpu := range n {
		span := []int{cpu}
		key := [2]int32{-1, int32(cpu)}
		if sd := ds.sdLLC[cpu]; sd != nil {
			span = sd.span
			key = [2]int32{int32(sd.level), sd.spanID}
		}
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
		if sd.contains(other) {
			return sd
		}
	}
	return nil
}
