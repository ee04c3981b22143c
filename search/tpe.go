package search

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// tpe is the multivariate Tree-structured Parzen Estimator (Bergstra et al. 2011; the
// multivariate form of Falkner et al. 2018 as Optuna implements it). The first
// n_startup_trials (10) come from the Halton sequence. After that the usable history
// (complete, pruned, and infeasible trials; failed ones are ignored) plus the pending trials is
// split into a "below" group, the best ceil(gamma*n) (gamma 0.1, at most max_below, 25), and an
// "above" group, the rest and every pending trial (the constant liar, constant_liar: a trial
// still running counts as a bad one, so parallel suggestions move away from it instead of
// piling onto the same point). Each group gets a Parzen estimator, l(x) and g(x): a mixture of
// product kernels over the params, one per trial plus a prior kernel (weight prior_weight, 1),
// older trials of the above group weighted down as Optuna does. n_ei_candidates (24) points
// are drawn and the one with the largest log l(x) - log g(x) wins.
//
// Three choices differ from Optuna's multivariate defaults, each measured on bench/search
// (docs/search.md; they were chosen on those problems, so that comparison is not an
// independent confirmation):
//   - bandwidth: neighbours (default) sets each kernel's width in each dimension from the gaps
//     to the neighbouring trials (Optuna's univariate rule); scott is one width for all by
//     Scott's rule, as Optuna's multivariate TPE does.
//   - proposal: marginals (default) draws candidates from the product of l's marginals, a
//     kernel per dimension, so candidates combine the good values of different trials; joint
//     draws them from l itself.
//   - score: blend (default) adds to the joint log ratio the sum over dimensions of the
//     marginals' log ratios, the score of univariate TPE: the joint term keeps interactions,
//     the marginal term pulls each dimension to its good values, which the joint ratio alone
//     does poorly in 10 dimensions; joint is the joint ratio alone.
type tpe struct {
	startup, ncand, maxBelow, maxAbove int
	gamma, priorWeight                 float64
	liar, neighbours, marginals, blend bool
	rows                               rowCache
	scratch                            struct {
		cands, above    []int
		all, below      []int
		low, high       parzen // the groups' estimators, their arrays reused
		lowPts, highPts [][]float64
		keep            []int
		highW, dens, xs []float64
		ex, lows        []float64 // bestCandidate1's
		evals           []candidate
		bar             bar      // bestSingle's, from the last call
		pre             []int    // bestSingle's first pass
		feasible        []scored // best's, with several objectives
		pos             []int
		scores          []float64
	}
}

func newTPE(o *options) (Sampler, error) {
	t := &tpe{}
	var err error
	set := func(f func() error) {
		if err == nil {
			err = f()
		}
	}
	set(func() (e error) { t.startup, e = o.int("n_startup_trials", 10, 0, math.MaxInt32); return })
	set(func() (e error) { t.ncand, e = o.int("n_ei_candidates", 24, 1, 100_000); return })
	set(func() (e error) { t.gamma, e = o.float("gamma", 0.1, 0, 1); return })
	set(func() (e error) { t.maxBelow, e = o.int("max_below", 25, 1, math.MaxInt32); return })
	set(func() (e error) { t.maxAbove, e = o.int("max_above", 256, 2, math.MaxInt32); return })
	set(func() (e error) { t.priorWeight, e = o.float("prior_weight", 1, 1e-9, 1e9); return })
	set(func() (e error) { t.liar, e = o.bool("constant_liar", true); return })
	var score, proposal, bandwidth string
	set(func() (e error) { score, e = o.word("score", "blend", "joint"); return })
	set(func() (e error) { proposal, e = o.word("proposal", "marginals", "joint"); return })
	set(func() (e error) { bandwidth, e = o.word("bandwidth", "neighbours", "neighbors", "scott"); return })
	t.blend, t.marginals, t.neighbours = score == "blend", proposal == "marginals", bandwidth != "scott"
	return t, err
}

