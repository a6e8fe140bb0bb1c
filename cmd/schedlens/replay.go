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
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
	"github.com/schedlens/schedlens/whatif"
)

func init() { subcommands = append(subcommands, newReplayCmd) }

func newReplayCmd() *cobra.Command {
	var (
		f          traceFlags
		m          modelFlags
		policy     string
		features   []string
		patches    []string
		seed       uint64
		out        string
		top        int
		checkSeeds int
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
  schedlens replay --kernel 6.12 --patch resched-ineligible \
      --feature NO_RUN_TO_PARITY trace.txt
  schedlens replay --format json -o replayed.pftrace perf-script.txt.gz
  schedlens replay --comm cyclictest trace.txt.zst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if checkSeeds < 1 {
				return usagef("--check-seeds %d: want 1 (--seed alone) or more", checkSeeds)
			}
			defer collectOften()()
			in, err := m.load(cmd, &f, args[0], whatif.Policy{Description: policy, Patches: patches, Features: features}, compare.Formats...)
			if err != nil {
				return err
			}
			ld, win, topo := in.ld, in.win, in.topo
			bar, prog := f.simulationProgress(cmd)
			opts := in.opts
			// The figures of the modeled runs are wanted, their schedules
			// only for -o, their wakeup samples only for the HTML page.
			opts.DropSchedules = out == ""
			opts.NoWakeupSamples = !compare.ReplayReadsSamples(f.format)
			// The recording is measured before its workload is extracted,
			// and its events then dropped: the workload holds what the
			// runs need.
			rec, err := whatif.MeasureRecording(in.tl, opts)
			if err != nil {
				bar.Done()
				return err
			}
			// Prepare drops the events once its extraction has read them.
			opts.DropRecording = true
			pr, err := whatif.Prepare(in.tl, in.desc, opts)
			if err != nil {
				bar.Done()
				return err
			}
			pr.DropRecording()
			run, err := pr.Run(seed, prog, rec)
			bar.Done()
			if err != nil {
				return err
			}
			sim := run.Result.Timeline
			rep := &compare.Replay{Trace: traceSummary(ld), Policy: run.Policy, Seed: seed, HZ: run.Options.HZ, Topology: topo.Source,
				Window: win, Comparison: compare.Compare(run.Recorded, run.Modeled, "recorded", "modeled"), ModeledEvents: sim.Len(), Knobs: run.Result.Knobs,
				Filter: f.filterText(), Top: top, Command: commandLine(cmd, args), Version: Version, Warnings: f.warnings}
			rep.Notes = append(append(rep.Notes, in.kernelNotes...), run.Notes...)
			if out != "" {
				if err := writeReplayed(out, args[0], sim, topo, ld.Meta.Kernel, sourceClock(ld.Meta.Clock, args[0])); err != nil {
					return outputError(out, err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote the modeled schedule (%d events) to %s\n", sim.Len(), out)
			}
			if checkSeeds > 1 {
				// The first seed is judged already; the others need none
				// of its schedule.
				recorded := run.Recorded
				run, sim = nil, nil
				others := make([]uint64, checkSeeds-1)
				for i := range others {
					others[i] = seed + uint64(i) + 1
				}
				more, err := pr.Verdicts(others, recorded)
				if err != nil {
					return err
				}
				rep.Seeds = append([]compare.SeedVerdict{{Seed: seed, Verdict: compare.Judge(rep.Comparison)}}, more...)
			}
			return compare.WriteReplay(cmd.OutOrStdout(), rep, f.format)
		},
	}
	f.register(cmd, strings.Join(compare.Formats, "|"))
	m.register(cmd, "kernel version whose mainline model to run (6.6, 6.12, 6.18)")
	fl := cmd.Flags()
	fl.StringVar(&policy, "policy", "mainline", `"mainline", or a full description, e.g. 6.12,-newidle-bailout or 6.6,NO_RUN_TO_PARITY (then the recorded kernel's knobs are not applied)`)
	fl.StringSliceVar(&features, "feature", nil, "sched_feat switch, e.g. NO_RUN_TO_PARITY (repeatable)")
	fl.StringSliceVar(&patches, "patch", nil, "seed patch knob to turn on (+name) or off (-name): "+strings.Join(patchList(), ", "))
	fl.Uint64Var(&seed, "seed", 1, "random seed: the same trace, policy and seed give the same replay")
	fl.StringVarP(&out, "output", "o", "", "also write the modeled schedule as a Perfetto trace")
	fl.IntVar(&top, "top", 10, "rows in the per-comm and per-task tables")
	fl.IntVar(&checkSeeds, "check-seeds", 4, "judge the fidelity under this many seeds (--seed and the next ones) and say whether the verdict depends on the seed; 1 replays --seed only")
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
	rel, source, err := ingest.KernelRelease(ld, topo, path)
	if err != nil || rel == "" {
		return policies.Release{}, err
	}
	return policies.Release{Release: rel, Source: source}, nil
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
