package stats

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// MedianCI returns the distribution-free confidence interval of the median at level (e.g. 0.95):
// the order statistics x(l) and x(n-l+1) with l the smallest k for which a Binomial(n, 1/2)
// variable is at most k with probability alpha/2 or more (l = qbinom(alpha/2, n, 1/2) in R, and
// at least 1). Its coverage is at least level whenever n allows it; below that (n < 6 at 95%)
// the interval is the whole sample range. Unlike a bootstrap it is exact, deterministic and costs
// one sort, so it stays cheap for a million observations.
func MedianCI(x []float64, level float64) (Interval, error) {
	if err := checkSample("sample", x); err != nil {
		return Interval{}, fmt.Errorf("median ci: %w", err)
	}
	if level <= 0 || level >= 1 {
		return Interval{}, fmt.Errorf("median ci: level %v is outside (0, 1); use e.g. 0.95", level)
	}
	n := len(x)
	b := distuv.Binomial{N: float64(n), P: 0.5}
	tail := (1 - level) / 2
	// Smallest k with CDF(k) >= tail, by bisection on the monotone CDF.
	lo, hi := 0, n
	for lo < hi {
		mid := (lo + hi) / 2
		if b.CDF(float64(mid)) >= tail {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	l := max(lo, 1)
	s := slices.Clone(x)
	slices.Sort(s)
	return Interval{Lo: s[l-1], Hi: s[n-l]}, nil
}
