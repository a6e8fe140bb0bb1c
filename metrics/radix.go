package metrics

import "slices"

// keyed is a value to sort by key, with a tie-breaking payload.
type keyed struct {
	key int64
	sub uint64
}

// radixSort sorts s by key, stably: elements with equal keys keep their
// order. It is an LSD radix sort on the key minus the smallest key, 11
// bits per pass, as many passes as the key range needs; the
// metrics sort hundreds of thousands of interval ends per trace, where it
// beats a comparison sort several times over. buf may be nil.
func radixSort(s, buf []keyed) []keyed {
	if len(s) < 256 {
		slices.SortStableFunc(s, func(a, b keyed) int {
			switch {
			case a.key < b.key:
				return -1
			case a.key > b.key:
				return 1
			}
			return 0
		})
		return s
	}
	lo, hi := s[0].key, s[0].key
	sorted := true
	for i := 1; i < len(s); i++ {
		k := s[i].key
		if k < s[i-1].key {
			sorted = false
		}
		lo, hi = min(lo, k), max(hi, k)
	}
	if sorted {
		return s
	}
	span := uint64(hi - lo)
	if cap(buf) < len(s) {
		buf = make([]keyed, len(s))
	}
	buf = buf[:len(s)]
	src, dst := s, buf
	const bits, buckets = 11, 1 << 11
	for shift := uint(0); shift < 64 && span>>shift != 0; shift += bits {
		var count [buckets]int
		for i := range src {
			count[(uint64(src[i].key-lo)>>shift)&(buckets-1)]++
		}
		pos := 0
		for b := range count {
			c := count[b]
			count[b] = pos
			pos += c
		}
		for i := range src {
			b := (uint64(src[i].key-lo) >> shift) & (buckets - 1)
			dst[count[b]] = src[i]
			count[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
	return s
}
