package search

import (
	"cmp"
	"math"
	"reflect"
	"slices"
)

// nsga2 is NSGA-II (Deb et al. 2002) for one or several objectives with constraints
// (constrained domination). Trial n belongs to generation n / population; generation 0 is
// drawn at random. The parents of generation g are the elite of the parents of g-1 and the
// finished members of g-1: the best non-dominated fronts, the last one cut by crowding
// distance. A child takes two parents by binary tournament (front, then crowding). With
// probability crossover_prob (0.9) it mixes them: a numeric param by simulated binary
// crossover on its internal coordinate scaled to [0, 1], a categorical one by taking either
// parent's choice (swapping_prob, 0.5, picks the side); otherwise it copies the first parent.
// Each param then mutates with probability mutation_prob (default 1/number of params): a
// numeric one by polynomial mutation, a categorical one by a random choice. (Optuna's default
// is uniform crossover and a random redraw; SBX and polynomial mutation are Deb's originals
// and converge much faster on continuous problems.)
//
// The elite after each complete generation is cached with the observations it consumed; a
// generation still running when the next is asked for takes part with its finished members.
type nsga2 struct {
	pop              int
	cross, mut, swap float64
	cache            nsgaCache
}

type nsgaCache struct {
	space   Space
	objs    []Objective
	pop     int
	members []Observation // observations of the consumed generations, in Number order
	gen     int           // generations consumed
	parents []Observation // the elite after gen generations
}

func newNSGA2(o *options) (Sampler, error) {
	s := &nsga2{}
	var err error
	if s.pop, err = o.int("population_size", 50, 2, 1_000_000); err != nil {
		return nil, err
	}
	if s.cross, err = o.float("crossover_prob", 0.9, 0, 1); err != nil {
		return nil, err
	}
	if s.mut, err = o.float("mutation_prob", -1, 0, 1); err != nil {
		return nil, err
	}
	if s.swap, err = o.float("swapping_prob", 0.5, 0, 1); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *nsga2) Suggest(r Request) (Params, error) {
	g, err := compile(r.Space)
	if err != nil {
		return nil, err
	}
	rnd := rng(r.Seed, r.Number, streamNSGA)
	gen := r.Number / s.pop
	if gen == 0 {
		return randomParams(g, rnd, nil), nil
	}
	parents := s.parents(r, gen)
	if len(parents) == 0 {
		return randomParams(g, rnd, nil), nil
	}
	pts := make([]scored, len(parents))
	for i := range parents {
		pts[i] = prepare(r.Objectives, &parents[i])
	}
	order := rank(pts) // best first: a lower position wins a tournament
	place := make([]int, len(parents))
	for p, i := range order {
		place[i] = p
	}
	tournament := func() *Observation {
		a, b := rnd.IntN(len(parents)), rnd.IntN(len(parents))
		if place[b] < place[a] {
			a = b
		}
		return &parents[a]
	}
	first, second := tournament(), tournament()
	cross := rnd.Float64() < s.cross
	mut := s.mut
	if mut < 0 {
		mut = 1 / float64(len(g.dims))
	}
	child := make(Params, len(g.dims))
	for _, i := range g.order {
		d := &g.dims[i]
		// A fixed number of draws per param, active or not, keeps the params' draws apart.
		pick, mutate, u, uc, um := rnd.Float64(), rnd.Float64(), rnd.Float64(), rnd.Float64(), rnd.Float64()
		if !g.active(i, child) {
			continue
		}
		a, okA := inherit(d, first)
		b, okB := inherit(d, second)
		if cross && pick < s.swap {
			a, okA, b, okB = b, okB, a, okA
		}
		switch {
		case !okA && !okB:
			child[d.p.Name] = d.fromUnit(u)
			continue
		case !okA:
			a = b
		case !okB || !cross:
			b = a
		}
		if d.p.Kind == Categorical {
			v := d.p.Choices[int(a)]
			if mutate < mut {
				v = d.fromUnit(u)
			}
			child[d.p.Name] = v
			continue
		}
		x := a
		if cross {
			x = sbx(a, b, uc)
		}
		if mutate < mut {
			x = polynomialMutation(x, um)
		}
		child[d.p.Name] = d.value(d.lo + x*(d.hi-d.lo))
	}
	return child, nil
}

