package topology

import (
	"bufio"
	"bytes"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const fixtures = "../fixtures/real"

func fixtureTopologies(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(fixtures, "*", "topology.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixture topology.txt under %s (err %v)", fixtures, err)
	}
	return paths
}

// fixtureWant is what a fixture's files say about its machine, checked
// by hand against topology.txt, sched-domains.txt and meta.txt.
var fixtureWant = map[string]struct {
	asym bool
	llcs string // the LLC groups, "0-1" or "0,3-5 1-2"
}{
	"qemu-juno-asym":      {true, "0,3-5 1-2"}, // L2 per cluster: CPUs 1-2 big, 0,3-5 little
	"qemu-smt8-hackbench": {false, "0-7"},      // L3 shared by all 8
	"qemu-smt8-pingpong":  {false, "0-7"},
}

func TestReadTextFixtures(t *testing.T) {
	kernelListings := 0
	for _, path := range fixtureTopologies(t) {
		name := filepath.Base(filepath.Dir(path))
		t.Run(name, func(t *testing.T) {
			topo, err := Load(path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			data, _ := os.ReadFile(path)
			lines := bytes.Count(data, []byte("\n"))
			if got := topo.NCPU(); got != lines {
				t.Errorf("NCPU() = %d, want %d (one per line)", got, lines)
			}
			if got := topo.Source; got != "file:"+path {
				t.Errorf("Source = %q, want %q", got, "file:"+path)
			}
			llcNoted := slices.ContainsFunc(topo.Notes, func(s string) bool { return strings.Contains(s, "LLC is taken to be the package") })
			// Check against the guest's own sched domains when recorded.
			sd := filepath.Join(filepath.Dir(path), KernelFileName)
			if _, err := os.Stat(sd); err != nil {
				// The 2-CPU development VMs: no SMT, one LLC, no cache
				// information.
				if topo.Asymmetric() || topo.UsesKernelDomains() || !llcNoted {
					t.Errorf("Asymmetric() = %v, UsesKernelDomains() = %v, Notes = %q; want symmetric, derived domains, the LLC inference noted", topo.Asymmetric(), topo.UsesKernelDomains(), topo.Notes)
				}
				if got, want := domainSummary(topo), []string{"MC[share-llc]:0-1"}; !slices.Equal(got, want) {
					t.Errorf("Domains() = %q, want %q", got, want)
				}
				return
			}
			kernelListings++
			want, ok := fixtureWant[name]
			if !ok {
				t.Fatalf("no fixtureWant entry for %s: add what its files say", name)
			}
			if topo.Asymmetric() != want.asym {
				t.Errorf("Asymmetric() = %v, want %v", topo.Asymmetric(), want.asym)
			}
			var llcs []string
			for cpu := range topo.CPUs {
				if l := FormatCPUList(topo.LLC(cpu)); !slices.Contains(llcs, l) {
					llcs = append(llcs, l)
				}
			}
			slices.Sort(llcs)
			if got := strings.Join(llcs, " "); got != want.llcs {
				t.Errorf("LLCs = %s, want %s (the last cache level of %s)", got, want.llcs, sd)
			}
			if llcNoted {
				t.Errorf("Notes = %q: the LLC comes from %s's cache lines, not from the package", topo.Notes, sd)
			}
			if !topo.UsesKernelDomains() || topo.DomainSource() != "the kernel's listing (file:"+sd+")" {
				t.Errorf("DomainSource() = %q, want the kernel's listing from %s", topo.DomainSource(), sd)
			}
			if slices.ContainsFunc(topo.Notes, func(s string) bool { return strings.Contains(s, "differ") }) {
				t.Errorf("Notes = %q: the derived domains should agree with the kernel's", topo.Notes)
			}
			kernel := readKernelDomains(t, sd)
			t.Run("derived", func(t *testing.T) { checkKernelDomains(t, topo.NCPU(), topo.DerivedDomains(), kernel) })
			t.Run("listing", func(t *testing.T) { checkKernelDomains(t, topo.NCPU(), topo.Domains(), kernel) })
		})
	}
	if kernelListings < 3 {
		t.Errorf("%d fixtures with a %s, want at least the three qemu ones", kernelListings, KernelFileName)
	}
}

// kernelLevel is one domain of one CPU in a sched-domains.txt.
type kernelLevel struct {
	name  string
	span  []int
	flags []string
}

// readKernelDomains reads the per-CPU domains of a sched-domains.txt the
// kernel wrote: the names and flags from debugfs, the spans from the
// cpumasks in /proc/schedstat. It is written apart from ReadKernelView
// so that the two check each other.
func readKernelDomains(t *testing.T, path string) map[int][]kernelLevel {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kernel := map[int][]kernelLevel{}
	cur := -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		switch {
		case len(fields) > 2 && strings.HasPrefix(fields[0], "cpu") && !strings.Contains(fields[0], "/") && !strings.HasSuffix(fields[0], ":") && !strings.HasPrefix(fields[1], "index"):
			cur, _ = strconv.Atoi(strings.TrimPrefix(fields[0], "cpu"))
		case len(fields) > 2 && strings.HasPrefix(fields[0], "domain") && cur >= 0:
			k, _ := strconv.Atoi(strings.TrimPrefix(fields[0], "domain"))
			mask, ok := new(big.Int).SetString(fields[1], 16)
			if !ok {
				t.Fatalf("%s: bad cpumask %q", path, fields[1])
			}
			var span []int
			for c := 0; c < mask.BitLen(); c++ {
				if mask.Bit(c) == 1 {
					span = append(span, c)
				}
			}
			for len(kernel[cur]) <= k {
				kernel[cur] = append(kernel[cur], kernelLevel{})
			}
			kernel[cur][k].span = span
		case strings.Contains(line, "/domain") && strings.Contains(line, "name="):
			head, rest, _ := strings.Cut(line, ":")
			cs, ks, _ := strings.Cut(head, "/")
			c, _ := strconv.Atoi(strings.TrimPrefix(cs, "cpu"))
			k, _ := strconv.Atoi(strings.TrimPrefix(ks, "domain"))
			for len(kernel[c]) <= k {
				kernel[c] = append(kernel[c], kernelLevel{})
			}
			for _, f := range strings.Fields(rest) {
				if n, ok := strings.CutPrefix(f, "name="); ok {
					kernel[c][k].name = n
				} else if fl, ok := strings.CutPrefix(f, "flags="); ok {
					kernel[c][k].flags = append(kernel[c][k].flags, fl)
				} else if strings.HasPrefix(f, "SD_") {
					kernel[c][k].flags = append(kernel[c][k].flags, f)
				}
			}
		}
	}
	return kernel
}

