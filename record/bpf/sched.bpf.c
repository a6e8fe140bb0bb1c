// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// sched.bpf.c: the kernel half of `schedlens record`. One BTF-enabled
// tracepoint program (tp_btf) per scheduler event copies what the ftrace
// event would carry into a struct sched_event and hands it to user space
// through BPF ring buffers, one per CPU, or through per-CPU perf buffers on
// kernels without BPF_MAP_TYPE_RINGBUF (before Linux 5.8). One ring per CPU
// rather than one shared ring: CPUs reserving in one ring contend for its
// lock and producer position, which measured 150-300 ns more per event on
// a 2-CPU VM than either per-CPU variant.
//
// Regenerate the Go bindings and the object file with `go generate ./record`
// (see docs/record.md); the generated files are committed so that building
// schedlens needs no clang.
//
// Everything user space tunes is a `const volatile` in .rodata, set before
// the programs are loaded. The verifier sees those values as constants and
// drops the branches they disable, so code for a kernel feature that is
// missing is never verified on that kernel.

#include "types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define TASK_COMM_LEN 16
#define MAX_CPU_WORDS 16 /* --cpus filter covers CPUs 0..1023 */

/* Event kinds; keep in sync with record/decode.go. */
enum {
	EV_SWITCH = 1,
	EV_WAKING = 2,
	EV_WAKEUP = 3,
	EV_WAKEUP_NEW = 4,
	EV_MIGRATE = 5,
	EV_FORK = 6,
	EV_EXIT = 7,
	EV_FREE = 8,
	EV_RENAME = 9,
	EV_ATTRS = 10, /* struct attrs_event, not struct sched_event */
	EV_SIGNAL = 11,
};

/* Execution contexts, the values of timeline.Context. */
enum {
	CTX_UNKNOWN = 0,
	CTX_TASK = 1,
	CTX_SOFTIRQ = 2,
	CTX_HARDIRQ = 3,
	CTX_NMI = 4,
};

#define FLAG_CTX_MASK 0x07
#define FLAG_PREEMPT 0x08 /* sched_switch: preempt argument was true */

/*
 * preempt_count layout, include/linux/preempt.h: PREEMPT_BITS 8,
 * SOFTIRQ_BITS 8, HARDIRQ_BITS 4, NMI_BITS 4. ftrace sets its 's' flag on
 * SOFTIRQ_OFFSET (serving a softirq), not on a mere local_bh_disable.
 */
#define SOFTIRQ_OFFSET 0x00000100
#define HARDIRQ_MASK 0x000f0000
#define NMI_MASK 0x00f00000

/* sched_event is one record in the ring. Layout is read by record/decode.go. */
struct sched_event {
	__u64 ts;      /* bpf_ktime_get_ns: CLOCK_MONOTONIC */
	__u32 lost;    /* events dropped on this CPU before this one (cumulative) */
	__u16 cpu;     /* CPU that ran the tracepoint */
	__u8 kind;     /* EV_* */
	__u8 flags;    /* FLAG_* and the CTX_* in the low bits */
	__s32 pid;     /* subject: next, woken, child, renamed, exiting task */
	__s32 tgid;    /* its thread group */
	__s32 opid;    /* other: prev, waker (current), parent */
	__s32 otgid;
	__s32 ctgid;   /* thread group of the task running on the CPU */
	__s32 arg;     /* target_cpu, dest_cpu, signal */
	__s32 arg2;    /* orig_cpu; signal: result | group << 8 */
	__u32 state;   /* sched_switch: prev_state as passed to the tracepoint */
	__u32 xstate;  /* sched_switch: prev->exit_state */
	__s16 prio;
	__s16 oprio;
	char comm[TASK_COMM_LEN];
	char ocomm[TASK_COMM_LEN];
};

/* record/decode.go reads these offsets. */
_Static_assert(sizeof(struct sched_event) == 88, "sched_event size");
_Static_assert(__builtin_offsetof(struct sched_event, pid) == 16, "pid offset");
_Static_assert(__builtin_offsetof(struct sched_event, state) == 44, "state offset");
_Static_assert(__builtin_offsetof(struct sched_event, prio) == 52, "prio offset");
_Static_assert(__builtin_offsetof(struct sched_event, comm) == 56, "comm offset");

