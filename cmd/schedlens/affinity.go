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
}

func (f *affinityFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.file, "affinity", "", `file of allowed CPUs: lines "PID_OR_COMM CPULIST [FROM_S [TO_S]]" (times in seconds on the trace clock; a comm names every task that had it; later lines win; taskset -cp output works; # comments)`)
	fl.BoolVar(&f.noInfer, "no-infer-affinity", false, "do not infer pinned tasks from the trace (by default a task that waited behind another task several times while a CPU it never used sat idle is taken as pinned, and said so)")
}

// build returns the affinity map of tl: per-CPU kthreads by name, the
// inference, what a recorder saw, then the file.
func (f *affinityFlags) build(tl *timeline.Timeline) (*affinity.Map, error) {
	var rules []affinity.Rule
	if f.file != "" {
		var err error
		if rules, err = affinity.ReadRules(f.file); err != nil {
			return nil, fmt.Errorf("--affinity: %w", err)
		}
	}
	m, err := affinity.Build(tl, affinity.BuildOptions{Rules: rules, NoInfer: f.noInfer})
	if err != nil {
		return nil, fmt.Errorf("--affinity: %w", err)
	}
	return m, nil
}
