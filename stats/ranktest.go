package stats

import (
	"fmt"
	"math"
)

// TestResult is the outcome of a two-sample or paired rank test.
type TestResult struct {
	// Statistic is R's W (Mann-Whitney) or V (signed rank).
	Statistic float64
	PValue    float64
	// Exact reports whether the p-value comes from the exact null distribution rather than the
	// normal approximation.
	Exact bool
}

// exactLimit is R's default: exact p-values only for samples smaller than this.
const exactLimit = 50

// MannWhitney runs the Wilcoxon rank-sum (Mann-Whitney U) test of x against y with R's
// wilcox.test conventions: W is the rank sum of x minus n1(n1+1)/2; the p-value is exact when both
// samples have fewer than 50 observations and there are no ties, and otherwise comes from the
// normal approximation with tie and continuity correction.
func MannWhitney(x, y []float64, alt Alternative) (TestResult, error) {
	if err := checkSample("first sample", x); err != nil {
		return TestResult{}, fmt.Errorf("mann-whitney: %w", err)
	}
	if err := checkSample("second sample", y); err != nil {
		return TestResult{}, fmt.Errorf("mann-whitney: %w", err)
	}
	n1, n2 := float64(len(x)), float64(len(y))
	r1, tieTerm := rankSumFirst(x, y)
	w := r1 - n1*(n1+1)/2
	if len(x) < exactLimit && len(y) < exactLimit && tieTerm == 0 {
		c := rankSumCounts(len(x), len(y))
		return TestResult{Statistic: w, PValue: exactPValue(c, int(w), n1*n2/2, alt), Exact: true}, nil
	}
	n := n1 + n2
	sd := math.Sqrt(n1 * n2 / 12 * ((n + 1) - tieTerm/(n*(n-1))))
	return TestResult{Statistic: w, PValue: normalPValue(w, n1*n2/2, sd, alt)}, nil
}

// WilcoxonSignedRank runs the paired Wilcoxon signed-rank test on the differences x[i] - y[i]
// with R's wilcox.test conventions: zero differences are dropped; V is the sum of the ranks of
// the positive differences; the p-value is exact when fewer than 50 differences remain with no
// ties and no zeros were dropped, and otherwise comes from the normal approximation with tie and
// continuity correction. Infinite values are ranked rather than refused (see differences), so a
// failed trial entered as the worst possible value keeps its block.
func WilcoxonSignedRank(x, y []float64, alt Alternative) (TestResult, error) {
	d, zeros, err := differences(x, y)
	if err != nil {
		return TestResult{}, fmt.Errorf("wilcoxon signed-rank: %w", err)
	}
	n := float64(len(d))
	abs := make([]float64, len(d))
	for i, v := range d {
		abs[i] = math.Abs(v)
	}
	r, tieTerm := rankTies(abs)
	v := 0.0
	for i, di := range d {
		if di > 0 {
			v += r[i]
		}
	}
	mean := n * (n + 1) / 4
	if len(d) < exactLimit && tieTerm == 0 && !zeros {
		c := signedRankCounts(len(d))
		return TestResult{Statistic: v, PValue: exactPValue(c, int(v), mean, alt), Exact: true}, nil
	}
	sd := math.Sqrt(n*(n+1)*(2*n+1)/24 - tieTerm/48)
	return TestResult{Statistic: v, PValue: normalPValue(v, mean, sd, alt)}, nil
}

// differences returns the non-zero differences x[i] - y[i] and whether any zero was dropped.
// Infinite values are allowed: a difference with one infinite side is infinite and ranks beyond
// every finite difference, tied with the other infinite ones.
func differences(x, y []float64) (d []float64, zeros bool, err error) {
	if len(x) != len(y) {
		return nil, false, fmt.Errorf("samples have %d and %d observations; paired samples must be the same length", len(x), len(y))
	}
	if err := checkSample("first sample", x); err != nil {
		return nil, false, err
	}
	if err := checkSample("second sample", y); err != nil {
		return nil, false, err
	}
	d = make([]float64, 0, len(x))
	for i := range x {
		// Equal values differ by zero, equal infinities included (Inf - Inf would be NaN): two
		// failures in one block are a tie, not an undefined difference.
		if x[i] == y[i] {
			zeros = true
			continue
		}
		d = append(d, x[i]-y[i])
	}
	return d, zeros, nil
}
