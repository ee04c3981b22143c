package search

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// parzen is a multivariate Parzen estimator, as in Optuna's multivariate TPE: a weighted
// mixture of kernels, one per observation plus a prior kernel, each the product over the dims
// of a normal truncated to the dim's interval (numeric dims; bandwidth by Scott's rule) or a
// smoothed categorical distribution (categorical dims).
type parzen struct {
	dims    []*dim
	num     []int // positions in dims of the numeric dims
	cat     []int // positions in dims of the categorical dims
	kernels int
	cumw    []float64 // cumulative normalised weights, for drawing a kernel
	// Numeric dims, kernel-major: mu[k*len(num)+j].
	mu, sigma, invSigma []float64
	// konst[k] is the kernel's log weight plus the normalising terms of its numeric factors.
	konst []float64
	// For the marginals: logw[k] is kernel k's log weight, norm[k*len(num)+j] the log
	// normalising term of its factor in numeric dim j.
	logw, norm []float64
	// sorted[j*kernels+i] is the i-th kernel by centre in numeric dim j (the prior included);
	// widest[j] the largest width of an observation's kernel there.
	sorted []centre
	widest []float64
	// Categorical dims: logp[k*catStride+catOff[j]+c] is log P(choice c) in kernel k.
	logp      []float64
	catOff    []int
	catStride int
}

const (
	// bandwidth0 is the magnitude of Scott's-rule bandwidth relative to the range (Optuna's 0.2).
	bandwidth0 = 0.2
	// maxPriorScale: the widest kernel spans the whole range.
	maxPriorScale = 1.0
	logSqrt2Pi    = 0.9189385332046727
)

// fit fits the estimator to pts (one row per observation, one column per dim) with the given
// observation weights; priorWeight is the prior kernel's weight. Bandwidths come from the
// distances between neighbouring observations in each dim (neighbours) or from Scott's rule.
// It reuses z's arrays.
func (z *parzen) fit(dims []*dim, pts [][]float64, weights []float64, priorWeight float64, neighbours bool) *parzen {
	*z = parzen{dims: dims, kernels: len(pts) + 1, cumw: z.cumw, mu: z.mu, sigma: z.sigma, invSigma: z.invSigma, konst: z.konst, logp: z.logp, logw: z.logw, norm: z.norm, sorted: z.sorted[:0]}
	for j, d := range dims {
		if d.p.Kind == Categorical {
			z.catOff = append(z.catOff, z.catStride)
			z.catStride += d.n
			z.cat = append(z.cat, j)
		} else {
			z.num = append(z.num, j)
		}
	}
	n := len(pts)
	total := priorWeight
	for _, w := range weights {
		total += w
	}
	z.cumw = grow(z.cumw, z.kernels)
	acc := 0.0
	for k := range z.kernels {
		w := priorWeight
		if k < n {
			w = weights[k]
		}
		acc += w / total
		z.cumw[k] = acc
	}
	nn := len(z.num)
	z.mu = grow(z.mu, z.kernels*nn)
	z.sigma = grow(z.sigma, z.kernels*nn)
	z.invSigma = grow(z.invSigma, z.kernels*nn)
	z.konst = grow(z.konst, z.kernels)
	z.logw = grow(z.logw, z.kernels)
	z.norm = grow(z.norm, z.kernels*nn)
	// The prior kernel sits at the centre and spans the range.
	for j, pos := range z.num {
		d := dims[pos]
		z.mu[n*nn+j], z.sigma[n*nn+j] = (d.lo+d.hi)/2, maxPriorScale*(d.hi-d.lo)
		for k := range n {
			z.mu[k*nn+j] = pts[k][pos]
		}
	}
	z.sortCentres()
	if neighbours {
		z.neighbourBandwidths()
	} else {
		scott := bandwidth0 * math.Pow(float64(max(n, 1)), -1/float64(len(dims)+4))
		for j, pos := range z.num {
			for k := range n {
				z.sigma[k*nn+j] = scott * (dims[pos].hi - dims[pos].lo)
			}
		}
	}
	logTotal := math.Log(total)
	for k := range z.kernels {
		w := priorWeight
		if k < n {
			w = weights[k]
		}
		c := math.Log(w) - logTotal
		z.logw[k] = c
		for j, pos := range z.num {
			d := dims[pos]
			width := d.hi - d.lo
			sig := z.sigma[k*nn+j]
			if k < n { // Optuna's magic clip: no kernel narrower than the range / (kernels + 1)
				sig = min(max(sig, width/min(100, 1+float64(z.kernels))), maxPriorScale*width)
			}
			mu := z.mu[k*nn+j]
			z.sigma[k*nn+j], z.invSigma[k*nn+j] = sig, 1/sig
			nm := math.Log(sig) + logSqrt2Pi + logMass((d.lo-mu)/sig, (d.hi-mu)/sig)
			z.norm[k*nn+j] = -nm
			c -= nm
		}
		z.konst[k] = c
	}
	z.widest = grow(z.widest, nn)
	for k := range n {
		for j := range nn {
			z.widest[j] = max(z.widest[j], z.sigma[k*nn+j])
		}
	}
	z.logp = grow(z.logp, z.kernels*z.catStride)
	for j, pos := range z.cat {
		nc := dims[pos].n
		for k := range z.kernels {
			row := z.logp[k*z.catStride+z.catOff[j] : k*z.catStride+z.catOff[j]+nc]
			if k == n {
				for c := range row {
					row[c] = -math.Log(float64(nc))
				}
				continue
			}
			// Optuna's smoothing: every choice gets priorWeight/kernels, the observed one 1 more.
			fill := priorWeight / float64(z.kernels)
			norm := math.Log(fill*float64(nc) + 1)
			for c := range row {
				row[c] = math.Log(fill) - norm
			}
			row[int(pts[k][pos])] = math.Log(fill+1) - norm
		}
	}
	return z
}

