package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/ingest/perfetto"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/policies"
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/report"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

func init() { subcommands = append(subcommands, newReplayCmd) }

// runFigures are the figures the fidelity table compares, for the whole
// trace or one task.
type runFigures struct {
	CPUTimeNs          int64 `json:"cpu_time_ns"`
	RunnableNs         int64 `json:"runnable_ns"`
	WakeupLatencyN     int64 `json:"wakeup_latency_count"`
	WakeupLatencyP50   int64 `json:"wakeup_latency_p50_ns"`
	WakeupLatencyP90   int64 `json:"wakeup_latency_p90_ns"`
	WakeupLatencyP99   int64 `json:"wakeup_latency_p99_ns"`
	WakeupLatencyMax   int64 `json:"wakeup_latency_max_ns"`
	Preemptions        int64 `json:"preemptions"`
	Migrations         int64 `json:"migrations"`
	ContextSwitches    int64 `json:"context_switches"`
	IdleWithRunnableNs int64 `json:"idle_with_runnable_ns"`
	// latencyHist is the wakeup latency histogram (power-of-two µs
	// buckets), for the distance between the two distributions.
	latencyHist metrics.Histogram
}

type taskFidelity struct {
	PID      timeline.TID `json:"pid"`
	Comm     string       `json:"comm"`
	Recorded runFigures   `json:"recorded"`
	Modeled  runFigures   `json:"modeled"`
}

type replayDoc struct {
	Trace     traceJSON          `json:"trace"`
	Policy    string             `json:"policy"`
	Seed      uint64             `json:"seed"`
	HZ        int                `json:"hz"`
	Topology  string             `json:"topology"`
	Recorded  runFigures         `json:"recorded"`
	Modeled   runFigures         `json:"modeled"`
	Fidelity  map[string]float64 `json:"fidelity"`
	Tasks     []taskFidelity     `json:"tasks"`
	Notes     []string           `json:"notes"`
	SimEvents int                `json:"modeled_events"`
}

