package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/timeline"
)

// affinityFlags say where the tasks' allowed CPUs come from: report,
// latency, idle, misplaced and replay share them.
type affinityFlags struct {
	file    string
	noInfer bool
	rules   []affinity.Rule // the file's rules, once read
	loaded  bool
}

func (f *affinityFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.file, "affinity", "", `file of allowed CPUs: lines "PID_OR_COMM CPULIST [FROM_S [TO_S]]" (times in seconds on the trace clock; a comm names every task that had it; later lines win; taskset -cp output works; # comments)`)
	fl.BoolVar(&f.noInfer, "no-infer-affinity", false, "do not infer pinned tasks from the trace (by default a task that waited behind another task several times while a CPU it never used sat idle is taken as pinned, and said so)")
}

// read reads the --affinity file, once: before the trace loads.
func (f *affinityFlags) read() error {
	if f.loaded || f.file == "" {
		return nil
	}
	rules, err := affinity.ReadRules(f.file)
	if err != nil {
		return fmt.Errorf("--affinity: %w", err)
	}
	f.rules, f.loaded = rules, true
	return nil
}

// build returns the affinity map of tl: per-CPU kthreads by name, the
// inference, what a recorder saw, then the file. The inference is inf's
// when a streamed walk has fed one (inferrer), else Build's own walk.
func (f *affinityFlags) build(tl *timeline.Timeline, inf *affinity.Inferrer) (*affinity.Map, error) {
	if err := f.read(); err != nil {
		return nil, err
	}
	m, err := affinity.Build(tl, affinity.BuildOptions{Rules: f.rules, NoInfer: f.noInfer, Inferred: inf})
	if err != nil {
		return nil, fmt.Errorf("--affinity: %w", err)
	}
	return m, nil
}

// inferrer returns the inference for a streamed walk of summary Timeline
// tl to feed, nil when the inference is off.
func (f *affinityFlags) inferrer(tl *timeline.Timeline) *affinity.Inferrer {
	if f.noInfer {
		return nil
	}
	return affinity.NewInferrer(tl, affinity.InferOptions{})
}