func (t *tpe) Suggest(r Request) (Params, error) {
	g, err := compile(r.Space)
	if err != nil {
		return nil, err
	}
	rows, ranks, usable := t.rows.coords(r.Space, r.Objectives, g, r.History)
	if usable < t.startup {
		return haltonParams(g, r.Seed, r.Number), nil
	}
	var pend [][]float64
	if t.liar {
		pend = t.rows.pendingCoords(g, r.Pending)
	}
	rnd := rng(r.Seed, r.Number, streamTPE)
	out := make(Params, len(g.dims))
	for _, grp := range groups(g) {
		// Every group draws the same amount from rnd whether or not it is active, so that
		// one group's activity does not shift another's draws.
		sub := rand.New(rand.NewPCG(rnd.Uint64(), rnd.Uint64()))
		if !g.active(grp[0], out) {
			continue
		}
		t.suggestGroup(g, grp, r, rows, ranks, pend, sub, out)
	}
	return out, nil
}

// groups partitions the params by condition: the unconditional ones form the first group,
// params with the same condition another, in an order that puts parents first.
func groups(g *geometry) [][]int {
	var out [][]int
	key := func(i int) string {
		d := &g.dims[i]
		if d.parent < 0 {
			return ""
		}
		s := d.p.When.Param + "\x00"
		for _, w := range d.when {
			if w {
				s += "1"
			} else {
				s += "0"
			}
		}
		return s
	}
	pos := map[string]int{}
	for _, i := range g.order {
		k := key(i)
		j, ok := pos[k]
		if !ok {
			j = len(out)
			pos[k] = j
			out = append(out, nil)
		}
		out[j] = append(out[j], i)
	}
	return out
}

// suggestGroup fills out with the group's params.
func (t *tpe) suggestGroup(g *geometry, grp []int, r Request, rows [][]float64, ranks []rowRank, pend [][]float64, rnd *rand.Rand, out Params) {
	// Params with a single possible value take no part in the model.
	var dims []*dim
	var cols []int
	for _, i := range grp {
		d := &g.dims[i]
		if (d.p.Kind == Categorical && d.n == 1) || (d.p.Kind != Categorical && d.hi <= d.lo) {
			out[d.p.Name] = d.value(d.lo)
			continue
		}
		dims = append(dims, d)
		cols = append(cols, i)
	}
	if len(dims) == 0 {
		return
	}
	has := func(row []float64) bool {
		for _, c := range cols {
			if math.IsNaN(row[c]) {
				return false
			}
		}
		return true
	}
	sc := &t.scratch
	var cands []int // history positions with the group present
	if t.rows.partial == 0 {
		// Every observation usable with every param present, as in most searches: all of them.
		for len(sc.all) < len(ranks) {
			sc.all = append(sc.all, len(sc.all))
		}
		cands = sc.all[:len(ranks)]
	} else {
		sc.cands = sc.cands[:0]
		for i, k := range ranks {
			if k.state != Failed && (k.full || has(rows[i])) {
				sc.cands = append(sc.cands, i)
			}
		}
		cands = sc.cands
	}
	var pending []int
	for i, p := range pend {
		if p != nil && has(p) {
			pending = append(pending, i)
		}
	}
	n := len(cands) + len(pending)
	nBelow := min(int(math.Ceil(t.gamma*float64(n))), t.maxBelow, len(cands))
	if len(cands) == 0 || nBelow == 0 {
		x := make([]float64, len(dims))
		for j, d := range dims {
			x[j] = d.lo + rnd.Float64()*(d.hi-d.lo)
			if d.p.Kind == Categorical {
				x[j] = math.Floor(rnd.Float64() * float64(d.n))
			}
		}
		t.put(dims, x, out)
		return
	}
	below := t.best(r, cands, nBelow)
	// The above group in Number order (Optuna's weights favour recent trials), pending trials
	// last: a history position, or -1-p for pending trial p. It is cands but below (both in
	// increasing order), copied a stretch at a time.
	sc.below = append(sc.below[:0], below...)
	slices.Sort(sc.below)
	sc.above = sc.above[:0]
	from := 0
	for _, b := range sc.below {
		at, _ := slices.BinarySearch(cands[from:], b)
		sc.above = append(sc.above, cands[from:from+at]...)
		from += at + 1
	}
	sc.above = append(sc.above, cands[from:]...)
	for _, i := range pending {
		sc.above = append(sc.above, -1-i)
	}
	row := func(ref int) []float64 {
		if ref < 0 {
			return pend[-1-ref]
		}
		return rows[ref]
	}
	// The model's columns are usually the whole row (no conditions, no constant params): then
	// the rows are used as they are, and otherwise copied.
	pick := func(ref int) []float64 {
		if len(cols) == len(g.dims) {
			return row(ref)
		}
		x := make([]float64, len(cols))
		for j, c := range cols {
			x[j] = row(ref)[c]
		}
		return x
	}
	sc.lowPts = sc.lowPts[:0]
	for _, i := range below {
		sc.lowPts = append(sc.lowPts, pick(i))
	}
	sc.keep, sc.highW = thin(sc.above, t.maxAbove, sc.keep[:0], sc.highW[:0])
	sc.highPts = sc.highPts[:0]
	for _, ref := range sc.keep {
		sc.highPts = append(sc.highPts, pick(ref))
	}
	_, lowW := thin(below, len(below), nil, nil) // all kept: only the weights
	low := sc.low.fit(dims, sc.lowPts, lowW, t.priorWeight, t.neighbours)
	high := sc.high.fit(dims, sc.highPts, sc.highW, t.priorWeight, t.neighbours)

	nd := len(dims)
	sc.dens = resize(sc.dens, max(low.kernels, high.kernels))
	sc.xs = resize(sc.xs, t.ncand*nd)
	for c := range t.ncand {
		x := sc.xs[c*nd : (c+1)*nd]
		low.sample(rnd, x, t.marginals)
		// Score the point the trial will actually run: on the grid, within the bounds.
		for j, d := range dims {
			if d.p.Kind != Categorical {
				x[j] = d.snap(x[j])
			}
		}
	}
	c := t.bestCandidate(low, high, sc.xs, nd)
	t.put(dims, sc.xs[c*nd:(c+1)*nd], out)
}

