// Package topology models the CPUs a trace was recorded on: logical CPUs, SMT
// siblings, cores, clusters and LLC domains, packages, NUMA nodes and per-CPU
// capacity, with the sched-domain levels derived from them.
//
// It imports nothing from this module.
package topology
