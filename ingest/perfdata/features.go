package perfdata

import (
	"fmt"
	"strings"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/topology"
)

// headerInfo is what the feature sections say about the machine.
type headerInfo struct {
	osRelease  string
	nrAvail    int // HEADER_NRCPUS: nr_cpus_avail (present CPUs)
	nrOnline   int
	cmdline    []string
	clockID    int64 // -1 if not stated
	hasClockID bool
	names      map[uint64]string // event names by id, from HEADER_EVENT_DESC
	topo       *topology.Topology
	topoErr    string   // why the header's topology was not used
	skipped    []string // feature sections present but not read
}

// cpuTopo is HEADER_CPU_TOPOLOGY as written by write_cpu_topology
// (tools/perf/util/header.c): the core and thread sibling lists, then per
// CPU (nr_cpus_avail of them) core_id and socket_id, then the die sibling
// lists and per-CPU die_id (newer perf). perf records no cluster level in
// it; the LLC comes from HEADER_CACHE and NUMA nodes from
// HEADER_NUMA_TOPOLOGY.
type cpuTopo struct {
	core, socket, die []int
	hasDie            bool
}

func readCPUTopology(c *cursor, ncpu int) *cpuTopo {
	t := &cpuTopo{}
	lists := func(what string) {
		n := c.u32(what + " count")
		for i := uint32(0); i < n && c.err == nil; i++ {
			c.perfString(what)
		}
	}
	lists("core siblings")
	lists("thread siblings")
	if c.err != nil || c.pos == len(c.b) {
		return t
	}
	for i := 0; i < ncpu && c.err == nil; i++ {
		t.core = append(t.core, int(int32(c.u32("core_id"))))
		t.socket = append(t.socket, int(int32(c.u32("socket_id"))))
	}
	if c.err != nil || c.pos == len(c.b) {
		return t
	}
	lists("die siblings")
	for i := 0; i < ncpu && c.err == nil; i++ {
		t.die = append(t.die, int(int32(c.u32("die_id"))))
	}
	t.hasDie = c.err == nil
	return t
}

// llcOf reads HEADER_CACHE (write_cache: u32 version 1, u32 count; per
// cache u32 level, line_size, sets, ways and the strings type, size, map)
// and returns, per CPU, the index of the highest-level cache holding it.
func llcOf(c *cursor, ncpu int) []int {
	ver := c.u32("version")
	if c.err != nil || ver != 1 {
		return nil
	}
	n := c.u32("cache count")
	type cache struct {
		level uint32
		cpus  []int
	}
	var caches []cache
	for i := uint32(0); i < n && c.err == nil; i++ {
		var ca cache
		ca.level = c.u32("level")
		c.u32("line_size")
		c.u32("sets")
		c.u32("ways")
		c.perfString("type")
		c.perfString("size")
		m := c.perfString("map")
		if c.err != nil {
			return nil
		}
		cpus, err := topology.ParseCPUList(m)
		if err != nil {
			return nil
		}
		ca.cpus = cpus
		caches = append(caches, ca)
	}
	var top uint32
	for _, ca := range caches {
		top = max(top, ca.level)
	}
	llc := make([]int, ncpu)
	for i := range llc {
		llc[i] = -1
	}
	id := 0
	for _, ca := range caches {
		if ca.level != top {
			continue
		}
		for _, cpu := range ca.cpus {
			if cpu >= 0 && cpu < ncpu && llc[cpu] < 0 {
				llc[cpu] = id
			}
		}
		id++
	}
	for _, l := range llc {
		if l < 0 {
			return nil // a CPU no cache lists: the section says too little
		}
	}
	return llc
}

// nodeOf reads HEADER_NUMA_TOPOLOGY (u32 count; per node u32 node, u64
// mem_total, u64 mem_free, string cpus) and returns each CPU's node.
func nodeOf(c *cursor, ncpu int) []int {
	n := c.u32("node count")
	node := make([]int, ncpu)
	for i := uint32(0); i < n && c.err == nil; i++ {
		id := c.u32("node")
		c.u64("mem_total")
		c.u64("mem_free")
		cpus, err := topology.ParseCPUList(c.perfString("cpus"))
		if c.err != nil || err != nil {
			return nil
		}
		for _, cpu := range cpus {
			if cpu >= 0 && cpu < ncpu {
				node[cpu] = int(id)
			}
		}
	}
	if c.err != nil {
		return nil
	}
	return node
}

