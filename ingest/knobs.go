package ingest

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Knobs is what meta.txt next to a trace says the recording kernel ran
// beyond its version's defaults: the scheduler knobs the capture set and
// the seed patches its build lacked or carried.
type Knobs struct {
	// Features are sched_feat switches set before the workload
	// ("NO_RUN_TO_PARITY"), from the "sched_knobs:" line's features=.
	Features []string
	// Tunables are debugfs sched tunables ("base_slice_ns=3000000"),
	// from its debugfs=.
	Tunables []string
	// Sysctls are the sysctls the capture set ("kernel.sched_autogroup_enabled=0");
	// one the model implements joins the what-if baseline, the others are
	// reported.
	Sysctls []string
	// Patches are seed patches as "+name" (carried by a kernel whose
	// version lacks it) or "-name" (reverted from one that has it), from
	// the "sched_patches:" line (tools/kernel-lab's record.sh writes it).
	Patches []string
	// ModelFeatures are features of schedlens's model that no sched_feat
	// of the kernel switches, which the recording's build changed in the
	// code ("NO_CORE_SYNC": tools/kernel-lab's 004-nosync takes the
	// forced-idle sync out of core scheduling's pick), from the
	// "sched_model_features:" line.
	ModelFeatures []string
	// Reported are the sched tunables the recording kernel reported before
	// the workload, from the "sched_state:" line (tools/qemu's
	// guest-init.sh reads them from debugfs), as debugfs name=value:
	// base_slice_ns always (its boot value depends on the kernel build and
	// the CPU count: 6.12 stable kernels use 0.70 ms where 6.12.0 used
	// 0.75), migration_cost_ns and nr_migrate when they differ from the
	// kernel's defaults (500000 and 32). A tunable that Tunables also sets
	// is left to Tunables.
	Reported []string
	// File is the meta.txt read ("" when there is none).
	File string
}

// reportedTunables maps the keys of a "sched_state:" line to debugfs
// tunable names, with the kernel default that is not reported (0 for the
// base slice, which is reported whatever it is: no kernel boots with 0).
var reportedTunables = []struct {
	key, name string
	def       int64
}{
	{"sched_base_slice_ns", "base_slice_ns", 0},
	{"sched_migration_cost_ns", "migration_cost_ns", 500000}, // sysctl_sched_migration_cost
	{"sched_nr_migrate", "nr_migrate", 32},                   // sysctl_sched_nr_migrate
}

// parseSchedState reads the tunables of a "sched_state:" line:
// "name: value" pairs separated by ";" (values that are not integers,
// such as the feature list, are passed over).
func parseSchedState(v string) []string {
	var out []string
	for _, kv := range strings.Split(v, ";") {
		key, val, ok := strings.Cut(kv, ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		for _, t := range reportedTunables {
			if key != t.key {
				continue
			}
			n, err := strconv.ParseInt(val, 10, 64)
			// debugfs holds them as u32: a value beyond is no reading of
			// a kernel, and is passed over.
			if err != nil || n < 0 || n > 1<<32-1 || n == t.def {
				continue
			}
			out = append(out, t.name+"="+strconv.FormatInt(n, 10))
		}
	}
	return out
}

// MergeSysctls adds the sysctls a trace states (parse.Meta.Sysctls,
// "kernel.name=value") whose name k does not set: meta.txt, written by
// whoever set them, wins. It returns how many it added.
func (k *Knobs) MergeSysctls(fromTrace []string) int {
	n := 0
	for _, s := range fromTrace {
		name, _, _ := strings.Cut(s, "=")
		if slices.ContainsFunc(k.Sysctls, func(have string) bool { return strings.HasPrefix(have, name+"=") }) {
			continue
		}
		k.Sysctls = append(k.Sysctls, s)
		n++
	}
	return n
}

// Empty says whether the recording ran its kernel as the version ships.
func (k Knobs) Empty() bool {
	return len(k.Features)+len(k.Tunables)+len(k.Sysctls)+len(k.Patches)+len(k.ModelFeatures)+len(k.Reported) == 0
}

// KnobsNextTo reads the knobs recorded in meta.txt next to a trace (see
// ReleaseNextTo for where it looks). The "sched_knobs:" line is
// "features=A B debugfs=k=v k=v sysctls=k=v" (tools/qemu's capture.sh:
// a section runs to the next section's name); "sched_patches:" lists
// "+name"/"-name" words; "sched_model_features:" lists model feature
// names, NAME or NO_NAME (which names the model knows is for the whatif
// baseline to check). No file is no knobs; a line that does not parse
// is an error with its line number.
func KnobsNextTo(tracePath string) (Knobs, error) {
	file := MetaFileNextTo(tracePath)
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return Knobs{}, nil
	}
	if err != nil {
		return Knobs{}, err
	}
	defer f.Close()
	k := Knobs{File: file}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if v, ok := strings.CutPrefix(text, "sched_knobs:"); ok {
			var section *[]string
			for _, w := range strings.Fields(v) {
				for _, s := range []struct {
					prefix string
					dst    *[]string
				}{{"features=", &k.Features}, {"debugfs=", &k.Tunables}, {"sysctls=", &k.Sysctls}} {
					if rest, ok := strings.CutPrefix(w, s.prefix); ok {
						section, w = s.dst, rest
						break
					}
				}
				if section == nil {
					return Knobs{}, fmt.Errorf("%s:%d: sched_knobs: %q before features=, debugfs= or sysctls=", file, line, w)
				}
				if w == "" {
					continue
				}
				if section != &k.Features && !strings.Contains(w, "=") {
					return Knobs{}, fmt.Errorf("%s:%d: sched_knobs: %q: want name=value", file, line, w)
				}
				*section = append(*section, w)
			}
			continue
		}
		if v, ok := strings.CutPrefix(text, "sched_state:"); ok {
			k.Reported = append(k.Reported, parseSchedState(v)...)
			continue
		}
		if v, ok := strings.CutPrefix(text, "sched_patches:"); ok {
			for _, w := range strings.Fields(v) {
				if len(w) < 2 || (w[0] != '+' && w[0] != '-') {
					return Knobs{}, fmt.Errorf("%s:%d: sched_patches: %q: want +name or -name", file, line, w)
				}
				k.Patches = append(k.Patches, w)
			}
		}
		if v, ok := strings.CutPrefix(text, "sched_model_features:"); ok {
			for _, w := range strings.Fields(v) {
				if strings.ContainsAny(w, "=+") || strings.Trim(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
					return Knobs{}, fmt.Errorf("%s:%d: sched_model_features: %q: want a feature name (NAME or NO_NAME)", file, line, w)
				}
				k.ModelFeatures = append(k.ModelFeatures, w)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return Knobs{}, err
	}
	// A tunable the capture set is the capture's (sched_state shows the
	// value it set).
	k.Reported = slices.DeleteFunc(k.Reported, func(r string) bool {
		name, _, _ := strings.Cut(r, "=")
		return slices.ContainsFunc(k.Tunables, func(t string) bool { return strings.HasPrefix(t, name+"=") })
	})
	if k.Empty() {
		k.File = ""
	}
	return k, nil
}
