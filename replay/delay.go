package replay

import (
	"math/rand/v2"
	"slices"
)

// DelayDist is the empirical distribution of a delay (ns): its quantiles
// at (i+0.5)/n for i = 0..n-1, ascending, so that each stands for an equal
// share of the samples. A draw picks one of them, each equally likely: the
// replay reproduces the recorded spread of the delay, not only its median,
// and the extreme 1/(2n) at either end is left out. Nil means no
// distribution (the fixed figure of Options is used).
type DelayDist []int64

// delayQuantiles is how many quantiles NewDelayDist keeps.
const delayQuantiles = 20

// NewDelayDist returns the distribution of samples as delayQuantiles
// quantiles, or nil when there are fewer samples than quantiles.
func NewDelayDist(samples []int64) DelayDist {
	if len(samples) < delayQuantiles {
		return nil
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	d := make(DelayDist, delayQuantiles)
	for i := range d {
		// The sample at rank floor((i+0.5)/n × len).
		d[i] = s[(2*i+1)*len(s)/(2*delayQuantiles)]
	}
	return d
}

// Median returns the middle quantile (0 for no distribution).
func (d DelayDist) Median() int64 {
	if len(d) == 0 {
		return 0
	}
	return d[len(d)/2]
}

// draw returns a draw from d, or fixed when d is empty.
func (d DelayDist) draw(rng *rand.Rand, fixed int64) int64 {
	if len(d) == 0 {
		return fixed
	}
	return d[rng.IntN(len(d))]
}
