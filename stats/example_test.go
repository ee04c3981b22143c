package stats_test

import (
	"fmt"

	"github.com/jikken-dev/jikken/stats"
)

// Two algorithms' final losses over five seeds each: is the new one better? The tie at 0.30
// sends the test to the normal approximation, as in R (23.5 and 0.0139 there too).
func ExampleMannWhitney() {
	base := []float64{0.31, 0.33, 0.29, 0.35, 0.30}
	next := []float64{0.21, 0.20, 0.22, 0.19, 0.30}
	r, err := stats.MannWhitney(base, next, stats.Greater)
	if err != nil {
		panic(err)
	}
	a12, _ := stats.VarghaDelaneyA12(base, next)
	fmt.Printf("W = %v, p = %.4f (exact: %v), A12 = %.2f\n", r.Statistic, r.PValue, r.Exact, a12)
	// Output: W = 23.5, p = 0.0139 (exact: false), A12 = 0.94
}

// Three algorithms on six datasets: Friedman, then Nemenyi's critical difference of mean ranks.
func ExampleFriedman() {
	blocks := [][]float64{ // one row per dataset: sgd, adam, rms
		{0.31, 0.21, 0.25}, {0.33, 0.20, 0.26}, {0.29, 0.22, 0.21},
		{0.35, 0.19, 0.24}, {0.30, 0.23, 0.27}, {0.32, 0.18, 0.22},
	}
	r, err := stats.Friedman(blocks)
	if err != nil {
		panic(err)
	}
	cd, _ := stats.NemenyiCD(3, len(blocks), 0.05)
	fmt.Printf("chi2 = %.3f, p = %.4f, mean ranks %.2f, CD = %.3f\n", r.Statistic, r.PValue, r.MeanRanks, cd)
	// Output: chi2 = 10.333, p = 0.0057, mean ranks [3.00 1.17 1.83], CD = 1.353
}
