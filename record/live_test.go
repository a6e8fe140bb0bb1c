package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/ingest/perfetto"
	"github.com/schedlens/schedlens/timeline"
)

// needRecord skips the test unless this process can record and the named
// tools are installed. It returns their paths.
func needRecord(t *testing.T, tools ...string) []string {
	t.Helper()
	if err := Check(); err != nil {
		t.Skipf("cannot record here: %v", err)
	}
	var paths []string
	for _, name := range tools {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s not installed (Debian: apt-get install rt-tests)", name)
		}
		paths = append(paths, p)
	}
	return paths
}

// startGroup starts cmd in its own process group; kill ends the group.
func startGroup(cmd *exec.Cmd) (kill func(), err error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}, nil
}

// readTrace reads a recorded trace back through ingest/perfetto.
func readTrace(t *testing.T, path string) ([]timeline.Event, *perfetto.Reader) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := perfetto.NewReader(f, parse.Options{Name: path})
	if err != nil {
		t.Fatal(err)
	}
	var evs []timeline.Event
	var ev timeline.Event
	for {
		err := rd.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading %s back: %v", path, err)
		}
		evs = append(evs, ev)
	}
	return evs, rd
}

// TestRecordHackbench records 2 s of hackbench into a Perfetto file (and 1 s
// each with perf buffers and with tiny ring buffers) and reads it back
// through the normal ingest path: events per second, a comm for every
// switched-in task, every task in the process tree, per-CPU lost counts
// equal to what the recorder counted, per-CPU time order.
func TestRecordHackbench(t *testing.T) {
	tools := needRecord(t, "hackbench")
	tests := []struct {
		name string
		opts Options
		d    time.Duration
	}{
		{"ringbuf", Options{Transport: TransportRingBuf}, 2 * time.Second},
		{"perf", Options{Transport: TransportPerf}, time.Second},
		// 64 KiB per CPU wraps every 744 records and may drop some:
		// the read-back must still agree with the stats.
		{"ringbuf-64KiB", Options{Transport: TransportRingBuf, BufferBytes: 64 << 10}, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testRecordHackbench(t, tools[0], tc.opts, tc.d)
		})
	}
}

