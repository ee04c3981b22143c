package search

import (
	"fmt"
	"math"
)

// dim is a param prepared for sampling. Numeric params live on an internal coordinate: the
// value itself, or its logarithm, widened by half a step on each side when the param is
// discrete so that every grid point owns an equal share of the interval.
type dim struct {
	p      *Param
	parent int    // index of the param p depends on, or -1
	when   []bool // when[c]: p is active when the parent takes its choice c
	// Numeric params.
	lo, hi float64 // the internal coordinate's interval
	step   float64 // the value grid's step; 0 for a continuous float
	top    float64 // the largest value on the grid (Low + K*step)
	// Categorical params.
	n int
}

// geometry is a validated space ready for sampling.
type geometry struct {
	dims  []dim
	order []int // parents before children, otherwise the space's order
	index map[string]int
}

// compile validates s and prepares it; every sampler starts here.
func compile(s Space) (*geometry, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("search space: %w", err)
	}
	g := &geometry{dims: make([]dim, len(s.Params)), index: make(map[string]int, len(s.Params))}
	for i := range s.Params {
		g.index[s.Params[i].Name] = i
	}
	for i := range s.Params {
		p := &s.Params[i]
		d := dim{p: p, parent: -1}
		if p.When != nil {
			d.parent = g.index[p.When.Param]
			parent := &s.Params[d.parent]
			d.when = make([]bool, len(parent.Choices))
			for _, v := range p.When.Values {
				d.when[choiceIndex(parent, v)] = true
			}
		}
		switch p.Kind {
		case Categorical:
			d.n = len(p.Choices)
		case Int, Float:
			d.step = p.Step
			if p.Kind == Int && d.step == 0 {
				d.step = 1
			}
			d.top = p.High
			half := 0.0
			if d.step > 0 {
				k := math.Floor((p.High-p.Low)/d.step + 1e-9)
				d.top = min(p.Low+k*d.step, p.High) // rounding may overshoot High
				half = d.step / 2
			}
			d.lo, d.hi = p.Low-half, d.top+half
			if p.Log {
				d.lo, d.hi = math.Log(math.Max(d.lo, p.Low/2)), math.Log(d.hi)
			}
		}
		g.dims[i] = d
	}
	placed := make([]bool, len(g.dims))
	for len(g.order) < len(g.dims) {
		for i, d := range g.dims {
			if !placed[i] && (d.parent < 0 || placed[d.parent]) {
				placed[i] = true
				g.order = append(g.order, i)
			}
		}
	}
	return g, nil
}

// value turns an internal coordinate into the param's value (float64 or int64), on the grid
// and within the bounds.
func (d *dim) value(t float64) any {
	p := d.p
	if p.Kind == Categorical {
		i := int(t)
		return p.Choices[min(max(i, 0), d.n-1)]
	}
	x := d.numeric(t)
	if p.Kind == Int {
		return int64(math.Round(x))
	}
	return x
}

// numeric is value for a numeric param before an Int's rounding: on the grid, within bounds.
func (d *dim) numeric(t float64) float64 {
	p := d.p
	x := t
	if p.Log {
		x = math.Exp(t)
	}
	if d.step > 0 {
		k := math.Round((x - p.Low) / d.step)
		x = p.Low + k*d.step
	}
	return min(max(x, p.Low), d.top)
}

// snap is coord(value(t)) for a numeric param, without boxing the value: the coordinate of the
// value a trial would run, 0 where coord would reject it.
func (d *dim) snap(t float64) float64 {
	x := d.numeric(t)
	if d.p.Kind == Int {
		x = float64(int64(math.Round(x)))
	}
	if math.IsNaN(x) || (d.p.Log && x <= 0) {
		return 0
	}
	if d.p.Log {
		return math.Log(x)
	}
	return x
}

// fromUnit maps u in [0, 1] to a value, uniformly on the internal coordinate.
func (d *dim) fromUnit(u float64) any {
	if d.p.Kind == Categorical {
		return d.value(math.Floor(u * float64(d.n)))
	}
	return d.value(d.lo + u*(d.hi-d.lo))
}

// coord is the internal coordinate of a value read from a history (categorical: the choice's
// index); false when the value does not belong to the param.
func (d *dim) coord(v any) (float64, bool) {
	if d.p.Kind == Categorical {
		i := choiceIndex(d.p, v)
		return float64(i), i >= 0
	}
	x, ok := number(v)
	if !ok || math.IsNaN(x) {
		return 0, false
	}
	if d.p.Log {
		if x <= 0 {
			return 0, false
		}
		return math.Log(x), true
	}
	return x, true
}

// unit is the inverse of fromUnit for numeric params, clamped to [0, 1].
func (d *dim) unit(t float64) float64 {
	w := d.hi - d.lo
	if w <= 0 {
		return 0.5
	}
	return min(max((t-d.lo)/w, 0), 1)
}

// active reports whether param i is active given the values chosen so far.
func (g *geometry) active(i int, ps Params) bool {
	d := &g.dims[i]
	if d.parent < 0 {
		return true
	}
	pd := &g.dims[d.parent]
	v, ok := ps[pd.p.Name]
	if !ok {
		return false
	}
	c := choiceIndex(pd.p, v)
	return c >= 0 && d.when[c]
}
