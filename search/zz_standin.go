// TEMPORARY STAND-IN, written by helper "searchcore" so its branch builds before helper
// "sampler"'s package search is merged. It follows /work/wt/CONTRACT.md and nothing more: a
// random sampler, a naive Best and a rank-correlation Importance. The integrator deletes this
// file when merging the sampler branch.

// Package search suggests the params of a search's trials (stand-in; see the sampler branch).
package search

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// Kind of a parameter.
type Kind uint8

// The kinds of parameters.
const (
	Float Kind = iota
	Int
	Categorical
)

// Param is one dimension of a space.
type Param struct {
	Name      string
	Kind      Kind
	Low, High float64
	Log       bool
	Step      float64
	Choices   []any
	When      *Condition
}

// Condition makes a param active only when another has one of Values.
type Condition struct {
	Param  string
	Values []any
}

// Space is what a search explores.
type Space struct{ Params []Param }

// FieldError is a problem with one field of a space.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Validate reports every problem of s.
func (s Space) Validate() error {
	var errs []error
	if len(s.Params) == 0 {
		errs = append(errs, &FieldError{Field: "space", Msg: "is empty; give at least one param"})
	}
	for _, p := range s.Params {
		f := "space." + p.Name
		switch p.Kind {
		case Categorical:
			if len(p.Choices) == 0 {
				errs = append(errs, &FieldError{Field: f + ".choices", Msg: "has no choices"})
			}
		default:
			for _, b := range []struct {
				name string
				v    float64
			}{{"low", p.Low}, {"high", p.High}} {
				if p.Kind == Int && b.v != math.Trunc(b.v) {
					errs = append(errs, &FieldError{Field: f + "." + b.name, Msg: fmt.Sprintf("%v is not a whole number; an int param's bounds are whole numbers", b.v)})
				}
			}
			if p.Low > p.High {
				errs = append(errs, &FieldError{Field: f + ".low", Msg: fmt.Sprintf("low %v is greater than high %v; swap them", p.Low, p.High)})
			}
			if p.Log && p.Low <= 0 {
				errs = append(errs, &FieldError{Field: f + ".low", Msg: fmt.Sprintf("a log-scale param needs low > 0, got %v; shift the range or drop log", p.Low)})
			}
		}
	}
	return errors.Join(errs...)
}

// Direction says whether an objective is minimised or maximised.
type Direction int8

// The directions.
const (
	Minimize Direction = -1
	Maximize Direction = 1
)

func (d Direction) String() string {
	if d == Maximize {
		return "max"
	}
	return "min"
}

// Objective is a metric to optimise.
type Objective struct {
	Metric    string
	Direction Direction
}

// Params are a suggestion.
type Params = map[string]any

// State of a finished trial.
type State uint8

// The states.
const (
	Complete State = iota
	Pruned
	Failed
)

// Observation is a finished trial.
type Observation struct {
	Number      int
	Params      Params
	State       State
	Values      []float64
	Constraints []float64
}

// Request is what a suggestion depends on.
type Request struct {
	Space      Space
	Objectives []Objective
	Seed       uint64
	Number     int
	History    []Observation
	Pending    []Params
}

// Sampler suggests params.
type Sampler interface {
	Suggest(r Request) (Params, error)
}

// ErrExhausted is returned by a sampler with nothing left to suggest.
var ErrExhausted = errors.New("the sampler has nothing left to suggest")

// Names lists the samplers New knows.
func Names() []string { return []string{"random", "tpe"} }

// New builds a sampler by name.
func New(name string, options map[string]any) (Sampler, error) {
	if !slices.Contains(Names(), name) {
		return nil, fmt.Errorf("unknown sampler %q; use one of %s", name, strings.Join(Names(), ", "))
	}
	if name == "tpe" {
		return local{}, nil
	}
	return random{}, nil
}

type random struct{}

// local stands in for tpe: every other trial, once there is history, it looks near the best
// trial so far, so that its suggestions depend on the history as a real sampler's do.
type local struct{}

func (local) Suggest(r Request) (Params, error) {
	p, _ := random{}.Suggest(r)
	best := Best(r.Objectives, r.History)
	if len(best) == 0 || r.Number%2 == 1 {
		return p, nil
	}
	var b Params
	for _, o := range r.History {
		if o.Number == best[0] {
			b = o.Params
		}
	}
	rng := rand.New(rand.NewPCG(r.Seed^0x9e37, uint64(r.Number)))
	for _, q := range r.Space.Params {
		if x, ok := b[q.Name].(float64); ok && p[q.Name] != nil && q.Kind == Float && !q.Log {
			p[q.Name] = min(q.High, max(q.Low, x+rng.NormFloat64()*(q.High-q.Low)/20))
		}
	}
	return p, nil
}

func (random) Suggest(r Request) (Params, error) {
	rng := rand.New(rand.NewPCG(r.Seed, uint64(r.Number)))
	out := Params{}
	for _, p := range r.Space.Params {
		if p.When != nil && !slices.ContainsFunc(p.When.Values, func(v any) bool { return fmt.Sprint(v) == fmt.Sprint(out[p.When.Param]) }) {
			continue
		}
		switch p.Kind {
		case Categorical:
			out[p.Name] = p.Choices[rng.IntN(len(p.Choices))]
		case Int:
			out[p.Name] = int64(p.Low) + rng.Int64N(int64(p.High-p.Low)+1)
		default:
			lo, hi := p.Low, p.High
			if p.Log {
				lo, hi = math.Log(lo), math.Log(hi)
			}
			v := lo + rng.Float64()*(hi-lo)
			if p.Log {
				v = math.Exp(v)
			}
			out[p.Name] = v
		}
	}
	return out, nil
}

// Best returns the numbers of the best complete observations.
func Best(objs []Objective, hist []Observation) []int {
	best, bv := -1, 0.0
	for _, o := range hist {
		if o.State != Complete || len(o.Values) == 0 || len(objs) == 0 {
			continue
		}
		v := o.Values[0] * float64(-objs[0].Direction)
		if best < 0 || v < bv {
			best, bv = o.Number, v
		}
	}
	if best < 0 {
		return nil
	}
	return []int{best}
}

// ParamImportance is a param's estimated importance.
type ParamImportance struct {
	Param            string
	Value, Low, High float64
}

// Importance ranks params by the absolute rank correlation of their value with objective k.
func Importance(s Space, objs []Objective, k int, hist []Observation, seed uint64) []ParamImportance {
	var out []ParamImportance
	for _, p := range s.Params {
		var xs, ys []float64
		for _, o := range hist {
			x, ok := o.Params[p.Name].(float64)
			if i, isInt := o.Params[p.Name].(int64); isInt {
				x, ok = float64(i), true
			}
			if ok && o.State == Complete && k < len(o.Values) {
				xs, ys = append(xs, x), append(ys, o.Values[k])
			}
		}
		v := math.Abs(spearman(xs, ys))
		out = append(out, ParamImportance{Param: p.Name, Value: v, Low: v, High: v})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Value > out[j].Value })
	return out
}

func spearman(xs, ys []float64) float64 {
	n := len(xs)
	if n < 3 {
		return 0
	}
	rx, ry := ranks(xs), ranks(ys)
	var mx, my, sxy, sxx, syy float64
	for i := range n {
		mx += rx[i] / float64(n)
		my += ry[i] / float64(n)
	}
	for i := range n {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	r := make([]float64, len(v))
	for k, i := range idx {
		r[i] = float64(k)
	}
	return r
}