func testRecordHackbench(t *testing.T, hackbench string, opts Options, d time.Duration) {
	r, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	path := filepath.Join(t.TempDir(), "hackbench.pftrace")
	var kill func()
	st, err := r.WriteFile(ctx, path, nil, FileOptions{}, func() error {
		var err error
		kill, err = startGroup(exec.Command(hackbench, "-g", "4", "-l", "1000000"))
		return err
	})
	if kill != nil {
		kill()
	}
	if err != nil {
		t.Fatal(err)
	}
	rate := float64(st.Events) / st.Elapsed.Seconds()
	t.Logf("%s: %d events in %.2f s (%.0f events/s), %d tasks, lost per CPU %v, reordered %d, context %v",
		st.Transport, st.Events, st.Elapsed.Seconds(), rate, st.Tasks, st.Lost, st.Reordered, st.Context)
	// hackbench alone gives tens of thousands of events a second; on a
	// machine busy with other work it can get a small share of the CPUs.
	if rate < 1000 {
		t.Errorf("%.0f events/s, want hackbench to give at least 1000", rate)
	}
	if len(st.Lost) != r.System().NCPU {
		t.Errorf("lost counts for %d CPUs, want %d", len(st.Lost), r.System().NCPU)
	}
	if st.BadRecords != 0 || st.Reordered != 0 {
		t.Errorf("bad records %d, reordered %d, want 0, 0", st.BadRecords, st.Reordered)
	}

	evs, rd := readTrace(t, path)
	strs := rd.Strings()
	meta := rd.Meta()
	if meta.NCPU != r.System().NCPU || meta.Kernel == "" || meta.Topology == nil {
		t.Errorf("read back NCPU %d, kernel %q, topology %v; want %d CPUs, a kernel, a topology",
			meta.NCPU, meta.Kernel, meta.Topology != nil, r.System().NCPU)
	}
	var (
		n, switches, noComm, untracked, withCtx int64
		lost                                    = make([]int64, r.System().NCPU)
		gaps                                    = make([]int64, r.System().NCPU)
		last                                    = map[timeline.CPU]timeline.Time{}
		kinds                                   = map[timeline.Kind]int64{}
	)
	for _, ev := range evs {
		if ev.Time < last[ev.CPU] {
			t.Fatalf("CPU %d goes back from %d to %d", ev.CPU, last[ev.CPU], ev.Time)
		}
		last[ev.CPU] = ev.Time
		kinds[ev.Kind]++
		if ev.Kind == timeline.KindLost {
			lost[ev.CPU] += max(ev.Arg, 0)
			gaps[ev.CPU]++
			continue
		}
		n++
		if ev.Ctx != timeline.CtxUnknown {
			withCtx++
		}
		if ev.Kind != timeline.KindSwitch {
			continue
		}
		switches++
		if strs.Get(ev.Comm) == "" {
			noComm++
		}
		if _, ok := meta.Tasks[ev.Task]; !ok && ev.Task != 0 {
			untracked++
		}
	}
	t.Logf("read back: %d events %v, warnings %q", n, kinds, meta.Warnings)
	if n != st.Events {
		t.Errorf("read back %d events, recorded %d", n, st.Events)
	}
	if switches == 0 || noComm != 0 {
		t.Errorf("%d of %d switched-in tasks have no comm", noComm, switches)
	}
	if untracked != 0 {
		t.Errorf("%d switches to tasks missing from the process tree", untracked)
	}
	// Perfetto flags each gap in its CPU's next bundle without a count
	// (KindLost, Arg -1) and keeps per-CPU totals in FtraceStats, which
	// the reader reports as a count (one gap) or a warning (several).
	for _, w := range meta.Warnings {
		var cpu int
		var n int64
		if _, err := fmt.Sscanf(w, "CPU %d: ftrace stats count %d", &cpu, &n); err == nil && cpu < len(lost) {
			lost[cpu] += n
		}
	}
	for cpu := range lost {
		if lost[cpu] != st.Lost[cpu] || (st.Lost[cpu] > 0) != (gaps[cpu] > 0) {
			t.Errorf("CPU %d: read back %d lost in %d gaps, recorded %d", cpu, lost[cpu], gaps[cpu], st.Lost[cpu])
		}
	}
	if st.Context && withCtx != n {
		t.Errorf("%d of %d events without execution context", n-withCtx, n)
	}
	for _, k := range []timeline.Kind{timeline.KindSwitch, timeline.KindWaking, timeline.KindWakeup} {
		if kinds[k] == 0 {
			t.Errorf("no %v events", k)
		}
	}
	checkFirstSight(t, evs, meta, strs, st)
}

