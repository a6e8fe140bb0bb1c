// Package topology models the CPUs a trace was recorded on: logical CPUs, SMT
// siblings, cores, clusters and LLC domains, packages, NUMA nodes and per-CPU
// capacity, with the sched-domain levels derived from them.
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
// MC, PKG, NUMA) the kernel would build, with their flags.
//
// # Sources
//
// Resolve picks a topology for a trace, first match wins: an explicit
// --topology FILE|PRESET, the topology the trace carries (Perfetto system
// info), a topology.json or topology.txt next to the trace, and last N
// identical CPUs (Source "default"). A topology with fewer CPUs than the
// trace is an error.
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
// groups. The file has no cache information, so the LLC is the
// core_siblings (package) group; an empty capacity is 1024; a cluster of
// 65535 or -1 means none; there is no NUMA information, so each package is
// taken as one node. A line whose fields are all empty but cpu is an
// offline CPU.
//
// # topology.json
//
// What Capture and WriteJSON write and ReadJSON reads; unknown keys are
// errors:
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