func newReplayCmd() *cobra.Command {
	var (
		f        traceFlags
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
	)
	cmd := &cobra.Command{
		Use:   "replay TRACE",
		Short: "Replay the recorded workload under a modeled scheduler and report its fidelity",
		Long: `replay extracts the workload of a trace (per task: CPU demand between blocking,
and what woke it), re-runs it as a deterministic discrete-event simulation on
the recorded topology under a modeled policy (the mainline EEVDF model of a
kernel version, with patch knobs and sched_feat switches), and prints the
modeled run's figures beside the recorded ones with their ratio: how faithful
the model is on this trace, before any patched run is trusted.`,
		Example: `  schedlens replay trace.txt.zst
  schedlens replay --kernel 6.12 --patch resched-ineligible --feature NO_RUN_TO_PARITY trace.txt
  schedlens replay --format json -o replayed.pftrace perf-script.txt.gz`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rule, err := replay.ParseWakeRule(wakers)
			if err != nil {
				return usagef("--wakers: %v", err)
			}
			desc := kernel
			if policy != "" && policy != "mainline" {
				desc = policy
			}
			for _, p := range patches {
				if !strings.HasPrefix(p, "+") && !strings.HasPrefix(p, "-") {
					p = "+" + p
				}
				desc += "," + p
			}
			for _, ft := range features {
				desc += "," + ft
			}
			cfg, err := policies.Parse(desc)
			if err != nil {
				return usagef("policy %q: %v", desc, err)
			}
			model, err := policies.New(cfg)
			if err != nil {
				return usagef("policy %q: %v", desc, err)
			}
			ld, win, err := f.prepare(cmd, args[0], "text", "markdown", "json")
			if err != nil {
				return err
			}
			tl := ld.Timeline
			topo, err := topology.Resolve(ld.Meta.Topology, args[0], topoFlag, tl.NCPU)
			if err != nil {
				return err
			}
			w, err := replay.Extract(tl, topo)
			if err != nil {
				return err
			}
			w.WakeRule = rule
			switch rule {
			case replay.WakeAny:
				w.Assumptions = append(w.Assumptions, replay.Assumption{Name: "wakers-any", Detail: "--wakers any: a task's sleep that a task wake ended ends at the first task wake issued to it, by any waker"})
			case replay.WakeOrdered:
				w.Assumptions = append(w.Assumptions, replay.Assumption{Name: "wakers-ordered", Detail: "--wakers ordered: a waker that reaches a wake before its wakee has blocked waits for that block (at most 10 ms), as the recording ordered them"})
			case replay.WakeLateAny:
				w.Assumptions = append(w.Assumptions, replay.Assumption{Name: "wakers-late-any", Detail: "--wakers late-any: a sleep ends at its recorded waker's wake, or, once it has lasted longer than in the recording, at the first task wake issued to the sleeper"})
			}
			opts := replay.CalibratedOptions(w)
			opts.Seed = seed
			if hz > 0 {
				opts.HZ = hz
			}
			res, err := replay.Simulate(w, topo, model, opts)
			if err != nil {
				return err
			}
			sim := res.Timeline
			doc := replayDoc{Trace: traceInfo(ld), Policy: res.Policy, Seed: seed, HZ: opts.HZ, Topology: topo.Source}
			if doc.Policy == "" {
				doc.Policy = desc
			}
			recAcc := metrics.Account(tl, win)
			simWin := metrics.Window{Start: win.Start, End: win.End}
			if sim.ValidStart > simWin.Start {
				simWin.Start = sim.ValidStart
			}
			if sim.End < simWin.End {
				simWin.End = sim.End
			}
			simAcc := metrics.Account(sim, simWin)
			recAn, err := metrics.Analyze(tl, metrics.Options{Window: win, Topology: topo})
			if err != nil {
				return err
			}
			simAn, err := metrics.Analyze(sim, metrics.Options{Window: simWin, Topology: topo})
			if err != nil {
				return err
			}
			doc.Recorded = overall(recAcc, recAn)
			doc.Modeled = overall(simAcc, simAn)
			doc.SimEvents = sim.Len()
			doc.Fidelity = fidelity(doc.Recorded, doc.Modeled)
			doc.Tasks = topTasks(tl, sim, recAcc, simAcc, recAn, simAn, top)
			for _, a := range w.Assumptions {
				note := "assumed " + a.Name + ": " + a.Detail
				if a.Tasks > 0 {
					note += fmt.Sprintf(" (%d tasks)", a.Tasks)
				}
				doc.Notes = append(doc.Notes, note)
			}
			if out != "" {
				if err := writeReplayed(out, sim, topo, ld.Meta.Kernel); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote the modeled schedule (%d events) to %s\n", sim.Len(), out)
			}
			o := cmd.OutOrStdout()
			if f.format == "json" {
				return writeJSON(o, doc)
			}
			return replayText(o, ld.Path, win, doc, f.format == "markdown", commandLine(cmd, args))
		},
	}
	f.register(cmd, "text|markdown|json")
	fl := cmd.Flags()
	fl.StringVar(&policy, "policy", "mainline", `"mainline", or a full description such as "6.12,+resched-ineligible,NO_RUN_TO_PARITY"`)
	fl.StringVar(&kernel, "kernel", "6.18", "kernel version whose mainline model to run (6.6, 6.12, 6.18)")
	fl.StringSliceVar(&features, "feature", nil, "sched_feat switch, e.g. NO_RUN_TO_PARITY (repeatable)")
	fl.StringSliceVar(&patches, "patch", nil, "seed patch knob to turn on (+name) or off (-name): "+strings.Join(patchList(), ", "))
	fl.IntVar(&hz, "hz", 250, "tick rate (CONFIG_HZ) of the model")
	fl.Uint64Var(&seed, "seed", 1, "random seed: the same trace, policy and seed give the same replay")
	fl.StringVar(&topoFlag, "topology", "", "CPU topology: a file (topology.txt or JSON) or a preset name")
	fl.StringVarP(&out, "output", "o", "", "also write the modeled schedule as a Perfetto trace")
	fl.IntVar(&top, "top", 10, "tasks in the per-task fidelity table")
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

func overall(acc *metrics.Accounting, an *metrics.Analysis) runFigures {
	var f runFigures
	for _, t := range acc.Tasks {
		f.CPUTimeNs += t.RunNs
		f.RunnableNs += t.RunnableNs
		f.Preemptions += t.Preemptions
		f.Migrations += t.Migrations
	}
	for _, c := range acc.CPUs {
		f.ContextSwitches += c.Switches
	}
	if an.Latency != nil {
		d := an.Latency.Wakeup.Overall
		f.WakeupLatencyN, f.WakeupLatencyP50, f.WakeupLatencyP90, f.WakeupLatencyP99, f.WakeupLatencyMax = d.Count, d.P50Ns, d.P90Ns, d.P99Ns, d.MaxNs
		f.latencyHist = d.Hist
	}
	if an.Idle != nil {
		f.IdleWithRunnableNs = an.Idle.IdleWithRunnableNs
	}
	return f
}

