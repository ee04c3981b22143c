package search

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current samplers")

// TestSuggestionsGolden pins the exact suggestions of each sampler for fixed seeds and
// histories (testdata/suggestions.golden, every float written so it reads back bit for bit),
// so that an optimisation or refactoring cannot change what a search explores without showing
// up here. A deliberate change of a sampler's behaviour rewrites the file with -update.
func TestSuggestionsGolden(t *testing.T) {
	var b strings.Builder
	// Large histories, warm cache: what BenchmarkSuggest times.
	for _, c := range []struct {
		name, sampler         string
		options               map[string]any
		dims, history, pend   int
		twoObjectives, pruned bool
		constrained           bool
	}{
		{name: "tpe 10 dims 1000 finished", sampler: "tpe", dims: 10, history: 1000, pend: 64},
		{name: "tpe 10 dims 10000 finished", sampler: "tpe", dims: 10, history: 10000, pend: 64},
		{name: "tpe 2 dims 300 finished pruned", sampler: "tpe", dims: 2, history: 300, pend: 8, pruned: true},
		{name: "tpe scott joint", sampler: "tpe", options: map[string]any{"bandwidth": "scott", "proposal": "joint", "score": "joint"}, dims: 3, history: 500, pend: 4},
		{name: "tpe no liar", sampler: "tpe", options: map[string]any{"constant_liar": false, "max_above": 32}, dims: 4, history: 200, pend: 4},
		{name: "tpe 2 objectives", sampler: "tpe", dims: 4, history: 1000, pend: 16, twoObjectives: true},
		{name: "cmaes 10 dims 2000 finished", sampler: "cmaes", dims: 10, history: 2000, pend: 8},
		{name: "nsga2 2 objectives", sampler: "nsga2", dims: 4, history: 600, pend: 8, twoObjectives: true},
		{name: "tpe 2 objectives 10000 finished", sampler: "tpe", dims: 3, history: 10000, pend: 8, twoObjectives: true},
		{name: "tpe 2 objectives constrained", sampler: "tpe", dims: 3, history: 2000, pend: 8, twoObjectives: true, constrained: true},
		{name: "tpe 1 objective constrained", sampler: "tpe", dims: 3, history: 2000, pend: 8, constrained: true},
		{name: "nsga2 2 objectives constrained", sampler: "nsga2", dims: 3, history: 600, pend: 8, twoObjectives: true, constrained: true},
	} {
		req := benchRequest(c.dims, c.history, c.pend)
		if c.twoObjectives {
			req.Objectives = append(req.Objectives, Objective{Metric: "other", Direction: Maximize})
			for i := range req.History {
				o := &req.History[i]
				o.Values = append(o.Values, o.Values[0]-float64(i%5))
			}
		}
		if c.constrained {
			// Some trials infeasible by different amounts, some with a tied second objective.
			for i := range req.History {
				o := &req.History[i]
				o.Constraints = []float64{float64(i%11) - 8, []float64{-1, 0.5, 2}[i%3]}
				if c.twoObjectives && i%4 == 0 {
					o.Values[1] = math.Round(o.Values[1])
				}
			}
		}
		if c.pruned {
			for i := range req.History {
				switch i % 7 {
				case 3:
					req.History[i].State = Pruned
				case 5:
					req.History[i].State = Failed
				}
			}
		}
		s, err := New(c.sampler, c.options)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "# %s\n", c.name)
		for i := range 4 {
			req.Number = c.history + c.pend + i
			ps, err := s.Suggest(req)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			fmt.Fprintf(&b, "%d %s\n", req.Number, formatParams(ps))
		}
	}
	// A sequential search on a mixed space with a condition: the history grows by one trial per
	// call, as the runner's does.
	space := NewSpace([]Param{
		{Name: "lr", Low: 1e-4, High: 1, Log: true},
		{Name: "layers", Kind: Int, Low: 1, High: 8},
		{Name: "drop", Low: 0, High: 0.5, Step: 0.05},
		{Name: "opt", Kind: Categorical, Choices: []any{"sgd", "adam", "rmsprop"}},
		{Name: "momentum", Low: 0, High: 0.99, When: &Condition{Param: "opt", Values: []any{"sgd"}}},
	})
	loss := func(ps Params) []float64 {
		v := math.Pow(math.Log10(ps["lr"].(float64))+2.5, 2) + math.Abs(float64(ps["layers"].(int64))-4)/4 + ps["drop"].(float64)
		switch ps["opt"] {
		case "sgd":
			v += math.Abs(ps["momentum"].(float64) - 0.9)
		case "rmsprop":
			v += 0.3
		}
		return []float64{v}
	}
	for _, name := range []string{"tpe", "cmaes", "random", "halton"} {
		s, err := New(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "# %s sequential, mixed space\n", name)
		var hist []Observation
		for n := range 80 {
			ps, err := s.Suggest(Request{Space: space, Objectives: []Objective{{Metric: "loss"}}, Seed: 7, Number: n, History: hist})
			if err != nil {
				t.Fatalf("%s trial %d: %v", name, n, err)
			}
			if n%8 == 7 {
				fmt.Fprintf(&b, "%d %s\n", n, formatParams(ps))
			}
			hist = append(hist, Observation{Number: n, Params: ps, Values: loss(ps)})
		}
	}
	path := filepath.Join("testdata", "suggestions.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestSuggestionsGolden -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("suggestions differ from %s at line %d:\n got %s\nwant %s", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("suggestions differ from %s: %d lines, want %d", path, len(gl), len(wl))
	}
}

// formatParams writes params by name, floats in the shortest form that reads back exactly.
func formatParams(ps Params) string {
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(' ')
		}
		v := ps[n]
		if f, ok := v.(float64); ok {
			v = strconv.FormatFloat(f, 'g', -1, 64)
		}
		fmt.Fprintf(&b, "%s=%v", n, v)
	}
	return b.String()
}
