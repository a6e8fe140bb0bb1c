package policies

import (
	"math"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

// mixedWorkload has ping-pong pairs, periodic timers, forks, hogs with a
// fixed amount of work and pinned tasks, so that tasks migrate between
// CPUs of different capacity many times.
const mixedWorkload = `
hz 250
end 3s
task p{i} x6
  repeat 200 {
    run {150+70*i}us
    wake q{i}
    wait q{i}
  }
task q{i} x6
  repeat 200 {
    wait p{i}
    run {90+40*i}us
    wake p{i}
  }
task tick{i} x3
  repeat 300 {
    periodic {700+300*i}us
    run {60+30*i}us
  }
task parent
  run 5ms
  fork child0
  run 5ms
  fork child1
  sleep 2ms
  run 20ms
task child{i} x2 start fork
  run {30+20*i}ms
  sleep 1ms
  run 10ms
task hog{i} x3
  run {150+100*i}ms
task pinned cpus 0
  repeat 100 {
    run 400us
    sleep 600us
  }
`

// TestWorkConservation checks that every task that finishes gets exactly
// its demand: the CPU time the timeline shows it running, each interval
// scaled by the capacity of its CPU, equals the workload's work within
// 0.1%.
func TestWorkConservation(t *testing.T) {
	topos := []struct{ name, text string }{
		{"juno", junoTopo},
		{"smt", "topology smt 2 2\n"},
	}
	for _, tp := range topos {
		for _, pol := range []string{"6.6", "6.12", "6.18,NO_RUN_TO_PARITY", "6.18,WAKEUP_PICK"} {
			t.Run(tp.name+"/"+pol, func(t *testing.T) {
				r, sp, _ := run(t, tp.text+mixedWorkload, pol, -1)
				tl := r.Timeline
				caps := make([]int64, tl.NCPU)
				for i, c := range sp.Topology.CPUs {
					caps[i] = int64(c.Capacity)
				}
				byTID := map[timeline.TID]int{}
				for i, tk := range sp.Workload.Tasks {
					byTID[tk.TID] = i
				}
				work := make([]float64, len(sp.Workload.Tasks))
				tl.Walk(func(s *timeline.Span) {
					if s.State != timeline.SpanRunning || s.Task == timeline.NoTask || tl.Tasks[s.Task].Idle {
						return
					}
					if i, ok := byTID[tl.Tasks[s.Task].PID]; ok {
						work[i] += float64(s.End-s.Start) * float64(caps[s.CPU]) / 1024
					}
				})
				finished := 0
				for i, tr := range r.Tasks {
					if !tr.Finished {
						continue
					}
					finished++
					demand := float64(sp.Workload.Tasks[i].Demand())
					if tr.Work != sp.Workload.Tasks[i].Demand() {
						t.Errorf("%s: engine work %d, want demand %.0f", sp.Workload.Tasks[i].Comm, tr.Work, demand)
					}
					if demand > 0 && math.Abs(work[i]-demand)/demand > 0.001 {
						t.Errorf("%s: timeline work %.0f ns, want %.0f within 0.1%%", sp.Workload.Tasks[i].Comm, work[i], demand)
					}
				}
				if finished < len(r.Tasks)-1 {
					t.Errorf("%d of %d tasks finished, want nearly all", finished, len(r.Tasks))
				}
				if n := len(tl.Inconsistencies()); n > 0 {
					t.Errorf("%d timeline inconsistencies, first %+v", n, tl.Inconsistencies()[0])
				}
				if r.Counters["migrate"] == 0 {
					t.Errorf("no migration: the test does not exercise capacity scaling")
				}
				if strings.Contains(pol, "WAKEUP_PICK") && r.Counters["eevdf.wakeup-pick-dequeued-delayed"] == 0 {
					t.Errorf("WAKEUP_PICK never dequeued a delayed entity in a wakeup check: the path is not exercised")
				}
			})
		}
	}
}
