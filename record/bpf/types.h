/* SPDX-License-Identifier: (MIT OR GPL-2.0-only) */
/*
 * types.h: the few UAPI types and constants sched.bpf.c and libbpf's
 * bpf_helpers.h need, so that building the object needs no kernel headers
 * for the host architecture. Values are from include/uapi/linux/bpf.h.
 */
#ifndef SCHEDLENS_TYPES_H
#define SCHEDLENS_TYPES_H

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;

/* enum bpf_map_type */
#define BPF_MAP_TYPE_PERF_EVENT_ARRAY 4
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_LRU_HASH 9
#define BPF_MAP_TYPE_ARRAY_OF_MAPS 12
#define BPF_MAP_TYPE_RINGBUF 27

/* bpf_map_update_elem flags */
#define BPF_ANY 0

/* bpf_perf_event_output flags */
#define BPF_F_CURRENT_CPU 0xffffffffULL

/* bpf_ringbuf_submit / bpf_ringbuf_output flags */
#define BPF_RB_NO_WAKEUP (1ULL << 0)

#endif
