package record

import (
	"errors"
	"fmt"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
)

// Transport is how records travel from the kernel to schedlens.
type Transport uint8

// Transports. TransportAuto picks the BPF ring buffer when the kernel has
// it (Linux 5.8+) and per-CPU perf buffers otherwise.
const (
	TransportAuto Transport = iota
	TransportRingBuf
	TransportPerf
)

func (t Transport) String() string {
	switch t {
	case TransportRingBuf:
		return "ringbuf"
	case TransportPerf:
		return "perf"
	}
	return "auto"
}

// ParseTransport parses "auto", "ringbuf" or "perf".
func ParseTransport(s string) (Transport, error) {
	switch s {
	case "auto", "":
		return TransportAuto, nil
	case "ringbuf":
		return TransportRingBuf, nil
	case "perf":
		return TransportPerf, nil
	}
	return TransportAuto, fmt.Errorf("transport: want auto, ringbuf or perf; got %q", s)
}

// Buffer sizes, per CPU for either transport. Ring buffers are rounded up
// to a power of two. Without a size, each CPU gets totalBufferBytes / NCPU
// within [minDefaultBytes, maxDefaultBytes].
const (
	minBufferBytes   = 1 << 16
	minDefaultBytes  = 1 << 20
	maxDefaultBytes  = 8 << 20
	totalBufferBytes = 64 << 20
)

// DefaultBufferBytes returns the per-CPU buffer size used when
// Options.BufferBytes is 0.
func DefaultBufferBytes(ncpu int) int {
	return ringSize(min(max(totalBufferBytes/max(ncpu, 1), minDefaultBytes), maxDefaultBytes))
}

// Context modes of sched.bpf.c's ctx_mode.
const (
	ctxModeNone       = 0
	ctxModePerCPU     = 1 // x86: per-CPU __preempt_count, found from this CPU's runqueue
	ctxModeThreadInfo = 2 // arm64 and others: current->thread_info.preempt_count
)

// probe is the kernel half of a recording: loaded programs, their links and
// the buffer they write to.
type probe struct {
	coll      *ebpf.Collection
	links     []link.Link
	transport Transport
	ctxMode   int
	setCPUs   bool // the affinity hook is loaded
	cpuState  *ebpf.Map
	rings     []*ebpf.Map // ring buffer per recorded CPU (nil for others)
	perf      *ebpf.Map   // perf event array
	bufBytes  int         // per-CPU buffer size
}

