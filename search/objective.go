package search

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Direction says whether an objective is minimised or maximised.
type Direction int8

const (
	// Minimize is the default: any Direction other than Maximize minimises.
	Minimize Direction = -1
	// Maximize maximises the objective.
	Maximize Direction = 1
)

// String returns "min" or "max", the words of the experiment file.
func (d Direction) String() string {
	if d == Maximize {
		return "max"
	}
	return "min"
}

// ParseDirection reads "min"/"minimize" or "max"/"maximize".
func ParseDirection(s string) (Direction, error) {
	switch strings.ToLower(s) {
	case "min", "minimize", "minimise":
		return Minimize, nil
	case "max", "maximize", "maximise":
		return Maximize, nil
	}
	return 0, fmt.Errorf("direction %q: use min or max", s)
}

// Objective is a metric to optimise.
type Objective struct {
	Metric    string
	Direction Direction
}

// Params are a suggestion: Float -> float64, Int -> int64, Categorical -> the choice's value.
type Params = map[string]any

// State is how a trial ended, as samplers see it.
type State uint8

const (
	// Complete: the trial finished and reported its objectives.
	Complete State = iota
	// Pruned: the trial was stopped early; its Values are the last reported ones, if any.
	Pruned
	// Failed: the trial ended without a usable value; samplers ignore it.
	Failed
)

// Observation is a finished trial as samplers see it, in the order the plan numbers trials.
type Observation struct {
	Number int
	Params Params
	State  State
	// Values has one value per objective (Complete; Pruned: the last reported values, may be nil);
	// Constraints are metrics that must be <= 0 to be feasible (may be nil).
	Values      []float64
	Constraints []float64
}

// score is an objective value turned so that lower is better; NaN and missing values are +Inf.
func score(objs []Objective, o *Observation, k int) float64 {
	if k >= len(o.Values) || math.IsNaN(o.Values[k]) {
		return math.Inf(1)
	}
	if k < len(objs) && objs[k].Direction == Maximize {
		return -o.Values[k]
	}
	return o.Values[k]
}

// violation is the total amount by which o's constraints exceed 0 (0: feasible).
func violation(o *Observation) float64 {
	v := 0.0
	for _, c := range o.Constraints {
		switch {
		case math.IsNaN(c):
			return math.Inf(1)
		case c > 0:
			v += c
		}
	}
	return v
}

// Feasible reports whether o meets its constraints (each <= 0; none logged counts as not met),
// the rule Best applies before comparing objectives.
func (o *Observation) Feasible() bool { return violation(o) == 0 }

// usable reports whether o carries a value for every objective.
func usable(objs []Objective, o *Observation) bool {
	if o.State == Failed || len(o.Values) < max(len(objs), 1) {
		return false
	}
	for _, v := range o.Values[:max(len(objs), 1)] {
		if math.IsNaN(v) {
			return false
		}
	}
	return true
}

// scored is an observation prepared for ranking: its objective scores (lower is better) and
// constraint violation.
type scored struct {
	obs       *Observation
	scores    []float64
	violation float64
}

func prepare(objs []Objective, o *Observation) scored {
	n := max(len(objs), 1)
	s := scored{obs: o, scores: make([]float64, n), violation: violation(o)}
	for k := range n {
		s.scores[k] = score(objs, o, k)
	}
	return s
}

// dominates is constrained domination: a feasible point beats an infeasible one, of two
// infeasible the smaller violation wins, of two feasible the Pareto-dominating one.
func dominates(a, b *scored) bool {
	if a.violation != b.violation {
		return a.violation < b.violation
	}
	better := false
	for k := range a.scores {
		switch {
		case a.scores[k] > b.scores[k]:
			return false
		case a.scores[k] < b.scores[k]:
			better = true
		}
	}
	return better
}

// fronts sorts points into non-dominated fronts (NSGA-II's fast non-dominated sort); each front
// lists indices into pts in increasing order.
func fronts(pts []scored) [][]int {
	n := len(pts)
	count := make([]int, n)
	beats := make([][]int, n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			switch {
			case dominates(&pts[i], &pts[j]):
				beats[i] = append(beats[i], j)
				count[j]++
			case dominates(&pts[j], &pts[i]):
				beats[j] = append(beats[j], i)
				count[i]++
			}
		}
	}
	var out [][]int
	var cur []int
	for i := range n {
		if count[i] == 0 {
			cur = append(cur, i)
		}
	}
	for len(cur) > 0 {
		out = append(out, cur)
		var next []int
		for _, i := range cur {
			for _, j := range beats[i] {
				count[j]--
				if count[j] == 0 {
					next = append(next, j)
				}
			}
		}
		slices.Sort(next)
		cur = next
	}
	return out
}

// firstFronts returns the leading non-dominated fronts of pts, in order, until they hold at
// least need points (need <= 0: only the first), each front's indices increasing. Peeling one
// front at a time costs O(n * front size), not the O(n^2) of a full sort, which matters for a
// history of 10,000 trials when only its best few are wanted; with two objectives a sweep
// over the points sorted once finds each front in O(n), which matters when a front is long.
func firstFronts(pts []scored, need int) [][]int {
	if sweepable(pts) {
		return firstFronts2(pts, need)
	}
	return peelFronts(pts, need)
}