/*
 * attrs_event is a task's allowed CPUs and task group, queued when they
 * differ from what was last queued for that pid (see check_attrs). It is
 * variable-sized: ATTRS_HDR bytes, then mask_words words of the CPU mask.
 * Layout read by record/decode.go.
 */
#define MAX_MASK_WORDS 128 /* 8192 CPUs, the largest NR_CPUS of any architecture */
#define ATTRS_HDR 48

struct attrs_event {
	__u64 ts;
	__u32 lost;
	__u16 cpu;
	__u8 kind;     /* EV_ATTRS */
	__u8 flags;    /* CTX_* */
	__s32 pid;
	__s32 tgid;
	__u64 cgroup;  /* cgroup v2 id (kernfs node id), 0 if unknown */
	__s64 ag_id;   /* autogroup id, 0 none, -1 unknown (no CONFIG_SCHED_AUTOGROUP) */
	__s32 ag_nice;
	__u16 nr_cpus; /* nr_cpus_allowed */
	__u16 words;   /* mask words that follow */
	__u64 mask[MAX_MASK_WORDS];
};

_Static_assert(__builtin_offsetof(struct attrs_event, mask) == ATTRS_HDR, "attrs_event header");
_Static_assert(__builtin_offsetof(struct attrs_event, cgroup) == 24, "cgroup offset");

/* Only the task_struct fields used here; CO-RE finds their real offsets. */
struct kernfs_node {
	__u64 id; /* Linux 5.5+: the cgroup's id, its inode number in cgroupfs */
} __attribute__((preserve_access_index));

struct cgroup {
	struct kernfs_node *kn;
} __attribute__((preserve_access_index));

struct css_set {
	struct cgroup *dfl_cgrp; /* the task's cgroup on the v2 hierarchy */
} __attribute__((preserve_access_index));

struct autogroup {
	unsigned long id;
	int nice;
} __attribute__((preserve_access_index));

struct signal_struct {
	struct autogroup *autogroup; /* CONFIG_SCHED_AUTOGROUP */
} __attribute__((preserve_access_index));

struct cpumask {
	unsigned long bits[1]; /* really NR_CPUS bits; mask_words are read */
} __attribute__((preserve_access_index));

struct rq {
	int cpu;
} __attribute__((preserve_access_index));

struct cfs_rq {
	struct rq *rq; /* CONFIG_FAIR_GROUP_SCHED */
} __attribute__((preserve_access_index));

struct sched_entity {
	struct cfs_rq *cfs_rq; /* CONFIG_FAIR_GROUP_SCHED */
} __attribute__((preserve_access_index));

struct thread_info {
	__u32 cpu;
	__u64 preempt_count; /* arm64 and others: preempt count lives here */
} __attribute__((preserve_access_index));

struct task_struct {
	struct thread_info thread_info;
	struct sched_entity se;
	unsigned int __state;
	int prio;
	int exit_state;
	int pid;
	int tgid;
	char comm[TASK_COMM_LEN];
	unsigned int cpu; /* 5.16 and a few releases before: task_cpu() read this */
	int nr_cpus_allowed;
	struct cpumask cpus_mask; /* the allowed CPUs; cpus_ptr may point at a
				     temporary one-CPU mask while migration
				     is disabled */
	struct css_set *cgroups;  /* CONFIG_CGROUPS */
	struct signal_struct *signal;
} __attribute__((preserve_access_index));

/* Before Linux 5.14 the state field was a long called state. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

/* Settings written by user space before loading. */
const volatile __u8 use_ringbuf = 1;      /* 0: per-CPU perf buffers */
const volatile __u8 switch_has_state = 1; /* sched_switch passes prev_state (Linux 5.18+) */
const volatile __u8 ctx_mode = 0;         /* 0 none, 1 per-CPU __preempt_count, 2 thread_info.preempt_count */
const volatile __u8 filter_cpus = 0;
const volatile __u64 cpu_mask[MAX_CPU_WORDS] = {};
const volatile __u8 record_attrs = 1;     /* queue attrs_event records */
const volatile __u32 mask_words = 1;      /* words of a CPU mask: nr_cpu_ids / 64 rounded up */

/* The rings: user space sizes the array to the CPUs and puts one
 * BPF_MAP_TYPE_RINGBUF per recorded CPU in it. It reads them by polling, so
 * records are submitted without waking it. */
struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} perf_events SEC(".maps");

/* Per-CPU bookkeeping; record/load.go reads drops. */
struct cpu_state {
	__u64 drops;   /* records this CPU could not queue */
	__u64 pc_addr; /* address of this CPU's preempt count, 0 until known */
	__u64 busy;    /* check_attrs is using this CPU's scratch record */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_state);
} cpu_state SEC(".maps");

/*
 * x86 keeps preempt_count in the per-CPU variable __preempt_count, which a
 * BPF program cannot name unless the kernel has CONFIG_KALLSYMS_ALL. Every
 * per-CPU variable of a CPU sits at the same distance from every other, so
 * user space passes the distance from runqueues to __preempt_count (both
 * offsets are in the .data..percpu section of the kernel's BTF), and the
 * program adds it to this CPU's struct rq, found through the current
 * task's CFS runqueue. The address is computed once per CPU, after
 * checking that the rq is this CPU's.
 */
const volatile __s64 preempt_count_delta = 0;

#define PC_UNKNOWN 0xffffffffu

static __always_inline __u32 percpu_preempt_count(struct cpu_state *cs, __u32 cpu)
{
	__u32 pc = 0;

	if (!cs->pc_addr) {
		struct task_struct *cur = (void *)bpf_get_current_task();
		struct rq *rq = BPF_CORE_READ(cur, se.cfs_rq, rq);

		if (!rq || BPF_CORE_READ(rq, cpu) != (int)cpu)
			return PC_UNKNOWN;
		cs->pc_addr = (__u64)rq + preempt_count_delta;
	}
	if (bpf_probe_read_kernel(&pc, sizeof(pc), (const void *)cs->pc_addr))
		return PC_UNKNOWN;
	return pc;
}

static __always_inline __u8 exec_ctx(struct cpu_state *cs, __u32 cpu)
{
	__u32 pc;

	if (ctx_mode == 1) {
		pc = percpu_preempt_count(cs, cpu);
		if (pc == PC_UNKNOWN)
			return CTX_UNKNOWN;
	} else if (ctx_mode == 2) {
		struct task_struct *cur = (void *)bpf_get_current_task();
		pc = (__u32)BPF_CORE_READ(cur, thread_info.preempt_count);
	} else {
		return CTX_UNKNOWN;
	}
	if (pc & NMI_MASK)
		return CTX_NMI;
	if (pc & HARDIRQ_MASK)
		return CTX_HARDIRQ;
	if (pc & SOFTIRQ_OFFSET)
		return CTX_SOFTIRQ;
	return CTX_TASK;
}

static __always_inline int cpu_skipped(__u32 cpu)
{
	if (!filter_cpus)
		return 0;
	if (cpu >= MAX_CPU_WORDS * 64)
		return 1;
	return !((cpu_mask[cpu >> 6] >> (cpu & 63)) & 1);
}

static __always_inline __s32 task_cpu(struct task_struct *t)
{
	if (bpf_core_field_exists(t->thread_info.cpu))
		return t->thread_info.cpu;
	return t->cpu;
}

static __always_inline __u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return (__u32)((struct task_struct___pre514 *)t)->state;
}

/*
 * begin returns the record to fill: ring buffer memory, or the caller's
 * stack copy for perf buffers. NULL means the ring is full; the drop is
 * counted and the next record of this CPU carries the new total.
 */
static __always_inline struct sched_event *begin(struct sched_event *stack, __u8 kind)
{
	__u32 zero = 0;
	struct cpu_state *cs = bpf_map_lookup_elem(&cpu_state, &zero);
	struct sched_event *e;
	__u32 cpu = bpf_get_smp_processor_id();

	if (!cs)
		return NULL;
	if (cpu_skipped(cpu))
		return NULL;
	if (use_ringbuf) {
		void *ring = bpf_map_lookup_elem(&rings, &cpu);

		e = ring ? bpf_ringbuf_reserve(ring, sizeof(*e), 0) : NULL;
		if (!e) {
			__sync_fetch_and_add(&cs->drops, 1);
			return NULL;
		}
	} else {
		e = stack;
	}
	/* Keep clang from computing field addresses before the NULL check. */
	asm volatile("" : "+r"(e));
	e->ts = bpf_ktime_get_ns();
	e->lost = (__u32)cs->drops;
	e->cpu = (__u16)cpu;
	e->kind = kind;
	e->flags = exec_ctx(cs, cpu);
	e->ctgid = (__s32)(bpf_get_current_pid_tgid() >> 32);
	e->pid = -1;
	e->tgid = -1;
	e->opid = -1;
	e->otgid = -1;
	e->arg = -1;
	e->arg2 = -1;
	e->state = 0;
	e->xstate = 0;
	e->prio = -1;
	e->oprio = -1;
	__builtin_memset(e->comm, 0, TASK_COMM_LEN);
	__builtin_memset(e->ocomm, 0, TASK_COMM_LEN);
	return e;
}

