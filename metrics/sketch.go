package metrics

import (
	"math"

	"github.com/DataDog/sketches-go/ddsketch/mapping"
)

// SketchAccuracy is the relative accuracy of the logarithmic buckets of a
// streamed analysis's latency sketches (Options.Sketch): a bucket's value
// is within this share of every value in it.
const SketchAccuracy = 0.0024

// DefEstimated says what an estimated percentile is; printed where one is
// shown.
const DefEstimated = "estimated percentiles (a streamed read without --exact): each group beyond 64 samples " +
	"keeps counts in logarithmic buckets, not its samples; a percentile is within 0.5% of the exact " +
	"nearest-rank value (the buckets' 0.24% and a rounding to the trace's time resolution); counts, sums, means and maxima are exact"

// sketchExact is how many values a durSketch keeps as they are: a group
// of up to this many is exact.
const sketchExact = 64

// sketchMapping maps a positive duration to its bucket index and back
// (the cubic interpolation of the logarithm: no math.Log per value, about
// 1% more buckets than the exact logarithm for the same accuracy).
var sketchMapping = func() *mapping.CubicallyInterpolatedMapping {
	m, err := mapping.NewCubicallyInterpolatedMapping(SketchAccuracy)
	if err != nil {
		panic(err)
	}
	return m
}()

// sketchVal is a value to add to several sketches, with its bucket index
// worked out once, when a sketch first needs it.
type sketchVal struct {
	v     int64
	key   int
	keyed bool
}

func (x *sketchVal) index() int {
	if !x.keyed {
		x.key, x.keyed = sketchMapping.Index(math.Abs(float64(x.v))), true
	}
	return x.key
}

// durSketch summarises durations in memory that does not grow with their
// number (docs/architecture.md, "Estimated percentiles on a streamed
// read"): count, sum, minimum and maximum exact, the first sketchExact
// values as they are, and beyond them the values' bucket indices.
type durSketch struct {
	n, sum   int64
	min, max int64
	gcd      int64   // of the values' magnitudes (0 while all are 0)
	vals     []int64 // the values while there are at most sketchExact; nil after
	bucketed bool
	zeros    int64        // bucketed zero values
	pos, neg *pagedCounts // bucketed positive values, and the magnitudes of negative ones
}

func (s *durSketch) add(x *sketchVal) {
	v := x.v
	if s.n == 0 {
		s.min, s.max = v, v
	}
	s.n++
	s.sum += v
	s.min, s.max = min(s.min, v), max(s.max, v)
	s.gcd = gcd(s.gcd, v)
	if !s.bucketed {
		if len(s.vals) < sketchExact {
			s.vals = append(s.vals, v)
			return
		}
		s.bucketed = true
		for _, w := range s.vals {
			s.bucket(&sketchVal{v: w})
		}
		s.vals = nil
	}
	s.bucket(x)
}

// bucket counts x in its bucket.
func (s *durSketch) bucket(x *sketchVal) {
	switch {
	case x.v == 0:
		s.zeros++
	case x.v > 0:
		if s.pos == nil {
			s.pos = &pagedCounts{}
		}
		s.pos.add(x.index())
	default:
		if s.neg == nil {
			s.neg = &pagedCounts{}
		}
		s.neg.add(x.index())
	}
}

// at returns the value of rank r (0-based, ascending), and whether it is
// exact: the smallest and largest are, and so is a value whose bucket
// holds no other multiple of the values' common divisor (which every value
// is). Otherwise it is its bucket's value rounded to that divisor and
// kept within the values' range.
func (s *durSketch) at(r int64) (int64, bool) {
	switch {
	case r <= 0:
		return s.min, true
	case r >= s.n-1:
		return s.max, true
	}
	var nneg int64
	if s.neg != nil {
		nneg = s.neg.n
	}
	var k int
	sign := 1.0
	switch {
	case r < nneg:
		k, sign = s.neg.keyAtRank(nneg-1-r), -1
	case r < nneg+s.zeros:
		return 0, true
	default:
		k = s.pos.keyAtRank(r - nneg - s.zeros)
	}
	g := float64(max(s.gcd, 1))
	m := math.Round(sketchMapping.Value(k)/g) * g // a magnitude
	exact := m > 0 && sketchMapping.Index(m) == k && (m-g <= 0 || sketchMapping.Index(m-g) != k) && sketchMapping.Index(m+g) != k
	return min(max(int64(sign*m), s.min), s.max), exact
}

// dist summarises the sketch, with the histogram h (counted apart).
func (s *durSketch) dist(h Histogram) Dist {
	if !s.bucketed {
		d := distOf(s.vals, false)
		d.Hist = h
		return d
	}
	d := Dist{Count: s.n, SumNs: s.sum, MeanNs: s.sum / s.n, MaxNs: s.max, Hist: h}
	out := [4]*int64{&d.P50Ns, &d.P90Ns, &d.P99Ns, &d.P999Ns}
	for i, pm := range [4]int64{500, 900, 990, 999} {
		v, exact := s.at(max((s.n*pm+999)/1000, 1) - 1)
		*out[i] = v
		if !exact {
			d.Estimated |= 1 << i
		}
	}
	return d
}

// pagedCounts counts bucket indices in pages of 64 counters, made only
// where values fall (a task's waits cover some pages of the thousands a
// nanosecond-to-minutes range has). The sketches-go stores were tried:
// the dense one holds every bucket between the smallest and the largest
// (21 KB a group over 1 us to 0.3 s), the paginated one keeps a sparse
// page's indices in a buffer it sorts whenever it has grown by 32, which
// made folding a tenth of report's time on 1.26 GB of text.
type pagedCounts struct {
	first int        // the page number of pages[0]
	pages [][]uint64 // nil where no value fell
	n     int64
}

const pageBits = 6

func (p *pagedCounts) add(k int) {
	pg := k >> pageBits // floor, negative indices included
	switch {
	case p.pages == nil:
		p.first = pg
		p.pages = make([][]uint64, 1)
	case pg < p.first:
		p.pages = append(make([][]uint64, p.first-pg, p.first-pg+len(p.pages)), p.pages...)
		p.first = pg
	case pg >= p.first+len(p.pages):
		p.pages = append(p.pages, make([][]uint64, pg-p.first-len(p.pages)+1)...)
	}
	page := p.pages[pg-p.first]
	if page == nil {
		page = make([]uint64, 1<<pageBits)
		p.pages[pg-p.first] = page
	}
	page[k&(1<<pageBits-1)]++
	p.n++
}

// keyAtRank returns the bucket index of the value of rank r (0-based,
// ascending; r < n).
func (p *pagedCounts) keyAtRank(r int64) int {
	var cum uint64
	last := 0
	for i, page := range p.pages {
		for j, c := range page {
			if c == 0 {
				continue
			}
			last = (p.first+i)<<pageBits + j
			if cum += c; cum > uint64(r) {
				return last
			}
		}
	}
	return last
}

// gcd returns the greatest common divisor of a (>= 0) and |b|.
func gcd(a, b int64) int64 {
	if b < 0 {
		b = -b
	}
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