// centre is a kernel's centre in one dim.
type centre struct {
	mu float64
	k  int
}

// sortCentres fills sorted: in each numeric dim, the kernels in increasing order of centre
// (ties by kernel).
func (z *parzen) sortCentres() {
	nn := len(z.num)
	for j := range z.num {
		at := len(z.sorted)
		for k := range z.kernels {
			z.sorted = append(z.sorted, centre{z.mu[k*nn+j], k})
		}
		slices.SortFunc(z.sorted[at:], func(a, b centre) int {
			switch {
			case a.mu < b.mu:
				return -1
			case a.mu > b.mu:
				return 1
			}
			return a.k - b.k
		})
	}
}

// neighbourBandwidths sets each observation kernel's bandwidth in each numeric dim to the
// larger of the gaps to its neighbours among the kernels' centres (the prior's included), with
// the dim's bounds as outer neighbours except at the two ends, which take the gap on their
// inner side (Optuna's univariate rule, used here per dim of a product kernel). Kernels in a
// dense cluster of good points get narrow, so the search refines around them faster than with
// one bandwidth for all.
func (z *parzen) neighbourBandwidths() {
	nn := len(z.num)
	for j, pos := range z.num {
		d := z.dims[pos]
		order := z.sorted[j*z.kernels : (j+1)*z.kernels]
		last := len(order) - 1
		for i, c := range order {
			if c.k == z.kernels-1 {
				continue // the prior keeps its width
			}
			left, right := d.lo, d.hi
			if i > 0 {
				left = order[i-1].mu
			}
			if i < last {
				right = order[i+1].mu
			}
			gap := max(c.mu-left, right-c.mu)
			switch {
			case last == 0:
			case i == 0:
				gap = right - c.mu
			case i == last:
				gap = c.mu - left
			}
			z.sigma[c.k*nn+j] = gap
		}
	}
}

// grow returns a slice of n zeros, reusing s's array when it is large enough.
func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// tailCut: beyond 6 standard deviations a tail holds less than 1e-9 of the mass, which cannot
// change a candidate's rank; the tail is then left out instead of computed.
const tailCut = 6

// logMass is log(Φ(b) - Φ(a)), a kernel's mass inside its dim's interval.
func logMass(a, b float64) float64 {
	if a > 0 { // both bounds above the mean: work in the upper tail, where it is accurate
		return math.Log(max(0.5*(math.Erfc(a/math.Sqrt2)-math.Erfc(b/math.Sqrt2)), 1e-300))
	}
	if b < 0 {
		return math.Log(max(0.5*(math.Erfc(-b/math.Sqrt2)-math.Erfc(-a/math.Sqrt2)), 1e-300))
	}
	out := 0.0 // the mass outside [a, b], one tail on each side of the mean
	if a > -tailCut {
		out += 0.5 * math.Erfc(-a/math.Sqrt2)
	}
	if b < tailCut {
		out += 0.5 * math.Erfc(b/math.Sqrt2)
	}
	if out == 0 {
		return 0
	}
	return math.Log1p(-out)
}

