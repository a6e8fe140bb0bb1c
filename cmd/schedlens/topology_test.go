package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/topology"
)

const (
	topologyQEMUDir   = "../../fixtures/real/qemu-smt8-hackbench"
	topologyJunoDir   = "../../fixtures/real/qemu-juno-asym"
	topologyFakeSysfs = "../../topology/testdata/sysfs-2node-smt"
)

// topologyRun runs schedlens with args and returns stdout, stderr and the
// error Execute returned.
func topologyRun(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errOut.String(), err
}

// topologySquash collapses runs of blanks so tabwriter padding does not
// matter to substring checks.
func topologySquash(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}

func TestTopologyShow(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{
			name: "preset juno-r2",
			args: []string{"topology", "show", "--topology", "juno-r2"},
			want: []string{
				"topology: preset:juno-r2\n",
				"6 CPUs: 6 cores, 2 LLCs, 1 package, 1 NUMA node",
				"capacity: asymmetric, 383 to 1024 (1024 = biggest CPU)",
				"cpu core smt siblings llc package node capacity",
				"\n0 0 0 1 0 0 383\n1 1 1 0 0 0 1024\n",
				"MC share-llc {0,3-5} {1-2}",
				"PKG asym-capacity,asym-capacity-full {0-5}",
			},
		},
		{
			name: "file next to a trace",
			args: []string{"topology", "show", filepath.Join(topologyQEMUDir, "trace.txt.zst")},
			want: []string{
				"topology: file:" + filepath.Join(topologyQEMUDir, "topology.txt"),
				"8 CPUs: 4 cores, 1 LLC, 1 package, 1 NUMA node",
				"capacity: symmetric, 1024",
				"\n0 0 0-1 0 0 0 1024\n1 0 0-1 0 0 0 1024\n2 1 2-3 0 0 0 1024\n",
				"domains: file:" + filepath.Join(topologyQEMUDir, "sched-domains.txt") + "\n",
				"caches:\nL1 data per CPU\nL1 instruction per CPU\nL2 unified per CPU\nL3 unified {0-7}\n",
				"sched domains (the kernel's, lowest level first):\nSMT share-capacity,share-llc {0-1} {2-3} {4-5} {6-7}\nMC share-llc {0-7}\n",
				"notes:\n- no cpu_capacity: every CPU without one is taken as 1024\n- no NUMA information: one node assumed\n",
			},
		},
		{
			name: "Juno-like guest",
			args: []string{"topology", "show", topologyJunoDir},
			want: []string{
				"6 CPUs: 6 cores, 2 LLCs, 1 package, 1 NUMA node",
				"capacity: asymmetric, 383 to 1024",
				"\n0 0 0 0 0 0 383\n1 1 1 1 0 0 1024\n2 2 2 1 0 0 1024\n3 3 3 0 0 0 383\n",
				"L2 unified {0,3-5} {1-2}",
				"sched domains (the kernel's, lowest level first):\nMC share-llc {0,3-5} {1-2}\nPKG asym-capacity,asym-capacity-full {0-5}\n",
			},
		},
		{
			name: "directory",
			args: []string{"topology", "show", topologyQEMUDir},
			want: []string{"topology: file:" + filepath.Join(topologyQEMUDir, "topology.txt"), "SMT share-capacity,share-llc"},
		},
		{
			name: "sysfs tree",
			args: []string{"topology", "show", "--sysfs", topologyFakeSysfs, "--procfs", "", "--debugfs", ""},
			want: []string{
				"16 CPUs: 8 cores, 4 LLCs, 2 packages, 2 NUMA nodes",
				"sched domains (derived, lowest level first):",
				"L3 unified {0-1,8-9} {2-3,10-11} {4-5,12-13} {6-7,14-15}",
				"\n8 0 0,8 0 0 0 1024\n",
				"SMT share-capacity,share-llc {0,8} {1,9}",
				"MC share-llc {0-1,8-9} {2-3,10-11} {4-5,12-13} {6-7,14-15}",
				"PKG - {0-3,8-11} {4-7,12-15}",
				"NUMA numa {0-15}",
				"node distances:\nnode0: 10 32\nnode1: 32 10\n",
			},
		},
		{
			name: "hybrid preset",
			args: []string{"topology", "show", "--topology", "i7-13700"},
			want: []string{
				"cpu core smt siblings cls llc package node capacity perf itmt prio",
				"\n16 8 16 8 0 0 0 1024 645 41\n",
				"CLS share-llc,cluster {16-19} {20-23}",
				"MC share-llc,asym-packing {0-23}",
			},
		},
		{
			name: "single CPU",
			args: []string{"topology", "show", "--topology", "sym-1"},
			want: []string{"1 CPU: 1 core", "none: a single CPU"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := topologyRun(t, tc.args...)
			if err != nil {
				t.Fatalf("error %v; stderr %s", err, errOut)
			}
			got := topologySquash(out)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, l := range strings.Split(out, "\n") {
				if len(l) > 80 && !strings.HasPrefix(l, "  SMT") && !strings.HasPrefix(l, "cpu") {
					t.Errorf("line over 80 columns: %q", l)
				}
			}
		})
	}
}

