package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/outfile"
	"github.com/schedlens/schedlens/report"
	"github.com/schedlens/schedlens/topology"
)

func init() { subcommands = append(subcommands, newTopologyCmd) }

// topologyMaxArgs is cobra.MaximumNArgs reporting a usage error (exit 2).
func topologyMaxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usagef("%s takes at most %d argument(s), got %d: %s", cmd.CommandPath(), n, len(args), strings.Join(args, " "))
		}
		return nil
	}
}

func topologyNoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %s", cmd.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

func newTopologyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topology",
		Short: "Show, capture and list CPU topologies",
		Long: `topology shows the CPU topology schedlens uses for a trace (SMT siblings,
clusters and LLCs, packages, NUMA nodes, capacities and the sched-domain levels
derived from them), captures the running machine's topology from /sys into a
JSON file, and lists the built-in presets. See docs/topology.md.`,
		Example: `  schedlens topology show fixtures/real/qemu-smt8-hackbench/trace.txt.zst
  schedlens topology capture -o topology.json
  schedlens topology presets`,
		Args:         topologyNoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("topology needs a subcommand: show, capture or presets")
		},
	}
	cmd.AddCommand(newTopologyShowCmd(), newTopologyCaptureCmd(), newTopologyPresetsCmd())
	return cmd
}

// topologyRootFlags adds the hidden flags naming the sysfs, procfs and
// debugfs roots that capture reads (tests point them at fake trees).
func topologyRootFlags(cmd *cobra.Command, r *topology.Roots) {
	live := topology.LiveRoots()
	cmd.Flags().StringVar(&r.Sys, "sysfs", live.Sys, "sysfs root to read")
	cmd.Flags().StringVar(&r.Proc, "procfs", live.Proc, "procfs root to read (schedstat, osrelease); empty: none")
	cmd.Flags().StringVar(&r.Debug, "debugfs", live.Debug, "debugfs root to read (sched/domains); empty: none")
	for _, f := range []string{"sysfs", "procfs", "debugfs"} {
		_ = cmd.Flags().MarkHidden(f)
	}
}

func newTopologyShowCmd() *cobra.Command {
	var flag, format string
	var roots topology.Roots
	cmd := &cobra.Command{
		Use:   "show [--topology FILE|PRESET] [--format FORMAT] [TRACE_OR_DIR]",
		Short: "Print CPUs, SMT siblings, LLCs, nodes, capacities and sched domains",
		Long: `show prints each CPU (core, SMT siblings, cluster, LLC, package, NUMA node,
capacity), the caches when known, and the sched-domain levels: the kernel's
own when they were recorded (a sched-domains.txt next to the topology file,
or a captured topology.json), else derived from the CPUs.

The topology comes from --topology (a file or a preset name) when given, else
from a topology.json or topology.txt next to TRACE (or inside DIR), else, with
no argument, from this machine (/sys, /proc/schedstat and, as root, debugfs).
show does not parse traces: a topology carried inside a Perfetto trace is
used by the trace commands (report, idle, ...), not shown here.`,
		Example: `  schedlens topology show fixtures/real/qemu-smt8-hackbench/trace.txt.zst
  schedlens topology show --topology juno-r2
  schedlens topology show --format json --topology topology.json`,
		Args:         topologyMaxArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" && format != "html" {
				return usagef("--format %q: want text, json or html", format)
			}
			var t *topology.Topology
			var err error
			switch {
			case flag != "":
				t, err = topology.Resolve(nil, "", flag, 0)
			case len(args) == 1:
				if _, serr := os.Stat(args[0]); serr != nil {
					return serr
				}
				p := topology.FileNextTo(args[0])
				if p == "" {
					return fmt.Errorf("no topology.json or topology.txt next to %s; pass --topology FILE|PRESET (a topology inside a Perfetto trace is read by the trace commands, not by show)", args[0])
				}
				t, err = topology.Load(p)
			default:
				t, err = topology.Capture(roots)
			}
			if err != nil {
				return err
			}
			if format == "json" {
				// show reads no trace: the header's trace names the
				// argument, if any; there is no window.
				var trace any
				if len(args) == 1 {
					trace = struct {
						Path string `json:"path"`
					}{args[0]}
				}
				h := report.Header{Command: commandLine(cmd, args), Version: Version, Trace: trace}
				return writeTopologyJSON(cmd.OutOrStdout(), h, t)
			}
			if format == "html" {
				var text bytes.Buffer
				if err := writeTopologyText(&text, t); err != nil {
					return err
				}
				page := report.HTMLPage{Title: "schedlens topology: " + report.TopologySummary(t), Text: text.String()}
				return page.Write(cmd.OutOrStdout())
			}
			return writeTopologyText(cmd.OutOrStdout(), t)
		},
	}
	cmd.Flags().StringVar(&flag, "topology", "", "topology file (topology.json, topology.txt) or preset name (see 'schedlens topology presets')")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text|json|html")
	topologyRootFlags(cmd, &roots)
	return cmd
}

