package record

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// helperEnv makes the test binary run attrsHelper instead of the tests.
const helperEnv = "SCHEDLENS_ATTRS_HELPER"

// TestAttrsHelper is not a test: TestRecordAttrs runs the test binary with
// helperEnv set, and then this is the traced workload (attrsHelper).
func TestAttrsHelper(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("the workload of TestRecordAttrs")
	}
	if err := attrsHelper(os.Stdout, os.Getenv(helperEnv)); err != nil {
		fmt.Fprintln(os.Stdout, "error", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// attrsHelper changes the task attributes of its own thread step by step,
// printing "tid N", then per step "step NAME BEFORE AFTER" (CLOCK_MONOTONIC
// ns around the change) and what it read back, and sleeping 30 ms between
// steps so that each change is seen at the thread's next switch-out:
//
//	pin-first, pin-last, unpin: sched_setaffinity to the first allowed
//	    CPU, the last, and back to the starting mask;
//	cgroup: move the process into the cgroup directory cg (if cg is not "-");
//	setsid: a new session, hence a new autogroup (where the kernel has them);
//	nice: that autogroup's nice value to 5.
func attrsHelper(out *os.File, cg string) error {
	runtime.LockOSThread()
	w := bufio.NewWriter(out)
	defer w.Flush()
	fmt.Fprintf(w, "tid %d\n", unix.Gettid())
	var start unix.CPUSet
	if err := unix.SchedGetaffinity(0, &start); err != nil {
		return err
	}
	var cpus []int
	for c := 0; c < 1024; c++ {
		if start.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	fmt.Fprintf(w, "cpus %s\n", topology.FormatCPUList(cpus))
	if b, err := os.ReadFile("/proc/thread-self/cgroup"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if p, ok := strings.CutPrefix(l, "0::"); ok {
				fmt.Fprintf(w, "cgroup %s\n", p)
			}
		}
	}
	fmt.Fprintf(w, "autogroup %s\n", readAutogroup())
	w.Flush()
	nap := func() { time.Sleep(30 * time.Millisecond) }
	step := func(name string, f func() error) error {
		before := monoNow()
		if err := f(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(w, "step %s %d %d\n", name, before, monoNow())
		w.Flush()
		nap()
		return nil
	}
	pin := func(c int) func() error {
		return func() error {
			var s unix.CPUSet
			s.Set(c)
			return unix.SchedSetaffinity(0, &s)
		}
	}
	nap()
	steps := []struct {
		name string
		f    func() error
	}{
		{"pin-first", pin(cpus[0])},
		{"pin-last", pin(cpus[len(cpus)-1])},
		{"unpin", func() error { return unix.SchedSetaffinity(0, &start) }},
	}
	if cg != "-" {
		steps = append(steps, struct {
			name string
			f    func() error
		}{"cgroup", func() error {
			return os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0)
		}})
	}
	if readAutogroup() != "" {
		steps = append(steps, []struct {
			name string
			f    func() error
		}{
			{"setsid", func() error { _, err := unix.Setsid(); return err }},
			{"nice", func() error { return os.WriteFile("/proc/self/autogroup", []byte("5"), 0) }},
		}...)
	}
	for _, s := range steps {
		if err := step(s.name, s.f); err != nil {
			return err
		}
		fmt.Fprintf(w, "autogroup %s\n", readAutogroup())
	}
	fmt.Fprintln(w, "done")
	return nil
}

// readAutogroup returns /proc/self/autogroup ("/autogroup-N nice K"), ""
// where the kernel has no autogroups.
func readAutogroup() string {
	b, err := os.ReadFile("/proc/self/autogroup")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// parseAutogroup reads "/autogroup-N nice K"; N is 0 for an empty file
// (the root autogroup prints nothing).
func parseAutogroup(s string) (id, nice int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	_, err = fmt.Sscanf(s, "/autogroup-%d nice %d", &id, &nice)
	return id, nice, err
}

type helperStep struct {
	name          string
	before, after timeline.Time
	autogroup     string // /proc/self/autogroup after the step
}

// TestRecordAttrs records a helper process that changes its thread's
// allowed CPUs three times, moves itself into a new cgroup, starts a new
// session (a new autogroup) and renices that autogroup, then reads the
// trace back through ingest.Load and checks against what the helper did:
// for its thread exactly one AffinityChange per step, with the mask the
// helper set, stamped between the start of the step's system call and the
// start of the next step (the change is seen at the thread's next
// scheduler event), or before the call returned where the affinity hook
// runs (Stats.AffinityHook); the first one (first sight) with the starting mask
// before the first step; GroupChanges with the cgroup path the helper
// wrote itself into and the autogroup ids and nice values that
// /proc/self/autogroup showed it, each between its step and the next.
func TestRecordAttrs(t *testing.T) {
	needRecord(t)
	// The mask is one word up to 64 CPUs; four words take the BPF side's
	// other path (copy and hash), which the kernel's NR_CPUS may allow.
	for _, words := range []int{0, 4} {
		t.Run(fmt.Sprintf("mask-words-%d", words), func(t *testing.T) {
			testRecordAttrs(t, Options{maskWords: words})
		})
	}
}

func testRecordAttrs(t *testing.T, opts Options) {
	cg := "-"
	if m, _ := findCgroup2File("/proc/self/mountinfo"); m != "" {
		dir := filepath.Join(m, fmt.Sprintf("schedlens-test-%d", os.Getpid()))
		if err := os.Mkdir(dir, 0o755); err == nil {
			cg = dir
			defer func() {
				// The helper has exited: the cgroup is empty.
				for i := 0; i < 50 && os.Remove(dir) != nil; i++ {
					time.Sleep(20 * time.Millisecond)
				}
			}()
		} else {
			t.Logf("no cgroup step: %v", err)
		}
	}

	r, err := Open(opts)
	if err != nil {
		if opts.maskWords > 0 && strings.Contains(err.Error(), "struct cpumask has") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "attrs.pftrace")
	var outBuf bytes.Buffer
	var cmd *exec.Cmd
	done := make(chan error, 1)
	st, err := r.WriteFile(ctx, path, nil, FileOptions{}, func() error {
		cmd = exec.Command(os.Args[0], "-test.run=^TestAttrsHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"="+cg)
		cmd.Stdout, cmd.Stderr = &outBuf, &outBuf
		if err := cmd.Start(); err != nil {
			return err
		}
		go func() {
			err := cmd.Wait()
			time.Sleep(50 * time.Millisecond) // the helper's last events
			cancel()
			done <- err
		}()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("helper: %v\n%s", err, outBuf.String())
	}

	// What the helper did.
	var (
		tid       timeline.TID
		cpus      topology.CPUSet
		cgStart   string
		agStart   string
		steps     []helperStep
		completed bool
	)
	for _, line := range strings.Split(outBuf.String(), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "tid":
			n, _ := strconv.Atoi(f[1])
			tid = timeline.TID(n)
		case len(f) == 2 && f[0] == "cpus":
			if cpus, err = topology.ParseCPUSet(f[1]); err != nil {
				t.Fatal(err)
			}
		case len(f) == 2 && f[0] == "cgroup":
			cgStart = f[1]
		case len(f) >= 1 && f[0] == "autogroup":
			ag := strings.TrimSpace(strings.TrimPrefix(line, "autogroup"))
			if len(steps) == 0 {
				agStart = ag
			} else {
				steps[len(steps)-1].autogroup = ag
			}
		case len(f) == 4 && f[0] == "step":
			b, _ := strconv.ParseInt(f[2], 10, 64)
			a, _ := strconv.ParseInt(f[3], 10, 64)
			steps = append(steps, helperStep{name: f[1], before: timeline.Time(b), after: timeline.Time(a)})
		case len(f) == 1 && f[0] == "done":
			completed = true
		}
	}
	if tid <= 0 || cpus.Empty() || !completed {
		t.Fatalf("helper output incomplete:\n%s", outBuf.String())
	}
	stepAt := map[string]int{}
	for i, s := range steps {
		stepAt[s.name] = i
	}
	// window returns when step name's change may be stamped: from the
	// start of its system call to the start of the next step (or the end).
	window := func(name string) (timeline.Time, timeline.Time) {
		i := stepAt[name]
		hi := timeline.Time(1<<63 - 1)
		if i+1 < len(steps) {
			hi = steps[i+1].before
		}
		return steps[i].before, hi
	}

	l, err := ingest.Load(path, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tl := l.Timeline
	for i := 1; i < len(tl.Affinity); i++ {
		if tl.Affinity[i].At < tl.Affinity[i-1].At {
			t.Fatalf("Affinity not in time order at %d", i)
		}
	}
	for i := 1; i < len(tl.Groups); i++ {
		if tl.Groups[i].At < tl.Groups[i-1].At {
			t.Fatalf("Groups not in time order at %d", i)
		}
	}

	// Affinity.
	first, last := cpus.First(), cpus.Max()
	type wantAff struct {
		step string // "" for the first sight
		cpus topology.CPUSet
	}
	wantA := []wantAff{{"", cpus}, {"pin-first", topology.NewCPUSet(first)}}
	if last != first {
		wantA = append(wantA, wantAff{"pin-last", topology.NewCPUSet(last)})
	}
	wantA = append(wantA, wantAff{"unpin", cpus})
	var gotA []timeline.AffinityChange
	for _, a := range tl.Affinity {
		if a.TID == tid {
			gotA = append(gotA, a)
		}
	}
	t.Logf("helper thread %d, CPUs %s; affinity hook %v; affinity changes %v", tid, cpus, st.AffinityHook, gotA)
	if len(gotA) != len(wantA) {
		t.Fatalf("%d affinity changes for the helper, want %d (%v)", len(gotA), len(wantA), wantA)
	}
	for i, w := range wantA {
		g := gotA[i]
		if g.CPUs.String() != w.cpus.String() {
			t.Errorf("affinity change %d: CPUs %s, want %s", i, g.CPUs, w.cpus)
		}
		if w.step == "" {
			if g.At > steps[0].before {
				t.Errorf("first sight at %d, after the first step started at %d", g.At, steps[0].before)
			}
			continue
		}
		lo, hi := window(w.step)
		if st.AffinityHook {
			// Stamped by the kernel's own change, inside the call.
			hi = steps[stepAt[w.step]].after
		}
		if g.At < lo || g.At > hi {
			t.Errorf("affinity change of step %s at %d, want within [%d, %d] (hook %v)", w.step, g.At, lo, hi, st.AffinityHook)
		}
		t.Logf("step %s: recorded %.1f us after the system call started (it took %.1f us)", w.step,
			float64(g.At-lo)/1e3, float64(steps[stepAt[w.step]].after-lo)/1e3)
	}

	// Groups.
	var gotG []timeline.GroupChange
	for _, g := range tl.Groups {
		if g.TID == tid {
			gotG = append(gotG, g)
		}
	}
	t.Logf("group changes %+v", gotG)
	type wantGroup struct {
		step      string
		path      string
		autogroup string
	}
	wantG := []wantGroup{{"", cgStart, agStart}}
	cur := wantG[0]
	for _, s := range steps {
		switch s.name {
		case "cgroup":
			cur.path = "/" + filepath.Base(cg)
		case "setsid", "nice":
			cur.autogroup = s.autogroup
		default:
			continue
		}
		cur.step = s.name
		wantG = append(wantG, cur)
	}
	if len(gotG) != len(wantG) {
		t.Fatalf("%d group changes for the helper, want %d: %+v", len(gotG), len(wantG), wantG)
	}
	for i, w := range wantG {
		g := gotG[i]
		id, nice, err := parseAutogroup(w.autogroup)
		if err != nil {
			t.Fatalf("helper's autogroup %q: %v", w.autogroup, err)
		}
		if (w.path != "" && g.Path != w.path) || g.Autogroup != id || g.AutogroupNice != nice {
			t.Errorf("group change %d (%s): path %q autogroup %d nice %d, want %q, %d, %d", i, w.step, g.Path, g.Autogroup, g.AutogroupNice, w.path, id, nice)
		}
		if g.Weight != 0 && (g.Weight < 1 || g.Weight > 10000) {
			t.Errorf("group change %d: weight %d out of range", i, g.Weight)
		}
		if w.step == "" {
			if g.At > steps[0].before {
				t.Errorf("first group at %d, after the first step started at %d", g.At, steps[0].before)
			}
			continue
		}
		lo, hi := window(w.step)
		if g.At < lo || g.At > hi {
			t.Errorf("group change of step %s at %d, want within [%d, %d]", w.step, g.At, lo, hi)
		}
	}
	if stepAt["nice"] > 0 {
		if _, nice, _ := parseAutogroup(steps[stepAt["nice"]].autogroup); nice != 5 {
			t.Errorf("helper's autogroup nice after the nice step is %d, want 5", nice)
		}
	}
}

// findCgroup2File returns the cgroup v2 mount point named in a mountinfo
// file, "" if none.
func findCgroup2File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	m, _ := findCgroup2(bufio.NewScanner(f))
	return m, nil
}
