//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package record

import (
	"errors"

	"github.com/cilium/ebpf"
)

// loadSched reports that the committed BPF object (sched_bpfel.o) is built
// for little-endian CPUs only; bpf2go's -target bpfeb would build one for
// this CPU.
func loadSched() (*ebpf.CollectionSpec, error) {
	return nil, errors.New("schedlens record: the BPF object is built for little-endian CPUs only")
}
