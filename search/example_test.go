package search_test

import (
	"fmt"

	"github.com/jikken-dev/jikken/search"
)

// A search loop as the runner drives it: ask for params, run the trial, record the outcome.
func Example() {
	space := search.NewSpace([]search.Param{
		{Name: "x", Low: -5, High: 5},
		{Name: "opt", Kind: search.Categorical, Choices: []any{"sgd", "adam"}},
	})
	objs := []search.Objective{{Metric: "loss", Direction: search.Minimize}}
	sampler, err := search.New("tpe", nil)
	if err != nil {
		panic(err)
	}
	var hist []search.Observation
	for n := range 40 {
		ps, err := sampler.Suggest(search.Request{Space: space, Objectives: objs, Seed: 1, Number: n, History: hist})
		if err != nil {
			panic(err)
		}
		x := ps["x"].(float64)
		loss := (x - 1) * (x - 1)
		if ps["opt"] == "sgd" {
			loss++
		}
		hist = append(hist, search.Observation{Number: n, Params: ps, Values: []float64{loss}})
	}
	best := hist[search.Best(objs, hist)[0]]
	fmt.Printf("opt=%v, x within 0.5 of 1: %v\n", best.Params["opt"], best.Params["x"].(float64) > 0.5 && best.Params["x"].(float64) < 1.5)
	// Output: opt=adam, x within 0.5 of 1: true
}
