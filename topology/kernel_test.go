package topology

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseCPUMask(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  string
	}{
		{in: "3f", want: []int{0, 1, 2, 3, 4, 5}},
		{in: "39", want: []int{0, 3, 4, 5}},
		{in: "06\n", want: []int{1, 2}},
		{in: "c0", want: []int{6, 7}},
		{in: "FF", want: []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{in: "00000001,00000000", want: []int{32}},
		{in: "1,80000001", want: []int{0, 31, 32}},
		{in: "0", err: "has no CPU"},
		{in: "", err: "want hexadecimal words"},
		{in: "1,1", err: "want hexadecimal words"}, // inner words are 8 digits
		{in: "123456789", err: "want hexadecimal words"},
		{in: "xyz", err: "not hexadecimal"},
	}
	for _, tc := range tests {
		got, err := ParseCPUMask(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseCPUMask(%q) = %v, %v; want an error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseCPUMask(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseCPUMask("1" + strings.Repeat(",00000000", 2048)); err == nil {
		t.Errorf("a mask naming CPU 65536 was accepted")
	}
}

func TestReadKernelViewFixture(t *testing.T) {
	path := filepath.Join(fixtures, "qemu-juno-asym", KernelFileName)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kv, err := ReadKernelView(f, path)
	if err != nil {
		t.Fatal(err)
	}
	// 6 CPUs x 2 domains, 3 caches and 1 cluster line each (the file).
	if len(kv.Domains) != 12 || len(kv.Caches) != 18 || len(kv.Clusters) != 6 {
		t.Fatalf("%d domains, %d caches, %d clusters; want 12, 18, 6", len(kv.Domains), len(kv.Caches), len(kv.Clusters))
	}
	d := kv.Domains[2] // cpu1 domain0
	if d.CPU != 1 || d.Level != 0 || d.Name != "MC" || d.Span.String() != "1-2" || !slices.Contains(d.Flags, "SD_SHARE_LLC") || len(d.Flags) != 5 {
		t.Errorf("cpu1/domain0 = %+v, want MC 1-2 with the 5 flags debugfs lists", d)
	}
	d = kv.Domains[11] // cpu5 domain1
	if d.Name != "PKG" || d.Span.String() != "0-5" || KernelFlags(d.Flags) != AsymCapacity|AsymCapacityFull || !slices.Contains(d.Flags, "SD_PREFER_SIBLING") {
		t.Errorf("cpu5/domain1 = %+v, want PKG 0-5, asym-capacity(-full), SD_PREFER_SIBLING kept", d)
	}
	if c := kv.Caches[2]; !reflect.DeepEqual(c, CacheInfo{CPU: 0, Index: 2, Level: 2, Type: "Unified", Shared: NewCPUSet(0, 3, 4, 5)}) {
		t.Errorf("caches[2] = %+v, want cpu0 index2 L2 Unified 0,3-5", c)
	}
	if c := kv.Clusters[1]; c.CPU != 1 || c.ID != -1 || c.CPUs.String() != "1-2" {
		t.Errorf("clusters[1] = %+v, want cpu 1, no id, cpus 1-2", c)
	}
}

func TestReadKernelViewErrors(t *testing.T) {
	const sched = "version 16\ncpu0 0 0 0\ndomain0 03 0 0\ncpu1 0 0 0\ndomain0 03 0 0\n"
	tests := []struct {
		name, in, want string
	}{
		{"unrecognized", "hello world\n", "k.txt:1: unrecognized line"},
		{"domain before cpu", "version 16\ndomain0 03 0\n", "k.txt:2: domain0: domain line before any cpuN line"},
		{"bad name", "cpu0 0\ndomain0 M+C 03 0\n", `k.txt:2: cpu0/domain0: want a domain name such as MC; got "M+C"`},
		{"v17 without name", "version 17\ncpu0 0\ndomain0 03\n", `k.txt:3: cpu0/domain0: want "domainN NAME CPUMASK ..."`},
		{"empty mask", "cpu0 0\ndomain0 MC 0 0\n", `k.txt:2: cpu0/domain0: CPU mask "0" has no CPU`},
		{"bad mask v16", "version 16\ncpu0 0\ndomain0 0g 0\n", `k.txt:3: cpu0/domain0: CPU mask "0g": "0g" is not hexadecimal`},
		{"span without cpu", "cpu0 0\ndomain0 06 0\n", "k.txt:2: cpu0/domain0: span 1-2 does not contain cpu 0"},
		{"level gap", "cpu0 0\ndomain1 03 0\n", "domain1 without domain0 below it"},
		{"not growing", "cpu0 0\ndomain0 03 0\ndomain1 03 0\n", "k.txt:3: cpu0/domain1: span 0-1 does not strictly contain domain0's 0-1"},
		{"twice", "cpu0 0\ndomain0 03 0\ncpu0 0\ndomain0 03 0\n", "k.txt:4: cpu0/domain0: domain listed twice"},
		{"debug without schedstat", "cpu0/domain0: name=MC flags=SD_SHARE_LLC\n", "k.txt:1: cpu0/domain0: a domain name and flags without the /proc/schedstat domain lines"},
		{"debug unknown domain", sched + "cpu0/domain1: name=PKG flags=\n", "k.txt:6: cpu0/domain1: no such domain"},
		{"debug twice", sched + "cpu0/domain0: name=MC\ncpu0/domain0: name=MC\n", "k.txt:7: cpu0/domain0: name and flags given twice"},
		{"debug bad flag", sched + "cpu0/domain0: name=MC flags=SD_SHARE_LLC share\n", `k.txt:6: cpu0/domain0: want SD_* flag names; got "share"`},
		{"debug bad field", sched + "cpu0/domain0: size=3\n", `want name=NAME flags=SD_...; got "size=3"`},
		{"names disagree", "version 17\ncpu0 0\ndomain0 SMT 03 0\ncpu0/domain0: name=MC flags=\n", "named MC here and SMT in /proc/schedstat (line 3)"},
		{"cache level", "cpu0 index0: X1 Data shared=0\n", `k.txt:1: cpu0 index0: want a level L1..L15; got "X1"`},
		{"cache type", "cpu0 index0: L1 Both shared=0\n", "want the type Data, Instruction or Unified"},
		{"cache shared", "cpu0 index0: L1 Data shared=1\n", "field shared: 1 does not contain cpu 0"},
		{"cache shape", "cpu0 index0: L1 Data\n", `want "cpuN indexM: L2 Unified shared=LIST"`},
		{"cache twice", "cpu0 index0: L1 Data shared=0\ncpu0 index0: L1 Data shared=0\n", "k.txt:2: cpu0 index0: cache listed twice"},
		{"cluster field", "cpu0: cluster_cpus=0 size=3\n", `unknown field "size"`},
		{"cluster list", "cpu0: cluster_cpus=1-2\n", "field cluster_cpus: 1-2 does not contain cpu 0"},
		{"cluster twice", "cpu0: cluster_cpus=0\ncpu0: cluster_cpus=0\n", "k.txt:2: cpu0: cluster line given twice"},
		{"version", "version x\n", `want "version N"`},
		{"long line", "cpu0 " + strings.Repeat("1", 300<<10) + "\n", "longer than 256 KiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kv, err := ReadKernelView(strings.NewReader(tc.in), "k.txt")
			if err == nil {
				t.Fatalf("ReadKernelView = %+v, want an error containing %q", kv, tc.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v (%T), want a *ParseError containing %q", err, err, tc.want)
			}
		})
	}
}

// junoSchedstat is the /proc/schedstat of the Juno-like guest (its
// sched-domains.txt), cut to the domain lines; version 17 adds the names.
func junoSchedstat(version int) string {
	var b strings.Builder
	b.WriteString("version " + itoa(version) + "\ntimestamp 4294897386\n")
	masks := []string{"39", "06", "06", "39", "39", "39"}
	for cpu, m := range masks {
		b.WriteString("cpu" + itoa(cpu) + " 0 0 0 0 0 0 1 2 3\n")
		mc, pkg := "", ""
		if version >= 17 {
			mc, pkg = "MC ", "PKG "
		}
		b.WriteString("domain0 " + mc + m + " 0 0 0\ndomain1 " + pkg + "3f 0 0 0\n")
	}
	return b.String()
}

func itoa(n int) string { return FormatCPUList([]int{n}) }

// junoTopology is the Juno fixture's topology.txt without the kernel's view.
func junoTopology(t *testing.T) *Topology {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtures, "qemu-juno-asym", "topology.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	topo, err := ReadText(f, "topology.txt")
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestKernelDomainsWithoutNames(t *testing.T) {
	// Spans only (schedstat 16, no debugfs): names and flags come from the
	// topology. With topology.txt alone the LLC is the package, so the
	// little cluster's span 0,3-5 is a CLS inside it and 0-5 the MC.
	kv, err := ReadKernelView(strings.NewReader(junoSchedstat(16)), "schedstat")
	if err != nil {
		t.Fatal(err)
	}
	topo := junoTopology(t)
	if err := topo.attachKernel(kv); err != nil {
		t.Fatal(err)
	}
	want := []string{"CLS[share-llc,cluster]:0,3-5 1-2", "MC[share-llc,asym-capacity,asym-capacity-full]:0-5"}
	if got := domainSummary(topo); !slices.Equal(got, want) {
		t.Errorf("Domains() = %q, want %q", got, want)
	}
	// With the caches (an L2 per cluster) they are MC and PKG, as the
	// kernel names them.
	kv.Caches = []CacheInfo{}
	for cpu := range 6 {
		l2 := NewCPUSet(0, 3, 4, 5)
		if cpu == 1 || cpu == 2 {
			l2 = NewCPUSet(1, 2)
		}
		kv.Caches = append(kv.Caches, CacheInfo{CPU: cpu, Index: 2, Level: 2, Type: "Unified", Shared: l2})
	}
	var buf bytes.Buffer
	f, _ := os.ReadFile(filepath.Join(fixtures, "qemu-juno-asym", "topology.txt"))
	buf.Write(f)
	topo, err = readText(&buf, "topology.txt", kv, "k")
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"MC[share-llc]:0,3-5 1-2", "PKG[asym-capacity,asym-capacity-full]:0-5"}
	if got := domainSummary(topo); !slices.Equal(got, want) {
		t.Errorf("with caches, Domains() = %q, want %q", got, want)
	}
	// Version 17 carries the names: they are kept even where the
	// topology would say otherwise.
	kv, err = ReadKernelView(strings.NewReader(junoSchedstat(17)), "schedstat")
	if err != nil {
		t.Fatal(err)
	}
	topo = junoTopology(t)
	if err := topo.attachKernel(kv); err != nil {
		t.Fatal(err)
	}
	want = []string{"MC[share-llc,cluster]:0,3-5 1-2", "PKG[share-llc,asym-capacity,asym-capacity-full]:0-5"}
	if got := domainSummary(topo); !slices.Equal(got, want) {
		t.Errorf("schedstat 17, Domains() = %q, want %q (names read, flags classified)", got, want)
	}
	if !slices.ContainsFunc(topo.Notes, func(s string) bool {
		return strings.Contains(s, "kernel's sched domains differ") && strings.Contains(s, "cpu 0 domain0: kernel MC 0,3-5 [share-llc,cluster], derived CLS 0,3-5")
	}) {
		t.Errorf("Notes = %q, want the difference with the derived domains named", topo.Notes)
	}
}

func TestKernelDomainsOrder(t *testing.T) {
	// CPU 0 has no SMT sibling (its SMT level is degenerate), CPUs 1-2
	// do: the levels still come out SMT, MC, and CPU 0 has no SMT span.
	topo := &Topology{CPUs: []CPU{{ID: 0, Core: 0, Capacity: 1024}, {ID: 1, Core: 1, Capacity: 1024}, {ID: 2, Core: 1, Capacity: 1024}}}
	topo.Kernel = &KernelView{Domains: []KernelDomain{
		{CPU: 0, Level: 0, Name: "MC", Span: NewCPUSet(0, 1, 2), Flags: []string{"SD_SHARE_LLC"}},
		{CPU: 1, Level: 0, Name: "SMT", Span: NewCPUSet(1, 2), Flags: []string{"SD_SHARE_CPUCAPACITY", "SD_SHARE_LLC"}},
		{CPU: 1, Level: 1, Name: "MC", Span: NewCPUSet(0, 1, 2), Flags: []string{"SD_SHARE_LLC"}},
		{CPU: 2, Level: 1, Name: "MC", Span: NewCPUSet(0, 1, 2), Flags: []string{"SD_SHARE_LLC"}},
		{CPU: 2, Level: 0, Name: "SMT", Span: NewCPUSet(1, 2), Flags: []string{"SD_SHARE_CPUCAPACITY", "SD_SHARE_LLC", "SD_BALANCE_NEWIDLE"}},
	}}
	if err := topo.Validate(); err != nil {
		t.Fatal(err)
	}
	doms := topo.Domains()
	if len(doms) != 2 || doms[0].Name != "SMT" || doms[0].Spans[0] != nil || !slices.Equal(doms[0].Spans[2], []int{1, 2}) || doms[1].Name != "MC" {
		t.Fatalf("Domains() = %+v, want SMT (CPUs 1-2 only), MC", doms)
	}
	if got := doms[0].FlagsOf(1); got != ShareCapacity|ShareLLC {
		t.Errorf("SMT flags of cpu 1 = %v", got)
	}
	// Two CPUs listing the same names in opposite orders cannot be levels.
	bad := topo.Clone()
	bad.Kernel.Domains[3].Name = "SMT" // cpu 2: MC below SMT
	bad.Kernel.Domains[4].Name = "MC"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "contradictory orders") {
		t.Errorf("Validate() = %v, want the contradictory level order named", err)
	}
}

func TestKernelViewValidate(t *testing.T) {
	base := func() *Topology {
		topo := Symmetric(2)
		topo.Kernel = &KernelView{
			Caches:   []CacheInfo{{CPU: 0, Index: 0, Level: 1, Type: "Data", Shared: NewCPUSet(0)}},
			Clusters: []ClusterInfo{{CPU: 1, ID: 3, CPUs: NewCPUSet(1)}},
			Domains:  []KernelDomain{{CPU: 0, Level: 0, Name: "MC", Span: NewCPUSet(0, 1)}},
		}
		return topo
	}
	if err := base().Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(k *KernelView)
		want   string
	}{
		{"cache cpu", func(k *KernelView) { k.Caches[0].CPU = 2 }, "kernel caches[0]: cpu 2, want 0..1"},
		{"cache type", func(k *KernelView) { k.Caches[0].Type = "data" }, `type "data"`},
		{"cache shared", func(k *KernelView) { k.Caches[0].Shared = NewCPUSet(1) }, "must hold cpu 0"},
		{"cache beyond", func(k *KernelView) { k.Caches[0].Shared = NewCPUSet(0, 5) }, "CPUs below 2"},
		{"cluster id", func(k *KernelView) { k.Clusters[0].ID = -2 }, "cluster id -2"},
		{"cluster cpus", func(k *KernelView) { k.Clusters[0].CPUs = NewCPUSet(0) }, "must hold cpu 1"},
		{"domain cpu", func(k *KernelView) { k.Domains[0].CPU = -1 }, "cpu -1, want 0..1"},
		{"domain span", func(k *KernelView) { k.Domains[0].Span = NewCPUSet(1) }, "must hold cpu 0"},
		{"domain name", func(k *KernelView) { k.Domains[0].Name = "M C" }, `name "M C"`},
		{"domain flag", func(k *KernelView) { k.Domains[0].Flags = []string{"share"} }, `flag "share"`},
		{"domain gap", func(k *KernelView) { k.Domains[0].Level = 1 }, "cpu0 has domain1 but no domain0"},
		{"domain twice", func(k *KernelView) { k.Domains = append(k.Domains, k.Domains[0]) }, "cpu0/domain0 listed twice"},
		{"domain shrinks", func(k *KernelView) {
			k.Domains = append(k.Domains, KernelDomain{CPU: 0, Level: 1, Span: NewCPUSet(0)})
		}, "does not strictly contain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topo := base()
			tc.mutate(topo.Kernel)
			err := topo.Validate()
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want ErrInvalid containing %q", err, tc.want)
			}
			if topo.Domains() != nil {
				t.Errorf("Domains() of an invalid topology is not nil")
			}
		})
	}
}

