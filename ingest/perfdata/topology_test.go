package perfdata

import (
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
	tp := buildTopology(ct, nil, nil, 16)
	if tp == nil {
		t.Fatal("nil topology")
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
	tp = buildTopology(ct, llc, nil, 16)
	for cpu, c := range tp.CPUs {
		if c.Cluster != cpu/8 {
			t.Errorf("cpu %d: cluster %d, want the socket's LLC %d", cpu, c.Cluster, cpu/8)
		}
	}
}
