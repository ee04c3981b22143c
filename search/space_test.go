package search

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	cat := func(name string, choices ...any) Param { return Param{Name: name, Kind: Categorical, Choices: choices} }
	tests := []struct {
		name   string
		params []Param
		fields []string // the FieldError fields expected, in order; nil: valid
	}{
		{"valid", []Param{{Name: "x", Low: -5, High: 5}, {Name: "n", Kind: Int, Low: 1, High: 8, Log: true}, cat("opt", "sgd", "adam")}, nil},
		{"empty space", nil, []string{"space"}},
		{"low greater than high", []Param{{Name: "x", Low: 5, High: -5}}, []string{"space.x.low"}},
		{"log with low zero", []Param{{Name: "lr", Low: 0, High: 1, Log: true}}, []string{"space.lr.low"}},
		{"log with low negative", []Param{{Name: "lr", Low: -1, High: 1, Log: true}}, []string{"space.lr.low"}},
		{"negative step", []Param{{Name: "x", Low: 0, High: 1, Step: -0.1}}, []string{"space.x.step"}},
		{"step larger than range", []Param{{Name: "x", Low: 0, High: 1, Step: 2}}, []string{"space.x.step"}},
		{"fractional int step", []Param{{Name: "k", Kind: Int, Low: 0, High: 10, Step: 0.5}}, []string{"space.k.step"}},
		{"fractional int bound", []Param{{Name: "k", Kind: Int, Low: 0.5, High: 10}}, []string{"space.k.low"}},
		{"log float with step", []Param{{Name: "x", Low: 1, High: 10, Log: true, Step: 1}}, []string{"space.x.step"}},
		{"infinite high", []Param{{Name: "x", Low: 0, High: posInf()}}, []string{"space.x.high"}},
		{"range overflows", []Param{{Name: "x", Low: -1e308, High: 1e308}}, []string{"space.x.high"}},
		{"int beyond 2^53", []Param{{Name: "k", Kind: Int, Low: 0, High: 1e17}}, []string{"space.k.high"}},
		{"empty choices", []Param{cat("opt")}, []string{"space.opt.choices"}},
		{"duplicate choice", []Param{cat("opt", "a", "a")}, []string{"space.opt.choices[1]"}},
		{"int and float choice equal", []Param{cat("k", int64(1), 1.0)}, []string{"space.k.choices[1]"}},
		{"bad choice type", []Param{cat("opt", []int{1})}, []string{"space.opt.choices[0]"}},
		{"duplicate name", []Param{{Name: "x", High: 1}, {Name: "x", High: 1}}, []string{"space.x"}},
		{"no name", []Param{{High: 1}}, []string{"space[0]"}},
		{"condition on unknown", []Param{{Name: "x", High: 1, When: &Condition{Param: "opt", Values: []any{"a"}}}}, []string{"space.x.when"}},
		{"condition on numeric", []Param{{Name: "y", High: 1}, {Name: "x", High: 1, When: &Condition{Param: "y", Values: []any{0.5}}}}, []string{"space.x.when"}},
		{"condition value not a choice", []Param{cat("opt", "a"), {Name: "x", High: 1, When: &Condition{Param: "opt", Values: []any{"b"}}}}, []string{"space.x.when.values[0]"}},
		{"condition without values", []Param{cat("opt", "a"), {Name: "x", High: 1, When: &Condition{Param: "opt"}}}, []string{"space.x.when.values"}},
		{"condition cycle", []Param{
			{Name: "a", Kind: Categorical, Choices: []any{"u"}, When: &Condition{Param: "b", Values: []any{"v"}}},
			{Name: "b", Kind: Categorical, Choices: []any{"v"}, When: &Condition{Param: "a", Values: []any{"u"}}},
		}, []string{"space.a.when"}},
		{"all problems reported", []Param{{Name: "x", Low: 2, High: 1}, cat("c")}, []string{"space.x.low", "space.c.choices"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Space{Params: tc.params}.Validate()
			var got []string
			for _, e := range unjoin(err) {
				var fe *FieldError
				if !errors.As(e, &fe) {
					t.Fatalf("error %v is not a *FieldError", e)
				}
				if fe.Msg == "" {
					t.Errorf("%s: empty message", fe.Field)
				}
				got = append(got, fe.Field)
			}
			if strings.Join(got, " ") != strings.Join(tc.fields, " ") {
				t.Errorf("fields %q, want %q (error: %v)", got, tc.fields, err)
			}
		})
	}
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func posInf() float64 { return 1 / zero }

var zero = 0.0

func TestNewSpaceSortsByName(t *testing.T) {
	in := []Param{{Name: "b", High: 1}, {Name: "a", High: 1}}
	s := NewSpace(in)
	if s.Params[0].Name != "a" || s.Params[1].Name != "b" || in[0].Name != "b" {
		t.Errorf("NewSpace gave %v and left %v", s.Params, in)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New("annealing", nil); err == nil || !strings.Contains(err.Error(), "tpe") {
		t.Errorf("unknown sampler: %v, want an error listing the names", err)
	}
	if _, err := New("tpe", map[string]any{"n_startup": 5.0}); err == nil || !strings.Contains(err.Error(), "n_startup_trials") {
		t.Errorf("misspelt option: %v, want an error naming the known options", err)
	}
	if _, err := New("tpe", map[string]any{"n_startup_trials": 2.5}); err == nil {
		t.Error("fractional n_startup_trials accepted")
	}
	if _, err := New("tpe", map[string]any{"score": "best"}); err == nil || !strings.Contains(err.Error(), "blend, joint") {
		t.Errorf("score best: %v, want an error listing blend, joint", err)
	}
	for _, n := range append(Names(), "QMC", "cma-es", "NSGA-II") {
		if _, err := New(n, nil); err != nil {
			t.Errorf("New(%q): %v", n, err)
		}
	}
}