// bestCandidate returns which of the candidates (xs, nd coordinates each) has the largest
// score, the first of equals; the first if its score is NaN.
func (t *tpe) bestCandidate(low, high *parzen, xs []float64, nd int) int {
	sc := &t.scratch
	dens := sc.dens
	x := func(c int) []float64 { return xs[c*nd : (c+1)*nd] }
	joint := func(c int) float64 { return low.logDensity(x(c), dens) - high.logDensity(x(c), dens) }
	full := func(c int) float64 { return joint(c) + (low.logMarginals(x(c), dens) - high.logMarginals(x(c), dens)) }
	if !t.blend {
		return t.first(joint)
	}
	if nd == 1 && len(low.num) == 1 {
		return t.bestCandidate1(low, high, xs)
	}
	// Most of the score's cost is the marginals' exps: hundreds of kernels in each dim of the
	// high group. Every candidate gets its joint term and bounds on its score from bounds on
	// the marginals (marginalsBounds), the high group's a quick lower one; then, in decreasing
	// order of upper bound, candidates get close bounds until the next upper bound is below
	// the best lower bound so far: none of the rest can win. When one candidate's lower bound
	// is above every other's upper bound, it is the one scoring all in full would pick;
	// otherwise those left are scored in full. The bounds hold in floating point too: the
	// score is s := joint; s += low - high, and rounding never moves s against low or high.
	sc.evals = slices.Grow(sc.evals[:0], t.ncand)
	for c := range t.ncand {
		e := candidate{c: c, joint: joint(c), lo: math.Inf(-1)}
		e.lowLo, e.lowHi = low.marginalsBounds(x(c), dens, 0)
		highLo, _ := high.marginalsBounds(x(c), dens, boundNear)
		e.hi = e.joint + (e.lowHi - highLo)
		if !finite(e.hi) || !finite(e.lowLo) {
			return t.first(full)
		}
		sc.evals = append(sc.evals, e)
	}
	evals := sc.evals
	slices.SortFunc(evals, func(a, b candidate) int { return cmp.Or(cmp.Compare(b.hi, a.hi), a.c-b.c) })
	lead, n := math.Inf(-1), 0
	for ; n < len(evals) && evals[n].hi >= lead; n++ {
		e := &evals[n]
		if n > 0 {
			// Most candidates after the first lose by more than a wider quick bound shows.
			highLo, _ := high.marginalsBounds(x(e.c), dens, 4*boundNear)
			if e.hi = e.joint + (e.lowHi - highLo); !finite(e.hi) {
				return t.first(full)
			}
			if e.hi < lead {
				continue
			}
		}
		highLo, highHi := high.marginalsBounds(x(e.c), dens, 0)
		e.lo, e.hi = e.joint+(e.lowLo-highHi), e.joint+(e.lowHi-highLo)
		if !finite(e.lo) || !finite(e.hi) {
			return t.first(full)
		}
		lead = max(lead, e.lo)
	}
	win, alive := -1, 0
	for _, e := range evals[:n] {
		if e.hi >= lead {
			win, alive = e.c, alive+1
		}
	}
	if alive == 1 {
		return win
	}
	// Scores too close for the bounds: the first of the largest, as scoring all would pick.
	left := evals[:n]
	slices.SortFunc(left, func(a, b candidate) int { return a.c - b.c })
	best, bestScore := -1, 0.0
	for _, e := range left {
		if e.hi < lead {
			continue
		}
		s := e.joint
		s += low.logMarginals(x(e.c), dens) - high.logMarginals(x(e.c), dens)
		if math.IsNaN(s) {
			return t.first(full)
		}
		if best < 0 || s > bestScore {
			best, bestScore = e.c, s
		}
	}
	return best
}

