package stats

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/integrate/quad"
)

// Holm returns Holm's step-down adjustment of the p-values p, in the input order, as R's
// p.adjust(p, "holm"): the i-th smallest is multiplied by (m - i + 1), made monotone, and capped
// at 1.
func Holm(p []float64) []float64 {
	m := len(p)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	adj := make([]float64, m)
	running := 0.0
	for rank, i := range idx {
		v := math.Min(1, float64(m-rank)*p[i])
		running = math.Max(running, v)
		adj[i] = running
	}
	return adj
}

// StudentizedRangeCDF returns P(R <= q) for the range R of k independent standard normal
// variables (the studentized range with infinite degrees of freedom), by quadrature of
// k ∫ φ(z) [Φ(z+q) - Φ(z)]^(k-1) dz.
func StudentizedRangeCDF(q float64, k int) float64 {
	if q <= 0 || k < 2 {
		return 0
	}
	f := func(z float64) float64 {
		inner := normalLower(z+q) - normalLower(z)
		return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) * math.Pow(inner, float64(k-1))
	}
	// Unit panels with a 20-point Gauss-Legendre rule: the integrand is smooth and φ(z) is below
	// 1e-19 outside [-9, 9], so the truncation and rule errors are far below 1e-12.
	sum := 0.0
	for a := -9.0 - q; a < 9; a++ {
		sum += quad.Fixed(f, a, a+1, 20, quad.Legendre{}, 0)
	}
	return math.Min(1, float64(k)*sum)
}

// StudentizedRangeQuantile returns the q with StudentizedRangeCDF(q, k) = p, by bisection.
func StudentizedRangeQuantile(p float64, k int) float64 {
	lo, hi := 0.0, 1.0
	for StudentizedRangeCDF(hi, k) < p {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if StudentizedRangeCDF(mid, k) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-12 {
			break
		}
	}
	return (lo + hi) / 2
}

// NemenyiCD returns the critical difference of the Nemenyi test for k groups ranked over n blocks
// at level alpha (Demšar 2006): two groups whose mean ranks differ by at least CD differ
// significantly. q_alpha is the studentized range quantile divided by √2, computed here rather
// than read from Demšar's table so any k and alpha work.
func NemenyiCD(k, n int, alpha float64) (float64, error) {
	if k < 2 || n < 1 {
		return 0, fmt.Errorf("nemenyi: got %d groups and %d blocks; need at least 2 groups and 1 block", k, n)
	}
	if alpha <= 0 || alpha >= 1 {
		return 0, fmt.Errorf("nemenyi: alpha %v is outside (0, 1)", alpha)
	}
	q := StudentizedRangeQuantile(1-alpha, k) / math.Sqrt2
	return q * math.Sqrt(float64(k*(k+1))/(6*float64(n))), nil
}
