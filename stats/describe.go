package stats

import (
	"math"
	"slices"
)

// Mean returns the arithmetic mean of x, or NaN when x is empty.
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	n := float64(len(x))
	s := 0.0
	for _, v := range x {
		s += v
	}
	m := s / n
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return m
	}
	// A second pass corrects the rounding of the first, as R's mean does, so that means print
	// as R prints them (0.8375, not 0.8375000000000001).
	r := 0.0
	for _, v := range x {
		r += v - m
	}
	return m + r/n
}

// Quantile returns the p-quantile of x (0 <= p <= 1) by linear interpolation between order
// statistics, R's default (type 7). It returns NaN when x is empty.
func Quantile(x []float64, p float64) float64 {
	if len(x) == 0 || p < 0 || p > 1 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return quantileSorted(s, p)
}

// quantileSorted interpolates with R's arithmetic, (1-h)·x[lo] + h·x[hi], so results agree with
// R to the last bit rather than to rounding.
func quantileSorted(s []float64, p float64) float64 {
	idx := float64(len(s)-1) * p
	lo := math.Floor(idx)
	i := int(lo)
	if i+1 >= len(s) || s[i+1] == s[i] || idx == lo {
		return s[i]
	}
	h := idx - lo
	return (1-h)*s[i] + h*s[i+1]
}

// Median returns the median of x (the mean of the two middle values when len(x) is even, as R's
// median), or NaN when x is empty.
func Median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	h := len(s) / 2
	if len(s)%2 == 1 {
		return s[h]
	}
	return (s[h-1] + s[h]) / 2
}

// IQR returns the inter-quartile range of x (type-7 quantiles, as R's IQR), or NaN when x is
// empty.
func IQR(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return quantileSorted(s, 0.75) - quantileSorted(s, 0.25)
}

// SortedQuartiles returns the first quartile, the median and the third quartile of s, which must
// be sorted in ascending order and not empty: R's type-7 quantiles and R's median, without the
// copy and sort Quantile and Median make (for callers that summarise many samples).
func SortedQuartiles(s []float64) (q1, median, q3 float64) {
	h := len(s) / 2
	median = s[h]
	if len(s)%2 == 0 {
		median = (s[h-1] + s[h]) / 2
	}
	return quantileSorted(s, 0.25), median, quantileSorted(s, 0.75)
}
