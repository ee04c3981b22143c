package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"
)

// ChiSquareResult is the outcome of a test whose statistic is compared with a chi-square
// distribution.
type ChiSquareResult struct {
	Statistic float64
	DF        int
	PValue    float64
}

// chiSquareUpper returns P(X >= x) for X ~ chi-square with df degrees of freedom.
func chiSquareUpper(x float64, df int) float64 {
	if x <= 0 {
		return 1
	}
	return mathext.GammaIncRegComp(float64(df)/2, x/2)
}

// KruskalWallis runs the Kruskal-Wallis rank-sum test of k >= 2 independent groups, with R's tie
// correction and a chi-square p-value on k-1 degrees of freedom. When every observation is tied
// the statistic is 0 and the p-value 1 (R returns NaN).
func KruskalWallis(groups [][]float64) (ChiSquareResult, error) {
	if len(groups) < 2 {
		return ChiSquareResult{}, fmt.Errorf("kruskal-wallis: got %d groups; need at least 2", len(groups))
	}
	var pooled []float64
	for g, x := range groups {
		if err := checkSample(fmt.Sprintf("group %d", g), x); err != nil {
			return ChiSquareResult{}, fmt.Errorf("kruskal-wallis: %w", err)
		}
		pooled = append(pooled, x...)
	}
	r, tieTerm := rankTies(pooled)
	n := float64(len(pooled))
	sum, off := 0.0, 0
	for _, x := range groups {
		rs := 0.0
		for _, v := range r[off : off+len(x)] {
			rs += v
		}
		sum += rs * rs / float64(len(x))
		off += len(x)
	}
	df := len(groups) - 1
	denom := 1 - tieTerm/(n*n*n-n)
	if denom <= 0 {
		return ChiSquareResult{DF: df, PValue: 1}, nil
	}
	h := (12*sum/(n*(n+1)) - 3*(n+1)) / denom
	return ChiSquareResult{Statistic: h, DF: df, PValue: chiSquareUpper(h, df)}, nil
}

// FriedmanResult is the outcome of the Friedman test.
type FriedmanResult struct {
	ChiSquareResult
	// MeanRanks[j] is group j's rank averaged over blocks, ranking ascending within each block
	// (the smallest value gets rank 1).
	MeanRanks []float64
}

// Friedman runs the Friedman rank-sum test on blocks, where blocks[i][j] is the observation of
// group j in block i (a seed, a dataset), with R's tie correction and a chi-square p-value on k-1
// degrees of freedom. Every block must hold one value per group. When every block is entirely
// tied the statistic is 0 and the p-value 1 (R returns NaN).
func Friedman(blocks [][]float64) (FriedmanResult, error) {
	if len(blocks) == 0 {
		return FriedmanResult{}, fmt.Errorf("friedman: no blocks; need at least one block with a value per group")
	}
	k := len(blocks[0])
	if k < 2 {
		return FriedmanResult{}, fmt.Errorf("friedman: got %d groups; need at least 2", k)
	}
	colSums := make([]float64, k)
	tieTerm := 0.0
	for i, b := range blocks {
		if len(b) != k {
			return FriedmanResult{}, fmt.Errorf("friedman: block %d has %d values, block 0 has %d; every block needs one value per group", i, len(b), k)
		}
		if err := checkSample(fmt.Sprintf("block %d", i), b); err != nil {
			return FriedmanResult{}, fmt.Errorf("friedman: %w", err)
		}
		r, t := rankTies(b)
		for j, v := range r {
			colSums[j] += v
		}
		tieTerm += t
	}
	n, fk := float64(len(blocks)), float64(k)
	ss := 0.0
	mean := make([]float64, k)
	for j, s := range colSums {
		d := s - n*(fk+1)/2
		ss += d * d
		mean[j] = s / n
	}
	res := FriedmanResult{ChiSquareResult: ChiSquareResult{DF: k - 1, PValue: 1}, MeanRanks: mean}
	denom := n*fk*(fk+1) - tieTerm/(fk-1)
	if denom <= 0 || math.IsNaN(denom) {
		return res, nil
	}
	res.Statistic = 12 * ss / denom
	res.PValue = chiSquareUpper(res.Statistic, k-1)
	return res, nil
}
