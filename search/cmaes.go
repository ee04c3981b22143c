package search

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// cmaes is CMA-ES (Hansen's (mu/mu_w, lambda) form with rank-one and rank-mu updates) on the
// numeric unconditional params, mapped to the unit cube (log params by their logarithm).
// Categorical and conditional params are drawn at random, as Optuna's CMA-ES sampler does.
//
// Trial n belongs to generation n / lambda. The state is a function of the history: generations
// whose every member has finished are replayed in order from the initial state (mean at the
// centre of the cube, step size sigma0), and the suggestion is drawn from the state after the
// last complete generation, with the generator of (seed, n). Replayed states are cached with
// the observations they consumed, so a long history is replayed once. When trials run in
// parallel, a member of generation g may be drawn while generation g-1 is still running: it then
// comes from an older state, which slows the search a little but keeps every answer a function
// of the Request.
type cmaes struct {
	popsize int
	sigma0  float64
	cache   cmaCache
}

type cmaCache struct {
	space   Space
	popsize int
	members []Observation // the observations of the replayed generations, in Number order
	state   *cmaState
}

func newCMAES(o *options) (Sampler, error) {
	c := &cmaes{}
	var err error
	if c.popsize, err = o.int("popsize", 0, 0, 100_000); err != nil {
		return nil, err
	}
	if c.sigma0, err = o.float("sigma0", 1.0/6, 1e-6, 1); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *cmaes) Suggest(r Request) (Params, error) {
	if len(r.Objectives) > 1 {
		return nil, errors.New("sampler cmaes optimises one objective; use nsga2 or tpe for several")
	}
	g, err := compile(r.Space)
	if err != nil {
		return nil, err
	}
	var dims []int
	for i, d := range g.dims {
		if d.parent < 0 && d.p.Kind != Categorical && d.hi > d.lo {
			dims = append(dims, i)
		}
	}
	rnd := rng(r.Seed, r.Number, streamCMA)
	out := randomParams(g, rnd, nil)
	if len(dims) == 0 {
		return out, nil
	}
	lambda := c.popsize
	if lambda == 0 {
		lambda = 4 + int(3*math.Log(float64(len(dims))))
	}
	lambda = max(lambda, 2)
	st := c.replay(r, g, dims, lambda)
	x := st.sample(rnd)
	for j, i := range dims {
		d := &g.dims[i]
		out[d.p.Name] = d.value(d.lo + x[j]*(d.hi-d.lo))
	}
	return out, nil
}

// replay returns the state after the complete generations of the history, reusing the cached
// state when the history still starts with the observations it consumed.
func (c *cmaes) replay(r Request, g *geometry, dims []int, lambda int) *cmaState {
	hist := byNumber(r.History)
	cc := &c.cache
	if !reflect.DeepEqual(cc.space, r.Space) || cc.popsize != lambda || !sameObservations(cc.members, hist) {
		*cc = cmaCache{space: cloneSpace(r.Space), popsize: lambda, state: newCMAState(len(dims), lambda, c.sigma0)}
	}
	next := len(cc.members) // hist[next:] is not consumed yet
	for {
		gen := cc.state.gen
		if next+lambda > len(hist) || hist[next].Number != gen*lambda || hist[next+lambda-1].Number != (gen+1)*lambda-1 {
			return cc.state
		}
		members := hist[next : next+lambda]
		if !distinctRun(members) {
			return cc.state
		}
		cc.state.tell(generation(r.Objectives, g, dims, members))
		for _, o := range members {
			o.Values = slices.Clone(o.Values)
			o.Constraints = slices.Clone(o.Constraints)
			cc.members = append(cc.members, o)
		}
		next += lambda
	}
}

// distinctRun reports whether consecutive Numbers fill the slice (no duplicates).
func distinctRun(os []Observation) bool {
	for i := 1; i < len(os); i++ {
		if os[i].Number != os[i-1].Number+1 {
			return false
		}
	}
	return true
}