// sweepable reports whether every point has two scores and no NaN, which firstFronts2 needs.
func sweepable(pts []scored) bool {
	for i := range pts {
		p := &pts[i]
		if len(p.scores) != 2 || math.IsNaN(p.violation) || math.IsNaN(p.scores[0]) || math.IsNaN(p.scores[1]) {
			return false
		}
	}
	return true
}

// firstFronts2 is firstFronts for two objectives. Sorted by (violation, first score, second
// score), a point is on the first front when its violation is the least, its second score is
// the least among the points with its first score, and below the second score of every point
// with a smaller first score; the next front is found the same way among the rest, which stay
// sorted. Constrained domination is a strict order, so the fronts are the same sets as
// peelFronts finds.
func firstFronts2(pts []scored, need int) [][]int {
	// The keys are copied next to each other and compared without cmp.Compare's care for NaN
	// (there is none): sorting 10,000 points was most of the cost.
	type key struct {
		v, a, b float64
		i       int
	}
	rest := make([]key, len(pts))
	for i := range pts {
		rest[i] = key{pts[i].violation, pts[i].scores[0], pts[i].scores[1], i}
	}
	slices.SortFunc(rest, func(x, y key) int {
		switch {
		case x.v != y.v:
			return cmp.Compare(x.v, y.v)
		case x.a != y.a:
			return cmp.Compare(x.a, y.a)
		case x.b != y.b:
			return cmp.Compare(x.b, y.b)
		}
		return x.i - y.i
	})
	var out [][]int
	got := 0
	for len(rest) > 0 && (got < need || len(out) == 0) {
		var front []int
		left := rest[:0] // filtered in place: it never overtakes the reading position
		v := rest[0].v
		prevMin, hasPrev := 0.0, false // the least second score of smaller first scores
		i := 0
		for i < len(rest) && rest[i].v == v {
			first, least := rest[i].a, rest[i].b
			j := i
			for j < len(rest) && rest[j].v == v && rest[j].a == first {
				j++
			}
			for _, k := range rest[i:j] {
				if k.b == least && (!hasPrev || k.b < prevMin) {
					front = append(front, k.i)
				} else {
					left = append(left, k)
				}
			}
			if !hasPrev || least < prevMin {
				prevMin, hasPrev = least, true
			}
			i = j
		}
		left = append(left, rest[i:]...)
		slices.Sort(front)
		out = append(out, front)
		got += len(front)
		rest = left
	}
	return out
}

// peelFronts is firstFronts for any number of objectives.
func peelFronts(pts []scored, need int) [][]int {
	rest := make([]int, len(pts))
	for i := range rest {
		rest[i] = i
	}
	var out [][]int
	got := 0
	for len(rest) > 0 && (got < need || len(out) == 0) {
		var front, left []int
		for _, i := range rest {
			beaten := false
			for _, f := range front {
				if dominates(&pts[f], &pts[i]) {
					beaten = true
					break
				}
			}
			if beaten {
				left = append(left, i)
				continue
			}
			kept := front[:0]
			for _, f := range front {
				if dominates(&pts[i], &pts[f]) {
					left = append(left, f)
				} else {
					kept = append(kept, f)
				}
			}
			front = append(kept, i)
		}
		slices.Sort(front)
		slices.Sort(left)
		out = append(out, front)
		got += len(front)
		rest = left
	}
	return out
}

// crowding is NSGA-II's crowding distance of the points of one front (indices into pts), in
// the front's order: the boundary points of each objective get +Inf.
func crowding(pts []scored, front []int) []float64 {
	d := make([]float64, len(front))
	if len(front) == 0 {
		return d
	}
	idx := make([]int, len(front))
	for k := range pts[front[0]].scores {
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			return cmp.Compare(pts[front[a]].scores[k], pts[front[b]].scores[k])
		})
		lo, hi := pts[front[idx[0]]].scores[k], pts[front[idx[len(idx)-1]]].scores[k]
		d[idx[0]], d[idx[len(idx)-1]] = math.Inf(1), math.Inf(1)
		if hi == lo || math.IsInf(hi-lo, 0) {
			continue
		}
		for i := 1; i+1 < len(idx); i++ {
			d[idx[i]] += (pts[front[idx[i+1]]].scores[k] - pts[front[idx[i-1]]].scores[k]) / (hi - lo)
		}
	}
	return d
}

// rank orders points best first: one objective by (violation, score, Number); several by
// (front, crowding distance descending, Number). It returns indices into pts.
func rank(pts []scored) []int {
	order := make([]int, len(pts))
	for i := range order {
		order[i] = i
	}
	if len(pts) == 0 {
		return order
	}
	if len(pts[0].scores) == 1 {
		slices.SortFunc(order, func(a, b int) int {
			pa, pb := &pts[a], &pts[b]
			return cmp.Or(cmp.Compare(pa.violation, pb.violation), cmp.Compare(pa.scores[0], pb.scores[0]),
				cmp.Compare(pa.obs.Number, pb.obs.Number))
		})
		return order
	}
	order = order[:0]
	for _, f := range fronts(pts) {
		cd := crowding(pts, f)
		pos := make([]int, len(f))
		for i := range pos {
			pos[i] = i
		}
		slices.SortFunc(pos, func(a, b int) int {
			return cmp.Or(cmp.Compare(cd[b], cd[a]), cmp.Compare(pts[f[a]].obs.Number, pts[f[b]].obs.Number))
		})
		for _, p := range pos {
			order = append(order, f[p])
		}
	}
	return order
}
