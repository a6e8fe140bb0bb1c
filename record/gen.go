package record

// The BPF object and its Go bindings (sched_bpfel.go, sched_bpfel.o) are
// generated from bpf/sched.bpf.c and committed, so that building schedlens
// needs no clang. To regenerate them (Debian: apt-get install clang llvm
// libbpf-dev), run `go generate ./record` from the module root.
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang -strip llvm-strip -cflags "-O2 -g -Wall -Werror" -target bpfel sched bpf/sched.bpf.c
