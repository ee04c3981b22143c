package search

import (
	"fmt"
	"math"
	"slices"
)

// gridSampler enumerates the space in a fixed order: the params in the space's order, the last
// varying fastest; trial n gets point n and, past the last point, ErrExhausted. A continuous
// float needs a step or the option points (that many values, evenly spaced on its scale, both
// bounds included). A param made inactive by a condition takes no part: its point appears
// once, not once per value of the inactive param.
type gridSampler struct {
	points int
	cache  struct {
		key   string
		valid []uint64 // with conditions: the product indices whose inactive params are at 0
	}
}

// maxAxis bounds the values of one param on a grid.
const maxAxis = 1_000_000

// maxGridPoints bounds a conditional grid, whose points are listed once.
const maxGridPoints = 10_000_000

func newGrid(o *options) (Sampler, error) {
	n, err := o.int("points", 0, 2, 1_000_000)
	if err != nil {
		return nil, err
	}
	return &gridSampler{points: n}, nil
}

func (s *gridSampler) Suggest(r Request) (Params, error) {
	g, err := compile(r.Space)
	if err != nil {
		return nil, err
	}
	axes := make([][]any, len(g.dims))
	total := uint64(1)
	for i := range g.dims {
		if axes[i], err = s.axis(&g.dims[i]); err != nil {
			return nil, err
		}
		if total > math.MaxInt64/uint64(len(axes[i])) {
			return nil, fmt.Errorf("sampler grid: the grid has more than %d points; give fewer values", uint64(math.MaxInt64))
		}
		total *= uint64(len(axes[i]))
	}
	conditional := false
	for _, d := range g.dims {
		conditional = conditional || d.parent >= 0
	}
	if r.Number < 0 {
		return nil, fmt.Errorf("sampler grid: trial number %d is negative", r.Number)
	}
	idx := uint64(r.Number)
	if conditional {
		valid, err := s.validPoints(r.Space, g, axes)
		if err != nil {
			return nil, err
		}
		if idx >= uint64(len(valid)) {
			return nil, ErrExhausted
		}
		idx = valid[idx]
	} else if idx >= total {
		return nil, ErrExhausted
	}
	digits := mixedRadix(axes, idx)
	out := make(Params, len(g.dims))
	for _, i := range g.order {
		if g.active(i, out) {
			out[g.dims[i].p.Name] = axes[i][digits[i]]
		}
	}
	return out, nil
}

// axis lists the values of one param on the grid.
func (s *gridSampler) axis(d *dim) ([]any, error) {
	p := d.p
	switch {
	case p.Kind == Categorical:
		return p.Choices, nil
	case d.step > 0:
		steps := math.Round((d.top - p.Low) / d.step)
		if steps >= maxAxis {
			return nil, fmt.Errorf("sampler grid: param %s has %.3g values at step %v; give a larger step", p.Name, steps+1, d.step)
		}
		var vs []any
		k := int(steps)
		for i := 0; i <= k; i++ {
			vs = append(vs, d.value(coordOf(p, p.Low+float64(i)*d.step)))
		}
		return vs, nil
	case s.points == 0:
		return nil, fmt.Errorf("sampler grid: param %s is a continuous float; give it a step, or give the sampler the option points", p.Name)
	default:
		lo, hi := coordOf(p, p.Low), coordOf(p, p.High)
		vs := make([]any, s.points)
		for i := range vs {
			vs[i] = d.value(lo + (hi-lo)*float64(i)/float64(s.points-1))
		}
		return vs, nil
	}
}

// coordOf is the internal coordinate of a numeric value of p.
func coordOf(p *Param, x float64) float64 {
	if p.Log {
		return math.Log(x)
	}
	return x
}

// mixedRadix splits a product index into one digit per param, the last param fastest.
func mixedRadix(axes [][]any, idx uint64) []int {
	digits := make([]int, len(axes))
	for i := len(axes) - 1; i >= 0; i-- {
		n := uint64(len(axes[i]))
		digits[i] = int(idx % n)
		idx /= n
	}
	return digits
}

// validPoints lists (once per space) the product indices where every inactive param sits at
// its first value, so each distinct point appears once, in product order. It walks the
// params parents first and does not branch on an inactive param.
func (s *gridSampler) validPoints(sp Space, g *geometry, axes [][]any) ([]uint64, error) {
	key := fmt.Sprintf("%d %v", s.points, sp.Params)
	if s.cache.key == key {
		return s.cache.valid, nil
	}
	// stride[i] is the weight of param i's digit in a product index.
	stride := make([]uint64, len(axes))
	w := uint64(1)
	for i := len(axes) - 1; i >= 0; i-- {
		stride[i] = w
		w *= uint64(len(axes[i]))
	}
	var valid []uint64
	ps := make(Params, len(g.dims))
	var walk func(k int, idx uint64) error
	walk = func(k int, idx uint64) error {
		if k == len(g.order) {
			if len(valid) == maxGridPoints {
				return fmt.Errorf("sampler grid: a grid with conditions may have at most %d points; give fewer values", maxGridPoints)
			}
			valid = append(valid, idx)
			return nil
		}
		i := g.order[k]
		name := g.dims[i].p.Name
		if !g.active(i, ps) {
			return walk(k+1, idx)
		}
		for digit, v := range axes[i] {
			ps[name] = v
			if err := walk(k+1, idx+uint64(digit)*stride[i]); err != nil {
				return err
			}
		}
		delete(ps, name)
		return nil
	}
	if err := walk(0, 0); err != nil {
		return nil, err
	}
	slices.Sort(valid)
	s.cache.key, s.cache.valid = key, valid
	return valid, nil
}