// sample draws one point into x (one coordinate per dim): from the mixture (one kernel for
// every dim), or with marginals from the product of its marginals (a kernel drawn per dim).
func (z *parzen) sample(r *rand.Rand, x []float64, marginals bool) {
	kernel := func() int { return min(sort.SearchFloat64s(z.cumw, r.Float64()*z.cumw[len(z.cumw)-1]), z.kernels-1) }
	k := kernel()
	nn := len(z.num)
	for j, pos := range z.num {
		if marginals && j > 0 {
			k = kernel()
		}
		d := z.dims[pos]
		x[pos] = truncNormal(r, z.mu[k*nn+j], z.sigma[k*nn+j], d.lo, d.hi)
	}
	for j, pos := range z.cat {
		if marginals && (j > 0 || len(z.num) > 0) {
			k = kernel()
		}
		row := z.logp[k*z.catStride+z.catOff[j] : k*z.catStride+z.catOff[j]+z.dims[pos].n]
		u, acc := r.Float64(), 0.0
		c := len(row) - 1
		for i, lp := range row {
			acc += math.Exp(lp)
			if u < acc {
				c = i
				break
			}
		}
		x[pos] = float64(c)
	}
}

// truncNormal draws from N(mu, sigma) truncated to [lo, hi] by inverting the distribution
// function, on the side of the mean where it is accurate.
func truncNormal(r *rand.Rand, mu, sigma, lo, hi float64) float64 {
	a, b := (lo-mu)/sigma, (hi-mu)/sigma
	flip := a > 0
	if flip {
		a, b = -b, -a
	}
	pa, pb := 0.5*math.Erfc(-a/math.Sqrt2), 0.5*math.Erfc(-b/math.Sqrt2)
	u := pa + r.Float64()*(pb-pa)
	zv := -math.Sqrt2 * math.Erfcinv(2*u)
	if math.IsNaN(zv) || math.IsInf(zv, 0) {
		zv = (a + b) / 2
	}
	if flip {
		zv = -zv
	}
	return min(max(mu+sigma*zv, lo), hi)
}

// logDensity is the log of the mixture's density at x; buf has room for one value per kernel.
func (z *parzen) logDensity(x []float64, buf []float64) float64 {
	nn := len(z.num)
	best := math.Inf(-1)
	for k := range z.kernels {
		s := z.konst[k]
		mu, inv := z.mu[k*nn:(k+1)*nn], z.invSigma[k*nn:(k+1)*nn]
		for j, pos := range z.num {
			t := (x[pos] - mu[j]) * inv[j]
			s -= 0.5 * t * t
		}
		base := k * z.catStride
		for j, pos := range z.cat {
			s += z.logp[base+z.catOff[j]+int(x[pos])]
		}
		buf[k] = s
		best = max(best, s)
	}
	if math.IsInf(best, -1) {
		return best
	}
	sum := 0.0
	for _, s := range buf[:z.kernels] {
		// Below e^-50 a kernel cannot change the sum in double precision: skip its exp.
		if s-best > -50 {
			sum += math.Exp(s - best)
		}
	}
	return best + math.Log(sum)
}

// marginReach: at 8 widths a normal density is e^-32 of its peak, too little to change a
// candidate's rank.
const marginReach = 8

// logMarginals is the sum over dims of the log density at x of each dim's marginal (the
// mixture of that dim's kernel factors); buf has room for one value per kernel.
func (z *parzen) logMarginals(x []float64, buf []float64) float64 {
	nn := len(z.num)
	total := 0.0
	prior := z.kernels - 1
	for j, pos := range z.num {
		// Only kernels within marginReach widths of x count: a binary search in the sorted
		// centres finds them.
		order := z.sorted[j*z.kernels : (j+1)*z.kernels]
		reach := marginReach * z.widest[j]
		from, _ := slices.BinarySearchFunc(order, x[pos]-reach, func(c centre, v float64) int { return cmp.Compare(c.mu, v) })
		term := func(k int) float64 {
			t := (x[pos] - z.mu[k*nn+j]) * z.invSigma[k*nn+j]
			return z.logw[k] + z.norm[k*nn+j] - 0.5*t*t
		}
		buf = append(buf[:0], term(prior))
		for _, c := range order[from:] {
			if c.mu > x[pos]+reach {
				break
			}
			if c.k != prior {
				buf = append(buf, term(c.k))
			}
		}
		best := math.Inf(-1)
		for _, s := range buf {
			best = max(best, s)
		}
		sum := 0.0
		for _, s := range buf {
			if s-best > -50 {
				sum += math.Exp(s - best)
			}
		}
		total += best + math.Log(sum)
	}
	buf = buf[:z.kernels]
	for j, pos := range z.cat {
		best := math.Inf(-1)
		for k := range z.kernels {
			s := z.logw[k] + z.logp[k*z.catStride+z.catOff[j]+int(x[pos])]
			buf[k] = s
			best = max(best, s)
		}
		sum := 0.0
		for _, s := range buf[:z.kernels] {
			sum += math.Exp(s - best)
		}
		total += best + math.Log(sum)
	}
	return total
}
