package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	moremath "github.com/aclements/go-moremath/stats"
)

type scipyGolden struct {
	CDF []struct {
		K    int
		Q, P float64
	} `json:"studentized_range_cdf"`
	Quantile []struct {
		K    int
		P, Q float64
	} `json:"studentized_range_quantile"`
}

func loadScipy(t *testing.T) scipyGolden {
	t.Helper()
	b, err := os.ReadFile("testdata/golden_scipy.json")
	if err != nil {
		t.Fatal(err)
	}
	var g scipyGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestStudentizedRangeScipy(t *testing.T) {
	g := loadScipy(t)
	for _, c := range g.CDF {
		// scipy's own integration is accurate to about 1e-12 absolute, which is what limits
		// the far lower tail (k = 50, small q); halving the panels here changes nothing.
		if got := StudentizedRangeCDF(c.Q, c.K); !close(got, c.P, tol) && math.Abs(got-c.P) > 1e-12 {
			t.Errorf("StudentizedRangeCDF(%v, %d) = %.15g; scipy %.15g", c.Q, c.K, got, c.P)
		}
	}
	for _, c := range g.Quantile {
		if got := StudentizedRangeQuantile(c.P, c.K); !close(got, c.Q, tol) {
			t.Errorf("StudentizedRangeQuantile(%v, %d) = %.15g; scipy %.15g", c.P, c.K, got, c.Q)
		}
	}
}

// Demšar (2006), Table 5: q_alpha for the two-tailed Nemenyi test, k = 2..10.
func TestNemenyiDemsarTable(t *testing.T) {
	table := map[float64][]float64{
		0.05: {1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164},
		0.10: {1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920},
	}
	for alpha, qs := range table {
		for i, want := range qs {
			k := i + 2
			cd, err := NemenyiCD(k, 6, alpha)
			if err != nil {
				t.Fatal(err)
			}
			q := cd / math.Sqrt(float64(k*(k+1))/36)
			// The table is printed to three decimals, some truncated rather than rounded.
			if math.Abs(q-want) > 0.001 {
				t.Errorf("q_%v for k=%d = %.4f; Demšar's table says %.3f", alpha, k, q, want)
			}
		}
	}
}

func TestNemenyiErrors(t *testing.T) {
	for _, c := range []struct {
		k, n  int
		alpha float64
	}{{1, 5, 0.05}, {3, 0, 0.05}, {3, 5, 0}, {3, 5, 1}} {
		if _, err := NemenyiCD(c.k, c.n, c.alpha); err == nil {
			t.Errorf("NemenyiCD(%d, %d, %v): want an error", c.k, c.n, c.alpha)
		}
	}
}

// The exact branch is cross-checked against an independent implementation.
func TestMannWhitneyMatchesMoremath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alts := map[Alternative]moremath.LocationHypothesis{
		TwoSided: moremath.LocationDiffers, Greater: moremath.LocationGreater, Less: moremath.LocationLess,
	}
	for trial := 0; trial < 40; trial++ {
		x := make([]float64, 1+rng.IntN(20))
		y := make([]float64, 1+rng.IntN(20))
		for i := range x {
			x[i] = rng.NormFloat64() + 0.5
		}
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		for alt, mh := range alts {
			got, err := MannWhitney(x, y, alt)
			if err != nil {
				t.Fatal(err)
			}
			want, err := moremath.MannWhitneyUTest(x, y, mh)
			if err != nil {
				t.Fatal(err)
			}
			// moremath computes the upper tail as 1 - CDF, so it is only accurate in absolute terms.
			if got.Statistic != want.U || math.Abs(got.PValue-want.P) > 1e-12 {
				t.Errorf("n=%d,%d %v: got W=%v p=%v; moremath U=%v p=%v", len(x), len(y), alt, got.Statistic, got.PValue, want.U, want.P)
			}
		}
	}
}