func newTopologyCaptureCmd() *cobra.Command {
	var out string
	var roots topology.Roots
	cmd := &cobra.Command{
		Use:   "capture [-o FILE]",
		Short: "Write this machine's CPU topology and sched domains as JSON",
		Long: `capture reads /sys/devices/system/cpu (core and package ids, thread and core
siblings, cluster ids and lists, cpu_capacity, every cache's level, type and
shared_cpu_list), /sys/devices/system/node (NUMA nodes and distances), the
sched domains' spans from /proc/schedstat, their names and flags from debugfs
(/sys/kernel/debug/sched/domains: run as root, with debugfs mounted; the
kernel lists them there when booted with sched_verbose) and the kernel
release, and writes the topology JSON that --topology and 'topology show'
read. What could not be read is listed in its notes. Save it as
topology.json next to a trace recorded on this machine and the trace
commands pick it up.`,
		Example: `  schedlens topology capture
  schedlens topology capture -o traces/topology.json
  schedlens topology capture | schedlens topology show --topology /dev/stdin`,
		Args:         topologyNoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := topology.Capture(roots)
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := topology.WriteJSON(&buf, t); err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err := cmd.OutOrStdout().Write(buf.Bytes())
				return err
			}
			of, err := outfile.Create(out, outfile.Options{RemoveOnSignal: true})
			if err != nil {
				return err
			}
			defer of.Abort()
			if _, err := of.Write(buf.Bytes()); err != nil {
				return err
			}
			if err := of.Commit(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d CPUs to %s\n", t.NCPU(), out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to FILE instead of stdout")
	topologyRootFlags(cmd, &roots)
	return cmd
}

func newTopologyPresetsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "presets",
		Short: "List the built-in topology presets",
		Long: `presets lists the machines --topology accepts by name. docs/topology.md says
where each number comes from.`,
		Example: `  schedlens topology presets
  schedlens topology show --topology i7-13700
  schedlens report --topology smt2-4 trace.txt`,
		Args:         topologyNoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "name\tcpus\tmachine")
			for _, p := range topology.Presets() {
				n := "N"
				if p.CPUs > 0 {
					n = strconv.Itoa(p.CPUs)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, n, p.Summary)
			}
			return tw.Flush()
		},
	}
}

// topologyCounts returns the number of distinct cores, LLCs, packages and
// nodes of t.
func topologyCounts(t *topology.Topology) (cores, llcs, pkgs, nodes int) {
	c, l, p, n := map[int]bool{}, map[int]bool{}, map[int]bool{}, map[int]bool{}
	for _, cpu := range t.CPUs {
		c[cpu.Core], l[cpu.Cluster], p[cpu.Package], n[cpu.Node] = true, true, true, true
	}
	return len(c), len(l), len(p), len(n)
}

