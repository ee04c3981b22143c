package stats

import (
	"fmt"
	"math"
)

// VarghaDelaneyA12 returns the probability that a value drawn from x is larger than one drawn from
// y, counting ties as one half (Vargha and Delaney's A). 0.5 means no effect. It equals
// MannWhitney's W / (len(x)·len(y)), which spares a second sort when both are needed.
func VarghaDelaneyA12(x, y []float64) (float64, error) {
	if err := checkSample("first sample", x); err != nil {
		return 0, fmt.Errorf("a12: %w", err)
	}
	if err := checkSample("second sample", y); err != nil {
		return 0, fmt.Errorf("a12: %w", err)
	}
	n1, n2 := float64(len(x)), float64(len(y))
	r1, _ := rankSumFirst(x, y)
	return (r1 - n1*(n1+1)/2) / (n1 * n2), nil
}

// CliffsDelta returns P(x > y) - P(x < y) for values drawn from x and y, in [-1, 1]; it equals
// 2·A12 - 1.
func CliffsDelta(x, y []float64) (float64, error) {
	a, err := VarghaDelaneyA12(x, y)
	if err != nil {
		return 0, fmt.Errorf("cliff's delta: %w", err)
	}
	return 2*a - 1, nil
}

// RankBiserial returns the matched-pairs rank-biserial correlation of the differences
// x[i] - y[i] (Kerby 2014): the sum of the ranks of positive differences minus that of negative
// ones, over the total rank sum, in [-1, 1]. Zero differences are dropped, as in
// WilcoxonSignedRank; when all are zero the result is 0.
func RankBiserial(x, y []float64) (float64, error) {
	d, _, err := differences(x, y)
	if err != nil {
		return 0, fmt.Errorf("rank-biserial: %w", err)
	}
	if len(d) == 0 {
		return 0, nil
	}
	abs := make([]float64, len(d))
	for i, v := range d {
		abs[i] = math.Abs(v)
	}
	r := Rank(abs)
	pos, total := 0.0, 0.0
	for i, v := range d {
		total += r[i]
		if v > 0 {
			pos += r[i]
		}
	}
	return (2*pos - total) / total, nil
}