// checkKernelDomains compares domains with the kernel's, per CPU and level:
// name, span and the modelled flags of that CPU's domain.
func checkKernelDomains(t *testing.T, ncpu int, doms []Domain, kernel map[int][]kernelLevel) {
	t.Helper()
	if len(kernel) != ncpu {
		t.Fatalf("the kernel's listing describes %d CPUs, topology has %d", len(kernel), ncpu)
	}
	flagOf := map[string]DomainFlags{"SD_SHARE_CPUCAPACITY": ShareCapacity, "SD_SHARE_LLC": ShareLLC, "SD_CLUSTER": ClusterFlag,
		"SD_ASYM_CPUCAPACITY": AsymCapacity, "SD_ASYM_CPUCAPACITY_FULL": AsymCapacityFull, "SD_ASYM_PACKING": AsymPacking, "SD_NUMA": NUMAFlag}
	for cpu := 0; cpu < ncpu; cpu++ {
		var got []kernelLevel
		var gotFlags []DomainFlags
		for _, d := range doms {
			if d.Spans[cpu] != nil {
				got = append(got, kernelLevel{name: d.Name, span: d.Spans[cpu]})
				gotFlags = append(gotFlags, d.FlagsOf(cpu))
			}
		}
		want := kernel[cpu]
		if len(got) != len(want) {
			t.Errorf("cpu %d: %d domain levels, kernel has %d", cpu, len(got), len(want))
			continue
		}
		for k := range want {
			if got[k].name != want[k].name || !slices.Equal(got[k].span, want[k].span) {
				t.Errorf("cpu %d domain%d = %s %v, kernel has %s %v", cpu, k, got[k].name, got[k].span, want[k].name, want[k].span)
			}
			var wantFlags DomainFlags
			for _, f := range want[k].flags {
				wantFlags |= flagOf[f]
			}
			if gotFlags[k] != wantFlags {
				t.Errorf("cpu %d domain%d flags = %v, kernel has %v (modelled ones)", cpu, k, gotFlags[k], wantFlags)
			}
		}
	}
}

