// Package topology models the CPUs a trace was recorded on: logical CPUs, SMT
// siblings, cores, clusters and LLC domains, packages, NUMA nodes and per-CPU
// capacity, with the sched-domain levels: derived from them, or as the
// recording kernel listed them.
//
// It imports nothing from this module (ingest, timeline, metrics and replay
// import it). Its positioned ParseError has the shape of
// ingest/parse.ParseError, which it cannot import.
//
// # Model
//
// A Topology is a list of CPUs numbered 0..n-1. Each CPU has a Core (SMT
// siblings share it), a Cluster (the last-level-cache domain: CPUs sharing
// the LLC share it), a Package, a NUMA Node and a Capacity on the kernel's
// scale (1024 = the biggest CPU). Optional fields refine it: CLS (a cluster
// of cores inside the LLC, such as Intel E-core modules sharing an L2), Perf
// (the CPU's real relative speed when the scheduler sees every CPU at 1024,
// as on a hybrid Intel part with SMT on) and Prio (the ITMT asym-packing
// priority). Notes record what was inferred rather than read.
//
// Helpers answer what the metrics and the replay ask: Siblings, LLC,
// NodeCPUs, Relation (same, smt, llc, cross_llc, cross_numa), Perf,
// MaxCapacity, Asymmetric, and Domains, the sched-domain levels (SMT, CLS,
// MC, PKG, NUMA) with their flags per CPU.
//
// # The kernel's own view
//
// Topology.Kernel (a KernelView) keeps what the recording machine's kernel
// reported: every cache (level, type, shared_cpu_list), the cluster ids and
// lists, the sched domains (spans from /proc/schedstat, names and SD_*
// flags from debugfs) and the release. The LLC is the last cache level's
// sharing set. When the view lists domains, Domains returns them (a domain
// without a recorded name or flags is classified from the CPUs); else
// Domains derives the levels (DerivedDomains). DomainSource says which,
// and a note names the first difference between the two when both exist.
//
// # Sources
//
// Resolve picks a topology for a trace, first match wins: an explicit
// --topology FILE|PRESET, the topology the trace carries (Perfetto system
// info), a topology.json or topology.txt next to the trace, and last N
// identical CPUs (Source "default"). A topology with fewer CPUs than the
// trace is an error. Load reads the sched-domains.txt beside a topology
// file (ReadKernelView) into Topology.Kernel. Capture reads a live
// machine's sysfs, /proc/schedstat and debugfs (Roots).
//
// # topology.txt
//
// The snapshot capture-ftrace.sh writes, one line per CPU, in any order:
//
//	cpu=0 core_id=0 package=0 die=0 cluster=65535 thread_siblings=0-1 core_siblings=0-7 capacity=
//	cpu=1 core_id=0 package=0 die=0 cluster=65535 thread_siblings=0-1 core_siblings=0-7 capacity=
//
// cpu, core_id, package, thread_siblings and core_siblings are required;
// die, cluster and capacity may be empty. Cores are the thread_siblings
// groups. The file has no cache information: the LLC comes from the caches
// of a sched-domains.txt beside it, else it is the core_siblings (package)
// group; an empty capacity is 1024; a cluster of 65535 or -1 means none;
// there is no NUMA information, so each package is taken as one node. A
// line whose fields are all empty but cpu is an offline CPU.
//
// # sched-domains.txt
//
// The concatenation of /proc/schedstat, the debugfs domain names and flags,
// the cluster lists and the cache lists that shared/tools/qemu writes:
//
//	version 16
//	cpu0 0 0 0 0 0 0 11712969456 425463760 659
//	domain0 39 0 0 0 ...
//	cpu0/domain0: name=MC flags=SD_BALANCE_NEWIDLE ... SD_SHARE_LLC
//	cpu0: cluster_cpus=0,3-5 package_cpus=0-5 die_cpus=
//	cpu0 index2: L2 Unified shared=0,3-5
//
// # topology.json
//
// What Capture and WriteJSON write and ReadJSON reads; unknown keys are
// errors; the "kernel" section (release, source, caches, clusters, domains)
// is optional:
//
//	{
//	  "source": "sysfs:/sys",
//	  "cpus": [
//	    {"cpu":0,"core":0,"cluster":0,"package":0,"node":0,"capacity":1024},
//	    {"cpu":1,"core":0,"cluster":0,"package":0,"node":0,"capacity":1024}
//	  ],
//	  "node_distances": [[10]],
//	  "notes": ["no cpu_capacity: every CPU without one is taken as 1024"]
//	}
package topology
