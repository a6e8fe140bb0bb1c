package main

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlens/schedlens/compare"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/policies"
	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/report"
)

func init() { subcommands = append(subcommands, newScenarioCmd) }

type scenarioRun struct {
	Policy  string              `json:"policy"`
	Figures compare.FiguresJSON `json:"figures"`
	// ByComm is the wakeup latency of each task name.
	ByComm map[string]metrics.Dist `json:"wakeup_latency_by_comm"`
	// PreemptByComm is the preemption wait (including tasks woken while
	// still leaving the CPU) of each task name.
	PreemptByComm map[string]metrics.Dist `json:"preempt_wait_by_comm"`
	// EngineMaxByComm is the longest waking-to-running time the engine
	// itself saw per task name, including wakeups of a task still on its
	// CPU (a trace shows those as the task still running, e.g. while its
	// CPU balances in newidle).
	EngineMaxByComm map[string]int64 `json:"engine_latency_max_by_comm_ns"`
	// MakespanNs is when the last task finished (0 if some never did).
	MakespanNs int64 `json:"makespan_ns"`
}

func newScenarioCmd() *cobra.Command {
	var (
		format string
		policy string
		seed   uint64
	)
	cmd := &cobra.Command{
		Use:   "scenario [NAME]",
		Short: "Run a seed patch's own test case under mainline and under the patch",
		Long: `scenario lists the workload specs of the five seed patches (each patch's own
test case, as a workload) or runs one under the policies it names ("A vs B",
e.g. mainline with and without the patch) and prints the metrics of both runs
side by side, measured by the same code as a recorded trace. The workloads
are synthetic, written from each e-mail; what the patches did on real
kernels (each seed's own test recorded without and with the patch) and how
whatif's prediction from those recordings compares: docs/seeds.md.`,
		Example: `  schedlens scenario
  schedlens scenario newidle-bailout
  schedlens scenario 002 --policy \
      "6.12,NO_RUN_TO_PARITY vs 6.12,+resched-ineligible,NO_RUN_TO_PARITY"`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if format != "text" && format != "markdown" && format != "json" && format != "html" {
				return usagef("--format %q: want one of text, markdown, json, html", format)
			}
			if len(args) == 0 {
				for _, n := range policies.ScenarioNames() {
					fmt.Fprintln(out, strings.TrimSuffix(n, ".spec"))
				}
				return nil
			}
			spec, err := policies.Scenario(args[0])
			if err != nil {
				return usagef("%v", err)
			}
			pols := spec.Policy
			if policy != "" {
				pols = policy
			}
			if pols == "" {
				pols = "6.18"
			}
			topo := spec.Topology
			if topo == nil {
				return fmt.Errorf("scenario %s names no topology", args[0])
			}
			opts := spec.Options()
			if seed != 0 {
				opts.Seed = seed
			}
			var runs []scenarioRun
			var sides []*compare.Side
			for _, desc := range strings.Split(pols, " vs ") {
				desc = strings.TrimSpace(desc)
				cfg, err := policies.Parse(desc)
				if err != nil {
					return usagef("policy %q: %v", desc, err)
				}
				m, err := policies.New(cfg)
				if err != nil {
					return usagef("policy %q: %v", desc, err)
				}
				res, err := replay.Simulate(spec.Workload, topo, m, opts)
				if err != nil {
					return err
				}
				tl := res.Timeline
				// A simulated timeline misses nothing: measure all of it.
				win := metrics.Window{Start: tl.Start, End: tl.End}
				an, acc, err := metrics.AnalyzeAccount(tl, metrics.Options{Window: win, Topology: topo})
				if err != nil {
					return err
				}
				side := compare.FromMetrics(tl, acc, an, metrics.Filter{})
				run := scenarioRun{Policy: desc, Figures: compare.NewFiguresJSON(&side.Overall), ByComm: map[string]metrics.Dist{}, PreemptByComm: map[string]metrics.Dist{}}
				for _, g := range an.Latency.Wakeup.ByComm {
					run.ByComm[g.Key] = g.Dist
				}
				for _, g := range an.Latency.Preempt.ByComm {
					run.PreemptByComm[g.Key] = g.Dist
				}
				run.EngineMaxByComm = map[string]int64{}
				for i, tr := range res.Tasks {
					c := spec.Workload.Tasks[i].Comm
					if tr.LatencyMax > run.EngineMaxByComm[c] {
						run.EngineMaxByComm[c] = tr.LatencyMax
					}
				}
				for _, tr := range res.Tasks {
					if !tr.Finished {
						run.MakespanNs = 0
						break
					}
					if d := int64(tr.Exit - res.Start); tr.Exit >= 0 && d > run.MakespanNs {
						run.MakespanNs = d
					}
				}
				runs = append(runs, run)
				sides = append(sides, side)
			}
			if format == "json" {
				// A scenario is generated, not read: no trace, no window.
				h := report.Header{Command: commandLine(cmd, args), Version: Version}
				return report.WriteDocument(out, h, struct {
					Scenario string        `json:"scenario"`
					Runs     []scenarioRun `json:"runs"`
				}{spec.Name, runs})
			}
			page := out
			var text bytes.Buffer
			if format == "html" {
				out = &text
			}
			fmt.Fprintf(out, "scenario: %s (%s, seed %d)\n\n", spec.Name, topo.Name, opts.Seed)
			hdr := []string{"figure"}
			for i := range runs {
				hdr = append(hdr, fmt.Sprintf("run %d", i+1))
			}
			t := &report.Table{Header: hdr, Left: []bool{true}}
			add := func(name string, get func(f compare.FiguresJSON) string) {
				row := []string{name}
				for _, r := range runs {
					row = append(row, get(r.Figures))
				}
				t.Add(row...)
			}
			us := func(ns int64) string { return fmt.Sprintf("%.1f", float64(ns)/1e3) }
			add("CPU time (ms)", func(f compare.FiguresJSON) string { return ms1(f.CPUTimeNs) })
			add("runnable time (ms)", func(f compare.FiguresJSON) string { return ms1(f.RunnableNs) })
			add("wakeups", func(f compare.FiguresJSON) string { return fmt.Sprint(f.WakeupLatencyN) })
			add("wakeup latency p50 (us)", func(f compare.FiguresJSON) string { return us(f.WakeupLatencyP50) })
			add("wakeup latency p99 (us)", func(f compare.FiguresJSON) string { return us(f.WakeupLatencyP99) })
			add("wakeup latency max (us)", func(f compare.FiguresJSON) string { return us(f.WakeupLatencyMax) })
			add("preemptions", func(f compare.FiguresJSON) string { return fmt.Sprint(f.Preemptions) })
			add("migrations", func(f compare.FiguresJSON) string { return fmt.Sprint(f.Migrations) })
			if format == "markdown" {
				err = t.Markdown(out)
			} else {
				err = report.TextTable(out, t)
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(out)
			// Wakeup latency per task name: the seed e-mails' headlines are
			// about one group of tasks.
			var comms []string
			seen := map[string]bool{}
			for _, m := range []map[string]metrics.Dist{runs[0].ByComm, runs[0].PreemptByComm} {
				for c := range m {
					if !seen[c] {
						seen[c] = true
						comms = append(comms, c)
					}
				}
			}
			// The task names woken most often first: the scenario's subject.
			sort.SliceStable(comms, func(i, j int) bool {
				a, b := runs[0].ByComm[comms[i]].Count, runs[0].ByComm[comms[j]].Count
				if a != b {
					return a > b
				}
				return comms[i] < comms[j]
			})
			if len(comms) > 8 {
				comms = comms[:8]
			}
			ct := &report.Table{Header: []string{"comm"}, Left: []bool{true}}
			for i := range runs {
				ct.Header = append(ct.Header, fmt.Sprintf("p50 %d", i+1), fmt.Sprintf("max %d", i+1), fmt.Sprintf("prmt %d", i+1), fmt.Sprintf("eng %d", i+1))
			}
			for _, c := range comms {
				row := []string{c}
				for _, r := range runs {
					d, p := r.ByComm[c], r.PreemptByComm[c]
					row = append(row, us(d.P50Ns), us(d.MaxNs), us(p.MaxNs), us(r.EngineMaxByComm[c]))
				}
				ct.Add(row...)
			}
			if len(comms) > 0 {
				fmt.Fprintln(out, "Waits by task name (us): wakeup latency p50 and max and preemption wait")
				fmt.Fprintln(out, "max, as measured on the replayed trace; eng: the engine's own longest")
				fmt.Fprintln(out, "waking-to-running time, which also sees wakeups of a task still on its CPU")
				fmt.Fprintln(out, "(the trace shows it running, e.g. while the CPU balances in newidle):")
				if format == "markdown" {
					err = ct.Markdown(out)
				} else {
					err = report.TextTable(out, ct)
				}
				if err != nil {
					return err
				}
				fmt.Fprintln(out)
			}
			for i, r := range runs {
				fmt.Fprintf(out, "run %d: %s", i+1, r.Policy)
				if r.MakespanNs > 0 {
					fmt.Fprintf(out, " (all tasks done at %s ms)", ms1(r.MakespanNs))
				}
				fmt.Fprintln(out)
			}
			fmt.Fprintf(out, "command: %s\nschedlens %s\n", wrapCommand(commandLine(cmd, args), 71), Version)
			if format == "html" {
				return scenarioHTML(spec.Name, runs, sides, comms, text.String()).Write(page)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text|markdown|json|html")
	cmd.Flags().StringVar(&policy, "policy", "", `policies to compare, "A vs B" (default: the scenario's own)`)
	cmd.Flags().Uint64Var(&seed, "seed", 0, "random seed (default: the scenario's)")
	return cmd
}

// scenarioHTML is the page of a scenario: the wakeup latency CDFs of its
// runs overlaid, of all tasks and of each task name of the text table
// (at most four), over the text report.
func scenarioHTML(name string, runs []scenarioRun, sides []*compare.Side, comms []string, text string) *report.HTMLPage {
	page := &report.HTMLPage{Title: "schedlens scenario: " + name, Text: text}
	scopes := []string{compare.Overall}
	for _, c := range comms[:min(len(comms), 4)] {
		scopes = append(scopes, compare.CommScope(c))
	}
	for _, sc := range scopes {
		var series []report.CDFSeries
		for i := range sides {
			var samples []int64
			if f := sides[i].Scope(sc); f != nil {
				samples = f.WakeupSamples
			}
			series = append(series, report.CDFSeries{Name: fmt.Sprintf("run %d: %s", i+1, runs[i].Policy), Samples: samples})
		}
		what := "all tasks"
		if sc != compare.Overall {
			what = "comm " + strings.TrimPrefix(sc, "comm:")
		}
		page.Figures = append(page.Figures, report.HTMLFigure{
			SVG: report.CDFPlot{Label: "wakeup latency CDF, " + what, Series: series, Tail: true, Width: 580}.SVG(),
			Caption: "Wakeup latency of " + what + " in each run: share of wakeups at or below each latency " +
				"(x: log scale; y: stretched towards 100%)."})
	}
	return page
}