func TestLoadKernelNextTo(t *testing.T) {
	juno := filepath.Join(fixtures, "qemu-juno-asym")
	kernelFile, err := os.ReadFile(filepath.Join(juno, KernelFileName))
	if err != nil {
		t.Fatal(err)
	}
	txt, err := os.ReadFile(filepath.Join(juno, "topology.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// A JSON topology without a kernel section takes the neighbour's; the
	// CPUs stay as the JSON says (here: the package as the LLC).
	dir := t.TempDir()
	plain, err := ReadText(bytes.NewReader(txt), "topology.txt")
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, plain); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "topology.json"), js.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, KernelFileName), kernelFile, 0o644)
	got, err := Load(filepath.Join(dir, "topology.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !got.UsesKernelDomains() || got.Kernel.Source != "file:"+filepath.Join(dir, KernelFileName) {
		t.Fatalf("Kernel = %+v, want the neighbour's listing", got.Kernel)
	}
	if want := []string{"MC[share-llc]:0,3-5 1-2", "PKG[asym-capacity,asym-capacity-full]:0-5"}; !slices.Equal(domainSummary(got), want) {
		t.Errorf("Domains() = %q, want the kernel's %q", domainSummary(got), want)
	}
	if got.LLC(0) == nil || len(got.LLC(0)) != 6 {
		t.Errorf("LLC(0) = %v: a JSON topology's CPUs are its own", got.LLC(0))
	}
	if !slices.ContainsFunc(got.Notes, func(s string) bool { return strings.Contains(s, "differ from those derived") }) {
		t.Errorf("Notes = %q, want the difference noted", got.Notes)
	}
	// The captured JSON (with its kernel section) reads back whole and
	// ignores a neighbour.
	var withKernel bytes.Buffer
	if err := WriteJSON(&withKernel, got); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(bytes.NewReader(withKernel.Bytes()), "k.json")
	if err != nil {
		t.Fatalf("ReadJSON: %v\n%s", err, withKernel.Bytes())
	}
	if !reflect.DeepEqual(back.Kernel, got.Kernel) || !reflect.DeepEqual(back.Notes, got.Notes) {
		t.Errorf("kernel section round trip:\n got %+v\nwant %+v", back.Kernel, got.Kernel)
	}
	// A sched-domains.txt that does not fit the topology file is an
	// error naming it.
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "topology.txt"), txt[:bytes.Index(txt, []byte("cpu=3"))], 0o644) // CPUs 0-2 only
	os.WriteFile(filepath.Join(bad, KernelFileName), kernelFile, 0o644)
	if _, err := Load(filepath.Join(bad, "topology.txt")); err == nil || !strings.Contains(err.Error(), KernelFileName) {
		t.Errorf("Load with a listing of more CPUs: err %v, want one naming %s", err, KernelFileName)
	}
	os.WriteFile(filepath.Join(bad, "topology.txt"), txt, 0o644)
	os.WriteFile(filepath.Join(bad, KernelFileName), []byte("cpu0 0\ndomain0 06 0\n"), 0o644)
	if _, err := Load(filepath.Join(bad, "topology.txt")); err == nil || !strings.Contains(err.Error(), KernelFileName+":2:") {
		t.Errorf("Load with a malformed listing: err %v, want it positioned in %s", err, KernelFileName)
	}
}