func TestExactCountsSumToTotals(t *testing.T) {
	for _, c := range []struct{ m, n int }{{1, 1}, {2, 3}, {10, 7}, {49, 49}} {
		sum := 0.0
		for _, v := range rankSumCounts(c.m, c.n) {
			sum += v
		}
		// C(m+n, m) through lgamma.
		lg := func(x int) float64 { v, _ := math.Lgamma(float64(x + 1)); return v }
		want := math.Exp(lg(c.m+c.n) - lg(c.m) - lg(c.n))
		if !close(sum, want, 1e-9) {
			t.Errorf("counts for %d,%d sum to %v; want C(m+n,m)=%v", c.m, c.n, sum, want)
		}
	}
	sum := 0.0
	for _, v := range signedRankCounts(30) {
		sum += v
	}
	if sum != math.Exp2(30) {
		t.Errorf("signed-rank counts for n=30 sum to %v; want 2^30", sum)
	}
}

func TestAllTiedGivesPValueOne(t *testing.T) {
	same := []float64{3, 3, 3, 3}
	mw, err := MannWhitney(same, same, TwoSided)
	if err != nil || mw.PValue != 1 || mw.Statistic != 8 {
		t.Errorf("MannWhitney on equal samples = %+v, %v; want W=8 p=1", mw, err)
	}
	sr, err := WilcoxonSignedRank(same, same, TwoSided)
	if err != nil || sr.PValue != 1 || sr.Statistic != 0 {
		t.Errorf("WilcoxonSignedRank on equal samples = %+v, %v; want V=0 p=1", sr, err)
	}
	kw, err := KruskalWallis([][]float64{same, same, same})
	if err != nil || kw.PValue != 1 {
		t.Errorf("KruskalWallis on equal groups = %+v, %v; want p=1", kw, err)
	}
	fr, err := Friedman([][]float64{{1, 1, 1}, {2, 2, 2}})
	if err != nil || fr.PValue != 1 || fr.MeanRanks[0] != 2 {
		t.Errorf("Friedman on tied blocks = %+v, %v; want p=1, mean ranks 2", fr, err)
	}
	rb, err := RankBiserial(same, same)
	if err != nil || rb != 0 {
		t.Errorf("RankBiserial on equal samples = %v, %v; want 0", rb, err)
	}
}

func TestInputErrors(t *testing.T) {
	nan := math.NaN()
	for name, err := range map[string]error{
		"mw empty":        second(MannWhitney(nil, []float64{1}, TwoSided)),
		"mw nan":          second(MannWhitney([]float64{1, nan}, []float64{1}, TwoSided)),
		"sr lengths":      second(WilcoxonSignedRank([]float64{1, 2}, []float64{1}, TwoSided)),
		"kw one group":    second(KruskalWallis([][]float64{{1, 2}})),
		"kw empty group":  second(KruskalWallis([][]float64{{1, 2}, {}})),
		"friedman ragged": second(Friedman([][]float64{{1, 2, 3}, {1, 2}})),
		"friedman none":   second(Friedman(nil)),
		"bootstrap level": second(BootstrapCI([]float64{1}, Median, 1.5, 10, 1)),
	} {
		if err == nil {
			t.Errorf("%s: want an error", name)
		} else if strings.ToLower(err.Error()) != err.Error() && !strings.Contains(err.Error(), "NaN") && !strings.Contains(err.Error(), "Inf") {
			t.Errorf("%s: message %q should be lower-case", name, err)
		}
	}
	_, err := MannWhitney([]float64{1, nan}, []float64{1}, TwoSided)
	if !strings.Contains(err.Error(), "first sample[1] is NaN") {
		t.Errorf("NaN error %q should name the position", err)
	}
}

func second[T any](_ T, err error) error { return err }

