package topology

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// checkInvariants verifies what every accepted topology must satisfy.
func checkInvariants(t *testing.T, topo *Topology) {
	t.Helper()
	if err := topo.Validate(); err != nil {
		t.Fatalf("accepted topology fails Validate: %v", err)
	}
	n := topo.NCPU()
	if n == 0 {
		t.Fatalf("accepted topology has no CPUs")
	}
	for a := 0; a < n; a++ {
		if r := topo.Relation(a, a); r != Same {
			t.Fatalf("Relation(%d, %d) = %v, want same", a, a, r)
		}
		sib, llc, node := topo.Siblings(a), topo.LLC(a), topo.NodeCPUs(a)
		if !slices.Contains(sib, a) {
			t.Fatalf("Siblings(%d) = %v lacks %d", a, sib, a)
		}
		for _, s := range sib {
			if !slices.Contains(llc, s) {
				t.Fatalf("sibling %d of %d not in LLC %v", s, a, llc)
			}
		}
		for _, l := range llc {
			if !slices.Contains(node, l) {
				t.Fatalf("LLC CPU %d of %d not on node %v", l, a, node)
			}
		}
		for b := 0; b < n && b < 64; b++ {
			if r, s := topo.Relation(a, b), topo.Relation(b, a); r != s || r == UnknownRelation {
				t.Fatalf("Relation(%d, %d) = %v but Relation(%d, %d) = %v", a, b, r, b, a, s)
			}
		}
	}
	// Per CPU, kept domain spans contain the CPU and grow strictly.
	doms := topo.Domains()
	for cpu := 0; cpu < n; cpu++ {
		var below []int
		for _, d := range doms {
			span := d.Spans[cpu]
			if span == nil {
				continue
			}
			if !slices.Contains(span, cpu) || len(span) <= len(below) {
				t.Fatalf("cpu %d: %s span %v does not contain it or does not grow from %v", cpu, d.Name, span, below)
			}
			for _, c := range below {
				if !slices.Contains(span, c) {
					t.Fatalf("cpu %d: %s span %v does not contain the level below %v", cpu, d.Name, span, below)
				}
			}
			below = span
		}
	}
	// JSON round trip.
	var buf bytes.Buffer
	if err := WriteJSON(&buf, topo); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	back, err := ReadJSON(&buf, "round.json")
	if err != nil {
		t.Fatalf("ReadJSON of WriteJSON output: %v", err)
	}
	if !reflect.DeepEqual(back, topo) {
		t.Fatalf("JSON round trip changed the topology:\n got %+v\nwant %+v", back, topo)
	}
}

func FuzzReadText(f *testing.F) {
	for _, p := range fixtureTopologies(f) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("cpu=1 core_id=0 package=0 thread_siblings=0-1 core_siblings=0-1\ncpu=0 core_id=0 package=0 thread_siblings=0-1 core_siblings=0-1 capacity=1024\n"))
	f.Add([]byte("cpu=0 core_id= package= die= cluster= thread_siblings= core_siblings= capacity=\n"))
	f.Add([]byte("cpu=0 core_id=0 package=0 cluster=3 thread_siblings=0 core_siblings=0-1 capacity=512\ncpu=1 core_id=1 package=0 cluster=4 thread_siblings=1 core_siblings=0-1 capacity=1024\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		topo, err := ReadText(bytes.NewReader(data), "fuzz.txt")
		if err != nil {
			if topo != nil {
				t.Fatalf("error %v with a non-nil topology", err)
			}
			return
		}
		checkInvariants(t, topo)
	})
}

