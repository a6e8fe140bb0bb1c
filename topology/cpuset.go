package topology

import (
	"math/bits"
	"strings"
)

// CPUSet is a set of CPU numbers, a bit per CPU. The empty set means "every
// CPU" wherever a task's affinity is concerned. In JSON and in specs it is
// written as a kernel CPU list ("0-3,8").
type CPUSet []uint64

// NewCPUSet returns the set holding cpus.
func NewCPUSet(cpus ...int) CPUSet {
	var s CPUSet
	for _, c := range cpus {
		s = s.With(c)
	}
	return s
}

// CPURange returns the set {lo, ..., hi}.
func CPURange(lo, hi int) CPUSet {
	var s CPUSet
	for c := lo; c <= hi; c++ {
		s = s.With(c)
	}
	return s
}

// Has reports whether cpu is in s.
func (s CPUSet) Has(cpu int) bool {
	w := cpu >> 6
	return cpu >= 0 && w < len(s) && s[w]&(1<<(uint(cpu)&63)) != 0
}

// With returns s with cpu added (s may be modified in place).
func (s CPUSet) With(cpu int) CPUSet {
	if cpu < 0 {
		return s
	}
	w := cpu >> 6
	for len(s) <= w {
		s = append(s, 0)
	}
	s[w] |= 1 << (uint(cpu) & 63)
	return s
}

// Count returns the number of CPUs in s.
func (s CPUSet) Count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// Empty reports whether s holds no CPU.
func (s CPUSet) Empty() bool { return s.Count() == 0 }

// First returns the lowest CPU of s, or -1.
func (s CPUSet) First() int {
	for i, w := range s {
		if w != 0 {
			return i*64 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// Max returns the highest CPU of s, or -1.
func (s CPUSet) Max() int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 0 {
			return i*64 + 63 - bits.LeadingZeros64(s[i])
		}
	}
	return -1
}

// CPUs returns the members of s in ascending order.
func (s CPUSet) CPUs() []int {
	var out []int
	for i, w := range s {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, i*64+b)
			w &^= 1 << uint(b)
		}
	}
	return out
}

// String formats s as a kernel CPU list ("0-3,8"); the empty set is "".
func (s CPUSet) String() string { return FormatCPUList(s.CPUs()) }

// ParseCPUSet parses a kernel CPU list such as "0-3,8"; an empty list gives
// the empty set. CPU numbers are bounded as in ParseCPUList.
func ParseCPUSet(list string) (CPUSet, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	cpus, err := ParseCPUList(list)
	if err != nil {
		return nil, err
	}
	return NewCPUSet(cpus...), nil
}

// MarshalText writes s as a CPU list.
func (s CPUSet) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a CPU list.
func (s *CPUSet) UnmarshalText(b []byte) error {
	v, err := ParseCPUSet(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
