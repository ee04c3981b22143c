package stats

// The exact null distributions are built by counting recurrences in float64. Only additions of
// non-negative numbers are involved, so every count carries a relative error of a few ulps even
// in the far tails, where p-values as small as 1e-28 must stay accurate.

// rankSumCounts returns c where c[w] is the number of ways the Mann-Whitney statistic W (pairs
// with x > y) equals w for samples of sizes m and n without ties, w = 0..m*n.
//
// Recurrence on the largest pooled value: when it belongs to the first sample it beats all n
// values of the second sample, f(m, n, w) = f(m-1, n, w-n) + f(m, n-1, w).
func rankSumCounts(m, n int) []float64 {
	// prev[j] holds f(i-1, j, ·) and cur[j] holds f(i, j, ·) for j = 0..n.
	prev := make([][]float64, n+1)
	for j := range prev {
		prev[j] = []float64{1}
	}
	for i := 1; i <= m; i++ {
		cur := make([][]float64, n+1)
		cur[0] = []float64{1}
		for j := 1; j <= n; j++ {
			c := make([]float64, i*j+1)
			for w, v := range prev[j] {
				c[w+j] += v
			}
			for w, v := range cur[j-1] {
				c[w] += v
			}
			cur[j] = c
		}
		prev = cur
	}
	return prev[n]
}

// signedRankCounts returns c where c[v] is the number of subsets of {1..n} whose sum is v,
// v = 0..n(n+1)/2: the null distribution of the signed-rank statistic without ties or zeros.
func signedRankCounts(n int) []float64 {
	c := make([]float64, n*(n+1)/2+1)
	c[0] = 1
	top := 0
	for i := 1; i <= n; i++ {
		top += i
		for v := top; v >= i; v-- {
			c[v] += c[v-i]
		}
	}
	return c
}

// tailProbs returns P(S <= q) and P(S >= q) for a statistic with integer support whose counts are
// c. Each tail is summed directly rather than as one minus the other, to keep small tails exact.
func tailProbs(c []float64, q int) (lower, upper float64) {
	total, lo, hi := 0.0, 0.0, 0.0
	for v, n := range c {
		total += n
		if v <= q {
			lo += n
		}
		if v >= q {
			hi += n
		}
	}
	return lo / total, hi / total
}

// exactPValue returns the p-value of an observed integer statistic s against the exact null
// counts c, whose distribution is symmetric about center, following R's wilcox.test: the
// two-sided value doubles the smaller tail, capped at 1.
func exactPValue(c []float64, s int, center float64, alt Alternative) float64 {
	lower, upper := tailProbs(c, s)
	switch alt {
	case Greater:
		return upper
	case Less:
		return lower
	}
	p := lower
	if float64(s) > center {
		p = upper
	}
	return min(2*p, 1)
}