func TestReadTextQEMUSMT(t *testing.T) {
	topo, err := Load(filepath.Join(fixtures, "qemu-smt8-hackbench", "topology.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := "=sllllll/s=llllll/ll=sllll/lls=llll/llll=sll/lllls=ll/llllll=s/lllllls="
	if got := relationMatrix(topo); got != want {
		t.Errorf("relations = %s\n want %s", got, want)
	}
	for cpu := 0; cpu < 8; cpu++ {
		if got, want := topo.Siblings(cpu), []int{cpu &^ 1, cpu | 1}; !slices.Equal(got, want) {
			t.Errorf("Siblings(%d) = %v, want %v", cpu, got, want)
		}
		if got := topo.CPUs[cpu].Capacity; got != 1024 {
			t.Errorf("cpu %d: empty capacity= read as %d, want 1024", cpu, got)
		}
	}
}

func TestReadTextOrderAndOffline(t *testing.T) {
	// The script's glob lists cpu10 before cpu2; an offline CPU has empty
	// fields.
	var b strings.Builder
	order := []int{0, 1, 10, 11, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, c := range order {
		if c == 5 {
			b.WriteString("cpu=5 core_id= package= die= cluster= thread_siblings= core_siblings= capacity=\n")
			continue
		}
		sib := FormatCPUList([]int{c &^ 1, c | 1})
		if c == 4 {
			sib = "4"
		}
		b.WriteString("cpu=" + strconv.Itoa(c) + " core_id=" + strconv.Itoa(c/2) + " package=0 die=0 cluster=65535 thread_siblings=" + sib + " core_siblings=0-11 capacity=\n")
	}
	b.WriteString("\n# a comment\n")
	topo, err := ReadText(strings.NewReader(b.String()), "order.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := topo.NCPU(); got != 12 {
		t.Fatalf("NCPU() = %d, want 12", got)
	}
	if got := topo.Siblings(10); !slices.Equal(got, []int{10, 11}) {
		t.Errorf("Siblings(10) = %v, want [10 11]", got)
	}
	if got := topo.Relation(4, 5); got != CrossLLC {
		t.Errorf("Relation(4, offline 5) = %v, want cross_llc (offline CPU alone)", got)
	}
	if !slices.ContainsFunc(topo.Notes, func(s string) bool { return strings.Contains(s, "cpu 5 was offline") }) {
		t.Errorf("Notes = %q, want the offline CPU noted", topo.Notes)
	}
	for c := range topo.NCPU() {
		if got := topo.CPUs[c].Offline; got != (c == 5) {
			t.Errorf("cpu %d Offline = %v, want %v", c, got, c == 5)
		}
	}
	// The flag survives the JSON a trace embeds.
	var buf bytes.Buffer
	if err := WriteJSON(&buf, topo); err != nil {
		t.Fatal(err)
	}
	js := buf.String()
	back, err := ReadJSON(&buf, "topology.json")
	if err != nil {
		t.Fatal(err)
	}
	if !back.CPUs[5].Offline || back.CPUs[4].Offline {
		t.Errorf("after JSON: cpu 5 Offline %v, cpu 4 %v; want true, false", back.CPUs[5].Offline, back.CPUs[4].Offline)
	}
	// A topology written before the flag existed says it in a note only.
	old := strings.ReplaceAll(js, `,"offline":true`, "")
	if old == js || strings.Contains(old, `"offline"`) {
		t.Fatalf("could not strip the flag from %s", js)
	}
	back, err = ReadJSON(strings.NewReader(old), "old.json")
	if err != nil {
		t.Fatal(err)
	}
	if !back.CPUs[5].Offline || back.CPUs[4].Offline {
		t.Errorf("old-style JSON: cpu 5 Offline %v, cpu 4 %v; want true (from the note), false", back.CPUs[5].Offline, back.CPUs[4].Offline)
	}
}

func TestReadTextErrors(t *testing.T) {
	line := func(cpu, core int, sib, pkg string) string {
		return "cpu=" + strconv.Itoa(cpu) + " core_id=" + strconv.Itoa(core) + " package=0 die=0 cluster=65535 thread_siblings=" + sib + " core_siblings=" + pkg + " capacity=\n"
	}
	tests := []struct {
		name  string
		input string
		want  string // substring of the error
		cause error
	}{
		{"empty", "", "no CPU lines", ErrBadField},
		{"only comments", "# nothing\n\n", "no CPU lines", ErrBadField},
		{"not key=value", "cpu=0 core_id\n", `bad.txt:1: want key=value fields; got "core_id"`, ErrBadField},
		{"unknown key", "cpu=0 cores=1\n", `bad.txt:1: unknown field "cores"`, ErrBadField},
		{"duplicate key", "cpu=0 cpu=1\n", "field cpu given twice", ErrBadField},
		{"missing field", "cpu=0 core_id=0 package=0 thread_siblings=0\n", "bad.txt:1: cpu=0: field core_siblings missing", ErrBadField},
		{"bad cpu", "cpu=x core_id=0 package=0 thread_siblings=0 core_siblings=0\n", `field cpu: want a CPU number`, ErrBadField},
		{"bad core", "cpu=0 core_id=z package=0 thread_siblings=0 core_siblings=0\n", `field core_id: want an integer; got "z"`, ErrBadField},
		{"bad package", "cpu=0 core_id=0 package=-1 thread_siblings=0 core_siblings=0\n", `field package: want a package number`, ErrBadField},
		{"bad list", line(0, 0, "0-", "0"), `bad.txt:1: cpu=0: field thread_siblings: want a CPU list like 0-1; got "0-"`, ErrBadField},
		{"half empty", "cpu=0 core_id=0 package= thread_siblings=0 core_siblings=0\n", `field package: want an integer; got ""`, ErrBadField},
		{"bad capacity", "cpu=0 core_id=0 package=0 thread_siblings=0 core_siblings=0 capacity=4096\n", `field capacity: want 1..1024 or empty; got "4096"`, ErrBadField},
		{"duplicate cpu", line(0, 0, "0", "0-1") + line(0, 1, "0", "0-1"), "bad.txt:2: cpu=0: cpu 0 listed twice", ErrInconsistent},
		{"gap", line(0, 0, "0", "0,2") + line(2, 1, "2", "0,2"), "cpu 1 missing", ErrInconsistent},
		{"siblings disagree", line(0, 0, "0-1", "0-1") + line(1, 0, "1", "0-1"), "bad.txt:1: cpu=0: field thread_siblings: cpu 0 says 0-1, cpu 1 says 1", ErrInconsistent},
		{"siblings exclude self", line(0, 0, "1", "0-1") + line(1, 0, "1", "0-1"), "does not contain cpu 0 itself", ErrInconsistent},
		{"siblings name a missing cpu", line(0, 0, "0,7", "0-1") + line(1, 0, "1", "0-1"), "names cpu 7, but there are 2 CPUs", ErrInconsistent},
		{"packages disagree", line(0, 0, "0", "0-1") + line(1, 1, "1", "1"), "field core_siblings: cpu 0 says 0-1, cpu 1 says 1", ErrInconsistent},
		{"long line", "cpu=0 " + strings.Repeat("x", 70<<10) + "\n", "longer than 64 KiB", ErrBadField},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topo, err := ReadText(strings.NewReader(tc.input), "bad.txt")
			if err == nil {
				t.Fatalf("ReadText succeeded with %d CPUs, want an error containing %q", topo.NCPU(), tc.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("error %T %v is not a *ParseError", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q, want it to contain %q", err, tc.want)
			}
			if !errors.Is(err, tc.cause) {
				t.Errorf("error = %v, want errors.Is %v", err, tc.cause)
			}
		})
	}
}

func TestCapture2NodeSMT(t *testing.T) {
	root := filepath.Join("testdata", "sysfs-2node-smt")
	topo, err := Capture(Roots{Sys: root})
	if err != nil {
		t.Fatal(err)
	}
	if got := topo.Source; got != "sysfs:"+root {
		t.Errorf("Source = %q, want %q", got, "sysfs:"+root)
	}
	if got := topo.NCPU(); got != 16 {
		t.Fatalf("NCPU() = %d, want 16", got)
	}
	// Core c has threads c and c+8; cores 2k, 2k+1 share an L3; cores 0-3
	// are package/node 0, 4-7 package/node 1.
	rel := []struct {
		a, b int
		want Relation
	}{
		{0, 0, Same}, {0, 8, SMT}, {8, 0, SMT}, {7, 15, SMT},
		{0, 1, LLC}, {0, 9, LLC}, {2, 11, LLC},
		{0, 2, CrossLLC}, {1, 3, CrossLLC}, {8, 10, CrossLLC},
		{0, 4, CrossNUMA}, {3, 4, CrossNUMA}, {11, 12, CrossNUMA},
	}
	for _, r := range rel {
		if got := topo.Relation(r.a, r.b); got != r.want {
			t.Errorf("Relation(%d, %d) = %v, want %v", r.a, r.b, got, r.want)
		}
	}
	if got := topo.Siblings(3); !slices.Equal(got, []int{3, 11}) {
		t.Errorf("Siblings(3) = %v, want [3 11]", got)
	}
	if got := topo.LLC(2); !slices.Equal(got, []int{2, 3, 10, 11}) {
		t.Errorf("LLC(2) = %v, want [2 3 10 11]", got)
	}
	if got := topo.NodeCPUs(12); !slices.Equal(got, []int{4, 5, 6, 7, 12, 13, 14, 15}) {
		t.Errorf("NodeCPUs(12) = %v", got)
	}
	// core_id repeats across packages (0-3 in each); cores stay distinct.
	if topo.CPUs[0].Core == topo.CPUs[4].Core {
		t.Errorf("cpus 0 and 4 (core_id 0 in packages 0 and 1) got one core id %d", topo.CPUs[0].Core)
	}
	if got, want := topo.NodeDistances, [][]int{{10, 32}, {32, 10}}; !reflect.DeepEqual(got, want) {
		t.Errorf("NodeDistances = %v, want %v", got, want)
	}
	wantDomains := []string{
		"SMT[share-capacity,share-llc]:0,8 1,9 2,10 3,11 4,12 5,13 6,14 7,15",
		"MC[share-llc]:0-1,8-9 2-3,10-11 4-5,12-13 6-7,14-15",
		"PKG[-]:0-3,8-11 4-7,12-15",
		"NUMA[numa]:0-15",
	}
	if got := domainSummary(topo); !slices.Equal(got, wantDomains) {
		t.Errorf("Domains() = %q\n want %q", got, wantDomains)
	}
	if !slices.ContainsFunc(topo.Notes, func(s string) bool { return strings.Contains(s, "no cpu_capacity") }) {
		t.Errorf("Notes = %q, want the missing cpu_capacity noted", topo.Notes)
	}
}

func TestCaptureJunoMatchesPreset(t *testing.T) {
	got, err := Capture(Roots{Sys: filepath.Join("testdata", "sysfs-juno-r2")})
	if err != nil {
		t.Fatal(err)
	}
	want := mustPreset(t, "juno-r2")
	if g, w := relationMatrix(got), relationMatrix(want); g != w {
		t.Errorf("relations = %s\n preset has %s", g, w)
	}
	if g, w := domainSummary(got), domainSummary(want); !slices.Equal(g, w) {
		t.Errorf("Domains() = %q\n preset has %q", g, w)
	}
	for i := range want.CPUs {
		if g, w := got.CPUs[i].Capacity, want.CPUs[i].Capacity; g != w {
			t.Errorf("cpu %d capacity = %d, preset has %d", i, g, w)
		}
	}
	if got.NodeDistances != nil {
		t.Errorf("NodeDistances = %v, want nil without a node directory", got.NodeDistances)
	}
}

// writeTree creates files under a temporary sysfs root.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, val := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(val+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func cpuFiles(cpu int, core, pkg, sib, pkgCPUs string) map[string]string {
	d := "devices/system/cpu/cpu" + strconv.Itoa(cpu) + "/topology/"
	return map[string]string{
		d + "core_id":              core,
		d + "physical_package_id":  pkg,
		d + "thread_siblings_list": sib,
		d + "core_siblings_list":   pkgCPUs,
	}
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func TestCaptureOfflineAndFallbacks(t *testing.T) {
	files := merge(cpuFiles(0, "0", "0", "0", "0-1"), cpuFiles(1, "1", "0", "1", "0-1"))
	delete(files, "devices/system/cpu/cpu1/topology/core_siblings_list")
	files["devices/system/cpu/cpu1/topology/package_cpus_list"] = "0-1"
	files["devices/system/cpu/cpu2/online"] = "0" // offline: no topology directory
	files["devices/system/cpu/cpufreq/x"] = "not a cpu directory"
	root := writeTree(t, files)
	topo, err := Capture(Roots{Sys: root})
	if err != nil {
		t.Fatal(err)
	}
	if got := topo.NCPU(); got != 3 {
		t.Fatalf("NCPU() = %d, want 3", got)
	}
	if got := topo.Relation(0, 1); got != LLC {
		t.Errorf("Relation(0, 1) = %v, want llc (package fallback)", got)
	}
	if got := topo.Relation(0, 2); got != CrossLLC {
		t.Errorf("Relation(0, offline 2) = %v, want cross_llc", got)
	}
	if !topo.CPUs[2].Offline || topo.CPUs[1].Offline {
		t.Errorf("Offline: cpu 2 %v, cpu 1 %v; want true, false", topo.CPUs[2].Offline, topo.CPUs[1].Offline)
	}
	for _, want := range []string{"cpu 2 was offline", "LLC is taken to be the package", "no cpu_capacity", "no NUMA information"} {
		if !slices.ContainsFunc(topo.Notes, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("Notes = %q, want one containing %q", topo.Notes, want)
		}
	}
}

func TestCaptureErrors(t *testing.T) {
	base := func() map[string]string {
		return merge(cpuFiles(0, "0", "0", "0", "0-1"), cpuFiles(1, "1", "0", "1", "0-1"))
	}
	tests := []struct {
		name   string
		mutate func(map[string]string)
		want   string
	}{
		{"no cpus", func(m map[string]string) {
			for k := range m {
				delete(m, k)
			}
			m["devices/system/cpu/online"] = "0"
		}, "no cpuN directories"},
		{"bad core_id", func(m map[string]string) { m["devices/system/cpu/cpu1/topology/core_id"] = "x" }, `core_id: want an integer; got "x"`},
		{"missing thread siblings", func(m map[string]string) { delete(m, "devices/system/cpu/cpu0/topology/thread_siblings_list") }, "thread_siblings_list: file missing"},
		{"bad capacity", func(m map[string]string) { m["devices/system/cpu/cpu0/cpu_capacity"] = "0" }, "cpu_capacity: want 1..1024; got 0"},
		{"bad cache list", func(m map[string]string) {
			m["devices/system/cpu/cpu0/cache/index0/level"] = "2"
			m["devices/system/cpu/cpu0/cache/index0/type"] = "Unified"
			m["devices/system/cpu/cpu0/cache/index0/shared_cpu_list"] = "zz"
		}, `shared_cpu_list: want a CPU list`},
		{"bad node distance", func(m map[string]string) {
			m["devices/system/node/node0/cpulist"] = "0-1"
			m["devices/system/node/node0/distance"] = "10 20"
		}, "want 1 distances"},
		{"siblings disagree", func(m map[string]string) { m["devices/system/cpu/cpu0/topology/thread_siblings_list"] = "0-1" }, "cpu 0 says 0-1, cpu 1 says 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := base()
			tc.mutate(m)
			_, err := Capture(Roots{Sys: writeTree(t, m)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Capture error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := Capture(Roots{Sys: filepath.Join(t.TempDir(), "absent")}); err == nil {
		t.Errorf("Capture of a missing root succeeded")
	}
}

func TestJSONRoundTrip(t *testing.T) {
	var topos []*Topology
	for _, name := range []string{"juno-r2", "i7-13700", "i7-13700-nosmt", "smt2-3", "sym-2"} {
		topos = append(topos, mustPreset(t, name))
	}
	for _, root := range []string{"sysfs-2node-smt", "sysfs-juno-r2"} {
		c, err := Capture(Roots{Sys: filepath.Join("testdata", root)})
		if err != nil {
			t.Fatal(err)
		}
		topos = append(topos, c)
	}
	qemu, err := Load(filepath.Join(fixtures, "qemu-smt8-hackbench", "topology.txt"))
	if err != nil {
		t.Fatal(err)
	}
	topos = append(topos, qemu)
	for _, want := range topos {
		t.Run(want.Source, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteJSON(&buf, want); err != nil {
				t.Fatal(err)
			}
			got, err := ReadJSON(bytes.NewReader(buf.Bytes()), "round.json")
			if err != nil {
				t.Fatalf("ReadJSON: %v\n%s", err, buf.Bytes())
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip:\n got %+v\nwant %+v\njson:\n%s", got, want, buf.Bytes())
			}
			// Load sniffs JSON and sets the source.
			path := filepath.Join(t.TempDir(), "topology.json")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			loaded, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if loaded.Source != "file:"+path || !reflect.DeepEqual(loaded.CPUs, want.CPUs) {
				t.Errorf("Load: Source %q, CPUs equal %v", loaded.Source, reflect.DeepEqual(loaded.CPUs, want.CPUs))
			}
		})
	}
}

func TestReadJSON(t *testing.T) {
	// Hand-written, unordered, with distances.
	in := `{"cpus": [
  {"cpu": 1, "core": 1, "cluster": 1, "package": 1, "node": 1, "capacity": 1024},
  {"cpu": 0, "core": 0, "cluster": 0, "package": 0, "node": 0, "capacity": 1024}
], "node_distances": [[10, 21], [21, 10]]}`
	topo, err := ReadJSON(strings.NewReader(in), "hand.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := topo.Relation(0, 1); got != CrossNUMA {
		t.Errorf("Relation(0, 1) = %v, want cross_numa", got)
	}
	tests := []struct {
		name, in, want string
	}{
		{"syntax", "{\n\"cpus\": [\n{\"cpu\": 0,,}]}", "bad.json:3: invalid character ','"},
		{"unknown key", "{\"cpus\": [{\"cpu\": 0, \"capcity\": 1024}]}", `unknown field "capcity"`},
		{"type", "{\n\"cpus\": [{\"cpu\": \"zero\"}]}", "bad.json:2: cannot unmarshal string"},
		{"no cpus", `{"name": "x"}`, `no "cpus" array`},
		{"invalid", `{"cpus": [{"cpu": 0, "capacity": 2000}]}`, "capacity 2000, want 1..1024"},
		{"gap", `{"cpus": [{"cpu": 0, "capacity": 1024}, {"cpu": 2, "core": 2, "capacity": 1024}]}`, "CPUs[1] has cpu 2"},
		{"trailing", `{"cpus": [{"cpu": 0, "capacity": 1024}]} {}`, "data after the topology object"},
		{"empty", ``, "EOF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadJSON(strings.NewReader(tc.in), "bad.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadJSON error = %v, want one containing %q", err, tc.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("error %T is not a *ParseError", err)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "none.txt")); err == nil {
		t.Errorf("Load of a missing file succeeded")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "topology.txt")
	os.WriteFile(p, []byte("cpu=0 bogus\n"), 0o644)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p+":1:") {
		t.Errorf("Load error = %v, want one positioned at %s:1", err, p)
	}
}

func TestResolve(t *testing.T) {
	traceTopo := mustPreset(t, "smt2-2")
	traceTopo.Source = "perfetto system info"

	withTxt := t.TempDir()
	fixture, err := os.ReadFile(filepath.Join(fixtures, "qemu-smt8-hackbench", "topology.txt"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(withTxt, "topology.txt"), fixture, 0o644)
	os.WriteFile(filepath.Join(withTxt, "trace.txt"), []byte("x"), 0o644)

	withBoth := t.TempDir()
	os.WriteFile(filepath.Join(withBoth, "topology.txt"), fixture, 0o644)
	var js bytes.Buffer
	WriteJSON(&js, mustPreset(t, "sym-8"))
	os.WriteFile(filepath.Join(withBoth, "topology.json"), js.Bytes(), 0o644)

	empty := t.TempDir()
	userFile := filepath.Join(withTxt, "topology.txt")

	tests := []struct {
		name      string
		fromTrace *Topology
		trace     string
		flag      string
		ncpu      int
		source    string // want; "" means an error is wanted
		ncpuWant  int
		err       string
	}{
		{"flag preset beats the trace", traceTopo, filepath.Join(withTxt, "trace.txt"), "juno-r2", 4, "preset:juno-r2", 6, ""},
		{"flag file beats the trace", traceTopo, "", userFile, 4, "file:" + userFile, 8, ""},
		{"flag directory", nil, "", withTxt, 0, "file:" + userFile, 8, ""},
		{"trace beats a file next to it", traceTopo, filepath.Join(withTxt, "trace.txt"), "", 4, "trace", 4, ""},
		{"file next to the trace", nil, filepath.Join(withTxt, "trace.txt"), "", 8, "file:" + userFile, 8, ""},
		{"trace path is the directory", nil, withTxt, "", 0, "file:" + userFile, 8, ""},
		{"json preferred over txt", nil, filepath.Join(withBoth, "trace.pftrace"), "", 8, "file:" + filepath.Join(withBoth, "topology.json"), 8, ""},
		{"empty trace topology ignored", &Topology{}, filepath.Join(empty, "t"), "", 3, "default", 3, ""},
		{"default", nil, filepath.Join(empty, "trace.txt"), "", 3, "default", 3, ""},
		{"default without a path", nil, "", "", 2, "default", 2, ""},
		{"too few CPUs in the file", nil, filepath.Join(withTxt, "trace.txt"), "", 16, "", 0, "topology file:" + userFile + " has 8 CPUs but the trace has 16"},
		{"too few CPUs in the preset", nil, "", "sym-2", 4, "", 0, "topology preset:sym-2 has 2 CPUs but the trace has 4"},
		{"too few CPUs in the trace topology", traceTopo, "", "", 6, "", 0, "topology trace has 4 CPUs but the trace has 6"},
		{"bad flag", nil, "", "no-such-machine", 2, "", 0, `--topology: "no-such-machine" is neither a file nor a preset`},
		{"flag directory without a file", nil, "", empty, 2, "", 0, "holds no topology.json or topology.txt"},
		{"nothing known", nil, filepath.Join(empty, "t"), "", 0, "", 0, "no topology"},
		{"invalid trace topology", &Topology{CPUs: []CPU{{ID: 0, Capacity: 9}}}, "", "", 1, "", 0, "topology in the trace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.fromTrace, tc.trace, tc.flag, tc.ncpu)
			if tc.source == "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Resolve error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if got.Source != tc.source || got.NCPU() != tc.ncpuWant {
				t.Errorf("Resolve = %s with %d CPUs, want %s with %d", got.Source, got.NCPU(), tc.source, tc.ncpuWant)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Validate() = %v", err)
			}
		})
	}
	if traceTopo.Source != "perfetto system info" {
		t.Errorf("Resolve modified the trace's topology: Source = %q", traceTopo.Source)
	}
	def, _ := Resolve(nil, "", "", 2)
	if len(def.Notes) == 0 || !strings.Contains(def.Notes[0], "2 identical CPUs assumed") {
		t.Errorf("default Notes = %q, want the assumption stated", def.Notes)
	}
}
