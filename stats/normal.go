package stats

import "math"

// Alternative is the alternative hypothesis of a two-sample or paired test.
type Alternative int

const (
	// TwoSided: the first sample's location differs from the second's.
	TwoSided Alternative = iota
	// Greater: the first sample tends to be larger than the second.
	Greater
	// Less: the first sample tends to be smaller than the second.
	Less
)

// String returns R's name for the alternative.
func (a Alternative) String() string {
	switch a {
	case Greater:
		return "greater"
	case Less:
		return "less"
	}
	return "two.sided"
}

// normalLower and normalUpper are the standard normal tails through erfc, which keeps relative
// accuracy far out in either tail (1 - Φ(z) would round to zero).
func normalLower(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
func normalUpper(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// normalPValue returns the p-value of a statistic with null mean mean and standard deviation sd
// under the normal approximation with R's continuity correction of 0.5 towards the mean.
// A zero sd means every observation is tied: there is no evidence of a difference and the
// p-value is 1 (R returns NaN here, which cannot be reported or compared).
func normalPValue(stat, mean, sd float64, alt Alternative) float64 {
	d := stat - mean
	if sd == 0 || math.IsNaN(sd) {
		return 1
	}
	var corr float64
	switch alt {
	case Greater:
		corr = 0.5
	case Less:
		corr = -0.5
	default:
		switch {
		case d > 0:
			corr = 0.5
		case d < 0:
			corr = -0.5
		}
	}
	z := (d - corr) / sd
	switch alt {
	case Greater:
		return normalUpper(z)
	case Less:
		return normalLower(z)
	}
	return 2 * math.Min(normalLower(z), normalUpper(z))
}
