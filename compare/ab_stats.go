package compare

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The two significance tests of an A/B. Both give the change of a metric
// as a 95% interval in percent of the base figure: Welch's test the
// interval of the difference of the means divided by the base mean, the
// bootstrap the interval of the ratio new / base of the resampled figures.

// Alpha is the significance level: a row is significant when its 95%
// interval of the change excludes 0.
const Alpha = 0.05

// welch is Welch's unequal-variances t-test on the per-run values of one
// metric: the mean of each side, the standard deviation over its runs
// (n - 1 in the denominator), the two-sided p value, and the 95%
// interval of the difference of the means with the Welch-Satterthwaite
// degrees of freedom. Both sides need at least two runs. With no spread
// on either side the difference is exact: significant when it is not 0.
type welch struct {
	BaseMean, NewMean float64
	BaseSD, NewSD     float64
	P                 float64
	Lo, Hi            float64 // interval of NewMean - BaseMean
}

// WelchP is the two-sided p value of Welch's t-test on two sides' per-run
// values (each side two or more values), the test CompareRuns applies to
// every metric; NaN with fewer values, 1 or 0 with no spread on either side.
func WelchP(base, new []float64) float64 {
	if len(base) < 2 || len(new) < 2 {
		return math.NaN()
	}
	return welchTest(base, new).P
}

func welchTest(b, n []float64) welch {
	w := welch{BaseMean: stat.Mean(b, nil), NewMean: stat.Mean(n, nil), BaseSD: stat.StdDev(b, nil), NewSD: stat.StdDev(n, nil)}
	d := w.NewMean - w.BaseMean
	vb, vn := w.BaseSD*w.BaseSD/float64(len(b)), w.NewSD*w.NewSD/float64(len(n))
	se := math.Sqrt(vb + vn)
	if se == 0 {
		w.Lo, w.Hi, w.P = d, d, 1
		if d != 0 {
			w.P = 0
		}
		return w
	}
	df := (vb + vn) * (vb + vn) / (vb*vb/float64(len(b)-1) + vn*vn/float64(len(n)-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	w.P = 2 * t.Survival(math.Abs(d)/se)
	q := t.Quantile(1 - Alpha/2)
	w.Lo, w.Hi = d-q*se, d+q*se
	return w
}

// MinTail is how many samples a side needs above a percentile for the
// bootstrap to test it.
const MinTail = 10

// ExactMeanLimit is the largest sample count (both sides) whose mean the
// bootstrap resamples value by value.
const ExactMeanLimit = 2000

// Replicates is the number of bootstrap resamples of each side.
const Replicates = 2000

// BootstrapSeed seeds every resampling; each metric and scope derives its
// own stream from it, so a row does not depend on which others exist.
const BootstrapSeed = 1

// bootstrap is the percentile bootstrap of one latency statistic over the
// samples of the two sides (ascending): each replicate resamples both
// sides with replacement, to their own sizes, and takes the change
// (new / base - 1) x 100 of the statistic. lo and hi are the 2.5th and
// 97.5th percentiles of those changes. metric is WakeupP50Ns, WakeupP90Ns,
// WakeupP99Ns or WakeupMeanNs; ok is false for any other metric, and when
// a side has too few samples: fewer than MinTail above the percentile
// (n x (1 - p) < MinTail; for the mean, n < 2 MinTail), where the
// resampled percentile is close to the maximum, which a bootstrap cannot
// estimate.
//
// A nearest-rank percentile of a resample needs no resample: drawing n
// indices uniformly is drawing n uniforms u and taking floor(u n), which
// keeps their order, so the k-th smallest drawn index is floor(U n) with U
// the k-th smallest of n uniforms, which is Beta(k, n - k + 1) distributed.
// The mean resamples the values when the two sides hold at most
// ExactMeanLimit samples together; above, where resampling would cost
// Replicates x n draws, each resampled mean is drawn from the normal
// distribution it converges to (the sample mean, standard deviation
// s / sqrt(n)).
func bootstrap(metric, scope string, base, new []int64) (lo, hi float64, ok bool) {
	per := map[string]int{WakeupP50Ns: 500, WakeupP90Ns: 900, WakeupP99Ns: 990, WakeupMeanNs: 0}
	pm, ok := per[metric]
	need := 2 * MinTail
	if pm > 0 {
		need = MinTail * 1000 / (1000 - pm)
	}
	if !ok || len(base) < need || len(new) < need {
		return 0, 0, false
	}
	h := fnv.New64a()
	h.Write([]byte(scope + "\x00" + metric))
	rng := rand.New(rand.NewPCG(BootstrapSeed, h.Sum64()))
	sides := [2][]int64{base, new}
	draw := func(side int) float64 { return resampled(sides[side], pm, rng) }
	if pm == 0 && len(base)+len(new) > ExactMeanLimit {
		// The normal limit of the resampled mean: mean, variance s^2 / n.
		lim := [2][2]float64{normalMean(base), normalMean(new)}
		draw = func(side int) float64 { return lim[side][0] + lim[side][1]*rng.NormFloat64() }
	}
	diffs := make([]float64, Replicates)
	for i := range diffs {
		b := max(draw(0), 1) // a 0 ns figure counts as 1 ns
		diffs[i] = (draw(1)/b - 1) * 100
	}
	slices.Sort(diffs)
	return stat.Quantile(Alpha/2, stat.Empirical, diffs, nil), stat.Quantile(1-Alpha/2, stat.Empirical, diffs, nil), true
}

// resampled draws the statistic of one resample of s (ascending): the
// nearest-rank percentile perMille, or the mean when perMille is 0.
func resampled(s []int64, perMille int, rng *rand.Rand) float64 {
	n := len(s)
	if perMille == 0 {
		var sum float64
		for range n {
			sum += float64(s[rng.IntN(n)])
		}
		return sum / float64(n)
	}
	k := max((n*perMille+999)/1000, 1)
	u := distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1), Src: rng}.Rand()
	return float64(s[min(int(u*float64(n)), n-1)])
}

// normalMean returns the mean of s and the standard deviation of that
// mean (s.d. of the values, n - 1, over sqrt(n)).
func normalMean(s []int64) [2]float64 {
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = float64(x)
	}
	return [2]float64{stat.Mean(v, nil), stat.StdDev(v, nil) / math.Sqrt(float64(len(v)))}
}