// loadProbe loads the scheduler programs; attach starts them. The caller
// must Close the probe.
//
//  1. Read the kernel's BTF for the facts the object needs: whether
//     sched_switch passes prev_state, where preempt_count lives.
//  2. Pick the transport and size the buffer.
//  3. Set the .rodata constants, patch the __preempt_count load, load.
func loadProbe(opts *Options, ncpu int) (*probe, error) {
	if err := rlimit.RemoveMemlock(); err != nil {
		return nil, fmt.Errorf("raising RLIMIT_MEMLOCK for BPF maps (needs CAP_SYS_RESOURCE before Linux 5.11): %w", err)
	}
	kspec, err := btf.LoadKernelSpec()
	if err != nil {
		return nil, fmt.Errorf("reading kernel BTF: %w", err)
	}
	spec, err := loadSched()
	if err != nil {
		return nil, fmt.Errorf("reading embedded BPF object: %w", err)
	}

	p := &probe{transport: opts.Transport}
	if p.transport == TransportAuto {
		p.transport = TransportRingBuf
		if features.HaveMapType(ebpf.RingBuf) != nil {
			p.transport = TransportPerf
		}
	}
	set := func(name string, v any) error {
		vs, ok := spec.Variables[name]
		if !ok {
			return fmt.Errorf("BPF object has no variable %s", name)
		}
		if err := vs.Set(v); err != nil {
			return fmt.Errorf("setting %s: %w", name, err)
		}
		return nil
	}

	p.bufBytes = opts.BufferBytes
	if p.bufBytes <= 0 {
		p.bufBytes = DefaultBufferBytes(ncpu)
	}
	p.bufBytes = max(p.bufBytes, minBufferBytes)
	rings := spec.Maps["rings"]
	if rings == nil || rings.InnerMap == nil {
		return nil, fmt.Errorf("BPF object has no rings map")
	}
	switch p.transport {
	case TransportRingBuf:
		p.bufBytes = ringSize(p.bufBytes)
		rings.MaxEntries = uint32(ncpu)
		rings.InnerMap.MaxEntries = uint32(p.bufBytes)
		if err := set("use_ringbuf", uint8(1)); err != nil {
			return nil, err
		}
	case TransportPerf:
		// The ring buffer code is dead with use_ringbuf = 0 and never
		// verified, but its map reference must still resolve: give it a
		// one-slot array, which every kernel can create.
		spec.Maps["rings"] = &ebpf.MapSpec{Name: "rings", Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1}
		if err := set("use_ringbuf", uint8(0)); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown transport %d", p.transport)
	}

	hasState, err := switchHasState(kspec)
	if err != nil {
		return nil, err
	}
	if err := set("switch_has_state", boolByte(hasState)); err != nil {
		return nil, err
	}

	p.ctxMode = ctxModeNone
	if delta, ok := preemptCountDelta(kspec); ok {
		p.ctxMode = ctxModePerCPU
		if err := set("preempt_count_delta", delta); err != nil {
			return nil, err
		}
	} else if hasMember(kspec, "thread_info", "preempt_count") {
		p.ctxMode = ctxModeThreadInfo
	}
	if err := set("ctx_mode", uint8(p.ctxMode)); err != nil {
		return nil, err
	}

	// Task attributes: a CPU mask is read up to the highest possible CPU,
	// never past the kernel's struct cpumask (NR_CPUS bits).
	words := (ncpu + 63) / 64
	if opts.maskWords > 0 {
		words = opts.maskWords
	}
	if words > maxMaskWords {
		return nil, fmt.Errorf("%d possible CPUs: affinity masks are recorded up to %d CPUs", ncpu, maxMaskWords*64)
	}
	var cm *btf.Struct
	if err := kspec.TypeByName("cpumask", &cm); err != nil {
		return nil, fmt.Errorf("kernel BTF has no struct cpumask: %w", err)
	}
	if int(cm.Size) < words*8 {
		return nil, fmt.Errorf("reading %d CPU mask words: the kernel's struct cpumask has %d bytes", words, cm.Size)
	}
	if err := set("mask_words", uint32(words)); err != nil {
		return nil, err
	}
	if err := set("record_attrs", boolByte(!opts.NoAttrs)); err != nil {
		return nil, err
	}

	if len(opts.CPUs) > 0 {
		var mask [16]uint64
		for _, c := range opts.CPUs {
			if c < 0 || c >= len(mask)*64 {
				return nil, fmt.Errorf("CPU %d: --cpus covers CPUs 0-%d", c, len(mask)*64-1)
			}
			if c >= ncpu {
				return nil, fmt.Errorf("CPU %d: this machine has CPUs 0-%d", c, ncpu-1)
			}
			mask[c/64] |= 1 << (c % 64)
		}
		if err := set("filter_cpus", uint8(1)); err != nil {
			return nil, err
		}
		if err := set("cpu_mask", mask); err != nil {
			return nil, err
		}
	}

	// The affinity hook (fexit on set_cpus_allowed_common) needs the
	// function in the kernel's BTF and BPF trampolines; without them the
	// rest loads alone.
	p.setCPUs = !opts.NoAttrs && hasFunc(kspec, setCPUsFunc)
	if !p.setCPUs {
		delete(spec.Programs, setCPUsProg)
	}
	coll, err := ebpf.NewCollectionWithOptions(spec, ebpf.CollectionOptions{})
	if err != nil && p.setCPUs {
		delete(spec.Programs, setCPUsProg)
		if c2, err2 := ebpf.NewCollectionWithOptions(spec, ebpf.CollectionOptions{}); err2 == nil {
			coll, err, p.setCPUs = c2, nil, false
		}
	}
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("kernel rejected the BPF programs: %w\n%+v", err, ve)
		}
		return nil, fmt.Errorf("loading BPF programs: %w", err)
	}
	p.coll = coll
	p.cpuState = coll.Maps["cpu_state"]
	p.perf = coll.Maps["perf_events"]
	if p.transport == TransportRingBuf {
		if err := p.makeRings(rings.InnerMap, opts.CPUs, ncpu); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

// makeRings creates a ring buffer for each recorded CPU and puts it in the
// rings array.
func (p *probe) makeRings(inner *ebpf.MapSpec, cpus []int, ncpu int) error {
	if len(cpus) == 0 {
		for c := range ncpu {
			cpus = append(cpus, c)
		}
	}
	p.rings = make([]*ebpf.Map, ncpu)
	for _, c := range cpus {
		spec := inner.Copy()
		spec.Name = fmt.Sprintf("ring%d", c)
		m, err := ebpf.NewMap(spec)
		if err != nil {
			return fmt.Errorf("creating the ring buffer of CPU %d: %w", c, err)
		}
		p.rings[c] = m
		if err := p.coll.Maps["rings"].Put(uint32(c), m); err != nil {
			return fmt.Errorf("installing the ring buffer of CPU %d: %w", c, err)
		}
	}
	return nil
}

// attach starts the programs, in a fixed order. The reader must exist by
// then: perf buffers without a reader drop every record.
func (p *probe) attach() error {
	for _, name := range programNames {
		prog := p.coll.Programs[name]
		if prog == nil {
			p.detach()
			return fmt.Errorf("BPF object has no program %s", name)
		}
		l, err := link.AttachTracing(link.TracingOptions{Program: prog})
		if err != nil {
			p.detach()
			return fmt.Errorf("attaching %s: %w", name, err)
		}
		p.links = append(p.links, l)
	}
	if p.setCPUs {
		l, err := link.AttachTracing(link.TracingOptions{Program: p.coll.Programs[setCPUsProg]})
		if err != nil {
			// The tracepoints still see every change, later.
			p.setCPUs = false
		} else {
			p.links = append(p.links, l)
		}
	}
	return nil
}

// The optional affinity hook: its program and the kernel function.
const (
	setCPUsProg = "handle_set_cpus"
	setCPUsFunc = "set_cpus_allowed_common"
)

// hasFunc reports whether the kernel's BTF has function name.
func hasFunc(kspec *btf.Spec, name string) bool {
	var fn *btf.Func
	return kspec.TypeByName(name, &fn) == nil
}

// programNames lists the programs of sched.bpf.c, wakeup side first so that
// a task's first switch-in has its waking before it more often at start.
var programNames = []string{
	"handle_fork", "handle_rename", "handle_waking", "handle_wakeup", "handle_wakeup_new",
	"handle_migrate", "handle_exit", "handle_free", "handle_signal", "handle_switch",
}

// detach stops the programs; records already in the buffer stay readable.
func (p *probe) detach() error {
	var errs []error
	for _, l := range p.links {
		errs = append(errs, l.Close())
	}
	p.links = nil
	return errors.Join(errs...)
}

// Close detaches the programs and frees the maps.
func (p *probe) Close() error {
	err := p.detach()
	for _, m := range p.rings {
		if m != nil {
			m.Close()
		}
	}
	p.rings = nil
	if p.coll != nil {
		p.coll.Close()
		p.coll = nil
	}
	return err
}

// dropped returns the per-CPU counts of records the programs could not
// queue because the buffer was full.
func (p *probe) dropped() ([]uint64, error) {
	var per []cpuState
	if err := p.cpuState.Lookup(uint32(0), &per); err != nil {
		return nil, fmt.Errorf("reading drop counters: %w", err)
	}
	out := make([]uint64, len(per))
	for i, s := range per {
		out[i] = s.Drops
	}
	return out, nil
}

// runTime returns the time spent in the programs so far, 0 unless the
// kernel keeps BPF statistics (kernel.bpf_stats_enabled).
func (p *probe) runTime() time.Duration {
	var d time.Duration
	for _, prog := range p.coll.Programs {
		if st, err := prog.Stats(); err == nil {
			d += st.Runtime
		}
	}
	return d
}

// cpuState mirrors struct cpu_state of sched.bpf.c.
type cpuState struct {
	Drops  uint64
	PCAddr uint64
	Busy   uint64
}

// ringSize rounds n up to the power of two a ring buffer map needs.
func ringSize(n int) int {
	n = max(n, minBufferBytes)
	s := minBufferBytes
	for s < n && s < 1<<30 {
		s <<= 1
	}
	return s
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// switchHasState reports whether the kernel's sched_switch tracepoint
// passes prev_state as its fourth argument (Linux 5.18+,
// btf_trace_sched_switch has 5 parameters counting the leading void *).
func switchHasState(kspec *btf.Spec) (bool, error) {
	var td *btf.Typedef
	if err := kspec.TypeByName("btf_trace_sched_switch", &td); err != nil {
		return false, fmt.Errorf("kernel BTF has no sched_switch tracepoint type: %w", err)
	}
	ptr, ok := td.Type.(*btf.Pointer)
	if !ok {
		return false, fmt.Errorf("btf_trace_sched_switch: want a function pointer, got %s", td.Type)
	}
	fp, ok := ptr.Target.(*btf.FuncProto)
	if !ok {
		return false, fmt.Errorf("btf_trace_sched_switch: want a function pointer, got %s", ptr.Target)
	}
	return len(fp.Params) >= 5, nil
}

// preemptCountDelta returns the distance from the per-CPU runqueues to the
// per-CPU __preempt_count (x86), from their offsets in the kernel BTF's
// .data..percpu section, if the kernel has both and reaches a CPU's rq
// through task->se.cfs_rq->rq (CONFIG_FAIR_GROUP_SCHED).
func preemptCountDelta(kspec *btf.Spec) (int64, bool) {
	var ds *btf.Datasec
	if err := kspec.TypeByName(".data..percpu", &ds); err != nil {
		return 0, false
	}
	pc, rq := int64(-1), int64(-1)
	for _, v := range ds.Vars {
		switch v.Type.TypeName() {
		case "__preempt_count":
			pc = int64(v.Offset)
		case "runqueues":
			rq = int64(v.Offset)
		}
	}
	if pc < 0 || rq < 0 {
		return 0, false
	}
	if !hasMember(kspec, "sched_entity", "cfs_rq") || !hasMember(kspec, "cfs_rq", "rq") || !hasMember(kspec, "rq", "cpu") {
		return 0, false
	}
	return pc - rq, true
}

// hasMember reports whether the kernel's struct name has a member field.
func hasMember(kspec *btf.Spec, name, field string) bool {
	var st *btf.Struct
	if err := kspec.TypeByName(name, &st); err != nil {
		return false
	}
	for _, m := range st.Members {
		if m.Name == field {
			return true
		}
	}
	return false
}

// ebpfNCPU returns the number of possible CPUs, the size of per-CPU maps.
func ebpfNCPU() (int, error) {
	n, err := ebpf.PossibleCPU()
	if err != nil {
		return 0, fmt.Errorf("counting possible CPUs: %w", err)
	}
	return n, nil
}