static __always_inline void commit(void *ctx, struct sched_event *e)
{
	if (use_ringbuf) {
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
		return;
	}
	if (bpf_perf_event_output(ctx, &perf_events, BPF_F_CURRENT_CPU, e, sizeof(*e)) < 0) {
		__u32 zero = 0;
		struct cpu_state *cs = bpf_map_lookup_elem(&cpu_state, &zero);

		if (cs)
			__sync_fetch_and_add(&cs->drops, 1);
	}
}

static __always_inline void subject(struct sched_event *e, struct task_struct *t)
{
	e->pid = t->pid;
	e->tgid = t->tgid;
	e->prio = (__s16)t->prio;
	bpf_probe_read_kernel(e->comm, TASK_COMM_LEN, t->comm);
}

static __always_inline void other(struct sched_event *e, struct task_struct *t)
{
	e->opid = t->pid;
	e->otgid = t->tgid;
	e->oprio = (__s16)t->prio;
	bpf_probe_read_kernel(e->ocomm, TASK_COMM_LEN, t->comm);
}

/* other_current fills the other-task fields with the task running now. */
static __always_inline void other_current(struct sched_event *e)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *cur = (void *)bpf_get_current_task();

	e->opid = (__s32)id;
	e->otgid = (__s32)(id >> 32);
	e->oprio = (__s16)BPF_CORE_READ(cur, prio);
	bpf_get_current_comm(e->ocomm, TASK_COMM_LEN);
}

/*
 * What check_attrs last queued for each pid: the first mask word exactly,
 * a hash of all words, the count, the cgroup and the autogroup. A
 * preallocated LRU hash: a lookup takes no allocation under the runqueue
 * lock, and an evicted pid only costs a repeated record, which user space
 * drops. sched_process_free deletes the pid's entry.
 */
struct task_attrs {
	__u64 w0;
	__u64 hash;
	__u64 cgroup;
	__s64 ag_id;
	__s32 ag_nice;
	__u32 nr;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct task_attrs);
} task_attrs SEC(".maps");

/* One scratch record per CPU: too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct attrs_event);
} attrs_scratch SEC(".maps");

static __always_inline __u64 mix(__u64 h, __u64 w)
{
	h ^= w;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 31);
}

/*
 * check_attrs queues an attrs_event for task p, stamped ts, if its allowed
 * CPUs (p->cpus_mask, which migrate_disable leaves alone), cgroup or
 * autogroup differ from what was last queued for its pid. If the record
 * cannot be queued the pid's entry is left as it was, so the next event of
 * the task tries again. It runs where the scheduler is about to act on a
 * task's mask: switch in, waking (before the wakeup picks a CPU), new-task
 * wakeup and migration.
 *
 * The task's fields are read with plain loads (p is a BTF pointer the
 * tracepoint passed); only a mask of more than one word is copied with
 * bpf_probe_read_kernel, into this CPU's scratch record, which a nested
 * call (a tracepoint in an interrupt) then leaves alone.
 */
