package search

import (
	"cmp"
	"reflect"
	"slices"
)

// nsga2 is NSGA-II (Deb et al. 2002) for one or several objectives with constraints
// (constrained domination). Trial n belongs to generation n / population; generation 0 is
// drawn at random. The parents of generation g are the elite of the parents of g-1 and the
// finished members of g-1: the best non-dominated fronts, the last one cut by crowding
// distance. A child takes two parents by binary tournament (front, then crowding), inherits
// each param from one of them at random (uniform crossover, with probability crossover_prob;
// otherwise it copies the first parent) and redraws each param at random with probability
// mutation_prob (default 1/number of params).
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
		pick, mutate, u := rnd.Float64(), rnd.Float64(), rnd.Float64()
		if !g.active(i, child) {
			continue
		}
		from, other := first, second
		if cross && pick < s.swap {
			from, other = second, first
		}
		if !cross {
			other = first
		}
		v, ok := inherit(d, from)
		if !ok {
			v, ok = inherit(d, other)
		}
		if !ok || mutate < mut {
			v = d.fromUnit(u)
		}
		child[d.p.Name] = v
	}
	return child, nil
}

// inherit is the parent's value of d's param, if it has a valid one.
func inherit(d *dim, o *Observation) (any, bool) {
	v, ok := o.Params[d.p.Name]
	if !ok {
		return nil, false
	}
	t, ok := d.coord(v)
	if !ok {
		return nil, false
	}
	if d.p.Kind == Categorical {
		return d.p.Choices[int(t)], true
	}
	return d.value(min(max(t, d.lo), d.hi)), true
}

// parents returns the elite that generation gen breeds from.
func (s *nsga2) parents(r Request, gen int) []Observation {
	hist := slices.Clone(r.History)
	slices.SortStableFunc(hist, func(a, b Observation) int { return cmp.Compare(a.Number, b.Number) })
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