// A failed trial enters the tests as an infinite value: it ranks beyond every finite value, equal
// infinities tie, and a paired difference between equal values (infinite ones included) is a
// zero. R's wilcox.test drops non-finite values, so docs/analysis.md tells R users to put one
// large number B in place of every infinite difference (and of every infinite value in unpaired
// tests); the results must be the same.
func TestInfiniteValuesRankBeyondFinite(t *testing.T) {
	inf, b := math.Inf(1), 1e6
	x := []float64{inf, inf, 3, 2, 4, inf, 1}
	y := []float64{inf, 5, 3.5, inf, 4.5, 1, 6}
	got, err := WilcoxonSignedRank(x, y, TwoSided)
	if err != nil {
		t.Fatal(err)
	}
	// Differences: 0 (dropped), +Inf, -0.5, -Inf, -0.5, +Inf, -5.
	d := []float64{b, -0.5, -b, -0.5, b, -5}
	want, err := WilcoxonSignedRank(d, make([]float64, len(d)), TwoSided)
	if err != nil {
		t.Fatal(err)
	}
	if got != want || got.Statistic != 10 {
		t.Errorf("signed rank with infinities = %+v; want %+v (V = 5 + 5)", got, want)
	}
	sub := func(v []float64) []float64 {
		out := slices.Clone(v)
		for i, e := range out {
			if math.IsInf(e, 1) {
				out[i] = b
			}
		}
		return out
	}
	mw, err := MannWhitney(x, y, Less)
	if err != nil {
		t.Fatal(err)
	}
	if mwSub, _ := MannWhitney(sub(x), sub(y), Less); mw != mwSub {
		t.Errorf("mann-whitney with infinities = %+v; with %g for them %+v", mw, b, mwSub)
	}
	// Differences 0 (dropped), +Inf (rank 2), -2 (rank 1): (2 - 1) / 3.
	rb, err := RankBiserial([]float64{inf, inf, 1}, []float64{inf, 2, 3})
	if err != nil || math.Abs(rb-1.0/3) > 1e-15 {
		t.Errorf("rank-biserial = %v, %v; want 1/3", rb, err)
	}
}

func TestSortedQuartilesAgreeWithQuantileAndMedian(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 1; n < 40; n++ {
		x := make([]float64, n)
		for i := range x {
			x[i] = math.Round(rng.NormFloat64()*100) / 10
		}
		s := slices.Clone(x)
		slices.Sort(s)
		q1, med, q3 := SortedQuartiles(s)
		if q1 != Quantile(x, 0.25) || med != Median(x) || q3 != Quantile(x, 0.75) {
			t.Fatalf("n = %d: SortedQuartiles = %v %v %v; Quantile/Median give %v %v %v", n, q1, med, q3, Quantile(x, 0.25), Median(x), Quantile(x, 0.75))
		}
	}
}

func TestHolmKeepsOrderAndMonotone(t *testing.T) {
	got := Holm([]float64{0.04, 0.01, 0.03})
	want := []float64{0.06, 0.03, 0.06}
	for i := range want {
		if !close(got[i], want[i], 1e-12) {
			t.Fatalf("Holm = %v; want %v", got, want)
		}
	}
}

func TestBootstrapCI(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	a, err := BootstrapCI(x, Median, 0.95, 2000, 42)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := BootstrapCI(x, Median, 0.95, 2000, 42)
	if a != b {
		t.Errorf("same seed gave %v and %v", a, b)
	}
	if !(a.Lo < 8 && 8 < a.Hi) || a.Lo < 1 || a.Hi > 15 {
		t.Errorf("95%% interval of the median of 1..15 = %v; want it around 8 and inside the data", a)
	}
	c, _ := BootstrapCI(x, Median, 0.5, 2000, 42)
	if c.Hi-c.Lo > a.Hi-a.Lo {
		t.Errorf("50%% interval %v is wider than the 95%% one %v", c, a)
	}
}

func TestRankTies(t *testing.T) {
	r, tie := rankTies([]float64{10, 20, 10, 30, 10})
	want := []float64{2, 4, 2, 5, 2}
	for i := range want {
		if r[i] != want[i] {
			t.Fatalf("ranks = %v; want %v", r, want)
		}
	}
	if tie != 24 {
		t.Errorf("tie term = %v; want 3^3-3 = 24", tie)
	}
}

func TestMedianCISmallAndInfinite(t *testing.T) {
	ci, err := MedianCI([]float64{math.Inf(-1), 3, math.Inf(1)}, 0.95)
	if err != nil || !math.IsInf(ci.Lo, -1) || !math.IsInf(ci.Hi, 1) {
		t.Errorf("MedianCI of 3 values = %v, %v; want the whole range", ci, err)
	}
	if _, err := MedianCI([]float64{1, 2}, 1); err == nil {
		t.Error("MedianCI at level 1: want an error")
	}
}
