package topology

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseCPUList parses a kernel CPU list such as "0-3,8,10-11" (the format of
// thread_siblings_list, shared_cpu_list and cpulist files, printed by the
// kernel's %*pbl) into ascending, duplicate-free CPU numbers. Spaces and a
// trailing newline around the list are ignored; an empty list is an error.
// CPU numbers must be below 65536.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty CPU list")
	}
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := cpuNumber(lo, s)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = cpuNumber(hi, s); err != nil {
				return nil, err
			}
			if b < a {
				return nil, fmt.Errorf("CPU list %q: range %s runs backwards", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	if !slices.IsSorted(out) {
		slices.Sort(out)
	}
	return slices.Compact(out), nil
}

func cpuNumber(f, list string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(f))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("CPU list %q: want CPU numbers and ranges like 0-3,8; got %q", list, f)
	}
	if n >= maxCPUs {
		return 0, fmt.Errorf("CPU list %q: CPU %d above the supported %d", list, n, maxCPUs-1)
	}
	return n, nil
}

// FormatCPUList formats ascending CPU numbers the way the kernel prints a
// CPU list: "0-3,8,10-11". Unsorted input is formatted in the given order.
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// ParseCPUMask parses a CPU bitmap as the kernel prints it with %*pb (the
// cpumask column of /proc/schedstat, the cpu_map files): hexadecimal, most
// significant word first, 32-bit words separated by commas, such as "3f" or
// "00000001,00000000". It returns the ascending CPU numbers of the set bits;
// a mask with no bit set is an error, as are CPUs of 65536 and above.
func ParseCPUMask(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	words := strings.Split(s, ",")
	if len(words) > maxCPUs/32 {
		return nil, fmt.Errorf("CPU mask of %d words: at most %d CPUs supported", len(words), maxCPUs)
	}
	var out []int
	for i := len(words) - 1; i >= 0; i-- {
		w := words[i]
		if w == "" || len(w) > 8 || (i > 0 && len(w) != 8) {
			return nil, fmt.Errorf("CPU mask %q: want hexadecimal words of up to 32 bits separated by commas (like 3f or 00000001,ffffffff)", s)
		}
		v, err := strconv.ParseUint(w, 16, 32)
		if err != nil {
			return nil, fmt.Errorf("CPU mask %q: %q is not hexadecimal", s, w)
		}
		base := 32 * (len(words) - 1 - i)
		for b := 0; v != 0; b++ {
			if v&1 != 0 {
				if base+b >= maxCPUs {
					return nil, fmt.Errorf("CPU mask %q: CPU %d above the supported %d", s, base+b, maxCPUs-1)
				}
				out = append(out, base+b)
			}
			v >>= 1
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("CPU mask %q has no CPU", s)
	}
	return out, nil
}
