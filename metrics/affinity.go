package metrics

import (
	"strconv"
)

// Exactness says how far a figure can be trusted.
type Exactness uint8

// Exactness levels.
const (
	// Exact: measured from events the trace holds.
	Exact Exactness = iota
	// Inferred: depends on something the trace does not record (affinity,
	// utilization, a runqueue CPU taken from where the task later ran).
	Inferred
	// Censored: the interval was cut by the trace end, a lost-event gap, a
	// late buffer start or the window; its length is a lower bound.
	Censored
)

func (e Exactness) String() string {
	switch e {
	case Exact:
		return "exact"
	case Inferred:
		return "inferred"
	case Censored:
		return "censored"
	}
	return "exactness(" + strconv.Itoa(int(e)) + ")"
}

// MarshalText implements encoding.TextMarshaler with String.
func (e Exactness) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// cpuMask is a set of CPUs.
type cpuMask []uint64

func newMask(n int) cpuMask { return make(cpuMask, (n+63)/64) }

func (m cpuMask) set(c int) {
	if c >= 0 && c/64 < len(m) {
		m[c/64] |= 1 << (c % 64)
	}
}

func (m cpuMask) has(c int) bool { return c >= 0 && c/64 < len(m) && m[c/64]&(1<<(c%64)) != 0 }

// intersects reports whether m and o share a CPU other than except.
func (m cpuMask) intersectsExcept(o cpuMask, except int) bool {
	for i := range m {
		if i >= len(o) {
			break
		}
		w := m[i] & o[i]
		if except >= 0 && except/64 == i {
			w &^= 1 << (except % 64)
		}
		if w != 0 {
			return true
		}
	}
	return false
}

// onlyBit reports whether m holds exactly the CPU c and nothing else, or
// nothing at all.
func (m cpuMask) subsetOf(c int) bool {
	for i, w := range m {
		if c/64 == i {
			w &^= 1 << (c % 64)
		}
		if w != 0 {
			return false
		}
	}
	return true
}
