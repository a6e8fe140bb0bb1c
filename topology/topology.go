package topology

// Topology describes the logical CPUs of a machine. CPU i is CPUs[i].
type Topology struct {
	CPUs   []CPU  `json:"cpus"`
	Source string `json:"source"` // where it came from: "trace", "file:PATH", "preset:NAME", "default"
	Name   string `json:"name,omitempty"`
}

// CPU is one logical CPU.
type CPU struct {
	ID       int `json:"cpu"`
	Core     int `json:"core"`     // physical core id (unique across packages)
	Cluster  int `json:"cluster"`  // cluster / LLC domain id
	Package  int `json:"package"`  // socket
	Node     int `json:"node"`     // NUMA node
	Capacity int `json:"capacity"` // 1024 = the biggest CPU
}

// Symmetric returns n identical CPUs, one core each, one LLC, one package.
func Symmetric(n int) *Topology {
	t := &Topology{Source: "default", Name: "symmetric"}
	for i := 0; i < n; i++ {
		t.CPUs = append(t.CPUs, CPU{ID: i, Core: i, Capacity: 1024})
	}
	return t
}
