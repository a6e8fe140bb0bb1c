package policies

import (
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/schedlens/schedlens/replay"
	"github.com/schedlens/schedlens/topology"
)

// TestPingpongDelaysPinned replays the emulated SMT guest's ping-pong
// (fixtures/real/qemu-smt8-pingpong) with the masks its meta.txt gives:
// each hog-cN-* pinned to CPU N, thread A of the pair (pid 294) to CPU 0
// and B (pid 295) to CPU 2, as the trace shows them running. Every wakeup
// of the pair is then a wakeup onto an idle CPU from another CPU, whose
// delay the replay draws from the recorded ones: the pair's modeled wakeup
// latency p50 must be within 25% of the recorded 61 us (`schedlens replay
// --comm pingpong`; the guest's own round trip p50 is 167 us, two wakeups
// and two short runs). Taking the idle exit from the 35 local wakeups and
// the IPI as remote - local (which went to 0) gave 95 us.
func TestPingpongDelaysPinned(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a 7 s capture")
	}
	tl, topo := loadReal(t, "../fixtures/real/qemu-smt8-pingpong/trace.txt.zst")
	w, err := replay.Extract(tl, topo)
	if err != nil {
		t.Fatal(err)
	}
	hog := regexp.MustCompile(`^hog-c(\d)-`)
	pair := map[int]bool{}
	for i := range w.Tasks {
		tk := &w.Tasks[i]
		if m := hog.FindStringSubmatch(tk.Comm); m != nil {
			n, _ := strconv.Atoi(m[1])
			tk.CPUs = topology.NewCPUSet(n)
		}
		switch {
		case tk.Comm == "pingpong" && tk.TID == 294:
			tk.CPUs, pair[i] = topology.NewCPUSet(0), true
		case tk.Comm == "pingpong" && tk.TID == 295:
			tk.CPUs, pair[i] = topology.NewCPUSet(2), true
		}
	}
	if len(pair) != 2 {
		t.Fatalf("found %d of the pair's two threads", len(pair))
	}
	opts := replay.CalibratedOptions(w)
	opts.Seed, opts.KeepLatencies = 1, true
	res, err := replay.Simulate(w, topo, MustParse("6.12"), opts)
	if err != nil {
		t.Fatal(err)
	}
	var lat []int64
	for i := range pair {
		lat = append(lat, res.Tasks[i].Latencies...)
	}
	slices.Sort(lat)
	if len(lat) < 7000 {
		t.Fatalf("%d pair wakeups, want the recorded ~7650", len(lat))
	}
	if p50 := lat[len(lat)/2]; p50 < 46_000 || p50 > 76_000 {
		t.Errorf("pair wakeup latency p50 %.1f us, want 61 us within 25%%", float64(p50)/1000)
	}
}
