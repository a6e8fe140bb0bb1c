package replay

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/schedlens/schedlens/topology"
)

// SpeedMode says where Extract takes each CPU's speed from: the rate at
// which the recording machine's CPU did work, 1024 = the fastest.
//
// Speed is kept apart from capacity. Capacity is what the scheduler sees
// (cpu_capacity, from capacity-dmips-mhz or the firmware), and the model's
// policy decisions read it; speed is how fast the CPU actually ran the
// recorded work. They are the same on a real big.LITTLE machine at full
// frequency, but not in an emulated guest, where every vCPU runs at the
// host's speed whatever its capacity label says.
type SpeedMode uint8

// Speed modes.
const (
	// SpeedAuto calibrates the speed of each capacity class from the
	// trace where it holds evidence (see calibrateSpeed), and takes the
	// topology's speed (topology.Perf: Perf when set, else capacity) for
	// every class without evidence.
	SpeedAuto SpeedMode = iota
	// SpeedCapacity takes topology.Perf: a CPU runs at its capacity
	// unless the topology gives a separate Perf.
	SpeedCapacity
	// SpeedEqual runs every CPU at 1024.
	SpeedEqual
	// SpeedTable takes SpeedSpec.Table.
	SpeedTable
)

// SpeedSpec is how Extract takes CPU speeds (ExtractOptions.Speed). The zero
// value is SpeedAuto.
type SpeedSpec struct {
	Mode SpeedMode
	// Table is the speed of CPU i (1..1024) for SpeedTable; -1 marks a
	// CPU the source did not list.
	Table []int
	// Source names where Table came from (a file), for notes and errors.
	Source string
}

// ParseSpeed reads a --cpu-speed argument: "auto" (or empty), "equal",
// "capacity", or the name of a speed file (ReadSpeedFile).
func ParseSpeed(arg string) (SpeedSpec, error) {
	switch arg {
	case "", "auto":
		return SpeedSpec{Mode: SpeedAuto}, nil
	case "equal":
		return SpeedSpec{Mode: SpeedEqual}, nil
	case "capacity":
		return SpeedSpec{Mode: SpeedCapacity}, nil
	}
	return ReadSpeedFile(arg)
}

// ReadSpeedFile reads a speed file (ParseSpeedFile) from path.
func ReadSpeedFile(path string) (SpeedSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return SpeedSpec{}, fmt.Errorf("cpu speed: %w (want auto, equal, capacity or a file)", err)
	}
	defer f.Close()
	table, err := ParseSpeedFile(f, path)
	if err != nil {
		return SpeedSpec{}, err
	}
	return SpeedSpec{Mode: SpeedTable, Table: table, Source: path}, nil
}

// ParseSpeedFile reads per-CPU speeds. Each line is
//
//	CPULIST SPEED
//
// with CPULIST a kernel CPU list ("0,3-5") and SPEED an integer from 1 to
// 1024 (the fastest CPU is 1024) or a ratio of the fastest written with a
// decimal point ("0.37"). '#' starts a comment. A CPU listed twice is an
// error. The result is indexed by CPU; CPUs not listed are -1. name is used
// in errors, which give the line.
func ParseSpeedFile(r io.Reader, name string) ([]int, error) {
	var table []int
	lineOf := map[int]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		s := sc.Text()
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		f := strings.Fields(s)
		if len(f) == 0 {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
		}
		if len(f) != 2 {
			return nil, bad("want \"CPULIST SPEED\" (e.g. \"0,3-5 383\"), got %q", strings.TrimSpace(s))
		}
		cpus, err := topology.ParseCPUList(f[0])
		if err != nil {
			return nil, bad("%v", err)
		}
		speed, err := parseSpeedValue(f[1])
		if err != nil {
			return nil, bad("%v", err)
		}
		for _, c := range cpus {
			if prev, ok := lineOf[c]; ok {
				return nil, bad("CPU %d already has a speed (line %d)", c, prev)
			}
			lineOf[c] = line
			for len(table) <= c {
				table = append(table, -1)
			}
			table[c] = speed
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s: a line longer than 1 MiB: not a speed file", name)
		}
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(table) == 0 {
		return nil, fmt.Errorf("%s: no \"CPULIST SPEED\" line", name)
	}
	return table, nil
}

