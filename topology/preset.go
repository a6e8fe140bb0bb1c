package topology

import (
	"fmt"
	"strconv"
	"strings"
)

// PresetInfo describes one preset for listings.
type PresetInfo struct {
	Name    string // "juno-r2", or a pattern such as "smt2-<cores>"
	CPUs    int    // logical CPUs; 0 for a pattern
	Summary string
}

// Presets lists the presets, fixed machines first, then the patterns. The
// sources of every number are in docs/topology.md.
func Presets() []PresetInfo {
	return []PresetInfo{
		{"juno-r2", 6, "Arm Juno r2: A72 CPUs 1-2 (1024), A53 CPUs 0,3-5 (383)"},
		{"i7-13700", 24, "i7-13700, SMT on: 8 P-cores x 2, 8 E-cores; all 1024"},
		{"i7-13700-nosmt", 16, "i7-13700, SMT off: 8 P-cores (1024), 8 E-cores (645)"},
		{"smt2-<cores>", 0, "<cores> cores x 2 SMT threads, one LLC"},
		{"sym-<n>", 0, "<n> identical CPUs, one LLC"},
	}
}

// Preset returns the topology of a named machine (see Presets) with Source
// "preset:"+name.
func Preset(name string) (*Topology, error) {
	var t *Topology
	switch {
	case name == "juno-r2":
		t = junoR2()
	case name == "i7-13700":
		t = i713700(true)
	case name == "i7-13700-nosmt":
		t = i713700(false)
	case strings.HasPrefix(name, "smt2-"):
		n, err := presetCount(name, "smt2-", maxCPUs/2)
		if err != nil {
			return nil, err
		}
		t = &Topology{}
		for i := 0; i < 2*n; i++ {
			t.CPUs = append(t.CPUs, CPU{ID: i, Core: i / 2, Capacity: CapacityScale})
		}
	case strings.HasPrefix(name, "sym-"):
		n, err := presetCount(name, "sym-", maxCPUs)
		if err != nil {
			return nil, err
		}
		t = Symmetric(n)
	default:
		return nil, fmt.Errorf("unknown preset %q; presets: juno-r2, i7-13700, i7-13700-nosmt, smt2-<cores>, sym-<n>", name)
	}
	t.Name = name
	t.Source = "preset:" + name
	return t, nil
}

func presetCount(name, prefix string, limit int) (int, error) {
	s := strings.TrimPrefix(name, prefix)
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > limit || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("preset %q: want %s<count> with a count from 1 to %d", name, prefix, limit)
	}
	return n, nil
}

// Juno r2 capacities: capacity-dmips-mhz 1024 (Cortex-A72) and 485
// (Cortex-A53) from arch/arm64/boot/dts/arm/juno-r2.dts, scaled by the
// highest OPPs the SCP firmware reports (1200 MHz and 950 MHz) in
// topology_normalize_cpu_scale (drivers/base/arch_topology.c):
// 485*950*1024/(1024*1200) = 383.96, truncated to 383, the figure seed 001
// quotes. Logical CPU 0 is the boot CPU, an A53, hence big CPUs 1-2.
const (
	junoBig    = 1024
	junoLittle = 383
)

func junoR2() *Topology {
	t := &Topology{}
	for i := 0; i < 6; i++ {
		c := CPU{ID: i, Core: i, Cluster: 1, Capacity: junoLittle} // cluster1 in the DT cpu-map: A53s
		if i == 1 || i == 2 {
			c.Cluster, c.Capacity = 0, junoBig // cluster0: A72s
		}
		t.CPUs = append(t.CPUs, c)
	}
	return t
}

// i7-13700 figures (docs/topology.md has the derivation):
//   - HWP highest performance, the ITMT priority intel_pstate sets
//     (intel_pstate_set_itmt_prio): P-core 65 (5.1 GHz Turbo Boost 2.0 at
//     the hybrid P-core scaling of 78741 kHz per unit,
//     HYBRID_SCALING_FACTOR_ADL, also used for Raptor Lake), E-core 41
//     (4.1 GHz at 100000 kHz per unit).
//   - Capacity with SMT off, as hybrid_set_cpu_capacity computes it
//     (arch_set_cpu_capacity): 41*1024/65 = 645.9, truncated to 645.
const (
	i7PPrio = 65
	i7EPrio = 41
	i7ECap  = i7EPrio * CapacityScale / i7PPrio // 645
)

func i713700(smt bool) *Topology {
	t := &Topology{}
	threads := 1
	if smt {
		threads = 2
	}
	// P-cores: each its own L2 (CLS = core); E-cores: two modules of four
	// sharing an L2; all 24 threads share the 30 MB L3 (one LLC).
	for core := 0; core < 8; core++ {
		for th := 0; th < threads; th++ {
			c := CPU{ID: len(t.CPUs), Core: core, CLS: core, Capacity: CapacityScale}
			if smt {
				c.Prio = i7PPrio
			}
			t.CPUs = append(t.CPUs, c)
		}
	}
	for e := 0; e < 8; e++ {
		c := CPU{ID: len(t.CPUs), Core: 8 + e, CLS: 8 + e/4}
		if smt {
			c.Capacity, c.Perf, c.Prio = CapacityScale, i7ECap, i7EPrio
		} else {
			c.Capacity = i7ECap
		}
		t.CPUs = append(t.CPUs, c)
	}
	return t
}
