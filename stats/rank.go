package stats

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Rank returns the 1-based ranks of x in ascending order; tied values share the mean of the
// ranks they span, as R's rank() does by default.
func Rank(x []float64) []float64 {
	r, _ := rankTies(x)
	return r
}

// rankTies returns the mid-ranks of x and the tie term sum(t^3 - t) over groups of t equal
// values, which every tie-corrected variance below needs.
func rankTies(x []float64) (ranks []float64, tieTerm float64) {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	ranks = make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && x[idx[j]] == x[idx[i]] {
			j++
		}
		mid := float64(i+j+1) / 2
		for _, p := range idx[i:j] {
			ranks[p] = mid
		}
		if t := float64(j - i); t > 1 {
			tieTerm += t*t*t - t
		}
		i = j
	}
	return ranks, tieTerm
}

// rankSumFirst returns the sum of the mid-ranks of x in the pooled sample x ∪ y and the tie term
// of the pooled sample. Sorting the samples apart and merging avoids sorting an index slice,
// which keeps a million-sample comparison well under a second.
func rankSumFirst(x, y []float64) (r1, tieTerm float64) {
	xs, ys := slices.Clone(x), slices.Clone(y)
	slices.Sort(xs)
	slices.Sort(ys)
	i, j, pos := 0, 0, 0
	for i < len(xs) || j < len(ys) {
		var v float64
		switch {
		case i == len(xs):
			v = ys[j]
		case j == len(ys):
			v = xs[i]
		default:
			v = math.Min(xs[i], ys[j])
		}
		cx, cy := 0, 0
		for i < len(xs) && xs[i] == v {
			i++
			cx++
		}
		for j < len(ys) && ys[j] == v {
			j++
			cy++
		}
		t := cx + cy
		r1 += float64(cx) * (float64(pos) + float64(t+1)/2)
		if t > 1 {
			ft := float64(t)
			tieTerm += ft*ft*ft - ft
		}
		pos += t
	}
	return r1, tieTerm
}

// checkSample returns an error naming the first NaN in x, or an empty sample; name says which
// sample it is in the message.
func checkSample(name string, x []float64) error {
	if len(x) == 0 {
		return fmt.Errorf("%s is empty; a rank test needs at least one observation per sample", name)
	}
	for i, v := range x {
		if math.IsNaN(v) {
			return fmt.Errorf("%s[%d] is NaN; drop or fix missing values before testing", name, i)
		}
	}
	return nil
}
