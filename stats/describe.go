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
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
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

func quantileSorted(s []float64, p float64) float64 {
	h := float64(len(s)-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (h-lo)*(s[i+1]-s[i])
}

// Median returns the median of x, or NaN when x is empty.
func Median(x []float64) float64 { return Quantile(x, 0.5) }

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