// bestCandidate1 is bestCandidate for one numeric param, as in many small searches: there the
// joint and marginal terms are one set of numbers (densities1). The low group's few kernels
// are scored exactly for every candidate, the high group's hundreds only where it matters:
// every candidate gets an upper bound on its score from a lower bound on the high group's
// density (nearLog1), and in decreasing order of bound candidates get their score within a
// relative 1e-9 (densities1Bounds, a polynomial's exps) until the next bound is below the
// best lower score so far: none of the rest can win. Only candidates whose score interval
// still reaches that are scored in full, one unless scores are nearly tied. It picks what
// scoring every candidate in full picks, the first of the largest score.
func (t *tpe) bestCandidate1(low, high *parzen, xs []float64) int {
	sc := &t.scratch
	dens := sc.dens
	sc.ex = resize(sc.ex, len(dens))
	// The low group's terms of each candidate, computed once: lows[2c], lows[2c+1].
	sc.lows = resize(sc.lows, 2*t.ncand)
	lows := sc.lows
	// scoreAll scores every candidate in full, for the odd case bounds cannot serve (a score
	// that is not finite).
	scoreAll := func() int {
		return t.first(func(c int) float64 {
			lj, lm := low.densities1(xs[c], dens, sc.ex)
			hj, hm := high.densities1(xs[c], dens, sc.ex)
			return lj - hj + (lm - hm)
		})
	}
	// bound is an upper bound on candidate c's score from near kernels each side of it; the
	// margin covers the rounding of numbers of these sizes.
	bound := func(c, near int) float64 {
		lj, lm, hq := lows[2*c], lows[2*c+1], high.nearLog1(xs[c], near)
		return lj - hq + (lm - hq) + 1e-9*(4+math.Abs(lj)+math.Abs(lm)+2*math.Abs(hq))
	}
	sc.evals = slices.Grow(sc.evals[:0], t.ncand)
	for c := range t.ncand {
		lows[2*c], lows[2*c+1] = low.densities1(xs[c], dens, sc.ex)
		e := candidate{c: c, hi: bound(c, boundNear)}
		if !finite(e.hi) {
			return scoreAll()
		}
		sc.evals = append(sc.evals, e)
	}
	evals := sc.evals
	slices.SortFunc(evals, func(a, b candidate) int { return cmp.Or(cmp.Compare(b.hi, a.hi), a.c-b.c) })
	lead, n := math.Inf(-1), 0
	for ; n < len(evals) && evals[n].hi >= lead; n++ {
		e := &evals[n]
		e.lo = math.Inf(-1) // not a contender unless scored below
		// Most candidates after the first lose by more than a wider near window shows.
		if n > 0 {
			if e.hi = bound(e.c, 4*boundNear); e.hi < lead {
				continue
			}
		}
		hLo, hHi, ok := high.densities1Bounds(xs[e.c], dens)
		if !ok {
			return scoreAll()
		}
		// The score is lj - hj + (lm - hm), hj + hm within [hLo, hHi] (whose margin covers
		// the rounding of hj and hm's part); this margin covers lj and lm's.
		lj, lm := lows[2*e.c], lows[2*e.c+1]
		margin := 1e-9 * (math.Abs(lj) + math.Abs(lm))
		e.lo, e.hi = lj+lm-hHi-margin, lj+lm-hLo+margin
		lead = max(lead, e.lo)
	}
	// The contenders: scored, and not below the best lower score.
	win, alive := -1, 0
	for _, e := range evals[:n] {
		if e.lo > math.Inf(-1) && e.hi >= lead {
			win, alive = e.c, alive+1
		}
	}
	if alive == 1 {
		return win
	}
	// Scores too close for the bounds (a repeated candidate, or nearly): the contenders are
	// scored in full, in candidate order, and the first of the largest wins.
	left := evals[:n]
	slices.SortFunc(left, func(a, b candidate) int { return a.c - b.c })
	best, bestScore := -1, math.Inf(-1)
	for _, e := range left {
		if e.lo == math.Inf(-1) || e.hi < lead {
			continue
		}
		hj, hm := high.densities1(xs[e.c], dens, sc.ex)
		s := lows[2*e.c] - hj + (lows[2*e.c+1] - hm)
		if !finite(s) {
			return scoreAll()
		}
		if best < 0 || s > bestScore {
			best, bestScore = e.c, s
		}
	}
	return best
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// candidate is one candidate's joint term, bounds on the low group's marginals, and bounds on
// its score.
type candidate struct {
	c                           int
	joint, lowLo, lowHi, lo, hi float64
}

// first returns the first candidate of the largest score, or the first if its score is NaN,
// scoring every candidate.
func (t *tpe) first(score func(c int) float64) int {
	best, bestScore := 0, math.Inf(-1)
	for c := range t.ncand {
		if s := score(c); c == 0 || s > bestScore {
			best, bestScore = c, s
		}
	}
	return best
}

func (t *tpe) put(dims []*dim, x []float64, out Params) {
	for j, d := range dims {
		out[d.p.Name] = d.value(x[j])
	}
}

// best returns the positions (into r.History) of the n best candidates: complete feasible
// trials first (by objective, or by non-domination and crowding for several), then pruned
// ones by their last values, then infeasible ones by violation; ties go to the lower Number.
func (t *tpe) best(r Request, cands []int, n int) []int {
	if len(r.Objectives) > 1 {
		// feasible[j] is History[pos[j]]; their scores share one array.
		sc := &t.scratch
		sc.feasible, sc.pos = slices.Grow(sc.feasible[:0], len(cands)), slices.Grow(sc.pos[:0], len(cands))
		sc.scores = slices.Grow(sc.scores[:0], len(cands)*len(r.Objectives))
		feasible, pos, scores := sc.feasible, sc.pos, sc.scores // large enough: never reallocated below
		var rest []int
		for _, i := range cands {
			o := &r.History[i]
			if class(o) != 0 || !usable(r.Objectives, o) {
				rest = append(rest, i)
				continue
			}
			at := len(scores)
			for k := range r.Objectives {
				scores = append(scores, score(r.Objectives, o, k))
			}
			feasible = append(feasible, scored{obs: o, scores: scores[at:len(scores):len(scores)], violation: violation(o)})
			pos = append(pos, i)
		}
		var out []int
		for _, f := range firstFronts(feasible, n) {
			if len(out)+len(f) > n { // cut the last front by crowding distance, then Number
				cd := crowding(feasible, f)
				order := make([]int, len(f))
				for i := range order {
					order[i] = i
				}
				slices.SortFunc(order, func(a, b int) int {
					return cmp.Or(cmp.Compare(cd[b], cd[a]), cmp.Compare(feasible[f[a]].obs.Number, feasible[f[b]].obs.Number))
				})
				for _, o := range order[:n-len(out)] {
					out = append(out, pos[f[o]])
				}
				break
			}
			for _, k := range f {
				out = append(out, pos[k])
			}
		}
		slices.Sort(out)
		return append(out, t.bestSingle(r, rest, n-len(out))...)
	}
	return t.bestSingle(r, cands, n)
}

// class ranks an observation's kind for best: complete feasible (0), pruned (1), infeasible (2).
func class(o *Observation) int {
	switch {
	case o.State == Pruned:
		return 1
	case violation(o) > 0:
		return 2
	}
	return 0
}

// bestSingle selects the n best of cands by (class, first objective or violation, Number)
// with a bounded insertion: linear in the history for the small n TPE uses. The keys come
// from the row cache's ranks, which coords has made for r.History.
func (t *tpe) bestSingle(r Request, cands []int, n int) []int {
	if n <= 0 {
		return nil
	}
	type key struct {
		class uint8
		v     float64
		num   int
		pos   int
	}
	less := func(a, b key) int {
		if c := cmp.Compare(a.class, b.class); c != 0 {
			return c
		}
		if c := cmp.Compare(a.v, b.v); c != 0 {
			return c
		}
		return cmp.Compare(a.num, b.num)
	}
	ranks := t.rows.ranks
	// With distinct Numbers the order is total, so the n best are the n least keys whatever
	// the order of the scan; then a first pass that keeps only the candidates no worse than
	// the last call's n-th best loses none of them if it keeps at least n, and leaves the
	// insertion below a few dozen candidates instead of the history.
	sc := &t.scratch
	if bar := &sc.bar; t.rows.distinct() && bar.set {
		sc.pre = sc.pre[:0]
		for _, i := range cands {
			if rk := &ranks[i]; rk.class < bar.class || rk.class == bar.class && (rk.v < bar.v || rk.v == bar.v && r.History[i].Number <= bar.num) {
				sc.pre = append(sc.pre, i)
			}
		}
		if len(sc.pre) >= n {
			cands = sc.pre
		}
	}
	top := make([]key, 0, n+1)
	for _, i := range cands {
		rk := &ranks[i]
		// Most candidates lose to the last of the top: less(k, top[n-1]) >= 0, written out with
		// plain comparisons (v is never NaN: score and violation give +Inf instead).
		if len(top) == n {
			if w := &top[n-1]; rk.class > w.class || rk.class == w.class && (rk.v > w.v || rk.v == w.v && r.History[i].Number >= w.num) {
				continue
			}
		}
		k := key{class: rk.class, v: rk.v, num: r.History[i].Number, pos: i}
		at, _ := slices.BinarySearchFunc(top, k, less)
		top = slices.Insert(top, at, k)
		if len(top) > n {
			top = top[:n]
		}
	}
	if len(top) == n {
		w := &top[n-1]
		sc.bar = bar{set: true, class: w.class, v: w.v, num: w.num}
	}
	out := make([]int, len(top))
	for i, k := range top {
		out[i] = k.pos
	}
	slices.Sort(out)
	return out
}

// bar is the key of the last n-th best that bestSingle found.
type bar struct {
	set   bool
	class uint8
	v     float64
	num   int
}

// weight is Optuna's default weight of the i-th oldest of n observations: 1 for up to 25
// observations; beyond, the 25 newest get 1 and the older ones a linear ramp from 1/n up to 1.
func weight(i, n int) float64 {
	ramp := n - 25
	switch {
	case i >= ramp:
		return 1
	case ramp == 1:
		return 1 / float64(n)
	}
	return 1/float64(n) + (1-1/float64(n))*float64(i)/float64(ramp-1)
}

// weightSum is the sum of weight(i, n) for i in [lo, hi), in closed form: the ramp is linear.
func weightSum(lo, hi, n int) float64 {
	ramp := n - 25
	sum := float64(max(hi-max(lo, ramp), 0)) // the flat part
	if top := min(hi, ramp); lo < top {
		count := float64(top - lo)
		slope := 0.0
		if ramp > 1 {
			slope = (1 - 1/float64(n)) / float64(ramp-1)
		}
		sum += count/float64(n) + slope*float64(lo+top-1)*count/2
	}
	return sum
}

// thin returns the members of the above group (refs, oldest first) that get a kernel, and the
// kernels' weights. Beyond limit members it keeps the newest quarter of the limit as they are
// and cuts the older ones into consecutive blocks, each kept as its middle member carrying the
// block's total weight (systematic sampling in Number order, which keeps the mass the weights
// give each stretch of the history), so a suggestion from 10,000 trials costs about as much as
// from limit. The results are appended to keep and w, which may be nil and must not share an
// array with refs.
func thin(refs []int, limit int, keep []int, w []float64) ([]int, []float64) {
	n := len(refs)
	if n <= limit {
		for i := range n {
			w = append(w, weight(i, n))
		}
		return append(keep, refs...), w
	}
	recent := limit / 4
	old := n - recent
	blocks := limit - recent
	for b := range blocks {
		lo, hi := b*old/blocks, (b+1)*old/blocks
		keep = append(keep, refs[(lo+hi)/2])
		w = append(w, weightSum(lo, hi, n))
	}
	for i := old; i < n; i++ {
		keep = append(keep, refs[i])
		w = append(w, weight(i, n))
	}
	return keep, w
}