func TestKernelLLCFromDomains(t *testing.T) {
	// An older capture: the listing but no cache lines. The LLC comes from
	// the SD_SHARE_LLC domains (sd_llc), so the relations follow the
	// clusters, and the derived levels then agree with the kernel's.
	src, err := os.ReadFile(filepath.Join(fixtures, "qemu-juno-asym", KernelFileName))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.Split(string(src), "\n") {
		if !strings.Contains(l, " index") {
			keep = append(keep, l)
		}
	}
	kv, err := ReadKernelView(strings.NewReader(strings.Join(keep, "\n")), "k")
	if err != nil {
		t.Fatal(err)
	}
	txt, _ := os.ReadFile(filepath.Join(fixtures, "qemu-juno-asym", "topology.txt"))
	topo, err := readText(bytes.NewReader(txt), "topology.txt", kv, "k")
	if err != nil {
		t.Fatal(err)
	}
	if got := relationMatrix(topo); got != "=xxlll/x=lxxx/xl=xxx/lxx=ll/lxxl=l/lxxll=" {
		t.Errorf("relations = %s, want the two clusters", got)
	}
	if !slices.ContainsFunc(topo.Notes, func(s string) bool { return strings.Contains(s, "LLC is taken from the kernel's SD_SHARE_LLC domains") }) {
		t.Errorf("Notes = %q, want the LLC source noted", topo.Notes)
	}
	if slices.ContainsFunc(topo.Notes, func(s string) bool { return strings.Contains(s, "differ") }) {
		t.Errorf("Notes = %q, want no difference between derived and kernel domains", topo.Notes)
	}
}

