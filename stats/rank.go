package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Rank returns the 1-based ranks of x in ascending order; tied values share the mean of the
// ranks they span, as R's rank() does by default.
func Rank(x []float64) []float64 {
	r, _ := rankTies(x)
	return r
}

// rankTies returns the mid-ranks of x and the tie term sum(t^3 - t) over groups of t equal
// values, which every tie-corrected variance below needs. x must hold no NaN.
func rankTies(x []float64) (ranks []float64, tieTerm float64) {
	type item struct {
		key uint64
		at  int
	}
	items := make([]item, len(x))
	for i, v := range x {
		items[i] = item{floatKey(v), i}
	}
	// Ties share a mid-rank, so the order among equal keys does not matter and an unstable
	// sort on integer keys will do.
	slices.SortFunc(items, func(a, b item) int { return cmp.Compare(a.key, b.key) })
	ranks = make([]float64, len(x))
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && items[j].key == items[i].key {
			j++
		}
		mid := float64(i+j+1) / 2
		for _, it := range items[i:j] {
			ranks[it.at] = mid
		}
		if t := float64(j - i); t > 1 {
			tieTerm += t*t*t - t
		}
		i = j
	}
	return ranks, tieTerm
}

// rankSumFirst returns the sum of the mid-ranks of x in the pooled sample x ∪ y and the tie term
// of the pooled sample. Sorting the samples apart (as integer keys) and merging avoids sorting an
// index slice, which keeps a million-sample comparison well under a second.
func rankSumFirst(x, y []float64) (r1, tieTerm float64) {
	xs, ys := sortedKeys(x), sortedKeys(y)
	i, j, pos := 0, 0, 0
	for i < len(xs) || j < len(ys) {
		var v uint64
		switch {
		case i == len(xs):
			v = ys[j]
		case j == len(ys):
			v = xs[i]
		default:
			v = min(xs[i], ys[j])
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