static __noinline void check_attrs(void *ctx, struct task_struct *p, __u64 ts)
{
	__u32 zero = 0, cpu, pid, i;
	struct cpu_state *cs;
	struct attrs_event *a;
	struct task_attrs cur = {}, *old;
	int scratch = 0;

	if (!record_attrs)
		return;
	pid = (__u32)p->pid;
	if (pid == 0) /* the idle tasks, one per CPU, pinned */
		return;
	cs = bpf_map_lookup_elem(&cpu_state, &zero);
	a = bpf_map_lookup_elem(&attrs_scratch, &zero);
	if (!cs || !a)
		return;

	cur.nr = (__u32)p->nr_cpus_allowed;
	if (mask_words == 1) {
		cur.w0 = p->cpus_mask.bits[0];
	} else {
		if (cs->busy)
			return;
		cs->busy = 1;
		scratch = 1;
		if (bpf_probe_read_kernel(a->mask, mask_words * 8, __builtin_preserve_access_index(&p->cpus_mask)))
			goto out;
		cur.w0 = a->mask[0];
		for (i = 1; i < MAX_MASK_WORDS && i < mask_words; i++)
			cur.hash = mix(cur.hash, a->mask[i]);
	}
	if (bpf_core_field_exists(struct task_struct, cgroups))
		cur.cgroup = p->cgroups->dfl_cgrp->kn->id;
	cur.ag_id = -1;
	if (bpf_core_field_exists(struct signal_struct, autogroup)) {
		struct autogroup *ag = p->signal->autogroup;

		if (ag) {
			cur.ag_id = (__s64)ag->id;
			cur.ag_nice = ag->nice;
		}
	}

	old = bpf_map_lookup_elem(&task_attrs, &pid);
	if (old && old->w0 == cur.w0 && old->hash == cur.hash && old->nr == cur.nr &&
	    old->cgroup == cur.cgroup && old->ag_id == cur.ag_id && old->ag_nice == cur.ag_nice)
		goto out;

	if (!scratch) {
		if (cs->busy)
			return;
		cs->busy = 1;
		scratch = 1;
		a->mask[0] = cur.w0;
	}
	cpu = bpf_get_smp_processor_id();
	a->ts = ts;
	a->lost = (__u32)cs->drops;
	a->cpu = (__u16)cpu;
	a->kind = EV_ATTRS;
	a->flags = 0;
	a->pid = (__s32)pid;
	a->tgid = p->tgid;
	a->cgroup = cur.cgroup;
	a->ag_id = cur.ag_id;
	a->ag_nice = cur.ag_nice;
	a->nr_cpus = (__u16)cur.nr;
	a->words = (__u16)mask_words;
	if (use_ringbuf) {
		void *ring = bpf_map_lookup_elem(&rings, &cpu);

		if (!ring || bpf_ringbuf_output(ring, a, ATTRS_HDR + mask_words * 8, BPF_RB_NO_WAKEUP)) {
			__sync_fetch_and_add(&cs->drops, 1);
			goto out;
		}
	} else if (bpf_perf_event_output(ctx, &perf_events, BPF_F_CURRENT_CPU, a, ATTRS_HDR + mask_words * 8) < 0) {
		__sync_fetch_and_add(&cs->drops, 1);
		goto out;
	}
	bpf_map_update_elem(&task_attrs, &pid, &cur, BPF_ANY);
out:
	if (scratch)
		cs->busy = 0;
}

/*
 * set_cpus_allowed_common(p, ...) is where every class's set_cpus_allowed
 * hook writes p->cpus_mask (sched_setaffinity, cpusets, hotplug,
 * kthread_bind; also migrate_disable/enable, which change only cpus_ptr and
 * so queue nothing here). Watching its exit stamps an affinity change when
 * it happens, even for a task that then has no scheduler event for a long
 * time (a CPU hog alone on its CPU). Optional: user space leaves it out
 * where the kernel cannot attach it (no BTF for the function, no BPF
 * trampolines), and the tracepoints above still see the change later.
 */
SEC("fexit/set_cpus_allowed_common")
int handle_set_cpus(__u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];

	if (cpu_skipped(bpf_get_smp_processor_id()))
		return 0;
	check_attrs(ctx, p, bpf_ktime_get_ns());
	return 0;
}

/* sched_switch(bool preempt, prev, next[, unsigned int prev_state]) */
SEC("tp_btf/sched_switch")
int handle_switch(__u64 *ctx)
{
	struct sched_event stack, *e = begin(&stack, EV_SWITCH);
	struct task_struct *prev = (void *)ctx[1];
	struct task_struct *next = (void *)ctx[2];

	if (!e)
		return 0;
	if (ctx[0] & 1)
		e->flags |= FLAG_PREEMPT;
	if (switch_has_state)
		e->state = (__u32)ctx[3];
	else
		e->state = task_state(prev);
	e->xstate = (__u32)prev->exit_state;
	other(e, prev);
	subject(e, next);
	check_attrs(ctx, next, e->ts);
	commit(ctx, e);
	return 0;
}