func ratio(model, rec int64) float64 {
	if rec == 0 {
		if model == 0 {
			return 1
		}
		return math.Inf(1)
	}
	return math.Round(float64(model)/float64(rec)*1000) / 1000
}

func fidelity(rec, mod runFigures) map[string]float64 {
	m := map[string]float64{
		"wakeup_latency_p50_ratio": ratio(mod.WakeupLatencyP50, rec.WakeupLatencyP50),
		"wakeup_latency_p90_ratio": ratio(mod.WakeupLatencyP90, rec.WakeupLatencyP90),
		"wakeup_latency_p99_ratio": ratio(mod.WakeupLatencyP99, rec.WakeupLatencyP99),
		"wakeup_latency_max_ratio": ratio(mod.WakeupLatencyMax, rec.WakeupLatencyMax),
		"runnable_ratio":           ratio(mod.RunnableNs, rec.RunnableNs),
		"cpu_time_ratio":           ratio(mod.CPUTimeNs, rec.CPUTimeNs),
		"migrations_ratio":         ratio(mod.Migrations, rec.Migrations),
		"preemptions_ratio":        ratio(mod.Preemptions, rec.Preemptions),
		"context_switches_ratio":   ratio(mod.ContextSwitches, rec.ContextSwitches),
		"idle_with_runnable_ratio": ratio(mod.IdleWithRunnableNs, rec.IdleWithRunnableNs),
	}
	m["wakeup_latency_cdf_distance"] = math.Round(metrics.CDFDistance(rec.latencyHist, mod.latencyHist)*1000) / 1000
	for k, v := range m {
		if math.IsInf(v, 0) {
			m[k] = -1 // JSON has no infinity: -1 means "recorded 0, modeled not"
		}
	}
	return m
}

func topTasks(rtl, stl *timeline.Timeline, ra, sa *metrics.Accounting, ran, san *metrics.Analysis, n int) []taskFidelity {
	type key struct {
		pid  timeline.TID
		comm string
	}
	sim := map[key]metrics.TaskTimes{}
	for _, t := range sa.Tasks {
		sim[key{t.PID, t.Comm}] = t
	}
	lat := func(an *metrics.Analysis, pid timeline.TID) (d metrics.Dist) {
		if an.Latency == nil {
			return
		}
		for _, g := range an.Latency.Wakeup.ByTask {
			if g.PID == pid {
				return g.Dist
			}
		}
		return
	}
	rows := append([]metrics.TaskTimes(nil), ra.Tasks...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].RunnableNs+rows[i].RunNs > rows[j].RunnableNs+rows[j].RunNs })
	var out []taskFidelity
	for _, r := range rows {
		if len(out) == n {
			break
		}
		s, ok := sim[key{r.PID, r.Comm}]
		if !ok {
			continue
		}
		fig := func(t metrics.TaskTimes, d metrics.Dist) runFigures {
			return runFigures{CPUTimeNs: t.RunNs, RunnableNs: t.RunnableNs, Preemptions: t.Preemptions, Migrations: t.Migrations,
				ContextSwitches: t.SwitchesIn, WakeupLatencyN: d.Count, WakeupLatencyP50: d.P50Ns, WakeupLatencyP90: d.P90Ns,
				WakeupLatencyP99: d.P99Ns, WakeupLatencyMax: d.MaxNs}
		}
		out = append(out, taskFidelity{PID: r.PID, Comm: r.Comm, Recorded: fig(r, lat(ran, r.PID)), Modeled: fig(s, lat(san, r.PID))})
	}
	return out
}