func parseSpeedValue(s string) (int, error) {
	if strings.ContainsAny(s, ".eE") {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || v <= 0 || v > 1 {
			return 0, fmt.Errorf("speed %q: want a ratio in (0, 1] or an integer 1..1024", s)
		}
		return max(int(math.Round(v*topology.CapacityScale)), 1), nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > topology.CapacityScale {
		return 0, fmt.Errorf("speed %q: want an integer 1..1024 or a ratio in (0, 1]", s)
	}
	return v, nil
}

// speedClasses groups the CPUs of a machine of ncpu CPUs by their
// topology speed (topology.Perf; 1024 without a topology): class[i] is
// CPU i's class, perf[k] class k's speed, with class 0 the fastest.
func speedClasses(topo *topology.Topology, ncpu int) (class []int, perf []int) {
	base := make([]int, ncpu)
	for i := range base {
		base[i] = topology.CapacityScale
		if topo != nil && i < topo.NCPU() && topo.Perf(i) > 0 {
			base[i] = topo.Perf(i)
		}
	}
	perf = slices.Clone(base)
	slices.Sort(perf)
	perf = slices.Compact(perf)
	slices.Reverse(perf)
	class = make([]int, ncpu)
	for i, p := range base {
		class[i] = slices.Index(perf, p)
	}
	return class, perf
}

// cpusOfClass returns the CPU list of class k, e.g. "0,3-5".
func cpusOfClass(class []int, k int) string {
	var cpus []int
	for i, c := range class {
		if c == k {
			cpus = append(cpus, i)
		}
	}
	return topology.FormatCPUList(cpus)
}

// Evidence thresholds of calibrateSpeed.
const (
	// minSpeedBursts is how many bursts a task needs on each of two
	// classes before its median burst lengths are compared.
	minSpeedBursts = 10
	// minSpeedSiblings is how many sibling tasks a whole-life fit needs.
	minSpeedSiblings = 3
	// pureShare is the share of a burst's (or a life's) run time that
	// must be on the classes compared.
	pureShare = 0.99
	// minSpread is how far the siblings' time on the slower class must
	// spread (standard deviation over mean total) for a fit to say
	// anything.
	minSpread = 0.10
	// maxResidual is the largest rms residual of a sibling fit, as a
	// share of the fitted work, that is believed.
	maxResidual = 0.05
)

// speedBurst is the run time (ns) per speed class of one burst of one task
// (a wakeup to the next block), or of one task's whole life.
type speedBurst struct {
	task int     // timeline task id
	run  []int64 // per class
}

// speedLife is the run time per class of a task that was forked and exited
// inside the recording: siblings (same parent, same comm stem) are taken
// to have done the same work.
type speedLife struct {
	key string // parent and comm stem
	run []int64
}

// speedFit is the calibrated speed of one class, with its evidence.
type speedFit struct {
	speed    int // 1..1024
	evidence string
}

// calibrateSpeed estimates, for every class k > 0, its speed relative to
// class 0 (the fastest by topology) from bursts and lives. It returns the
// fits by class (nil where there is no evidence) and, per class without
// evidence, why.
//
//  1. Bursts: a task whose bursts (wakeup to block, run time only) ran
//     wholly on class 0 at least minSpeedBursts times and wholly on class
//     k as often is taken to do the same work per burst in both (a
//     periodic task); its ratio is median(class 0) / median(class k). The
//     ratios of all such tasks are combined by their median, each weighted
//     by its smaller sample count.
//  2. Siblings, when no task has enough bursts: tasks with one parent and
//     one comm stem ("asym-0".."asym-5" give "asym-") that were forked and
//     exited in the recording are taken to have done equal work W. With
//     t0, tk their run times on class 0 and k, W/1024 = t0 + r·tk, so a
//     least-squares line t0 = c - r·tk over the siblings gives r. At least
//     minSpeedSiblings siblings, their tk spread by minSpread of their
//     mean total, and an rms residual within maxResidual of c.
//
// A ratio above 1 (the slower-labelled class is faster) is capped at 1024.
func calibrateSpeed(perf []int, bursts []speedBurst, lives []speedLife) (fits []*speedFit, why []string) {
	fits = make([]*speedFit, len(perf))
	why = make([]string, len(perf))
	for k := 1; k < len(perf); k++ {
		if f := burstFit(perf, k, bursts); f != nil {
			fits[k] = f
			continue
		}
		f, reason := siblingFit(perf, k, lives)
		fits[k], why[k] = f, reason
	}
	return fits, why
}

func pure(run []int64, k int) (int64, bool) {
	var tot int64
	for _, v := range run {
		tot += v
	}
	if tot <= 0 {
		return 0, false
	}
	return run[k], float64(run[k]) >= pureShare*float64(tot)
}

func burstFit(perf []int, k int, bursts []speedBurst) *speedFit {
	byTask := map[int][2][]int64{}
	var order []int
	for _, b := range bursts {
		for side, cls := range [2]int{0, k} {
			if v, ok := pure(b.run, cls); ok {
				e, seen := byTask[b.task]
				if !seen {
					order = append(order, b.task)
				}
				e[side] = append(e[side], v)
				byTask[b.task] = e
			}
		}
	}
	type wr struct {
		ratio float64
		w     int
	}
	var rs []wr
	n0, nk := 0, 0
	for _, id := range order {
		e := byTask[id]
		if len(e[0]) < minSpeedBursts || len(e[1]) < minSpeedBursts {
			continue
		}
		m0, mk := median(e[0]), median(e[1])
		if m0 <= 0 || mk <= 0 {
			continue
		}
		rs = append(rs, wr{float64(m0) / float64(mk), min(len(e[0]), len(e[1]))})
		n0 += len(e[0])
		nk += len(e[1])
	}
	if len(rs) == 0 {
		return nil
	}
	slices.SortFunc(rs, func(a, b wr) int { return cmp.Compare(a.ratio, b.ratio) })
	total := 0
	for _, r := range rs {
		total += r.w
	}
	ratio, acc := rs[len(rs)-1].ratio, 0
	for _, r := range rs {
		acc += r.w
		if 2*acc >= total {
			ratio = r.ratio
			break
		}
	}
	return &speedFit{speed: ratioSpeed(ratio), evidence: fmt.Sprintf(
		"burst lengths of %d tasks that ran whole bursts on both: %d bursts on capacity %d, %d on capacity %d; median ratio %.3f",
		len(rs), n0, perf[0], nk, perf[k], ratio)}
}

func siblingFit(perf []int, k int, lives []speedLife) (*speedFit, string) {
	groups := map[string][][2]float64{}
	var keys []string
	for _, l := range lives {
		var tot int64
		for _, v := range l.run {
			tot += v
		}
		if tot <= 0 || float64(l.run[0]+l.run[k]) < pureShare*float64(tot) {
			continue
		}
		if _, ok := groups[l.key]; !ok {
			keys = append(keys, l.key)
		}
		groups[l.key] = append(groups[l.key], [2]float64{float64(l.run[k]), float64(l.run[0])})
	}
	slices.Sort(keys)
	why := fmt.Sprintf("no task ran %d whole bursts on both capacity %d and %d, and no %d sibling tasks (one parent, one comm stem, forked and exited in the recording) ran on both", minSpeedBursts, perf[0], perf[k], minSpeedSiblings)
	var best *speedFit
	bestN := 0
	for _, key := range keys {
		pts := groups[key]
		if len(pts) < minSpeedSiblings {
			continue
		}
		n := float64(len(pts))
		var mx, my, mt float64
		for _, p := range pts {
			mx += p[0] / n
			my += p[1] / n
			mt += (p[0] + p[1]) / n
		}
		var sxx, sxy float64
		for _, p := range pts {
			sxx += (p[0] - mx) * (p[0] - mx)
			sxy += (p[0] - mx) * (p[1] - my)
		}
		if mt <= 0 || math.Sqrt(sxx/n) < minSpread*mt {
			why = fmt.Sprintf("the %d sibling tasks %s* spent too similar times on capacity %d (spread %.1f%% of their run time, want %.0f%%)",
				len(pts), stem(key), perf[k], 100*math.Sqrt(sxx/n)/max(mt, 1), 100*minSpread)
			continue
		}
		r := -sxy / sxx
		c := my + r*mx
		var ss float64
		for _, p := range pts {
			d := p[1] + r*p[0] - c
			ss += d * d
		}
		res := math.Sqrt(ss/n) / max(c, 1)
		if r <= 0 || res > maxResidual {
			why = fmt.Sprintf("the %d sibling tasks %s* do not fit equal work (ratio %.3f, rms residual %.1f%%, want within %.0f%%)", len(pts), stem(key), r, 100*res, 100*maxResidual)
			continue
		}
		if len(pts) > bestN {
			bestN = len(pts)
			best = &speedFit{speed: ratioSpeed(r), evidence: fmt.Sprintf(
				"%d sibling tasks %s* (one parent, forked and exited in the recording) taken to do equal work: least-squares fit of their run time on capacity %d against capacity %d (%.1f..%.1f ms there), ratio %.3f, rms residual %.1f%%",
				len(pts), stem(key), perf[0], perf[k], minX(pts)/1e6, maxX(pts)/1e6, r, 100*res)}
		}
	}
	if best != nil {
		return best, ""
	}
	return nil, why
}

func stem(key string) string {
	if _, s, ok := strings.Cut(key, "/"); ok {
		return s
	}
	return key
}

func minX(p [][2]float64) float64 {
	m := math.Inf(1)
	for _, v := range p {
		m = min(m, v[0])
	}
	return m
}

func maxX(p [][2]float64) float64 {
	m := math.Inf(-1)
	for _, v := range p {
		m = max(m, v[0])
	}
	return m
}

// ratioSpeed turns a speed ratio to the fastest class into a speed,
// 1..1024.
func ratioSpeed(r float64) int {
	return min(max(int(math.Round(r*topology.CapacityScale)), 1), topology.CapacityScale)
}

// commStem is a comm without its trailing digits: the name sibling
// workers share ("worker-3" gives "worker-").
func commStem(comm string) string {
	return strings.TrimRight(comm, "0123456789")
}