// junoRoots are the fake Juno sysfs tree with a procfs and a debugfs that
// hold the Juno guest's schedstat, release and domain names and flags;
// debug false leaves debugfs out.
func junoRoots(t *testing.T, debug bool) Roots {
	t.Helper()
	files := map[string]string{
		"proc/schedstat":            junoSchedstat(16),
		"proc/sys/kernel/osrelease": "6.12.95+deb12-arm64",
	}
	if debug {
		for cpu := range 6 {
			d := "debug/sched/domains/cpu" + itoa(cpu)
			files[d+"/domain0/name"] = "MC"
			files[d+"/domain0/flags"] = "SD_BALANCE_NEWIDLE SD_BALANCE_EXEC SD_BALANCE_FORK SD_WAKE_AFFINE SD_SHARE_LLC "
			files[d+"/domain1/name"] = "PKG"
			files[d+"/domain1/flags"] = "SD_BALANCE_NEWIDLE SD_BALANCE_EXEC SD_BALANCE_FORK SD_WAKE_AFFINE SD_ASYM_CPUCAPACITY SD_ASYM_CPUCAPACITY_FULL SD_PREFER_SIBLING "
			files[d+"/domain1/imbalance_pct"] = "117"
		}
	}
	root := writeTree(t, files)
	r := Roots{Sys: filepath.Join("testdata", "sysfs-juno-r2"), Proc: filepath.Join(root, "proc")}
	if debug {
		r.Debug = filepath.Join(root, "debug")
	}
	return r
}