func replayText(w io.Writer, path string, win metrics.Window, d replayDoc, md bool, cmdline string) error {
	fmt.Fprintf(w, "trace:    %s\npolicy:   %s (HZ %d, seed %d)\ntopology: %s\nwindow:   %s .. %s s\n\n",
		path, d.Policy, d.HZ, d.Seed, d.Topology, win.Start.Seconds(), win.End.Seconds())
	render := func(t *report.Table) error {
		if md {
			return t.Markdown(w)
		}
		return report.TextTable(w, t)
	}
	t := &report.Table{Header: []string{"figure", "recorded", "modeled", "model/rec"}, Left: []bool{true}}
	r, m := d.Recorded, d.Modeled
	row := func(name string, a, b int64, unit func(int64) string) {
		t.Add(name, unit(a), unit(b), fmtRatio(ratio(b, a)))
	}
	us := func(ns int64) string { return fmt.Sprintf("%.1f", float64(ns)/1e3) }
	n := func(v int64) string { return fmt.Sprint(v) }
	row("CPU time (ms)", r.CPUTimeNs, m.CPUTimeNs, ms1)
	row("runnable time (ms)", r.RunnableNs, m.RunnableNs, ms1)
	row("wakeups (samples)", r.WakeupLatencyN, m.WakeupLatencyN, n)
	row("wakeup latency p50 (us)", r.WakeupLatencyP50, m.WakeupLatencyP50, us)
	row("wakeup latency p90 (us)", r.WakeupLatencyP90, m.WakeupLatencyP90, us)
	row("wakeup latency p99 (us)", r.WakeupLatencyP99, m.WakeupLatencyP99, us)
	row("wakeup latency max (us)", r.WakeupLatencyMax, m.WakeupLatencyMax, us)
	row("preemptions", r.Preemptions, m.Preemptions, n)
	row("migrations", r.Migrations, m.Migrations, n)
	row("context switches", r.ContextSwitches, m.ContextSwitches, n)
	row("idle with runnable (ms)", r.IdleWithRunnableNs, m.IdleWithRunnableNs, ms1)
	if err := render(t); err != nil {
		return err
	}
	fmt.Fprintf(w, "wakeup latency CDF distance: %.3f (largest gap between the recorded and\n", d.Fidelity["wakeup_latency_cdf_distance"])
	fmt.Fprintln(w, "modeled shares of wakeups under 2, 4, 8 ... us; 0 = the same distribution)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Fidelity of the model on this trace: the modeled run's figures beside the")
	fmt.Fprintln(w, "recorded ones, measured by the same code, over the same window. CPU time is")
	fmt.Fprintln(w, "conserved by construction unless tasks are cut by the end; latency and wait")
	fmt.Fprintln(w, "show how close the modeled scheduler is to the real one.")
	fmt.Fprintln(w)
	tt := &report.Table{Header: []string{"pid", "comm", "cpu ms", "model", "wait ms", "model", "p50 us", "model"}, Left: []bool{false, true}}
	for _, x := range d.Tasks {
		comm := x.Comm
		if len(comm) > 12 && !md {
			comm = comm[:12]
		}
		tt.Add(fmt.Sprint(x.PID), comm, ms1(x.Recorded.CPUTimeNs), ms1(x.Modeled.CPUTimeNs), ms1(x.Recorded.RunnableNs),
			ms1(x.Modeled.RunnableNs), us(x.Recorded.WakeupLatencyP50), us(x.Modeled.WakeupLatencyP50))
	}
	if len(d.Tasks) > 0 {
		fmt.Fprintln(w, "Top tasks (recorded, then modeled):")
		if err := render(tt); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	for _, note := range d.Notes {
		if md {
			fmt.Fprintf(w, "note: %s\n", note)
			continue
		}
		fmt.Fprintln(w, wrapText("note: ", note, 80))
	}
	fmt.Fprintf(w, "command: %s\nschedlens %s\n", wrapCommand(cmdline, 71), Version)
	return nil
}

func fmtRatio(r float64) string {
	if math.IsInf(r, 0) {
		return "-"
	}
	return fmt.Sprintf("%.2f", r)
}

// writeReplayed writes a modeled timeline as a Perfetto trace, so that it can
// be looked at beside the recording in a trace viewer.
func writeReplayed(path string, tl *timeline.Timeline, topo *topology.Topology, kernel string) error {
	f, err := os.CreateTemp(dirOf(path), ".replay.*.tmp")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w, err := perfetto.NewWriter(f, perfetto.WriterOptions{Strings: tl.Strings, Topology: topo, Kernel: kernel, NCPU: tl.NCPU})
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
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	ok = true
	return os.Rename(f.Name(), path)
}

func dirOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i+1]
	}
	return "."
}