// checkFirstSight checks the task attributes of a hackbench recording: as
// many as the recorder counted; with nothing lost, every task switched in
// has an affinity and a group record at or before its first switch-in
// (each task is looked at when it is switched in, if not before); every
// hackbench task has the allowed CPUs of this test process, which it
// inherited.
func checkFirstSight(t *testing.T, evs []timeline.Event, meta *parse.Meta, strs *timeline.Strings, st Stats) {
	t.Helper()
	if int64(len(meta.Affinity)) != st.Affinity || int64(len(meta.Groups)) != st.Groups {
		t.Errorf("read back %d affinity and %d group records, recorded %d and %d", len(meta.Affinity), len(meta.Groups), st.Affinity, st.Groups)
	}
	firstAff := map[timeline.TID]timeline.AffinityChange{}
	for _, a := range meta.Affinity {
		if _, ok := firstAff[a.TID]; !ok {
			firstAff[a.TID] = a
		}
	}
	firstGrp := map[timeline.TID]timeline.Time{}
	for _, g := range meta.Groups {
		if _, ok := firstGrp[g.TID]; !ok {
			firstGrp[g.TID] = g.At
		}
	}
	var mine unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mine); err != nil {
		t.Fatal(err)
	}
	seen := map[timeline.TID]bool{}
	var missing, late, hackbench, wrongMask int
	for _, ev := range evs {
		if ev.Kind != timeline.KindSwitch || ev.Task <= 0 || seen[ev.Task] {
			continue
		}
		seen[ev.Task] = true
		a, okA := firstAff[ev.Task]
		g, okG := firstGrp[ev.Task]
		if !okA || !okG {
			missing++
			continue
		}
		if a.At > ev.Time || g > ev.Time {
			late++
		}
		if strs.Get(ev.Comm) != "hackbench" {
			continue
		}
		hackbench++
		for c := 0; c < 1024; c++ {
			if a.CPUs.Has(c) != mine.IsSet(c) {
				wrongMask++
				break
			}
		}
	}
	t.Logf("%d affinity and %d group records; %d tasks switched in (%d hackbench): %d without records, %d recorded after their first switch-in, %d hackbench with another mask",
		len(meta.Affinity), len(meta.Groups), len(seen), hackbench, missing, late, wrongMask)
	if st.TotalLost() == 0 && (missing > 0 || late > 0) {
		t.Errorf("with nothing lost, %d tasks switched in have no task attributes, %d got them after their first switch-in", missing, late)
	}
	if hackbench == 0 || wrongMask > 0 {
		t.Errorf("%d hackbench tasks, %d with a mask other than this process's", hackbench, wrongMask)
	}
}

// BenchmarkRecordHackbench records hackbench runs and reports the cost per
// event on both sides: time in the BPF programs (from the kernel's BPF
// statistics, switched on for the benchmark) and this process's CPU time
// reading, decoding and writing Perfetto to io.Discard; with both
// transports, and with ring buffers without the task attributes. Root
// only.
func BenchmarkRecordHackbench(b *testing.B) {
	if err := Check(); err != nil {
		b.Skipf("cannot record here: %v", err)
	}
	hb, err := exec.LookPath("hackbench")
	if err != nil {
		b.Skip("hackbench not installed (Debian: apt-get install rt-tests)")
	}
	const stats = "/proc/sys/kernel/bpf_stats_enabled"
	old, err := os.ReadFile(stats)
	if err != nil {
		b.Skipf("no BPF statistics: %v", err)
	}
	if err := os.WriteFile(stats, []byte("1"), 0o644); err != nil {
		b.Skipf("cannot enable BPF statistics: %v", err)
	}
	defer os.WriteFile(stats, old, 0o644)
	for _, cfg := range []struct {
		name string
		opts Options
	}{
		{"ringbuf", Options{Transport: TransportRingBuf}},
		{"perf", Options{Transport: TransportPerf}},
		// What capturing affinity and task groups costs.
		{"ringbuf-noattrs", Options{Transport: TransportRingBuf, NoAttrs: true}},
	} {
		b.Run(cfg.name, func(b *testing.B) {
			var events int64
			var bpf, cpu time.Duration
			b.ReportAllocs()
			for b.Loop() {
				r, err := Open(cfg.opts)
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				st, err := r.Run(ctx, discardSink(b), func() error {
					cmd := exec.Command(hb, "-g", "4", "-l", "100")
					if err := cmd.Start(); err != nil {
						return err
					}
					go func() { cmd.Wait(); cancel() }()
					return nil
				})
				cancel()
				r.Close()
				if err != nil {
					b.Fatal(err)
				}
				events += st.Events
				bpf += st.BPFTime
				cpu += st.CPUTime
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(bpf.Nanoseconds())/float64(events), "bpf-ns/event")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(events), "user-ns/event")
		})
	}
}

// discardSink returns a Perfetto writer to io.Discard.
func discardSink(b *testing.B) Sink {
	w, err := perfetto.NewWriter(io.Discard, perfetto.WriterOptions{Strings: timeline.NewStrings(), NCPU: 2})
	if err != nil {
		b.Fatal(err)
	}
	return w
}