// readHeaderInfo decodes the feature sections schedlens uses. A feature it
// reads but finds malformed is a positioned error; unknown ones are listed
// in skipped.
func readHeaderInfo(feat map[int][]byte, offs map[int]int64, order []int, file string) (*headerInfo, *parse.ParseError) {
	hi := &headerInfo{clockID: -1, names: map[uint64]string{}}
	cur := func(bit int) *cursor {
		return &cursor{b: feat[bit], base: offs[bit], sec: featName(bit), name: file}
	}
	for _, bit := range order {
		c := cur(bit)
		switch bit {
		case featTracingData, featCPUTopology, featCache, featNUMA:
			// read below, in dependency order
		case featOSRelease:
			hi.osRelease = c.perfString("os release")
		case featNRCPUs:
			hi.nrAvail = int(c.u32("nr_cpus_avail"))
			hi.nrOnline = int(c.u32("nr_cpus_online"))
			if c.err == nil && (hi.nrAvail <= 0 || hi.nrAvail > maxCPU+1 || hi.nrOnline > hi.nrAvail) {
				c.pos = 0
				c.fail(parse.ErrBadField, "want 1..%d CPUs available and at most as many online, got %d and %d", maxCPU+1, hi.nrAvail, hi.nrOnline)
			}
		case featCmdline:
			n := c.u32("argument count")
			for i := uint32(0); i < n && c.err == nil; i++ {
				hi.cmdline = append(hi.cmdline, c.perfString("argument"))
			}
		case featClockID:
			hi.clockID = int64(c.u64("clockid"))
			hi.hasClockID = c.err == nil
		case featEventDesc:
			readEventDesc(c, hi)
		default:
			hi.skipped = append(hi.skipped, featName(bit))
		}
		if c.err != nil {
			return nil, c.err
		}
	}
	if _, ok := feat[featCPUTopology]; ok && hi.nrAvail > 0 {
		c := cur(featCPUTopology)
		ct := readCPUTopology(c, hi.nrAvail)
		if c.err != nil {
			return nil, c.err
		}
		var llc, node []int
		if _, ok := feat[featCache]; ok {
			llc = llcOf(cur(featCache), hi.nrAvail)
		}
		if _, ok := feat[featNUMA]; ok {
			node = nodeOf(cur(featNUMA), hi.nrAvail)
		}
		hi.topo, hi.topoErr = buildTopology(ct, llc, node, hi.nrAvail)
	}
	return hi, nil
}

// readEventDesc reads HEADER_EVENT_DESC (u32 count, u32 attr size; per
// event the attr, u32 id count, the name string and the ids) for the
// events' names.
func readEventDesc(c *cursor, hi *headerInfo) {
	n := c.u32("event count")
	sz := c.u32("attr size")
	if c.err == nil && (sz < 48 || sz > maxAttrSize) {
		c.pos -= 4
		c.fail(parse.ErrBadField, "attr size %d, want 48..%d", sz, maxAttrSize)
	}
	for i := uint32(0); i < n && c.err == nil; i++ {
		c.bytes(int(sz), "perf_event_attr")
		nids := c.u32("id count")
		name := c.perfString("event name")
		if c.err == nil && uint64(nids)*8 > uint64(len(c.b)-c.pos) {
			c.fail(parse.ErrTruncated, "want %d ids, have %d bytes", nids, len(c.b)-c.pos)
		}
		for j := uint32(0); j < nids && c.err == nil; j++ {
			hi.names[c.u64("id")] = name
		}
	}
}

// buildTopology makes the trace's topology.Topology: cores numbered in
// order of first appearance of (socket, die, core_id), clusters by LLC
// (else by socket and die), every capacity 1024 (perf.data records none).
func buildTopology(ct *cpuTopo, llc, node []int, ncpu int) (*topology.Topology, string) {
	if len(ct.core) != ncpu {
		return nil, fmt.Sprintf("HEADER_CPU_TOPOLOGY gives core and socket ids for %d CPUs, HEADER_NRCPUS says %d", len(ct.core), ncpu)
	}
	t := &topology.Topology{Name: "perf.data header"}
	type key struct{ s, d, c int }
	cores := map[key]int{}
	clusters := map[key]int{}
	for i := 0; i < ncpu; i++ {
		d := 0
		if ct.hasDie {
			d = ct.die[i]
		}
		k := key{ct.socket[i], d, ct.core[i]}
		core, ok := cores[k]
		if !ok {
			core = len(cores)
			cores[k] = core
		}
		ck := key{ct.socket[i], d, -1}
		if llc != nil && llc[i] >= 0 {
			ck = key{-1, -1, llc[i]}
		}
		cl, ok := clusters[ck]
		if !ok {
			cl = len(clusters)
			clusters[ck] = cl
		}
		cpu := topology.CPU{ID: i, Core: core, Cluster: cl, Package: max(ct.socket[i], 0), Capacity: topology.CapacityScale}
		if node != nil {
			cpu.Node = node[i]
		}
		t.CPUs = append(t.CPUs, cpu)
	}
	src := "HEADER_CPU_TOPOLOGY"
	if llc != nil {
		src += ", LLCs from HEADER_CACHE"
	} else {
		src += ", no HEADER_CACHE: one LLC per package and die"
	}
	if node != nil {
		src += ", nodes from HEADER_NUMA_TOPOLOGY"
	}
	t.Notes = append(t.Notes, "from the perf.data header ("+src+"); perf records no CPU capacity: every CPU taken as 1024")
	if err := t.Validate(); err != nil {
		return nil, "the CPU topology in the perf.data header is not usable: " + err.Error()
	}
	return t, ""
}

// clockName names a clockid as the other readers do (include/uapi/linux/time.h).
func clockName(id int64) string {
	switch id {
	case 0:
		return "realtime"
	case 1:
		return "mono"
	case 4:
		return "mono_raw"
	case 7:
		return "boot"
	case 11:
		return "tai"
	}
	return fmt.Sprintf("clockid %d", id)
}

func joinCmdline(args []string) string { return strings.Join(args, " ") }
