package stats

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkFriedmanPostHoc is the sizing target: Friedman, Nemenyi's critical difference
// and 45 Holm-adjusted pairwise signed-rank tests on 10 groups x 10,000 blocks.
func BenchmarkFriedmanPostHoc(b *testing.B) {
	const k, n = 10, 10000
	rng := rand.New(rand.NewPCG(7, 7))
	blocks := make([][]float64, n)
	cols := make([][]float64, k)
	for j := range cols {
		cols[j] = make([]float64, n)
	}
	for i := range blocks {
		blocks[i] = make([]float64, k)
		for j := range blocks[i] {
			v := rng.NormFloat64() + float64(j)*0.01
			blocks[i][j] = v
			cols[j][i] = v
		}
	}
	for b.Loop() {
		if _, err := Friedman(blocks); err != nil {
			b.Fatal(err)
		}
		if _, err := NemenyiCD(k, n, 0.05); err != nil {
			b.Fatal(err)
		}
		var ps []float64
		for a := 0; a < k; a++ {
			for c := a + 1; c < k; c++ {
				r, err := WilcoxonSignedRank(cols[a], cols[c], TwoSided)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := RankBiserial(cols[a], cols[c]); err != nil {
					b.Fatal(err)
				}
				ps = append(ps, r.PValue)
			}
		}
		Holm(ps)
	}
}

// BenchmarkMannWhitney1M is the other target: two samples of 1,000,000 each. (compare
// derives A12 from W, so the effect size costs nothing more.)
func BenchmarkMannWhitney1M(b *testing.B) {
	const n = 1000000
	rng := rand.New(rand.NewPCG(8, 8))
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
		y[i] = rng.NormFloat64() + 0.001
	}
	for b.Loop() {
		if _, err := MannWhitney(x, y, TwoSided); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMannWhitneyExact49 measures the largest exact case (both samples of 49).
func BenchmarkMannWhitneyExact49(b *testing.B) {
	x, y := make([]float64, 49), make([]float64, 49)
	for i := range x {
		x[i] = float64(2 * i)
		y[i] = float64(2*i + 1)
	}
	for b.Loop() {
		if _, err := MannWhitney(x, y, TwoSided); err != nil {
			b.Fatal(err)
		}
	}
}
