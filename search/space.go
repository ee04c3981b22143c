package search

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Kind of a parameter.
type Kind uint8

const (
	// Float is a real number in [Low, High].
	Float Kind = iota
	// Int is a whole number in [Low, High].
	Int
	// Categorical is one of Choices.
	Categorical
)

// String returns the name the experiment file uses for the kind.
func (k Kind) String() string {
	switch k {
	case Float:
		return "float"
	case Int:
		return "int"
	case Categorical:
		return "categorical"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Param is one dimension of a search space.
type Param struct {
	Name string
	Kind Kind
	// Low and High bound Float and Int params, both included.
	Low, High float64
	// Log samples on a log scale (Low > 0).
	Log bool
	// Step > 0 restricts values to Low + k*Step (Float, Int); 0 is continuous (Int: step 1).
	Step float64
	// Choices are a Categorical param's values: string, float64, int64 or bool.
	Choices []any
	// When, if set, makes the parameter active only when another (categorical) parameter has
	// one of the given values; inactive parameters are absent from a suggestion.
	When *Condition
}

// Condition makes a parameter depend on the value of a categorical one.
type Condition struct {
	Param  string
	Values []any
}

// Space is what a search explores. The order of Params is significant for determinism (every
// sampler draws in that order); NewSpace gives the canonical order, by name.
type Space struct{ Params []Param }

// NewSpace returns a space of a copy of params sorted by name, the order a space built from an
// unordered source (a Jsonnet object) must have so that the same file gives the same draws.
func NewSpace(params []Param) Space {
	ps := slices.Clone(params)
	slices.SortStableFunc(ps, func(a, b Param) int { return strings.Compare(a.Name, b.Name) })
	return Space{Params: ps}
}

// FieldError is a problem with one field of a search space, named as in the experiment file
// (space.x.low).
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Validate returns every problem of the space, each a *FieldError, joined with errors.Join; nil
// when the space can be searched.
func (s Space) Validate() error {
	if len(s.Params) == 0 {
		return &FieldError{Field: "space", Msg: "the space has no params; give at least one, e.g. space: { x: { low: 0, high: 1 } }"}
	}
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	byName := make(map[string]*Param, len(s.Params))
	for i := range s.Params {
		p := &s.Params[i]
		if p.Name == "" {
			add(fmt.Sprintf("space[%d]", i), "a param has no name")
			continue
		}
		if byName[p.Name] != nil {
			add("space."+p.Name, "the name is used twice; give each param its own name")
			continue
		}
		byName[p.Name] = p
		validateParam(p, add)
	}
	for i := range s.Params {
		p := &s.Params[i]
		if p.When == nil || byName[p.Name] != p {
			continue
		}
		validateCondition(p, byName, add)
	}
	if len(errs) == 0 {
		if name, ok := conditionCycle(s.Params); ok {
			add("space."+name+".when", "the conditions form a cycle; a param cannot depend on itself through others")
		}
	}
	return errors.Join(errs...)
}

func validateParam(p *Param, add func(field, format string, args ...any)) {
	f := "space." + p.Name + "."
	switch p.Kind {
	case Float, Int:
		if len(p.Choices) > 0 {
			add(f+"choices", "a %s param has low and high, not choices", p.Kind)
		}
		finite := true
		for _, b := range []struct {
			name string
			v    float64
		}{{"low", p.Low}, {"high", p.High}} {
			if math.IsNaN(b.v) || math.IsInf(b.v, 0) {
				add(f+b.name, "%v is not a finite number", b.v)
				finite = false
			} else if p.Kind == Int && b.v != math.Trunc(b.v) {
				add(f+b.name, "%v is not a whole number; an int param's bounds are whole numbers", b.v)
			} else if p.Kind == Int && math.Abs(b.v) > 1<<53 {
				add(f+b.name, "%v is beyond 2^53, where whole numbers are no longer exact", b.v)
				finite = false
			}
		}
		if !finite {
			return
		}
		if p.Low > p.High {
			add(f+"low", "low %v is greater than high %v; swap them", p.Low, p.High)
			return
		}
		if math.IsInf(p.High-p.Low, 0) {
			add(f+"high", "the range %v..%v is too wide to compute with; narrow it or use log", p.Low, p.High)
			return
		}
		if p.Log && p.Low <= 0 {
			add(f+"low", "a log-scale param needs low > 0, got %v; shift the range or drop log", p.Low)
		}
		switch {
		case math.IsNaN(p.Step) || math.IsInf(p.Step, 0) || p.Step < 0:
			add(f+"step", "step %v must be a positive number (or absent)", p.Step)
		case p.Step > 0 && p.Step > p.High-p.Low:
			add(f+"step", "step %v is larger than the range %v..%v; make it smaller or drop it", p.Step, p.Low, p.High)
		case p.Step > 0 && max(math.Abs(p.Low), math.Abs(p.High))/p.Step > 1<<50:
			add(f+"step", "step %v is too fine for bounds as large as %v..%v: the values would not be exact", p.Step, p.Low, p.High)
		case p.Kind == Int && p.Step > 0 && p.Step != math.Trunc(p.Step):
			add(f+"step", "step %v is not a whole number; an int param's step is whole", p.Step)
		case p.Log && p.Step > 0 && !(p.Kind == Int && p.Step == 1):
			add(f+"step", "a log-scale param cannot have a step (except 1 for an int)")
		}
	case Categorical:
		if p.Low != 0 || p.High != 0 || p.Log || p.Step != 0 {
			add(f+"choices", "a categorical param has choices only, not low, high, log or step")
		}
		if len(p.Choices) == 0 {
			add(f+"choices", "no choices; give at least one")
		}
		for i, c := range p.Choices {
			switch v := c.(type) {
			case string, int64, bool:
			case float64:
				if math.IsNaN(v) {
					add(fmt.Sprintf("%schoices[%d]", f, i), "NaN is not a choice")
				}
			default:
				add(fmt.Sprintf("%schoices[%d]", f, i), "%v (%T) is not a string, number or bool", c, c)
				continue
			}
			for j := range i {
				if sameValue(p.Choices[j], c) {
					add(fmt.Sprintf("%schoices[%d]", f, i), "%v is listed twice", c)
					break
				}
			}
		}
	default:
		add(f+"kind", "unknown kind %d; use float, int or categorical", p.Kind)
	}
}

func validateCondition(p *Param, byName map[string]*Param, add func(field, format string, args ...any)) {
	f := "space." + p.Name + ".when"
	parent := byName[p.When.Param]
	switch {
	case p.When.Param == p.Name:
		add(f, "a param cannot depend on itself")
	case parent == nil:
		add(f, "depends on %q, which is not a param of the space", p.When.Param)
	case parent.Kind != Categorical:
		add(f, "depends on %q, a %s param; conditions apply to categorical params only", p.When.Param, parent.Kind)
	case len(p.When.Values) == 0:
		add(f+".values", "no values; list the values of %q that make %q active", p.When.Param, p.Name)
	default:
		for i, v := range p.When.Values {
			if choiceIndex(parent, v) < 0 {
				add(fmt.Sprintf("%s.values[%d]", f, i), "%v is not a choice of %q", v, p.When.Param)
			}
		}
	}
}

// conditionCycle reports a param whose chain of conditions comes back to itself.
func conditionCycle(ps []Param) (string, bool) {
	parent := make(map[string]string, len(ps))
	for _, p := range ps {
		if p.When != nil {
			parent[p.Name] = p.When.Param
		}
	}
	for _, p := range ps {
		seen := map[string]bool{p.Name: true}
		for n, ok := parent[p.Name]; ok; n, ok = parent[n] {
			if seen[n] {
				return p.Name, true
			}
			seen[n] = true
		}
	}
	return "", false
}

// sameValue compares two param values, treating numbers of different Go types as equal when
// they are the same number: a value read back from JSON is a float64 where the choice was an
// int64.
func sameValue(a, b any) bool {
	if a == b {
		return true
	}
	x, okA := number(a)
	y, okB := number(b)
	return okA && okB && x == y
}

// number converts the numeric types a param value may arrive as.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float32:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	}
	return 0, false
}

// choiceIndex is the index of v among p's choices, or -1.
func choiceIndex(p *Param, v any) int {
	for i, c := range p.Choices {
		if sameValue(c, v) {
			return i
		}
	}
	return -1
}
