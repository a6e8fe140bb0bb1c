package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/compare"
	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/ingest/perfetto"
	"github.com/schedlens/schedlens/outfile"
	"github.com/schedlens/schedlens/policies"
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
	"github.com/schedlens/schedlens/whatif"
)

func init() { subcommands = append(subcommands, newReplayCmd) }

func newReplayCmd() *cobra.Command {
	var (
		f        traceFlags
		aff      affinityFlags
		policy   string
		kernel   string
		features []string
		patches  []string
		hz       int
		seed     uint64
		topoFlag string
		out      string
		top      int
		wakers   string
		cpuSpeed string
	)
	cmd := &cobra.Command{
		Use:   "replay TRACE",
		Short: "Replay the recorded workload under a modeled scheduler and report its fidelity",
		Long: `replay extracts the workload of a trace (per task: CPU demand between blocking,
and what woke it), re-runs it as a deterministic discrete-event simulation on
the recorded topology under a modeled policy (the mainline EEVDF model of a
kernel version, with patch knobs and sched_feat switches), and prints the
modeled run's figures beside the recorded ones with their ratio, per class,
comm and task, and a fidelity verdict: how far the model reproduces this
trace, and so how far a what-if on it can be trusted. --pid and --comm
restrict every figure and the verdict to those tasks. Criteria: docs/replay.md.`,
		Example: `  schedlens replay trace.txt.zst
  schedlens replay --kernel 6.12 --patch resched-ineligible --feature NO_RUN_TO_PARITY trace.txt
  schedlens replay --format json -o replayed.pftrace perf-script.txt.gz
  schedlens replay --comm cyclictest trace.txt.zst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if hz < 0 || hz > replay.MaxHZ {
				return usagef("--hz %d: want 0 (the tick rate of the recording) or a tick rate from 1 to %d (CONFIG_HZ is 100, 250, 300 or 1000)", hz, replay.MaxHZ)
			}
			rule, err := replay.ParseWakeRule(wakers)
			if err != nil {
				return usagef("--wakers: %v", err)
			}
			// The version: --policy's head or --kernel when given (checked
			// before the trace loads), else the trace's kernel release.
			pol := whatif.Policy{Description: policy, Patches: patches, Features: features}
			if cmd.Flags().Changed("kernel") {
				pol.Kernel = kernel
			}
			if pol.Kernel != "" || (policy != "" && policy != "mainline") {
				if _, _, err := pol.Resolve(); err != nil {
					return usagef("%v", err)
				}
			}
			speed, err := replay.ParseSpeed(cpuSpeed)
			if err != nil {
				return usagef("--cpu-speed: %v", err)
			}
			if err := checkInputs(topoFlag, &aff); err != nil {
				return err
			}
			ld, win, err := f.prepare(cmd, args[0], compare.Formats...)
			if err != nil {
				return err
			}
			tl := ld.Timeline
			topo, err := topology.Resolve(ld.Meta.Topology, args[0], topoFlag, tl.NCPU)
			if err != nil {
				return err
			}
			if pol.Release, err = traceRelease(ld, topo, args[0]); err != nil {
				return err
			}
			desc, kernelNotes, err := pol.Resolve()
			if err != nil {
				return usagef("%v", err)
			}
			am, err := aff.build(tl)
			if err != nil {
				return err
			}
			bar, prog := f.simulationProgress(cmd)
			run, err := whatif.Replay(tl, desc, whatif.Options{Topology: topo, Window: win, Filter: f.filter(), Affinity: am,
				Speed: speed, WakeRule: rule, HZ: hz, Seed: seed, Progress: prog})
			bar.Done()
			if err != nil {
				return err
			}
			sim := run.Result.Timeline
			rep := &compare.Replay{Trace: traceSummary(ld), Policy: run.Policy, Seed: seed, HZ: run.Options.HZ, Topology: topo.Source,
				Window: win, Comparison: compare.Compare(run.Recorded, run.Modeled, "recorded", "modeled"), ModeledEvents: sim.Len(), Knobs: run.Result.Knobs,
				Filter: f.filterText(), Top: top, Command: commandLine(cmd, args), Version: Version, Warnings: f.warnings}
			rep.Notes = append(append(rep.Notes, kernelNotes...), run.Notes...)
			if out != "" {
				if err := writeReplayed(out, args[0], sim, topo, ld.Meta.Kernel, sourceClock(ld.Meta.Clock, args[0])); err != nil {
					return outputError(out, err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote the modeled schedule (%d events) to %s\n", sim.Len(), out)
			}
			return compare.WriteReplay(cmd.OutOrStdout(), rep, f.format)
		},
	}
	f.register(cmd, strings.Join(compare.Formats, "|"))
	aff.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&policy, "policy", "mainline", `"mainline", or a full description such as "6.12,+resched-ineligible,NO_RUN_TO_PARITY"`)
	fl.StringVar(&kernel, "kernel", policies.DefaultKernel(), "kernel version whose mainline model to run (6.6, 6.12, 6.18); by default the newest modeled version at or below the trace's kernel release when the trace carries it (perf.data header, Perfetto system info, topology capture, meta.txt next to the trace)")
	fl.StringSliceVar(&features, "feature", nil, "sched_feat switch, e.g. NO_RUN_TO_PARITY (repeatable)")
	fl.StringSliceVar(&patches, "patch", nil, "seed patch knob to turn on (+name) or off (-name): "+strings.Join(patchList(), ", "))
	fl.IntVar(&hz, "hz", 0, "tick rate (CONFIG_HZ) of the model; 0: from the recording (the runs its tick ended; HZ 250 unless they show a slower tick)")
	fl.Uint64Var(&seed, "seed", 1, "random seed: the same trace, policy and seed give the same replay")
	fl.StringVar(&topoFlag, "topology", "", "CPU topology: a file (topology.txt or JSON) or a preset name")
	fl.StringVarP(&out, "output", "o", "", "also write the modeled schedule as a Perfetto trace")
	fl.IntVar(&top, "top", 10, "rows in the per-comm and per-task tables")
	fl.StringVar(&cpuSpeed, "cpu-speed", "auto", `how fast each CPU ran the recorded work: "auto" (calibrated from the trace where it shows the same work on CPUs of different capacity, else capacity), "equal" (every CPU at 1024: an emulated guest), "capacity", or a file of "CPULIST SPEED" lines`)
	fl.StringVar(&wakers, "wakers", "recorded", `what ends a sleep a task wake ended: "recorded" (the wake the recording shows, when its waker reaches that point of its work) "any" (the first task wake issued to the sleeper, by any waker: readers of a stream many writers feed) or "late-any" (the recorded one, or any once the sleep outlasts the recorded one)`)
	return cmd
}

func patchList() []string {
	var out []string
	for _, p := range policies.Patches {
		out = append(out, p.Name)
	}
	return out
}

// traceRelease is what the trace says about its kernel release, from the
// first source that has it: the trace itself (perf.data header, Perfetto
// system info as record writes it), the topology capture, then meta.txt
// next to the trace.
func traceRelease(ld *ingest.Loaded, topo *topology.Topology, path string) (policies.Release, error) {
	if ld.Meta.Kernel != "" {
		return policies.Release{Release: ld.Meta.Kernel, Source: "in the " + ld.Meta.Format + " trace"}, nil
	}
	if topo != nil && topo.Kernel != nil && topo.Kernel.Release != "" {
		return policies.Release{Release: topo.Kernel.Release, Source: "from the topology capture " + topo.Source}, nil
	}
	rel, file, err := ingest.ReleaseNextTo(path)
	if err != nil || rel == "" {
		return policies.Release{}, err
	}
	return policies.Release{Release: rel, Source: "from " + file}, nil
}

// writeReplayed writes a modeled timeline as a Perfetto trace, so that it can
// be looked at beside the recording in a trace viewer. Not to stdout: the
// report goes there.
func writeReplayed(path, input string, tl *timeline.Timeline, topo *topology.Topology, kernel, clock string) error {
	f, err := outfile.Create(path, outfile.Options{Inputs: []string{input}, RemoveOnSignal: true})
	if err != nil {
		return err
	}
	defer f.Abort()
	w, err := perfetto.NewWriter(f, perfetto.WriterOptions{Strings: tl.Strings, Topology: topo, Kernel: kernel, NCPU: tl.NCPU, Clock: clock, ClockStated: true, RecordStart: true})
	if err != nil {
		return err
	}
	for i := range tl.Tasks {
		tk := &tl.Tasks[i]
		if tk.Idle {
			continue
		}
		if err := w.Task(tk.PID, tk.TGID, tl.Strings.Get(tk.Comm)); err != nil {
			return err
		}
	}
	for i := 0; i < tl.Len(); i++ {
		ev := tl.Event(i)
		if err := w.Add(&ev); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Commit()
}