static __always_inline int wake(__u64 *ctx, __u8 kind)
{
	struct sched_event stack, *e = begin(&stack, kind);
	struct task_struct *p = (void *)ctx[0];

	if (!e)
		return 0;
	subject(e, p);
	e->arg = task_cpu(p);
	other_current(e);
	if (kind != EV_WAKEUP) /* sched_waking saw it just before */
		check_attrs(ctx, p, e->ts);
	commit(ctx, e);
	return 0;
}

SEC("tp_btf/sched_waking")
int handle_waking(__u64 *ctx) { return wake(ctx, EV_WAKING); }

SEC("tp_btf/sched_wakeup")
int handle_wakeup(__u64 *ctx) { return wake(ctx, EV_WAKEUP); }

SEC("tp_btf/sched_wakeup_new")
int handle_wakeup_new(__u64 *ctx) { return wake(ctx, EV_WAKEUP_NEW); }

/* sched_migrate_task(p, int dest_cpu) */
SEC("tp_btf/sched_migrate_task")
int handle_migrate(__u64 *ctx)
{
	struct sched_event stack, *e = begin(&stack, EV_MIGRATE);
	struct task_struct *p = (void *)ctx[0];

	if (!e)
		return 0;
	subject(e, p);
	e->arg = (__s32)ctx[1];
	e->arg2 = task_cpu(p);
	check_attrs(ctx, p, e->ts);
	commit(ctx, e);
	return 0;
}

/* sched_process_fork(parent, child) */
SEC("tp_btf/sched_process_fork")
int handle_fork(__u64 *ctx)
{
	struct sched_event stack, *e = begin(&stack, EV_FORK);
	struct task_struct *parent = (void *)ctx[0];
	struct task_struct *child = (void *)ctx[1];

	if (!e)
		return 0;
	other(e, parent);
	subject(e, child);
	commit(ctx, e);
	return 0;
}

static __always_inline int task_only(__u64 *ctx, __u8 kind)
{
	struct sched_event stack, *e = begin(&stack, kind);
	struct task_struct *p = (void *)ctx[0];

	if (!e)
		return 0;
	subject(e, p);
	commit(ctx, e);
	return 0;
}

/* sched_process_exit(p[, bool group_dead]) */
SEC("tp_btf/sched_process_exit")
int handle_exit(__u64 *ctx) { return task_only(ctx, EV_EXIT); }

SEC("tp_btf/sched_process_free")
int handle_free(__u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];
	__u32 pid = (__u32)p->pid;

	if (record_attrs)
		bpf_map_delete_elem(&task_attrs, &pid);
	return task_only(ctx, EV_FREE);
}

/* task_rename(task, const char *comm): comm is the new name. */
SEC("tp_btf/task_rename")
int handle_rename(__u64 *ctx)
{
	struct sched_event stack, *e = begin(&stack, EV_RENAME);
	struct task_struct *t = (void *)ctx[0];

	if (!e)
		return 0;
	e->pid = t->pid;
	e->tgid = t->tgid;
	e->prio = (__s16)t->prio;
	bpf_probe_read_kernel(e->ocomm, TASK_COMM_LEN, t->comm);
	bpf_probe_read_kernel_str(e->comm, TASK_COMM_LEN, (const void *)ctx[1]);
	commit(ctx, e);
	return 0;
}

/*
 * signal_generate(int sig, struct kernel_siginfo *info, struct task_struct
 * *task, int group, int result): the target is the subject, the sender
 * the task running on the CPU. A replay ends a task that a delivered
 * signal reached while it ran or waited, and that then exited (timeout's
 * kill).
 */
SEC("tp_btf/signal_generate")
int handle_signal(__u64 *ctx)
{
	struct sched_event stack, *e = begin(&stack, EV_SIGNAL);
	struct task_struct *t = (void *)ctx[2];

	if (!e)
		return 0;
	subject(e, t);
	e->arg = (__s32)ctx[0];
	e->arg2 = ((__s32)ctx[4] & 0xff) | (((__s32)ctx[3] & 1) << 8);
	other_current(e);
	commit(ctx, e);
	return 0;
}
