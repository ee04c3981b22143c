package search

import (
	"cmp"
	"math"
	"slices"
)

// ParamImportance is a parameter's importance with its bootstrap interval (95 %).
type ParamImportance struct {
	Param            string
	Value, Low, High float64
}

// Resamples of Importance's bootstrap.
const importanceResamples = 200

// Importance estimates how much of the variation of objective k each parameter explains on its
// own: the share of the variance of the objective's ranks between the bins of the parameter
// (its choices, or up to 10 equal-count bins of a numeric parameter), as epsilon-squared, the
// correlation ratio corrected for the share that bins of noise would explain (0 when the
// parameter does no better than chance). It sees non-monotone effects, unlike a rank
// correlation, and ranks make it indifferent to the objective's scale and outliers. It is the
// first-order term of a functional ANOVA over one parameter's binned marginal; interactions are
// not counted. Low and High are the 2.5 % and 97.5 % percentiles over 200 bootstrap resamples
// of the trials (bins and ranks fixed from the full sample), drawn from seed. Only complete
// trials with a value for objective k and the parameter active take part. The result is sorted
// most important first (ties by name); nil for an invalid space or objective.
func Importance(s Space, objs []Objective, k int, hist []Observation, seed uint64) []ParamImportance {
	g, err := compile(s)
	if err != nil || k < 0 || (len(objs) > 0 && k >= len(objs)) {
		return nil
	}
	rnd := rng(seed, 0, streamImp)
	rows := make([][]float64, len(hist))
	for j := range hist {
		rows[j] = decode(g, hist[j].Params)
	}
	out := make([]ParamImportance, 0, len(g.dims))
	for i := range g.dims {
		d := &g.dims[i]
		var xs, ys []float64
		for j := range hist {
			o := &hist[j]
			if o.State != Complete || k >= len(o.Values) || math.IsNaN(o.Values[k]) || math.IsInf(o.Values[k], 0) {
				continue
			}
			if math.IsNaN(rows[j][i]) {
				continue
			}
			xs = append(xs, rows[j][i])
			ys = append(ys, score(objs, o, k))
		}
		pi := ParamImportance{Param: d.p.Name}
		if len(xs) >= 3 {
			bins, nb := binOf(d, xs)
			y := midRanks(ys)
			pi.Value = epsilonSquared(bins, nb, y, nil)
			est := make([]float64, importanceResamples)
			idx := make([]int, len(xs))
			for b := range est {
				for j := range idx {
					idx[j] = rnd.IntN(len(xs))
				}
				est[b] = epsilonSquared(bins, nb, y, idx)
			}
			slices.Sort(est)
			pi.Low, pi.High = percentile(est, 0.025), percentile(est, 0.975)
		}
		out = append(out, pi)
	}
	slices.SortStableFunc(out, func(a, b ParamImportance) int {
		return cmp.Or(cmp.Compare(b.Value, a.Value), cmp.Compare(a.Param, b.Param))
	})
	return out
}

// binOf assigns each value a bin: a categorical param's choice, or one of up to 10 bins of
// equal count (at least 10 values each where possible) of a numeric one; equal values share
// a bin.
func binOf(d *dim, xs []float64) ([]int, int) {
	bins := make([]int, len(xs))
	if d.p.Kind == Categorical {
		for i, x := range xs {
			bins[i] = int(x)
		}
		return bins, d.n
	}
	nb := min(max(len(xs)/10, 2), 10)
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	for p, i := range order {
		b := p * nb / len(xs)
		if p > 0 && xs[i] == xs[order[p-1]] {
			b = bins[order[p-1]]
		}
		bins[i] = b
	}
	return bins, nb
}

// midRanks ranks values from 1, ties getting the mean of their ranks.
func midRanks(v []float64) []float64 {
	order := make([]int, len(v))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(v[a], v[b]) })
	r := make([]float64, len(v))
	for i := 0; i < len(order); {
		j := i
		for j+1 < len(order) && v[order[j+1]] == v[order[i]] {
			j++
		}
		for p := i; p <= j; p++ {
			r[order[p]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

// epsilonSquared is (SS_between - (B-1) MS_within) / (SS_total + MS_within), at least 0, over
// the points idx (nil: all), where B counts the non-empty bins.
func epsilonSquared(bins []int, nb int, y []float64, idx []int) float64 {
	sum := make([]float64, nb)
	cnt := make([]float64, nb)
	n, tot := 0.0, 0.0
	each := func(f func(i int)) {
		if idx == nil {
			for i := range y {
				f(i)
			}
			return
		}
		for _, i := range idx {
			f(i)
		}
	}
	each(func(i int) { sum[bins[i]] += y[i]; cnt[bins[i]]++; tot += y[i]; n++ })
	mean := tot / n
	ssT := 0.0
	each(func(i int) { ssT += (y[i] - mean) * (y[i] - mean) })
	ssB, groups := 0.0, 0
	for b := range sum {
		if cnt[b] > 0 {
			m := sum[b] / cnt[b]
			ssB += cnt[b] * (m - mean) * (m - mean)
			groups++
		}
	}
	if groups < 2 || n <= float64(groups) || ssT == 0 {
		return 0
	}
	msW := (ssT - ssB) / (n - float64(groups))
	return max(0, (ssB-float64(groups-1)*msW)/(ssT+msW))
}

// percentile is the q-quantile of sorted values, interpolating linearly (R's type 7).
func percentile(sorted []float64, q float64) float64 {
	h := q * float64(len(sorted)-1)
	lo := math.Floor(h)
	hi := min(int(lo)+1, len(sorted)-1)
	return sorted[int(lo)] + (h-lo)*(sorted[hi]-sorted[int(lo)])
}
