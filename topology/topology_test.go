package topology

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func mustPreset(t testing.TB, name string) *Topology {
	t.Helper()
	topo, err := Preset(name)
	if err != nil {
		t.Fatalf("Preset(%q): %v", name, err)
	}
	return topo
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  string
	}{
		{in: "0", want: []int{0}},
		{in: "0-3", want: []int{0, 1, 2, 3}},
		{in: "0-1,8-9\n", want: []int{0, 1, 8, 9}},
		{in: " 5,1,3-4 ", want: []int{1, 3, 4, 5}},
		{in: "2,2,1-2", want: []int{1, 2}},
		{in: "", err: "empty"},
		{in: "3-1", err: "backwards"},
		{in: "a", err: "want CPU numbers"},
		{in: "0-", err: "want CPU numbers"},
		{in: "-1", err: "want CPU numbers"},
		{in: "0,,1", err: "want CPU numbers"},
		{in: "0-4000000000", err: "above the supported"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.in), func(t *testing.T) {
			got, err := ParseCPUList(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseCPUList(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("ParseCPUList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestFormatCPUList(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1}, "0-1"},
		{[]int{0, 1, 2, 3, 8, 10, 11}, "0-3,8,10-11"},
		{[]int{0, 3, 4, 5}, "0,3-5"},
	}
	for _, tc := range tests {
		if got := FormatCPUList(tc.in); got != tc.want {
			t.Errorf("FormatCPUList(%v) = %q, want %q", tc.in, got, tc.want)
		}
		if tc.in != nil {
			back, err := ParseCPUList(tc.want)
			if err != nil || !slices.Equal(back, tc.in) {
				t.Errorf("ParseCPUList(%q) = %v, %v; want %v", tc.want, back, err, tc.in)
			}
		}
	}
}

func TestRelationNames(t *testing.T) {
	want := map[Relation]string{UnknownRelation: "unknown", Same: "same", SMT: "smt", LLC: "llc", CrossLLC: "cross_llc", CrossNUMA: "cross_numa"}
	for r, name := range want {
		if got := r.String(); got != name {
			t.Errorf("Relation(%d).String() = %q, want %q", r, got, name)
		}
		var back Relation
		if err := back.UnmarshalText([]byte(name)); err != nil || back != r {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", name, back, err, r)
		}
	}
	if _, err := Relation(42).MarshalText(); err == nil {
		t.Errorf("Relation(42).MarshalText() succeeded, want an error")
	}
	var r Relation
	if err := r.UnmarshalText([]byte("far")); err == nil {
		t.Errorf(`UnmarshalText("far") succeeded, want an error`)
	}
}

// relationMatrix renders all pairwise relations with one letter each:
// = same, s smt, l llc, x cross_llc, n cross_numa.
func relationMatrix(topo *Topology) string {
	letter := map[Relation]byte{Same: '=', SMT: 's', LLC: 'l', CrossLLC: 'x', CrossNUMA: 'n', UnknownRelation: '?'}
	var b strings.Builder
	for a := range topo.CPUs {
		if a > 0 {
			b.WriteByte('/')
		}
		for c := range topo.CPUs {
			b.WriteByte(letter[topo.Relation(a, c)])
		}
	}
	return b.String()
}

// domainSummary renders Domains as "NAME[flags]:group group ..." lines.
func domainSummary(topo *Topology) []string {
	var out []string
	for _, d := range topo.Domains() {
		var groups []string
		for _, g := range d.Groups() {
			groups = append(groups, FormatCPUList(g))
		}
		out = append(out, fmt.Sprintf("%s[%s]:%s", d.Name, d.Flags, strings.Join(groups, " ")))
	}
	return out
}

func TestPresets(t *testing.T) {
	tests := []struct {
		name       string
		ncpu       int
		asym       bool
		relations  string // see relationMatrix; "" to skip
		domains    []string
		siblings   map[int][]int
		llc        map[int][]int
		capacities map[int]int
		perf       map[int]int
	}{
		{
			// Juno r2: CPUs 1-2 big A72 in one cluster, 0 and 3-5 little
			// A53 in the other; no SMT, no L3, one node.
			name: "juno-r2", ncpu: 6, asym: true,
			relations: "=xxlll/x=lxxx/xl=xxx/lxx=ll/lxxl=l/lxxll=",
			domains: []string{
				"MC[share-llc]:0,3-5 1-2",
				"PKG[asym-capacity,asym-capacity-full]:0-5",
			},
			siblings:   map[int][]int{0: {0}, 1: {1}, 5: {5}},
			llc:        map[int][]int{0: {0, 3, 4, 5}, 1: {1, 2}, 4: {0, 3, 4, 5}},
			capacities: map[int]int{0: 383, 1: 1024, 2: 1024, 3: 383, 5: 383},
			perf:       map[int]int{0: 383, 1: 1024},
		},
		{
			// i7-13700, SMT on: P-core threads 0-15 in sibling pairs,
			// E-cores 16-23 in two L2 modules of four; one L3.
			name: "i7-13700", ncpu: 24, asym: false,
			domains: []string{
				"SMT[share-capacity,share-llc]:0-1 2-3 4-5 6-7 8-9 10-11 12-13 14-15",
				"CLS[share-llc,cluster]:16-19 20-23",
				"MC[share-llc,asym-packing]:0-23",
			},
			siblings:   map[int][]int{0: {0, 1}, 15: {14, 15}, 16: {16}, 23: {23}},
			llc:        map[int][]int{7: seq(0, 23)},
			capacities: map[int]int{0: 1024, 16: 1024, 23: 1024},
			perf:       map[int]int{0: 1024, 15: 1024, 16: 645, 23: 645},
		},
		{
			name: "i7-13700-nosmt", ncpu: 16, asym: true,
			domains: []string{
				"CLS[share-llc,cluster]:8-11 12-15",
				"MC[share-llc,asym-capacity,asym-capacity-full]:0-15",
			},
			siblings:   map[int][]int{0: {0}, 8: {8}},
			capacities: map[int]int{0: 1024, 7: 1024, 8: 645, 15: 645},
			perf:       map[int]int{8: 645},
		},
		{
			name: "smt2-4", ncpu: 8,
			relations: "=sllllll/s=llllll/ll=sllll/lls=llll/llll=sll/lllls=ll/llllll=s/lllllls=",
			domains: []string{
				"SMT[share-capacity,share-llc]:0-1 2-3 4-5 6-7",
				"MC[share-llc]:0-7",
			},
			siblings: map[int][]int{0: {0, 1}, 1: {0, 1}, 6: {6, 7}},
			llc:      map[int][]int{3: seq(0, 7)},
		},
		{
			name: "sym-3", ncpu: 3,
			relations: "=ll/l=l/ll=",
			domains:   []string{"MC[share-llc]:0-2"},
			siblings:  map[int][]int{2: {2}},
		},
		{
			name: "sym-1", ncpu: 1,
			relations: "=",
			domains:   nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topo := mustPreset(t, tc.name)
			if err := topo.Validate(); err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			if got := topo.NCPU(); got != tc.ncpu {
				t.Errorf("NCPU() = %d, want %d", got, tc.ncpu)
			}
			if got := topo.Source; got != "preset:"+tc.name {
				t.Errorf("Source = %q, want %q", got, "preset:"+tc.name)
			}
			if got := topo.Asymmetric(); got != tc.asym {
				t.Errorf("Asymmetric() = %v, want %v", got, tc.asym)
			}
			if got := topo.MaxCapacity(); got != 1024 {
				t.Errorf("MaxCapacity() = %d, want 1024", got)
			}
			if tc.relations != "" {
				if got := relationMatrix(topo); got != tc.relations {
					t.Errorf("relations = %s\n want %s", got, tc.relations)
				}
			}
			if got := domainSummary(topo); !slices.Equal(got, tc.domains) {
				t.Errorf("Domains() = %q\n want %q", got, tc.domains)
			}
			for cpu, want := range tc.siblings {
				if got := topo.Siblings(cpu); !slices.Equal(got, want) {
					t.Errorf("Siblings(%d) = %v, want %v", cpu, got, want)
				}
			}
			for cpu, want := range tc.llc {
				if got := topo.LLC(cpu); !slices.Equal(got, want) {
					t.Errorf("LLC(%d) = %v, want %v", cpu, got, want)
				}
			}
			for cpu, want := range tc.capacities {
				if got := topo.CPUs[cpu].Capacity; got != want {
					t.Errorf("cpu %d capacity = %d, want %d", cpu, got, want)
				}
			}
			for cpu, want := range tc.perf {
				if got := topo.Perf(cpu); got != want {
					t.Errorf("Perf(%d) = %d, want %d", cpu, got, want)
				}
			}
		})
	}
}

func seq(a, b int) []int {
	var out []int
	for i := a; i <= b; i++ {
		out = append(out, i)
	}
	return out
}

func TestPresetErrors(t *testing.T) {
	for _, name := range []string{"", "juno", "smt2-", "smt2-0", "smt2-x", "smt2-01", "sym--1", "sym-70000", "i7"} {
		if topo, err := Preset(name); err == nil {
			t.Errorf("Preset(%q) = %d CPUs, want an error", name, topo.NCPU())
		}
	}
	// Every listed fixed preset loads and validates.
	for _, p := range Presets() {
		if p.CPUs == 0 {
			continue
		}
		topo := mustPreset(t, p.Name)
		if topo.NCPU() != p.CPUs {
			t.Errorf("preset %s: NCPU() = %d, Presets says %d", p.Name, topo.NCPU(), p.CPUs)
		}
		if err := topo.Validate(); err != nil {
			t.Errorf("preset %s: Validate() = %v", p.Name, err)
		}
	}
}

func TestOutOfRange(t *testing.T) {
	topo := mustPreset(t, "smt2-2")
	for _, cpu := range []int{-1, 4, 1 << 20} {
		if got := topo.Relation(0, cpu); got != UnknownRelation {
			t.Errorf("Relation(0, %d) = %v, want unknown", cpu, got)
		}
		if got := topo.Relation(cpu, 0); got != UnknownRelation {
			t.Errorf("Relation(%d, 0) = %v, want unknown", cpu, got)
		}
		if got := topo.Siblings(cpu); got != nil {
			t.Errorf("Siblings(%d) = %v, want nil", cpu, got)
		}
		if got := topo.LLC(cpu); got != nil {
			t.Errorf("LLC(%d) = %v, want nil", cpu, got)
		}
		if got := topo.NodeCPUs(cpu); got != nil {
			t.Errorf("NodeCPUs(%d) = %v, want nil", cpu, got)
		}
		if got := topo.Perf(cpu); got != 0 {
			t.Errorf("Perf(%d) = %d, want 0", cpu, got)
		}
	}
	empty := &Topology{}
	if got := empty.MaxCapacity(); got != 0 {
		t.Errorf("empty MaxCapacity() = %d, want 0", got)
	}
	if got := empty.Domains(); got != nil {
		t.Errorf("empty Domains() = %v, want nil", got)
	}
}

func TestValidate(t *testing.T) {
	base := func() *Topology { return mustPreset(t, "smt2-2") }
	tests := []struct {
		name   string
		mutate func(*Topology)
		err    string // "" = valid
	}{
		{"ok", func(*Topology) {}, ""},
		{"no CPUs", func(t *Topology) { t.CPUs = nil }, "no CPUs"},
		{"id gap", func(t *Topology) { t.CPUs[2].ID = 5 }, "CPUs[2] has cpu 5"},
		{"negative core", func(t *Topology) { t.CPUs[1].Core = -1 }, "negative"},
		{"capacity zero", func(t *Topology) { t.CPUs[0].Capacity, t.CPUs[1].Capacity = 0, 0 }, "capacity 0"},
		{"capacity high", func(t *Topology) { t.CPUs[0].Capacity = 2048 }, "capacity 2048"},
		{"no 1024", func(t *Topology) {
			for i := range t.CPUs {
				t.CPUs[i].Capacity = 512
			}
		}, "highest capacity is 512"},
		{"perf high", func(t *Topology) { t.CPUs[0].Perf = 1025 }, "perf 1025"},
		{"prio negative", func(t *Topology) { t.CPUs[0].Prio = -3 }, "prio"},
		{"core split over LLCs", func(t *Topology) { t.CPUs[1].Cluster = 1 }, "share core 0"},
		{"core split over capacity", func(t *Topology) { t.CPUs[2].Capacity, t.CPUs[3].Capacity = 512, 400 }, "share core 1"},
		{"LLC split over nodes", func(t *Topology) { t.CPUs[2].Node, t.CPUs[3].Node = 1, 1 }, "share LLC 0"},
		{"distances too short", func(t *Topology) { t.NodeDistances = [][]int{} }, "node 0 has no full row"},
		{"distances ragged", func(t *Topology) {
			t.CPUs[2].Node, t.CPUs[3].Node, t.CPUs[2].Cluster, t.CPUs[3].Cluster = 1, 1, 1, 1
			t.NodeDistances = [][]int{{10, 20}, {20}}
		}, "no full row"},
		{"distance below local", func(t *Topology) {
			t.CPUs[2].Node, t.CPUs[3].Node, t.CPUs[2].Cluster, t.CPUs[3].Cluster = 1, 1, 1, 1
			t.NodeDistances = [][]int{{10, 5}, {20, 10}}
		}, "below the local"},
		{"distances ok with a memory-only node", func(t *Topology) {
			t.CPUs[2].Node, t.CPUs[3].Node, t.CPUs[2].Cluster, t.CPUs[3].Cluster = 2, 2, 1, 1
			t.NodeDistances = [][]int{{10, 0, 20}, nil, {20, 0, 10}}
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topo := base()
			tc.mutate(topo)
			err := topo.Validate()
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate() = %v, want ErrInvalid containing %q", err, tc.err)
			}
		})
	}
}

func TestDomainsNUMADistances(t *testing.T) {
	// Four nodes of two CPUs each in a ring-like SLIT: 0-1 and 2-3 at 20,
	// everything else at 30. Expect PKG to be degenerate (node = LLC) and
	// two NUMA levels: {pair of nodes}, then all.
	topo := &Topology{}
	for i := 0; i < 8; i++ {
		topo.CPUs = append(topo.CPUs, CPU{ID: i, Core: i, Cluster: i / 2, Node: i / 2, Package: i / 4, Capacity: 1024})
	}
	topo.NodeDistances = [][]int{
		{10, 20, 30, 30},
		{20, 10, 30, 30},
		{30, 30, 10, 20},
		{30, 30, 20, 10},
	}
	want := []string{
		"MC[share-llc]:0-1 2-3 4-5 6-7",
		"NUMA[numa]:0-3 4-7",
		"NUMA[numa]:0-7",
	}
	if got := domainSummary(topo); !slices.Equal(got, want) {
		t.Errorf("Domains() = %q\n want %q", got, want)
	}
	if got := topo.Relation(0, 2); got != CrossNUMA {
		t.Errorf("Relation(0, 2) = %v, want cross_numa", got)
	}
	// Without distances, one NUMA level spans all nodes.
	topo.NodeDistances = nil
	want = []string{"MC[share-llc]:0-1 2-3 4-5 6-7", "NUMA[numa]:0-7"}
	if got := domainSummary(topo); !slices.Equal(got, want) {
		t.Errorf("Domains() without distances = %q\n want %q", got, want)
	}
}

func TestDomainFlagsJSON(t *testing.T) {
	f := ShareLLC | AsymCapacity | NUMAFlag
	b, err := f.MarshalJSON()
	if err != nil || string(b) != `["share-llc","asym-capacity","numa"]` {
		t.Fatalf("MarshalJSON = %s, %v", b, err)
	}
	var back DomainFlags
	if err := back.UnmarshalJSON(b); err != nil || back != f {
		t.Fatalf("UnmarshalJSON = %v, %v; want %v", back, err, f)
	}
	if err := back.UnmarshalJSON([]byte(`["wide"]`)); err == nil {
		t.Errorf("UnmarshalJSON of an unknown flag succeeded")
	}
	if got := DomainFlags(0).String(); got != "-" {
		t.Errorf("DomainFlags(0).String() = %q, want -", got)
	}
}

func TestClone(t *testing.T) {
	a := mustPreset(t, "juno-r2")
	a.NodeDistances = [][]int{{10}}
	a.Notes = []string{"x"}
	b := a.Clone()
	b.CPUs[0].Capacity = 1
	b.NodeDistances[0][0] = 99
	b.Notes[0] = "y"
	if a.CPUs[0].Capacity != 383 || a.NodeDistances[0][0] != 10 || a.Notes[0] != "x" {
		t.Errorf("Clone shares memory with the original: %+v", a)
	}
}
