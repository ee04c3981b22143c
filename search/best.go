package search

import (
	"cmp"
	"slices"
)

// Best returns the Numbers of the best observations, in increasing order: with one objective
// the best one (the lowest Number among equals); with several the Pareto front. Feasible
// trials come first: when none is feasible, the least violating ones take their place
// (constrained domination). Only complete trials with a value for every objective count.
func Best(objs []Objective, hist []Observation) []int {
	var pts []scored
	for i := range hist {
		if hist[i].State == Complete && usable(objs, &hist[i]) {
			pts = append(pts, prepare(objs, &hist[i]))
		}
	}
	if len(pts) == 0 {
		return nil
	}
	if len(pts[0].scores) == 1 {
		return []int{pts[rank(pts)[0]].obs.Number}
	}
	front := firstFronts(pts, 0)[0]
	out := make([]int, len(front))
	for i, p := range front {
		out[i] = pts[p].obs.Number
	}
	slices.SortFunc(out, cmp.Compare)
	return out
}
