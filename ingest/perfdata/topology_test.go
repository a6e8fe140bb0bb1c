package perfdata

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/topology"
)

// TestFixtureTopology: the topology from the perf.data header equals the
// one the capture script read from /sys on the same machine
// (topology.txt), in every field the header can give.
func TestFixtureTopology(t *testing.T) {
	_, rd, err := readData(t, readFixture(t), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := rd.Meta().Topology
	if got == nil {
		t.Fatal("no topology from HEADER_CPU_TOPOLOGY")
	}
	f, err := os.Open(fixtureDir + "topology.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, err := topology.ReadText(f, "topology.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got.NCPU() != want.NCPU() {
		t.Fatalf("%d CPUs, /sys says %d", got.NCPU(), want.NCPU())
	}
	for i, c := range got.CPUs {
		w := want.CPUs[i]
		if c.Core != w.Core || c.Package != w.Package || c.Cluster != w.Cluster || c.Node != w.Node || c.Capacity != w.Capacity {
			t.Errorf("cpu %d: %+v, /sys says %+v", i, c, w)
		}
	}
	if err := got.Validate(); err != nil {
		t.Error(err)
	}
	if len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "no HEADER_CACHE") {
		t.Errorf("notes %q: want the LLC inference stated (the file's HEADER_CACHE lists no cache)", got.Notes)
	}
}

// TestBuildTopology is a hand-worked case: 2 sockets x 2 dies x 2 cores x
// 2 threads, core_id restarting in each die, with and without an LLC map.
func TestBuildTopology(t *testing.T) {
	ct := &cpuTopo{hasDie: true}
	for cpu := 0; cpu < 16; cpu++ {
		// cpu = socket*8 + die*4 + core*2 + thread
		ct.socket = append(ct.socket, cpu/8)
		ct.die = append(ct.die, cpu/4%2)
		ct.core = append(ct.core, cpu/2%2)
	}
	tp, msg := buildTopology(ct, nil, nil, 16)
	if tp == nil {
		t.Fatal(msg)
	}
	for cpu, c := range tp.CPUs {
		if c.Core != cpu/2 || c.Cluster != cpu/4 || c.Package != cpu/8 {
			t.Errorf("cpu %d: core %d cluster %d package %d, want %d %d %d", cpu, c.Core, c.Cluster, c.Package, cpu/2, cpu/4, cpu/8)
		}
	}
	// One LLC per socket from HEADER_CACHE overrides the die split.
	llc := make([]int, 16)
	for i := range llc {
		llc[i] = i / 8
	}
	tp, _ = buildTopology(ct, llc, nil, 16)
	for cpu, c := range tp.CPUs {
		if c.Cluster != cpu/8 {
			t.Errorf("cpu %d: cluster %d, want the socket's LLC %d", cpu, c.Cluster, cpu/8)
		}
	}
}

// perfStr encodes a perf header string: u32 length, NUL-padded to 4 bytes
// here (perf pads to 64; any padding reads the same).
func perfStr(s string) []byte {
	n := (len(s) + 4) &^ 3
	b := binary.LittleEndian.AppendUint32(nil, uint32(n))
	b = append(b, s...)
	return append(b, make([]byte, n-len(s))...)
}

// TestHeaderSections decodes hand-made CPU_TOPOLOGY, CACHE and
// NUMA_TOPOLOGY sections of a 4-CPU machine (2 sockets x 2 cores, core_id
// restarting in each socket, one L2 per core, one L3 and one node per
// socket), laid out as
// write_cpu_topology, write_cache and write_numa_topology in
// tools/perf/util/header.c write them.
func TestHeaderSections(t *testing.T) {
	le := binary.LittleEndian
	var topo []byte
	topo = le.AppendUint32(topo, 2) // core siblings
	topo = append(topo, perfStr("0-1")...)
	topo = append(topo, perfStr("2-3")...)
	topo = le.AppendUint32(topo, 4) // thread siblings
	for _, c := range []string{"0", "1", "2", "3"} {
		topo = append(topo, perfStr(c)...)
	}
	for cpu := 0; cpu < 4; cpu++ { // core_id, socket_id
		topo = le.AppendUint32(topo, uint32(cpu%2))
		topo = le.AppendUint32(topo, uint32(cpu/2))
	}
	topo = le.AppendUint32(topo, 1) // die siblings
	topo = append(topo, perfStr("0-3")...)
	for cpu := 0; cpu < 4; cpu++ {
		topo = le.AppendUint32(topo, 0)
	}
	var cache []byte
	cache = le.AppendUint32(cache, 1) // version
	cache = le.AppendUint32(cache, 6)
	for _, c := range []struct {
		level uint32
		cpus  string
	}{{2, "0"}, {2, "1"}, {2, "2"}, {2, "3"}, {3, "0-1"}, {3, "2-3"}} {
		for _, v := range []uint32{c.level, 64, 1024, 16} {
			cache = le.AppendUint32(cache, v)
		}
		cache = append(cache, perfStr("Unified")...)
		cache = append(cache, perfStr("1024K")...)
		cache = append(cache, perfStr(c.cpus)...)
	}
	var numa []byte
	numa = le.AppendUint32(numa, 2)
	for node, cpus := range []string{"0-1", "2-3"} {
		numa = le.AppendUint32(numa, uint32(node))
		numa = le.AppendUint64(numa, 1<<20)
		numa = le.AppendUint64(numa, 1<<19)
		numa = append(numa, perfStr(cpus)...)
	}
	nr := le.AppendUint32(le.AppendUint32(nil, 4), 4)
	feat := map[int][]byte{featNRCPUs: nr, featCPUTopology: topo, featCache: cache, featNUMA: numa,
		featOSRelease: perfStr("6.12.0-test")}
	hi, perr := readHeaderInfo(feat, map[int]int64{}, []int{featOSRelease, featNRCPUs, featCPUTopology, featNUMA, featCache}, "x")
	if perr != nil {
		t.Fatal(perr)
	}
	if hi.osRelease != "6.12.0-test" || hi.nrAvail != 4 || hi.topo == nil {
		t.Fatalf("release %q, %d CPUs, topology %v", hi.osRelease, hi.nrAvail, hi.topo)
	}
	// Cores numbered across sockets; the L3 and the node per socket.
	want := []topology.CPU{
		{ID: 0, Core: 0, Cluster: 0, Package: 0, Node: 0, Capacity: 1024},
		{ID: 1, Core: 1, Cluster: 0, Package: 0, Node: 0, Capacity: 1024},
		{ID: 2, Core: 2, Cluster: 1, Package: 1, Node: 1, Capacity: 1024},
		{ID: 3, Core: 3, Cluster: 1, Package: 1, Node: 1, Capacity: 1024},
	}
	for i, c := range hi.topo.CPUs {
		if c != want[i] {
			t.Errorf("cpu %d: %+v, want %+v", i, c, want[i])
		}
	}
	// A section cut inside a string is a positioned error.
	feat[featCPUTopology] = topo[:9]
	_, perr = readHeaderInfo(feat, map[int]int64{featCPUTopology: 0x1000}, []int{featCPUTopology, featNRCPUs}, "x")
	if perr == nil || perr.Record != "HEADER_CPU_TOPOLOGY" || perr.Offset != 0x1004 {
		t.Errorf("cut CPU_TOPOLOGY: %v, want an error at 0x1004 in HEADER_CPU_TOPOLOGY", perr)
	}
}
