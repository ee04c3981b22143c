package search

import (
	"math"
	"math/bits"
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
	// For the marginals: logw[k] is kernel k's log weight.
	logw []float64
	// sorted[j*kernels+i] is the i-th kernel by centre in numeric dim j (the prior included);
	// widest[j] the largest width of an observation's kernel there.
	sorted []centre
	widest []float64
	// The same kernels' factors in that order, for logMarginals to read in sequence: centre,
	// 1/width and log weight plus normalising term; priorAt[j] is the prior's position.
	sortedMu, sortedInv, sortedConst []float64
	priorAt                          []int
	xs                               []float64 // logDensity's numeric coordinates of x
	bucket                           bucketScratch
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
	*z = parzen{dims: dims, kernels: len(pts) + 1, cumw: z.cumw, mu: z.mu, sigma: z.sigma, invSigma: z.invSigma, konst: z.konst, logp: z.logp, logw: z.logw, sorted: z.sorted[:0],
		num: z.num[:0], cat: z.cat[:0], catOff: z.catOff[:0], widest: z.widest, sortedMu: z.sortedMu, sortedInv: z.sortedInv, sortedConst: z.sortedConst, priorAt: z.priorAt[:0], xs: z.xs, bucket: z.bucket}
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
	z.cumw = resize(z.cumw, z.kernels)
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
	z.mu = resize(z.mu, z.kernels*nn)
	z.sigma = resize(z.sigma, z.kernels*nn)
	z.invSigma = resize(z.invSigma, z.kernels*nn)
	z.konst = resize(z.konst, z.kernels)
	z.logw = resize(z.logw, z.kernels)
	// The prior kernel sits at the centre and spans the range.
	for j, pos := range z.num {
		d := dims[pos]
		z.mu[n*nn+j], z.sigma[n*nn+j] = (d.lo+d.hi)/2, maxPriorScale*(d.hi-d.lo)
	}
	for k, p := range pts { // row by row: each observation's row is read once
		mu := z.mu[k*nn : (k+1)*nn]
		for j, pos := range z.num {
			mu[j] = p[pos]
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
	// Most weights are 1: the log of the last weight is kept.
	lastW, lastLogW := math.NaN(), 0.0
	for k := range z.kernels {
		w := priorWeight
		if k < n {
			w = weights[k]
		}
		if w != lastW {
			lastW, lastLogW = w, math.Log(w)
		}
		z.logw[k] = lastLogW - logTotal
		z.konst[k] = z.logw[k]
	}
	z.widest = resize(z.widest, nn)
	size := len(z.sorted)
	z.sortedMu, z.sortedInv, z.sortedConst = resize(z.sortedMu, size), resize(z.sortedInv, size), resize(z.sortedConst, size)
	// Dim by dim, the kernels in order of centre, so that the factors are written where
	// logMarginals reads them in sequence; each kernel's konst takes its dims' terms in the
	// dims' order all the same.
	for j, pos := range z.num {
		d := dims[pos]
		width := d.hi - d.lo
		// Optuna's magic clip: no kernel narrower than the range / (kernels + 1).
		narrowest, widestAllowed := width/min(100, 1+float64(z.kernels)), maxPriorScale*width
		// Many kernels of a large group have the clipped width and, in order of centre,
		// neighbours often share the gap that sets their width: the logs and inverses of both
		// are kept, which gives the same results without most of the logs.
		clipped := min(narrowest, widestAllowed)
		clip := widthLogs{sig: clipped, log: math.Log(clipped), inv: 1 / clipped}
		last := widthLogs{sig: math.NaN()}
		widest := 0.0
		for i, c := range z.sorted[j*z.kernels : (j+1)*z.kernels] {
			k := c.k
			sig := z.sigma[k*nn+j]
			if k < n {
				sig = min(max(sig, narrowest), widestAllowed)
				widest = max(widest, sig)
			}
			l := &clip
			if sig != clip.sig {
				if sig != last.sig {
					last = widthLogs{sig: sig, log: math.Log(sig), inv: 1 / sig}
				}
				l = &last
			}
			z.sigma[k*nn+j], z.invSigma[k*nn+j] = sig, l.inv
			nm := l.log + logSqrt2Pi + logMass((d.lo-c.mu)/sig, (d.hi-c.mu)/sig)
			z.konst[k] -= nm
			at := j*z.kernels + i
			z.sortedMu[at], z.sortedInv[at], z.sortedConst[at] = c.mu, l.inv, z.logw[k]+(-nm)
			if k == z.kernels-1 {
				z.priorAt = append(z.priorAt, i)
			}
		}
		z.widest[j] = widest
	}
	z.logp = resize(z.logp, z.kernels*z.catStride)
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

// widthLogs is a kernel width with its log and inverse.
type widthLogs struct{ sig, log, inv float64 }

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
		bucketCentres(z.sorted[at:], &z.bucket)
	}
}

// compareCentres orders centres by position, then by kernel: a total order, so every correct
// sort gives the same result.
func compareCentres(a, b centre) int {
	switch {
	case a.mu < b.mu:
		return -1
	case a.mu > b.mu:
		return 1
	}
	return a.k - b.k
}

func lessCentre(a, b centre) bool { return a.mu < b.mu || (a.mu == b.mu && a.k < b.k) }

// bucketCentres sorts s by compareCentres, as sortCentres does, in expected linear time: the
// centres are spread over len(s)/2 buckets of equal width between the least and the largest
// (a monotone map, so the buckets are in order), and each bucket is then sorted on its own.
// Sorting the kernels' centres took a seventh of a suggestion from 10,000 trials, most of it
// in mispredicted branches, which the buckets avoid.
func bucketCentres(s []centre, sc *bucketScratch) {
	n := len(s)
	if n < 64 {
		sortCentres(s)
		return
	}
	lo, hi := s[0].mu, s[0].mu
	for _, c := range s[1:] {
		lo, hi = min(lo, c.mu), max(hi, c.mu)
	}
	nb := n / 2
	scale := float64(nb) / (hi - lo)
	if hi == lo || math.IsInf(hi-lo, 0) || math.IsInf(scale, 0) {
		sortCentres(s)
		return
	}
	if cap(sc.at) < nb+1 {
		sc.at = make([]int32, nb+1)
	}
	at := sc.at[:nb+1] // at[b+1] counts bucket b, then at[b] is where bucket b starts
	clear(at)
	bucketOf := func(mu float64) int { return min(int((mu-lo)*scale), nb-1) }
	for _, c := range s {
		at[bucketOf(c.mu)+1]++
	}
	for b := 1; b <= nb; b++ {
		at[b] += at[b-1]
	}
	if cap(sc.tmp) < n {
		sc.tmp = make([]centre, n)
	}
	tmp := sc.tmp[:n]
	for _, c := range s {
		b := bucketOf(c.mu)
		tmp[at[b]] = c
		at[b]++
	}
	// at[b] is now where bucket b ends.
	copy(s, tmp)
	from := int32(0)
	for _, end := range at[:nb] {
		if b := s[from:end]; len(b) > 12 {
			sortCentres(b)
		} else {
			// Most buckets hold a few centres: insertion, without a call.
			for i := 1; i < len(b); i++ {
				for j := i; j > 0 && lessCentre(b[j], b[j-1]); j-- {
					b[j], b[j-1] = b[j-1], b[j]
				}
			}
		}
		from = end
	}
}

// bucketScratch holds bucketCentres' arrays between calls.
type bucketScratch struct {
	at  []int32
	tmp []centre
}

// sortCentres sorts by compareCentres. It is a quicksort with the comparison written inline:
// with the comparison behind a function value (slices.SortFunc) sorting 257 kernels in each
// of 10 dims took a seventh of a suggestion from 10,000 trials. Past a depth of 2 log n it
// hands over to slices.SortFunc, which bounds the worst case.
func sortCentres(s []centre) {
	depth := 2 * bits.Len(uint(len(s)))
	for len(s) > 12 {
		if depth == 0 {
			slices.SortFunc(s, compareCentres)
			return
		}
		depth--
		// The median of the first, middle and last goes to the end as the pivot.
		last, mid := len(s)-1, len(s)/2
		if lessCentre(s[mid], s[0]) {
			s[mid], s[0] = s[0], s[mid]
		}
		if lessCentre(s[last], s[0]) {
			s[last], s[0] = s[0], s[last]
		}
		if lessCentre(s[mid], s[last]) {
			s[mid], s[last] = s[last], s[mid]
		}
		pivot, p := s[last], 0
		for i := range last {
			if lessCentre(s[i], pivot) {
				s[i], s[p] = s[p], s[i]
				p++
			}
		}
		s[p], s[last] = s[last], s[p]
		// Recurse into the smaller side, loop on the larger.
		if p < last-p {
			sortCentres(s[:p])
			s = s[p+1:]
		} else {
			sortCentres(s[p+1:])
			s = s[:p]
		}
	}
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && lessCentre(s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
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

// resize returns a slice of length n, reusing s's array when it is large enough; its
// contents are unspecified: for arrays that are then written in full.
func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
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
	z.xs = z.xs[:0]
	for _, pos := range z.num {
		z.xs = append(z.xs, x[pos])
	}
	xs := z.xs
	best := math.Inf(-1)
	// Newest kernels first (the prior, then the observations from the last): they tend to lie
	// where the candidates are, so the best term is found early and most others are cut short.
	// The kernels not cut short go to buf in that order, the last kernel first.
	m := 0
kernels:
	for k := z.kernels - 1; k >= 0; k-- {
		s := z.konst[k]
		mu, inv := z.mu[k*nn:(k+1)*nn:(k+1)*nn], z.invSigma[k*nn:(k+1)*nn:(k+1)*nn]
		for j, xv := range xs {
			t := (xv - mu[j]) * inv[j]
			s -= 0.5 * t * t
			// Every factor only lowers s (the categorical ones are log probabilities), and best
			// only rises: a kernel already 50 below best is left out of the sum below whatever
			// its other factors, so they are not computed.
			if s-best <= -50 {
				continue kernels
			}
		}
		base := k * z.catStride
		for j, pos := range z.cat {
			s += z.logp[base+z.catOff[j]+int(x[pos])]
		}
		buf[m] = s
		m++
		// Not max: no term is NaN (every factor is finite), and of +0 and -0 either gives the
		// same sum below; max's handling of both costs a tenth of the loop.
		if s > best {
			best = s
		}
	}
	if math.IsInf(best, -1) {
		return best
	}
	sum := 0.0
	for i := m - 1; i >= 0; i-- { // in order of kernel
		// Below e^-50 a kernel cannot change the sum in double precision: skip its exp.
		if s := buf[i]; s-best > -50 {
			sum += math.Exp(s - best)
		}
	}
	return best + math.Log(sum)
}

// boundNear is how many kernels on each side of x the quick lower bound of marginalsBounds
// takes in each dim.
const boundNear = 8

// marginalsBounds bounds logMarginals(x) from below (lo) and above (hi) for less work: the exps
// are a polynomial's, within a relative 1e-10 and on the right side, and the dims' logs are one
// log of a product. With near 0 both sum the terms logMarginals does (hi also those it leaves
// out as negligible), and they differ from it by about 1e-9 a dim. With near above 0, a
// quicker lower bound: in each numeric dim only the prior's term and those of the near
// kernels on each side of x (by centre) that logMarginals also counts, which hold most of the
// marginal's mass where x lies among narrow kernels, as a large group's are; hi is then +Inf.
// buf has room for one value per kernel.
func (z *parzen) marginalsBounds(x []float64, buf []float64, near int) (lo, hi float64) {
	// Each dim's sum is at least 1 (its best term) and at most its number of terms: the
	// products take a log only every hundred dims or so.
	total, margin, logLo, logHi, prodLo, prodHi := 0.0, 0.0, 0.0, 0.0, 1.0, 1.0
	add := func(terms []float64, best float64) {
		sum, small := sumTerms(terms, best)
		total += best
		margin += math.Abs(best) + 64
		if prodLo *= sum; prodLo > 1e200 {
			logLo += math.Log(prodLo)
			prodLo = 1
		}
		if prodHi *= sum + float64(small)*2e-22; prodHi > 1e200 {
			logHi += math.Log(prodHi)
			prodHi = 1
		}
	}
	for j, pos := range z.num {
		// The window logMarginals reads, computed as it does, so that no term outside it
		// counts; the whole of it, or near kernels each side of x.
		xv := x[pos]
		reach := marginReach * z.widest[j]
		lo, hi := xv-reach, xv+reach
		var from, end int
		if near > 0 {
			mid := z.firstAt(j, xv)
			from, end = max(mid-near, 0), min(mid+near, z.kernels)
		} else {
			from, end = z.firstAt(j, lo), z.kernels
		}
		m, best := z.marginTerms(j, xv, lo, hi, from, end, buf)
		add(buf[:m], best)
	}
	for j, pos := range z.cat {
		best := z.catTerms(j, int(x[pos]), buf)
		add(buf[:z.kernels], best)
	}
	// The polynomial's error, and beside it rounding: a few units in the last place of the
	// terms' sizes, far below the margin.
	lo = total + (logLo + math.Log(prodLo*(1-1e-12)))
	hi = total + (logHi + math.Log(prodHi*(1+1e-9)))
	margin = 1e-9 * (margin + math.Abs(total) + logHi)
	if near > 0 {
		return lo - margin, math.Inf(1)
	}
	return lo - margin, hi + margin
}

// sumTerms is the sum of expPoly(s-best) over the terms within e^-50 of best, and how many
// are not.
func sumTerms(terms []float64, best float64) (sum float64, small int) {
	for _, s := range terms {
		if z := s - best; z > -50 {
			sum += expPoly(z)
		} else {
			small++
		}
	}
	return sum, small
}

// expPoly is e^z for z in [-700, 0] within a relative 4e-11, never above it but for
// rounding (about 1e-14): z = (k + f) ln(2)/64 with k whole and |f| <= 1/2, e^z is
// 2^(k/64) (a power of two times one of 64 tabled values) times e^w, w = f ln(2)/64, and
// e^w's Taylor polynomial of degree 3 is below it by its remainder e^ξ w^4/4!, at most 4e-11
// of e^w.
func expPoly(z float64) float64 {
	y := z * (64 / math.Ln2)
	k := int64(y - 0.5) // y <= 0: rounds y to the nearest integer
	w := (y - float64(k)) * (math.Ln2 / 64)
	p := 1 + w*(1+w*(1.0/2+w*(1.0/6)))
	return math.Float64frombits(math.Float64bits(p*exp2Sixtyfourths[k&63]) + uint64(k>>6)<<52)
}

// exp2Sixtyfourths[i] is 2^(i/64).
var exp2Sixtyfourths = func() (t [64]float64) {
	for i := range t {
		t[i] = math.Exp2(float64(i) / 64)
	}
	return t
}()

// marginReach: at 8 widths a normal density is e^-32 of its peak, too little to change a
// candidate's rank.
const marginReach = 8

// logMarginals is the sum over dims of the log density at x of each dim's marginal (the
// mixture of that dim's kernel factors); buf has room for one value per kernel.
func (z *parzen) logMarginals(x []float64, buf []float64) float64 {
	total := 0.0
	buf = buf[:z.kernels]
	for j, pos := range z.num {
		// Only kernels within marginReach widths of x count: a binary search in the sorted
		// centres finds the first.
		xv := x[pos]
		reach := marginReach * z.widest[j]
		lo := xv - reach
		m, best := z.marginTerms(j, xv, lo, xv+reach, z.firstAt(j, lo), z.kernels, buf)
		sum := 0.0
		for _, s := range buf[:m] {
			if s-best > -50 {
				sum += math.Exp(s - best)
			}
		}
		total += best + math.Log(sum)
	}
	for j, pos := range z.cat {
		best := z.catTerms(j, int(x[pos]), buf)
		sum := 0.0
		for _, s := range buf[:z.kernels] {
			sum += math.Exp(s - best)
		}
		total += best + math.Log(sum)
	}
	return total
}

// firstAt is the first position in numeric dim j's centres, in order, of a centre at or
// above v.
func (z *parzen) firstAt(j int, v float64) int {
	mus := z.sortedMu[j*z.kernels : (j+1)*z.kernels]
	from, to := 0, len(mus)
	for from < to {
		h := int(uint(from+to) >> 1)
		if mus[h] < v {
			from = h + 1
		} else {
			to = h
		}
	}
	return from
}

// marginTerms writes to buf the terms of numeric dim j's marginal at xv: the prior's first,
// then in order of centre those of the kernels at positions [from, end) with centres in
// [lo, hi]. It returns how many and the largest.
func (z *parzen) marginTerms(j int, xv, lo, hi float64, from, end int, buf []float64) (int, float64) {
	at := j * z.kernels
	mus := z.sortedMu[at : at+z.kernels]
	inv, konst := z.sortedInv[at:at+z.kernels], z.sortedConst[at:at+z.kernels]
	p := z.priorAt[j]
	t := (xv - mus[p]) * inv[p]
	best := konst[p] - 0.5*t*t
	buf[0] = best
	m := 1
	for i := from; i < end && mus[i] <= hi; i++ {
		if i == p || mus[i] < lo {
			continue
		}
		t := (xv - mus[i]) * inv[i]
		s := konst[i] - 0.5*t*t
		buf[m] = s
		m++
		if s > best { // not max: as in logDensity
			best = s
		}
	}
	return m, best
}

// catTerms writes to buf the terms of categorical dim j's marginal at choice c, one per
// kernel, and returns the largest.
func (z *parzen) catTerms(j, c int, buf []float64) float64 {
	best := math.Inf(-1)
	for k := range z.kernels {
		s := z.logw[k] + z.logp[k*z.catStride+z.catOff[j]+c]
		buf[k] = s
		best = max(best, s)
	}
	return best
}

// densities1 is logDensity(x) and logMarginals(x), bit for bit, for an estimator of one
// numeric dim, from one pass over the kernels: there the marginal is the mixture itself and
// their terms are the same numbers (the same factors, in the same operations), only summed in
// other orders over other sets (every term within e^-50 of the best, in kernel order; those
// near x, in order of centre). When both sets have the same best term, as they have but for
// a kernel far from x outweighing all near it, each term's exp serves both sums. sk and ex
// have room for one value per kernel.
func (z *parzen) densities1(xv float64, sk, ex []float64) (joint, marg float64) {
	k := z.kernels
	mus, inv, konst, srt := z.sortedMu[:k], z.sortedInv[:k], z.sortedConst[:k], z.sorted[:k]
	sk, ex = sk[:k], ex[:k]
	best := math.Inf(-1)
	for i, c := range srt {
		t := (xv - mus[i]) * inv[i]
		s := konst[i] - 0.5*t*t
		sk[c.k] = s
		if s > best { // not max: as in logDensity
			best = s
		}
	}
	if math.IsInf(best, -1) {
		joint = best
	} else {
		sum := 0.0
		for i, s := range sk {
			e := 0.0
			if s-best > -50 {
				e = math.Exp(s - best)
				sum += e
			}
			ex[i] = e
		}
		joint = best + math.Log(sum)
	}
	// The marginal's terms, as marginTerms takes them: the prior's, then those of the kernels
	// centred within marginReach widths of x, in order of centre.
	reach := marginReach * z.widest[0]
	lo, hi := xv-reach, xv+reach
	p := z.priorAt[0]
	from := z.firstAt(0, lo)
	end := from
	bestM := sk[srt[p].k]
	for ; end < k && mus[end] <= hi; end++ {
		if s := sk[srt[end].k]; end != p && mus[end] >= lo && s > bestM {
			bestM = s
		}
	}
	term := func(i int) float64 {
		s := sk[srt[i].k]
		switch {
		case !(s-bestM > -50):
			return 0
		case bestM == best:
			return ex[srt[i].k]
		}
		return math.Exp(s - bestM)
	}
	sum := term(p)
	for i := from; i < end; i++ {
		if i != p && mus[i] >= lo {
			sum += term(i)
		}
	}
	marg = 0.0
	marg += bestM + math.Log(sum)
	return joint, marg
}

// densities1Bounds bounds the sum of densities1's two values, joint+marg, from below and above
// for less work: the same terms, each e^(s-best) a polynomial's (expPoly, within a relative
// 4e-11 and below but for rounding) instead of math.Exp's. The margin, a relative 1e-9, covers
// the polynomial, the sums' rounding in any order and the logs' by far; ok is false where the
// densities are not finite. sk has room for one value per kernel.
func (z *parzen) densities1Bounds(xv float64, sk []float64) (lo, hi float64, ok bool) {
	k := z.kernels
	mus, inv, konst := z.sortedMu[:k], z.sortedInv[:k], z.sortedConst[:k]
	sk = sk[:k]
	// The terms as densities1 computes them, here in order of centre. The marginal's are the
	// prior's and those of the window [from, end) within its reach; their best is bestM.
	reach := marginReach * z.widest[0]
	wlo, whi := xv-reach, xv+reach
	p := z.priorAt[0]
	from := z.firstAt(0, wlo)
	end := from
	for end < k && mus[end] <= whi {
		end++
	}
	best := math.Inf(-1)
	for i := range sk {
		t := (xv - mus[i]) * inv[i]
		s := konst[i] - 0.5*t*t
		sk[i] = s
		if s > best {
			best = s
		}
	}
	bestM := sk[p]
	for _, s := range sk[from:end] {
		if s > bestM {
			bestM = s
		}
	}
	if math.IsInf(best, -1) || math.IsInf(bestM, -1) {
		return 0, 0, false
	}
	sum := func(terms []float64, ref float64) float64 {
		v := 0.0
		for _, s := range terms {
			if s-ref > -50 {
				v += expPoly(s - ref)
			}
		}
		return v
	}
	// The sums in any order, the margin covers their rounding; the window's terms serve both
	// when the bests are the same, as they are but for a kernel far from x outweighing all
	// near it.
	window := sum(sk[from:end], bestM)
	sumM := window
	if p < from || p >= end {
		sumM += sum(sk[p:p+1], bestM)
	}
	if bestM != best {
		window = sum(sk[from:end], best)
	}
	sumJ := sum(sk[:from], best) + window + sum(sk[end:], best)
	// Each sum is at least 1 (its best term) and at most k: one log of the product.
	v := best + bestM + math.Log(sumJ*sumM)
	// |best| and |bestM| also bound the sizes of the two densities, within log(k) each: the
	// margin covers the rounding of a score made of them.
	margin := 1e-9*(4+math.Abs(best)+math.Abs(bestM)+math.Abs(v)+2*math.Log(float64(k))) + 1e-15*float64(k)
	return v - margin, v + margin, finite(v)
}

// nearLog1 is a lower bound on both logDensity(x) and logMarginals(x) of an estimator of one
// numeric dim (densities1), within rounding: the log of the sum of a few of the terms both
// count, the prior's and those of the near kernels each side of x by centre that lie
// within the marginal's reach. Where x lies among narrow kernels, as in a large group, they
// hold most of the mass.
func (z *parzen) nearLog1(xv float64, near int) float64 {
	k := z.kernels
	mus, inv, konst := z.sortedMu[:k], z.sortedInv[:k], z.sortedConst[:k]
	reach := marginReach * z.widest[0]
	lo, hi := xv-reach, xv+reach
	mid := z.firstAt(0, xv)
	from, end := max(mid-near, 0), min(mid+near, k)
	p := z.priorAt[0]
	term := func(i int) float64 {
		t := (xv - mus[i]) * inv[i]
		return konst[i] - 0.5*t*t
	}
	counts := func(i int) bool { return i != p && mus[i] >= lo && mus[i] <= hi }
	best := term(p)
	for i := from; i < end; i++ {
		if counts(i) {
			best = max(best, term(i))
		}
	}
	// A polynomial's exps, below math.Exp's but for rounding (1e-13 of them), of the terms
	// within e^-50 of the best (the polynomial's range ends at e^-700): the factor below keeps
	// the sum below the terms' true sum.
	sum := 0.0
	add := func(i int) {
		if z := term(i) - best; z > -50 {
			sum += expPoly(z)
		}
	}
	add(p)
	for i := from; i < end; i++ {
		if counts(i) {
			add(i)
		}
	}
	return best + math.Log(sum*(1-1e-12))
}