func TestCaptureKernel(t *testing.T) {
	r := junoRoots(t, true)
	topo, err := Capture(r)
	if err != nil {
		t.Fatal(err)
	}
	k := topo.Kernel
	if k == nil || k.Release != "6.12.95+deb12-arm64" || k.Source != "sysfs procfs:"+r.Proc+" debugfs:"+r.Debug {
		t.Fatalf("Kernel = %+v, want the release and the three sources", k)
	}
	if len(k.Caches) != 18 || len(k.Clusters) != 6 || len(k.Domains) != 12 {
		t.Errorf("%d caches, %d clusters, %d domains; want 18, 6, 12", len(k.Caches), len(k.Clusters), len(k.Domains))
	}
	if c := k.Clusters[0]; c.ID != 1 || c.CPUs.String() != "0,3-5" {
		t.Errorf("clusters[0] = %+v, want cluster_id 1, cpus 0,3-5", c)
	}
	if d := k.Domains[3]; d.Name != "PKG" || len(d.Flags) != 7 || !slices.Contains(d.Flags, "SD_PREFER_SIBLING") {
		t.Errorf("cpu1/domain1 = %+v, want PKG with the 7 debugfs flags", d)
	}
	if !topo.UsesKernelDomains() || len(topo.Notes) != 1 || !strings.Contains(topo.Notes[0], "no NUMA information") {
		t.Errorf("UsesKernelDomains %v, Notes %q: want the kernel's domains, which agree with the derived ones", topo.UsesKernelDomains(), topo.Notes)
	}
	// It reads back from its JSON.
	var buf bytes.Buffer
	if err := WriteJSON(&buf, topo); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(&buf, "capture.json")
	if err != nil || !reflect.DeepEqual(back, topo) {
		t.Errorf("JSON round trip: err %v, equal %v\n%s", err, reflect.DeepEqual(back, topo), buf.Bytes())
	}

	// Without debugfs the names and flags are classified, and said so.
	topo, err = Capture(junoRoots(t, false))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"MC[share-llc]:0,3-5 1-2", "PKG[asym-capacity,asym-capacity-full]:0-5"}; !slices.Equal(domainSummary(topo), want) {
		t.Errorf("without debugfs, Domains() = %q, want %q", domainSummary(topo), want)
	}
	if topo.Kernel.Domains[0].Name != "" || !slices.ContainsFunc(topo.Notes, func(s string) bool { return strings.Contains(s, "names and flags were classified") }) {
		t.Errorf("Notes = %q, want the missing debugfs noted", topo.Notes)
	}

	// Without procfs: no domains listed, a note if schedstat is missing.
	r = junoRoots(t, false)
	os.Remove(filepath.Join(r.Proc, "schedstat"))
	topo, err = Capture(r)
	if err != nil {
		t.Fatal(err)
	}
	if topo.UsesKernelDomains() || !slices.ContainsFunc(topo.Notes, func(s string) bool { return strings.Contains(s, "schedstat") }) {
		t.Errorf("UsesKernelDomains %v, Notes %q: want derived domains and the missing schedstat noted", topo.UsesKernelDomains(), topo.Notes)
	}

	// A malformed debugfs flag is an error naming the file.
	r = junoRoots(t, true)
	os.WriteFile(filepath.Join(r.Debug, "sched", "domains", "cpu2", "domain0", "flags"), []byte("SD_SHARE_LLC bogus\n"), 0o644)
	if _, err := Capture(r); err == nil || !strings.Contains(err.Error(), filepath.Join("cpu2", "domain0")) {
		t.Errorf("Capture with a bad flags file: err %v, want it named", err)
	}
	// A schedstat of another machine (more CPUs) does not fit.
	r = junoRoots(t, false)
	os.WriteFile(filepath.Join(r.Proc, "schedstat"), []byte("version 16\ncpu7 0\ndomain0 ff 0\n"), 0o644)
	if _, err := Capture(r); err == nil || !strings.Contains(err.Error(), "cpu 7") {
		t.Errorf("Capture with a schedstat of 8 CPUs on 6: err %v", err)
	}
}