func FuzzReadJSON(f *testing.F) {
	for _, name := range []string{"juno-r2", "i7-13700", "smt2-2", "sym-1"} {
		var buf bytes.Buffer
		if err := WriteJSON(&buf, mustPreset(f, name)); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte(`{"cpus":[{"cpu":1,"core":1,"cluster":1,"package":1,"node":1,"capacity":1024},{"cpu":0,"capacity":1024}],"node_distances":[[10,21],[21,10]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		topo, err := ReadJSON(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			if topo != nil {
				t.Fatalf("error %v with a non-nil topology", err)
			}
			return
		}
		checkInvariants(t, topo)
	})
}

func FuzzReadKernelView(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(fixtures, "*", KernelFileName))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(junoSchedstat(17)))
	f.Add([]byte("cpu0 0\ndomain0 3 0\ncpu1 0\ndomain0 3 0\ncpu0/domain0: name=MC flags=SD_SHARE_LLC\ncpu1 index3: L3 Unified shared=0-1\ncpu1: cluster_cpus=1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kv, err := ReadKernelView(bytes.NewReader(data), "fuzz.txt")
		if err != nil {
			if kv != nil {
				t.Fatalf("error %v with a non-nil view", err)
			}
			return
		}
		// Attached to identical CPUs, enough of them: when it validates,
		// every invariant holds, the kernel's domains included.
		n := 1
		for _, d := range kv.Domains {
			n = max(n, d.Span.Max()+1, d.CPU+1)
		}
		for _, c := range kv.Caches {
			n = max(n, c.Shared.Max()+1, c.CPU+1)
		}
		if n > 256 {
			return
		}
		topo := Symmetric(n)
		if err := topo.attachKernel(kv); err != nil {
			return
		}
		checkInvariants(t, topo)
	})
}

func BenchmarkReadText(b *testing.B) {
	data, err := os.ReadFile("../fixtures/real/qemu-smt8-hackbench/topology.txt")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpus := 0
	for b.Loop() {
		topo, err := ReadText(bytes.NewReader(data), "topology.txt")
		if err != nil {
			b.Fatal(err)
		}
		cpus += topo.NCPU()
	}
	b.ReportMetric(float64(cpus)/b.Elapsed().Seconds(), "cpus/s")
}

// BenchmarkRelation measures the call the idle-with-runnable metric makes
// per window: it must not allocate.
func BenchmarkRelation(b *testing.B) {
	topo := mustPreset(b, "i7-13700")
	n := topo.NCPU()
	b.ReportAllocs()
	calls := 0
	var sink Relation
	for b.Loop() {
		for a := 0; a < n; a++ {
			for c := 0; c < n; c++ {
				sink |= topo.Relation(a, c)
			}
		}
		calls += n * n
	}
	_ = sink
	b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "relations/s")
}

func BenchmarkDomains(b *testing.B) {
	topo, err := Capture(Roots{Sys: "testdata/sysfs-2node-smt"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(topo.Domains()) == 0 {
			b.Fatal("no domains")
		}
	}
}

// BenchmarkKernelDomains measures Domains on a 1024-CPU machine (512 SMT
// cores, 2 NUMA nodes) whose kernel listing has SMT, MC and NUMA domains
// for every CPU: the spans of one group must be shared, not copied per CPU.
func BenchmarkKernelDomains(b *testing.B) {
	topo := mustPreset(b, "smt2-512")
	for i := range topo.CPUs {
		topo.CPUs[i].Node = i / 512
		topo.CPUs[i].Cluster = i / 512
	}
	topo.Kernel = &KernelView{}
	for _, d := range topo.DerivedDomains() {
		for cpu, span := range d.Spans {
			if span == nil {
				continue
			}
			level := 0
			for _, k := range topo.Kernel.Domains {
				if k.CPU == cpu {
					level++
				}
			}
			topo.Kernel.Domains = append(topo.Kernel.Domains, KernelDomain{CPU: cpu, Level: level, Name: d.Name, Span: NewCPUSet(span...), Flags: []string{"SD_SHARE_LLC"}})
		}
	}
	if err := topo.Validate(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(topo.Domains()) != 3 {
			b.Fatal("want SMT, MC, NUMA")
		}
	}
}