// Distribution indices of SBX and of polynomial mutation: the larger, the closer a child stays
// to its parents (Deb's usual 20 for both).
const sbxEta, mutationEta = 20.0, 20.0

// sbx is simulated binary crossover of two points of [0, 1], giving the child on a's side.
func sbx(a, b, u float64) float64 {
	var beta float64
	if u <= 0.5 {
		beta = math.Pow(2*u, 1/(sbxEta+1))
	} else {
		beta = math.Pow(1/(2*(1-u)), 1/(sbxEta+1))
	}
	return min(max(0.5*((1+beta)*a+(1-beta)*b), 0), 1)
}

// polynomialMutation moves x within [0, 1] by a polynomially distributed step.
func polynomialMutation(x, u float64) float64 {
	var delta float64
	if u < 0.5 {
		delta = math.Pow(2*u, 1/(mutationEta+1)) - 1
	} else {
		delta = 1 - math.Pow(2*(1-u), 1/(mutationEta+1))
	}
	return min(max(x+delta, 0), 1)
}

// inherit is the parent's value of d's param, if it has a valid one: a numeric param's place
// in [0, 1] on its internal coordinate, or a categorical param's choice index.
func inherit(d *dim, o *Observation) (float64, bool) {
	v, ok := o.Params[d.p.Name]
	if !ok {
		return 0, false
	}
	t, ok := d.coord(v)
	if !ok || d.p.Kind == Categorical {
		return t, ok
	}
	return d.unit(t), true
}

// parents returns the elite that generation gen breeds from.
func (s *nsga2) parents(r Request, gen int) []Observation {
	hist := byNumber(r.History)
	c := &s.cache
	if !reflect.DeepEqual(c.space, r.Space) || !reflect.DeepEqual(c.objs, r.Objectives) || c.pop != s.pop ||
		!sameObservations(c.members, hist) {
		*c = nsgaCache{space: cloneSpace(r.Space), objs: slices.Clone(r.Objectives), pop: s.pop}
	}
	next := len(c.members)
	for c.gen < gen {
		lo, hi := c.gen*s.pop, (c.gen+1)*s.pop
		if next+s.pop > len(hist) || hist[next].Number != lo || hist[next+s.pop-1].Number != hi-1 ||
			!distinctRun(hist[next:next+s.pop]) {
			break
		}
		members := hist[next : next+s.pop]
		c.parents = s.elite(r.Objectives, append(slices.Clone(c.parents), members...))
		for _, o := range members {
			o.Values = slices.Clone(o.Values)
			o.Constraints = slices.Clone(o.Constraints)
			c.members = append(c.members, o)
		}
		c.gen++
		next += s.pop
	}
	if c.gen >= gen {
		return c.parents
	}
	// Generations still running: their finished members join the elite now.
	var more []Observation
	for _, o := range hist[next:] {
		if o.Number < gen*s.pop {
			more = append(more, o)
		}
	}
	return s.elite(r.Objectives, append(slices.Clone(c.parents), more...))
}

// elite keeps the pop best usable observations by non-dominated front, the last front cut by
// crowding distance (ties by Number), and returns them in Number order.
func (s *nsga2) elite(objs []Objective, cands []Observation) []Observation {
	var pts []scored
	for i := range cands {
		if usable(objs, &cands[i]) {
			pts = append(pts, prepare(objs, &cands[i]))
		}
	}
	var keep []*Observation
	for _, f := range fronts(pts) {
		if len(keep)+len(f) <= s.pop {
			for _, i := range f {
				keep = append(keep, pts[i].obs)
			}
			continue
		}
		cd := crowding(pts, f)
		pos := make([]int, len(f))
		for i := range pos {
			pos[i] = i
		}
		slices.SortFunc(pos, func(a, b int) int {
			return cmp.Or(cmp.Compare(cd[b], cd[a]), cmp.Compare(pts[f[a]].obs.Number, pts[f[b]].obs.Number))
		})
		for _, p := range pos[:s.pop-len(keep)] {
			keep = append(keep, pts[f[p]].obs)
		}
		break
	}
	slices.SortFunc(keep, func(a, b *Observation) int { return cmp.Compare(a.Number, b.Number) })
	out := make([]Observation, len(keep))
	for i, o := range keep {
		out[i] = *o
	}
	return out
}