// sameObservations reports whether hist starts with the cached observations: same Number,
// state, values and constraints, and the same Params map.
func sameObservations(cached, hist []Observation) bool {
	if len(cached) > len(hist) {
		return false
	}
	for i := range cached {
		a, b := &cached[i], &hist[i]
		if a.Number != b.Number || a.State != b.State || !sameMap(a.Params, b.Params) ||
			!slices.Equal(a.Values, b.Values) || !slices.Equal(a.Constraints, b.Constraints) {
			return false
		}
	}
	return true
}

// generation returns the members' points in the unit cube, best first.
func generation(objs []Objective, g *geometry, dims []int, members []Observation) [][]float64 {
	type entry struct {
		x       []float64
		bad     bool
		viol, v float64
		num     int
	}
	es := make([]entry, len(members))
	for m := range members {
		o := &members[m]
		x := make([]float64, len(dims))
		for j, i := range dims {
			d := &g.dims[i]
			x[j] = 0.5
			if v, ok := o.Params[d.p.Name]; ok {
				if t, ok := d.coord(v); ok {
					x[j] = d.unit(t)
				}
			}
		}
		es[m] = entry{x: x, bad: !usable(objs, o), viol: violation(o), v: score(objs, o, 0), num: o.Number}
	}
	slices.SortFunc(es, func(a, b entry) int {
		return cmp.Or(boolCmp(a.bad, b.bad), cmp.Compare(a.viol, b.viol), cmp.Compare(a.v, b.v), cmp.Compare(a.num, b.num))
	})
	xs := make([][]float64, len(es))
	for i := range es {
		xs[i] = es[i].x
	}
	return xs
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// cmaState is the distribution of one generation and the evolution paths.
type cmaState struct {
	n, lambda int
	gen       int
	mean      []float64
	sigma     float64
	cov       *mat.SymDense
	basis     *mat.Dense // eigenvectors of cov
	scale     []float64  // square roots of its eigenvalues
	pc, ps    []float64
	sigma0    float64
	// Strategy constants.
	w                          []float64
	mueff, cs, ds, cc, c1, cmu float64
	chiN                       float64
}

func newCMAState(n, lambda int, sigma0 float64) *cmaState {
	s := &cmaState{n: n, lambda: lambda, sigma0: sigma0}
	mu := lambda / 2
	s.w = make([]float64, mu)
	sum := 0.0
	for i := range s.w {
		s.w[i] = math.Log(float64(lambda+1)/2) - math.Log(float64(i+1))
		sum += s.w[i]
	}
	sq := 0.0
	for i := range s.w {
		s.w[i] /= sum
		sq += s.w[i] * s.w[i]
	}
	s.mueff = 1 / sq
	fn := float64(n)
	s.cs = (s.mueff + 2) / (fn + s.mueff + 5)
	s.ds = 1 + 2*math.Max(0, math.Sqrt((s.mueff-1)/(fn+1))-1) + s.cs
	s.cc = (4 + s.mueff/fn) / (fn + 4 + 2*s.mueff/fn)
	s.c1 = 2 / ((fn+1.3)*(fn+1.3) + s.mueff)
	s.cmu = math.Min(1-s.c1, 2*(s.mueff-2+1/s.mueff)/((fn+2)*(fn+2)+s.mueff))
	s.chiN = math.Sqrt(fn) * (1 - 1/(4*fn) + 1/(21*fn*fn))
	s.reset()
	return s
}

// reset puts the distribution back at its start (used first, and if the covariance degenerates).
func (s *cmaState) reset() {
	s.mean = make([]float64, s.n)
	for i := range s.mean {
		s.mean[i] = 0.5
	}
	s.sigma = s.sigma0
	s.cov = mat.NewSymDense(s.n, nil)
	for i := range s.n {
		s.cov.SetSym(i, i, 1)
	}
	s.pc, s.ps = make([]float64, s.n), make([]float64, s.n)
	s.decompose()
}

// decompose refreshes basis and scale from cov; false if cov is not a usable covariance.
func (s *cmaState) decompose() bool {
	var eig mat.EigenSym
	if !eig.Factorize(s.cov, true) {
		return false
	}
	vals := eig.Values(nil)
	s.basis = mat.NewDense(s.n, s.n, nil)
	eig.VectorsTo(s.basis)
	s.scale = make([]float64, s.n)
	for i, v := range vals {
		if !(v > 1e-30) || math.IsInf(v, 0) {
			return false
		}
		s.scale[i] = math.Sqrt(v)
	}
	return true
}

// tell updates the state with one generation's points, sorted best first.
func (s *cmaState) tell(xs [][]float64) {
	n := s.n
	old := slices.Clone(s.mean)
	for i := range s.mean {
		s.mean[i] = 0
		for k, w := range s.w {
			s.mean[i] += w * xs[k][i]
		}
	}
	yw := make([]float64, n)
	for i := range yw {
		yw[i] = (s.mean[i] - old[i]) / s.sigma
	}
	// C^{-1/2} yw = B diag(1/scale) B^T yw.
	bt := make([]float64, n)
	for j := range n {
		for i := range n {
			bt[j] += s.basis.At(i, j) * yw[i]
		}
		bt[j] /= s.scale[j]
	}
	csn := math.Sqrt(s.cs * (2 - s.cs) * s.mueff)
	for i := range n {
		v := 0.0
		for j := range n {
			v += s.basis.At(i, j) * bt[j]
		}
		s.ps[i] = (1-s.cs)*s.ps[i] + csn*v
	}
	psNorm := mat.Norm(mat.NewVecDense(n, s.ps), 2)
	hsig := 0.0
	if psNorm/math.Sqrt(1-math.Pow(1-s.cs, 2*float64(s.gen+1))) < (1.4+2/float64(n+1))*s.chiN {
		hsig = 1
	}
	ccn := math.Sqrt(s.cc * (2 - s.cc) * s.mueff)
	for i := range n {
		s.pc[i] = (1-s.cc)*s.pc[i] + hsig*ccn*yw[i]
	}
	decay := 1 - s.c1 - s.cmu + (1-hsig)*s.c1*s.cc*(2-s.cc)
	ys := make([][]float64, len(s.w))
	for k := range s.w {
		ys[k] = make([]float64, n)
		for i := range n {
			ys[k][i] = (xs[k][i] - old[i]) / s.sigma
		}
	}
	for i := range n {
		for j := i; j < n; j++ {
			v := decay*s.cov.At(i, j) + s.c1*s.pc[i]*s.pc[j]
			for k, w := range s.w {
				v += s.cmu * w * ys[k][i] * ys[k][j]
			}
			s.cov.SetSym(i, j, v)
		}
	}
	s.sigma *= math.Exp(s.cs / s.ds * (psNorm/s.chiN - 1))
	s.gen++
	if !(s.sigma > 1e-20 && s.sigma < 1e6) || !s.decompose() {
		gen := s.gen
		s.reset()
		s.gen = gen
	}
}

// sample draws a point in the unit cube: from N(mean, sigma^2 C), redrawn up to 100 times
// while outside the cube, then clipped (the repair Optuna's CMA-ES also uses).
func (s *cmaState) sample(r *rand.Rand) []float64 {
	x := make([]float64, s.n)
	z := make([]float64, s.n)
	for try := 0; ; try++ {
		for j := range z {
			z[j] = r.NormFloat64() * s.scale[j]
		}
		inside := true
		for i := range x {
			v := 0.0
			for j := range z {
				v += s.basis.At(i, j) * z[j]
			}
			x[i] = s.mean[i] + s.sigma*v
			inside = inside && x[i] >= 0 && x[i] <= 1
		}
		if inside {
			return x
		}
		if try == 99 {
			for i := range x {
				x[i] = min(max(x[i], 0), 1)
			}
			return x
		}
	}
}