func TestTopologyShowJSON(t *testing.T) {
	out, _, err := topologyRun(t, "topology", "show", "--format", "json", "--topology", "juno-r2")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Source      string `json:"source"`
		NCPU        int    `json:"ncpu"`
		LLCs        int    `json:"llcs"`
		Asymmetric  bool   `json:"asymmetric"`
		MaxCapacity int    `json:"max_capacity"`
		CPUs        []struct {
			CPU         int   `json:"cpu"`
			Capacity    int   `json:"capacity"`
			SMTSiblings []int `json:"smt_siblings"`
			LLCCPUs     []int `json:"llc_cpus"`
		} `json:"cpus"`
		Domains []struct {
			Name   string   `json:"name"`
			Flags  []string `json:"flags"`
			Groups [][]int  `json:"groups"`
		} `json:"domains"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if got.Source != "preset:juno-r2" || got.NCPU != 6 || got.LLCs != 2 || !got.Asymmetric || got.MaxCapacity != 1024 {
		t.Errorf("header = %+v", got)
	}
	if len(got.CPUs) != 6 || got.CPUs[0].Capacity != 383 || !topologyEqualInts(got.CPUs[0].LLCCPUs, []int{0, 3, 4, 5}) || !topologyEqualInts(got.CPUs[2].SMTSiblings, []int{2}) {
		t.Errorf("cpus = %+v", got.CPUs)
	}
	if len(got.Domains) != 2 || got.Domains[1].Name != "PKG" || strings.Join(got.Domains[1].Flags, ",") != "asym-capacity,asym-capacity-full" {
		t.Errorf("domains = %+v", got.Domains)
	}
	if got.Notes == nil {
		t.Errorf("notes = null, want []")
	}
}

func topologyEqualInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTopologyCapture(t *testing.T) {
	out, _, err := topologyRun(t, "topology", "capture", "--sysfs", topologyFakeSysfs, "--procfs", "", "--debugfs", "")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.ReadJSON(strings.NewReader(out), "stdout")
	if err != nil {
		t.Fatalf("capture output does not read back: %v\n%s", err, out)
	}
	if topo.NCPU() != 16 || topo.Relation(0, 8) != topology.SMT || topo.Relation(0, 4) != topology.CrossNUMA {
		t.Errorf("captured %d CPUs, Relation(0,8) = %v, Relation(0,4) = %v", topo.NCPU(), topo.Relation(0, 8), topo.Relation(0, 4))
	}

	// -o FILE, then show reads it back.
	path := filepath.Join(t.TempDir(), "topology.json")
	out, errOut, err := topologyRun(t, "topology", "capture", "--sysfs", topologyFakeSysfs, "--procfs", "", "--debugfs", "", "-o", path)
	if err != nil {
		t.Fatal(err)
	}
	if out != "" || !strings.Contains(errOut, "wrote 16 CPUs to "+path) {
		t.Errorf("stdout %q, stderr %q; want nothing and a note on stderr", out, errOut)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	out, _, err = topologyRun(t, "topology", "show", filepath.Join(filepath.Dir(path), "trace.pftrace.zst"))
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("show of a missing trace: err %v", err)
	}
	out, _, err = topologyRun(t, "topology", "show", filepath.Dir(path))
	if err != nil || !strings.Contains(out, "topology: file:"+path) || !strings.Contains(topologySquash(out), "NUMA numa {0-15}") {
		t.Errorf("show of the captured file: err %v\n%s", err, out)
	}
}

// TestTopologyCaptureKernel captures the fake Juno sysfs tree with a
// procfs and debugfs holding the Juno guest's schedstat and domain files:
// the JSON keeps them, and show prints the kernel's domains.
func TestTopologyCaptureKernel(t *testing.T) {
	root := t.TempDir()
	write := func(rel, val string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(val+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var sched strings.Builder
	sched.WriteString("version 16\ntimestamp 1\n")
	for cpu, mc := range []string{"39", "06", "06", "39", "39", "39"} {
		fmt.Fprintf(&sched, "cpu%d 0 0 0 0 0 0 0 0 0\ndomain0 %s 0 0\ndomain1 3f 0 0\n", cpu, mc)
		d := fmt.Sprintf("debug/sched/domains/cpu%d/", cpu)
		write(d+"domain0/name", "MC")
		write(d+"domain0/flags", "SD_BALANCE_NEWIDLE SD_SHARE_LLC ")
		write(d+"domain1/name", "PKG")
		write(d+"domain1/flags", "SD_BALANCE_NEWIDLE SD_ASYM_CPUCAPACITY SD_ASYM_CPUCAPACITY_FULL SD_PREFER_SIBLING ")
	}
	write("proc/schedstat", sched.String())
	write("proc/sys/kernel/osrelease", "6.12.95+deb12-arm64")
	path := filepath.Join(root, "out", "topology.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	_, _, err := topologyRun(t, "topology", "capture", "--sysfs", "../../topology/testdata/sysfs-juno-r2",
		"--procfs", filepath.Join(root, "proc"), "--debugfs", filepath.Join(root, "debug"), "-o", path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for _, w := range []string{`"release": "6.12.95+deb12-arm64"`, `{"cpu":1,"level":1,"name":"PKG","span":"0-5","flags":["SD_BALANCE_NEWIDLE","SD_ASYM_CPUCAPACITY","SD_ASYM_CPUCAPACITY_FULL","SD_PREFER_SIBLING"]}`,
		`{"cpu":0,"index":2,"level":2,"type":"Unified","shared":"0,3-5"}`, `{"cpu":0,"id":1,"cpus":"0,3-5"}`} {
		if !strings.Contains(string(data), w) {
			t.Errorf("captured JSON lacks %s:\n%s", w, data)
		}
	}
	out, _, err := topologyRun(t, "topology", "show", filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	got := topologySquash(out)
	for _, w := range []string{"kernel: 6.12.95+deb12-arm64\n", "domains: sysfs procfs:" + filepath.Join(root, "proc") + " debugfs:" + filepath.Join(root, "debug"),
		"sched domains (the kernel's, lowest level first):\nMC share-llc {0,3-5} {1-2}\nPKG asym-capacity,asym-capacity-full {0-5}\n"} {
		if !strings.Contains(got, w) {
			t.Errorf("show lacks %q:\n%s", w, out)
		}
	}
	out, _, err = topologyRun(t, "topology", "show", "--format", "json", filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var js struct {
		DomainSource  string `json:"domain_source"`
		KernelRelease string `json:"kernel_release"`
		Caches        []struct {
			Name   string  `json:"name"`
			Groups [][]int `json:"groups"`
		} `json:"caches"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(js.DomainSource, "the kernel's listing (sysfs procfs:") || js.KernelRelease != "6.12.95+deb12-arm64" ||
		len(js.Caches) != 3 || js.Caches[2].Name != "L2 unified" || len(js.Caches[2].Groups) != 2 {
		t.Errorf("show JSON: %+v", js)
	}
}