func topologyPlural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func writeTopologyText(w io.Writer, t *topology.Topology) error {
	cores, llcs, pkgs, nodes := topologyCounts(t)
	doms := t.Domains()
	var b bytes.Buffer
	fmt.Fprintf(&b, "topology: %s", t.Source)
	if t.Name != "" && !strings.HasSuffix(t.Source, ":"+t.Name) {
		fmt.Fprintf(&b, " (%s)", t.Name)
	}
	if k := t.Kernel; k != nil && k.Release != "" {
		fmt.Fprintf(&b, "\nkernel: %s", k.Release)
	}
	if t.UsesKernelDomains() && t.Kernel.Source != "" {
		fmt.Fprintf(&b, "\ndomains: %s", t.Kernel.Source)
	}
	fmt.Fprintf(&b, "\n%s: %s, %s, %s, %s\n", topologyPlural(t.NCPU(), "CPU", "CPUs"),
		topologyPlural(cores, "core", "cores"), topologyPlural(llcs, "LLC", "LLCs"),
		topologyPlural(pkgs, "package", "packages"), topologyPlural(nodes, "NUMA node", "NUMA nodes"))
	minCap := t.MaxCapacity()
	for _, c := range t.CPUs {
		minCap = min(minCap, c.Capacity)
	}
	if t.Asymmetric() {
		fmt.Fprintf(&b, "capacity: asymmetric, %d to %d (1024 = biggest CPU)\n", minCap, t.MaxCapacity())
	} else {
		fmt.Fprintf(&b, "capacity: symmetric, %d (1024 = biggest CPU)\n", t.MaxCapacity())
	}
	hasPerf, hasPrio, hasCLS := false, false, false
	for _, c := range t.CPUs {
		hasPerf = hasPerf || c.Perf != 0
		hasPrio = hasPrio || c.Prio != 0
	}
	for _, d := range doms {
		hasCLS = hasCLS || d.Name == "CLS"
	}

	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	hdr := "cpu\tcore\tsmt siblings"
	if hasCLS {
		hdr += "\tcls"
	}
	hdr += "\tllc\tpackage\tnode\tcapacity"
	if hasPerf {
		hdr += "\tperf"
	}
	if hasPrio {
		hdr += "\titmt prio"
	}
	fmt.Fprintln(tw, hdr)
	for i, c := range t.CPUs {
		row := fmt.Sprintf("%d\t%d\t%s", i, c.Core, topology.FormatCPUList(t.Siblings(i)))
		if hasCLS {
			row += fmt.Sprintf("\t%d", c.CLS)
		}
		row += fmt.Sprintf("\t%d\t%d\t%d\t%d", c.Cluster, c.Package, c.Node, c.Capacity)
		if hasPerf {
			row += fmt.Sprintf("\t%d", t.Perf(i))
		}
		if hasPrio {
			row += fmt.Sprintf("\t%d", c.Prio)
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if caches := topologyCaches(t); len(caches) > 0 {
		b.WriteString("\ncaches:\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, c := range caches {
			fmt.Fprintf(tw, "  %s\t%s\n", c.Name, c.Summary)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	if t.UsesKernelDomains() {
		b.WriteString("\nsched domains (the kernel's, lowest level first):\n")
	} else {
		b.WriteString("\nsched domains (derived, lowest level first):\n")
	}
	if len(doms) == 0 {
		b.WriteString("  none: a single CPU\n")
	}
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, d := range doms {
		var groups []string
		for _, g := range d.Groups() {
			groups = append(groups, "{"+topology.FormatCPUList(g)+"}")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", d.Name, d.Flags, strings.Join(groups, " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if t.NodeDistances != nil && nodes > 1 {
		b.WriteString("\nnode distances:\n")
		for n, row := range t.NodeDistances {
			if len(row) == 0 {
				continue
			}
			fmt.Fprintf(&b, "  node%d:", n)
			for _, d := range row {
				fmt.Fprintf(&b, " %d", d)
			}
			b.WriteString("\n")
		}
	}
	if len(t.Notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range t.Notes {
			b.WriteString(wrapText("  - ", n, 80) + "\n")
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// topologyCache is one cache level and type of t with its sharing groups.
type topologyCache struct {
	Name    string  `json:"name"` // "L2 unified"
	Groups  [][]int `json:"groups"`
	Summary string  `json:"-"` // "{0,3-5} {1-2}", "per CPU", "16 groups of 2"
}

// topologyCaches lists the caches of t.Kernel by level and type, each with
// its distinct sharing groups ordered by lowest CPU.
func topologyCaches(t *topology.Topology) []topologyCache {
	if t.Kernel == nil {
		return nil
	}
	type key struct {
		level int
		typ   string
	}
	groups := map[key][][]int{}
	var keys []key
	for _, c := range t.Kernel.Caches {
		k := key{c.Level, c.Type}
		cpus := c.Shared.CPUs()
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		dup := false
		for _, g := range groups[k] {
			dup = dup || slices.Equal(g, cpus)
		}
		if !dup {
			groups[k] = append(groups[k], cpus)
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.level != b.level {
			return a.level - b.level
		}
		return strings.Compare(a.typ, b.typ)
	})
	var out []topologyCache
	for _, k := range keys {
		gs := groups[k]
		slices.SortFunc(gs, func(a, b []int) int { return a[0] - b[0] })
		c := topologyCache{Name: fmt.Sprintf("L%d %s", k.level, strings.ToLower(k.typ)), Groups: gs}
		single, same := true, true
		for _, g := range gs {
			single = single && len(g) == 1
			same = same && len(g) == len(gs[0])
		}
		switch {
		case single:
			c.Summary = "per CPU"
		case len(gs) > 8 && same:
			c.Summary = fmt.Sprintf("%d groups of %d", len(gs), len(gs[0]))
		default:
			var parts []string
			for _, g := range gs {
				parts = append(parts, "{"+topology.FormatCPUList(g)+"}")
			}
			c.Summary = strings.Join(parts, " ")
		}
		out = append(out, c)
	}
	return out
}

// topologyShowJSON is the JSON form of 'topology show'. Keys are stable.
type topologyShowJSON struct {
	Source        string               `json:"source"`
	Name          string               `json:"name,omitempty"`
	NCPU          int                  `json:"ncpu"`
	Cores         int                  `json:"cores"`
	LLCs          int                  `json:"llcs"`
	Packages      int                  `json:"packages"`
	Nodes         int                  `json:"nodes"`
	Asymmetric    bool                 `json:"asymmetric"`
	MaxCapacity   int                  `json:"max_capacity"`
	CPUs          []topologyCPUJSON    `json:"cpus"`
	Domains       []topologyDomainJSON `json:"domains"`
	DomainSource  string               `json:"domain_source"`
	KernelRelease string               `json:"kernel_release,omitempty"`
	Caches        []topologyCache      `json:"caches,omitempty"`
	NodeDistances [][]int              `json:"node_distances,omitempty"`
	Notes         []string             `json:"notes"`
}

type topologyCPUJSON struct {
	topology.CPU
	SMTSiblings []int `json:"smt_siblings"`
	LLCCPUs     []int `json:"llc_cpus"`
}

type topologyDomainJSON struct {
	Name   string               `json:"name"`
	Flags  topology.DomainFlags `json:"flags"`
	Groups [][]int              `json:"groups"`
}

func writeTopologyJSON(w io.Writer, h report.Header, t *topology.Topology) error {
	cores, llcs, pkgs, nodes := topologyCounts(t)
	out := topologyShowJSON{
		Source: t.Source, Name: t.Name, NCPU: t.NCPU(), Cores: cores, LLCs: llcs, Packages: pkgs, Nodes: nodes,
		Asymmetric: t.Asymmetric(), MaxCapacity: t.MaxCapacity(), NodeDistances: t.NodeDistances,
		CPUs: []topologyCPUJSON{}, Domains: []topologyDomainJSON{}, Notes: t.Notes,
		DomainSource: t.DomainSource(), Caches: topologyCaches(t),
	}
	if t.Kernel != nil {
		out.KernelRelease = t.Kernel.Release
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	for i, c := range t.CPUs {
		out.CPUs = append(out.CPUs, topologyCPUJSON{CPU: c, SMTSiblings: t.Siblings(i), LLCCPUs: t.LLC(i)})
	}
	for _, d := range t.Domains() {
		out.Domains = append(out.Domains, topologyDomainJSON{Name: d.Name, Flags: d.Flags, Groups: d.Groups()})
	}
	return report.WriteDocument(w, h, out)
}