func TestTopologyPresets(t *testing.T) {
	out, _, err := topologyRun(t, "topology", "presets")
	if err != nil {
		t.Fatal(err)
	}
	got := topologySquash(out)
	for _, w := range []string{"name cpus machine", "juno-r2 6 Arm Juno r2", "i7-13700 24 ", "i7-13700-nosmt 16 ", "smt2-<cores> N ", "sym-<n> N "} {
		if !strings.Contains(got, w) {
			t.Errorf("presets output lacks %q:\n%s", w, out)
		}
	}
	for _, p := range topology.Presets() {
		if p.CPUs == 0 {
			continue
		}
		if _, _, err := topologyRun(t, "topology", "show", "--topology", p.Name); err != nil {
			t.Errorf("show --topology %s: %v", p.Name, err)
		}
	}
}

func TestTopologyErrors(t *testing.T) {
	empty := t.TempDir()
	tests := []struct {
		name  string
		args  []string
		want  string
		usage bool // exit code 2
	}{
		{"no subcommand", []string{"topology"}, "needs a subcommand", true},
		{"bad format", []string{"topology", "show", "--format", "xml", "--topology", "sym-2"}, `--format "xml"`, true},
		{"two arguments", []string{"topology", "show", "a", "b"}, "at most 1 argument", true},
		{"capture argument", []string{"topology", "capture", "x"}, "takes no arguments", true},
		{"presets argument", []string{"topology", "presets", "x"}, "takes no arguments", true},
		{"unknown flag", []string{"topology", "show", "--cpus", "1"}, "unknown flag", true},
		{"unknown preset", []string{"topology", "show", "--topology", "pdp-11"}, `"pdp-11" is neither a file nor a preset`, false},
		{"no topology next to the trace", []string{"topology", "show", empty}, "no topology.json or topology.txt next to", false},
		{"bad sysfs", []string{"topology", "capture", "--sysfs", filepath.Join(empty, "none")}, "reading CPU topology", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := topologyRun(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
			var ue usageError
			if got := errors.As(err, &ue); got != tc.usage {
				t.Errorf("usage error = %v, want %v (%v)", got, tc.usage, err)
			}
		})
	}
}
