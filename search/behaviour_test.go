package search

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// optimise runs a sequential search of n trials on f and returns the history.
func optimise(t testing.TB, s Sampler, space Space, objs []Objective, seed uint64, n int, f func(Params) []float64) []Observation {
	t.Helper()
	var hist []Observation
	for i := range n {
		ps, err := s.Suggest(Request{Space: space, Objectives: objs, Seed: seed, Number: i, History: hist})
		if err != nil {
			t.Fatalf("seed %d trial %d: %v", seed, i, err)
		}
		hist = append(hist, Observation{Number: i, Params: ps, Values: f(ps)})
	}
	return hist
}

func box(names ...string) Space {
	var ps []Param
	for _, n := range names {
		ps = append(ps, Param{Name: n, Low: -5, High: 5})
	}
	return Space{Params: ps}
}

func quadratic(ps Params) []float64 {
	x, y := ps["x"].(float64), ps["y"].(float64)
	return []float64{(x-1.5)*(x-1.5) + 2*(y+0.5)*(y+0.5)}
}

func minValue(hist []Observation) float64 {
	best := math.Inf(1)
	for _, o := range hist {
		best = min(best, o.Values[0])
	}
	return best
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

// TestModelsBeatRandom: on a quadratic in 2 dimensions, 60 trials, the median best value over
// 15 seeds of TPE and of CMA-ES is below random search's.
func TestModelsBeatRandom(t *testing.T) {
	objs := []Objective{{Metric: "loss"}}
	bests := map[string][]float64{}
	for _, name := range []string{"random", "tpe", "cmaes"} {
		for seed := range uint64(15) {
			s, _ := New(name, nil)
			bests[name] = append(bests[name], minValue(optimise(t, s, box("x", "y"), objs, seed, 60, quadratic)))
		}
	}
	r, tp, cm := median(bests["random"]), median(bests["tpe"]), median(bests["cmaes"])
	t.Logf("median best: random %.4g, tpe %.4g, cmaes %.4g", r, tp, cm)
	if tp >= r/3 {
		t.Errorf("tpe's median best %.4g is not well below random's %.4g", tp, r)
	}
	if cm >= r/3 {
		t.Errorf("cmaes's median best %.4g is not well below random's %.4g", cm, r)
	}
}

// TestTPEHandlesKinds: TPE finds the best corner of a space of an int with a step, a log float
// and a categorical param better than random does.
func TestTPEHandlesKinds(t *testing.T) {
	space := Space{Params: []Param{
		{Name: "k", Kind: Int, Low: 0, High: 100, Step: 5},
		{Name: "lr", Low: 1e-5, High: 1, Log: true},
		{Name: "opt", Kind: Categorical, Choices: []any{"sgd", "adam", "rmsprop", "lion"}},
	}}
	f := func(ps Params) []float64 {
		k := float64(ps["k"].(int64))
		lr := math.Log10(ps["lr"].(float64))
		v := (k-35)*(k-35)/100 + (lr+3)*(lr+3)
		if ps["opt"] != "rmsprop" {
			v += 5
		}
		return []float64{v}
	}
	objs := []Objective{{Metric: "loss"}}
	var tpeBest, randomBest []float64
	for seed := range uint64(10) {
		s, _ := New("tpe", nil)
		tpeBest = append(tpeBest, minValue(optimise(t, s, space, objs, seed, 60, f)))
		rs, _ := New("random", nil)
		randomBest = append(randomBest, minValue(optimise(t, rs, space, objs, seed, 60, f)))
	}
	if median(tpeBest) >= median(randomBest) {
		t.Errorf("tpe median best %.4g, random %.4g", median(tpeBest), median(randomBest))
	}
}

// TestConstantLiar: eight suggestions asked in parallel on a small integer grid (each seeing
// the earlier ones pending) repeat each other far less often with the constant liar.
func TestConstantLiar(t *testing.T) {
	objs := []Objective{{Metric: "loss"}}
	space := Space{Params: []Param{{Name: "x", Kind: Int, Low: 0, High: 9}, {Name: "y", Kind: Int, Low: 0, High: 9}}}
	f := func(ps Params) []float64 {
		x, y := float64(ps["x"].(int64)), float64(ps["y"].(int64))
		return []float64{(x-3)*(x-3) + (y-6)*(y-6)}
	}
	repeats := func(liar bool) int {
		total := 0
		for seed := range uint64(20) {
			s, _ := New("tpe", map[string]any{"constant_liar": liar})
			hist := optimise(t, s, space, objs, seed, 30, f)
			var pending []Params
			for i := range 8 {
				ps, err := s.Suggest(Request{Space: space, Objectives: objs, Seed: seed, Number: 30 + i, History: hist, Pending: pending})
				if err != nil {
					t.Fatal(err)
				}
				for _, q := range pending {
					if reflect.DeepEqual(ps, q) {
						total++
					}
				}
				pending = append(pending, ps)
			}
		}
		return total
	}
	with, without := repeats(true), repeats(false)
	t.Logf("repeated pairs among 8 parallel suggestions, 20 seeds: liar %d, no liar %d", with, without)
	if with*2 > without {
		t.Errorf("the constant liar does not keep parallel suggestions apart: %d repeats, %d without it", with, without)
	}
}

// zdt1 is a two-objective problem whose Pareto front is f2 = 1 - sqrt(f1), reached when every
// x but the first is 0.
func zdt1(ps Params) []float64 {
	const n = 5
	x0 := ps["x0"].(float64)
	g := 0.0
	for i := 1; i < n; i++ {
		g += ps[fmt.Sprintf("x%d", i)].(float64)
	}
	g = 1 + 9*g/(n-1)
	return []float64{x0, g * (1 - math.Sqrt(x0/g))}
}

func TestNSGA2Front(t *testing.T) {
	var ps []Param
	for i := range 5 {
		ps = append(ps, Param{Name: fmt.Sprintf("x%d", i), Low: 0, High: 1})
	}
	space := Space{Params: ps}
	objs := []Objective{{Metric: "f1", Direction: Minimize}, {Metric: "f2", Direction: Minimize}}
	s, _ := New("nsga2", map[string]any{"population_size": 20.0})
	hist := optimise(t, s, space, objs, 3, 1000, zdt1)
	front := Best(objs, hist)
	if len(front) < 5 {
		t.Fatalf("front of %d points", len(front))
	}
	byNum := map[int]Observation{}
	for _, o := range hist {
		byNum[o.Number] = o
	}
	gap := 0.0
	for _, a := range front {
		for _, b := range front {
			pa, pb := prepare(objs, ptr(byNum[a])), prepare(objs, ptr(byNum[b]))
			if dominates(&pb, &pa) {
				t.Errorf("front member %d is dominated by %d", a, b)
			}
		}
		v := byNum[a].Values
		gap = max(gap, v[1]-(1-math.Sqrt(v[0])))
	}
	t.Logf("front of %d points, at most %.3g above the true one", len(front), gap)
	// Random search with the same budget stays about 1.5 above it.
	if gap > 0.3 {
		t.Errorf("after 1000 trials the front is %.3g above the true one", gap)
	}
	for _, o := range hist {
		if slices.Contains(front, o.Number) {
			continue
		}
		dominated := false
		po := prepare(objs, ptr(o))
		for _, a := range front {
			pa := prepare(objs, ptr(byNum[a]))
			dominated = dominated || dominates(&pa, &po) || slices.Equal(pa.scores, po.scores)
		}
		if !dominated {
			t.Fatalf("trial %d %v is left out of the front but nothing on it dominates it", o.Number, o.Values)
		}
	}
}

func ptr(o Observation) *Observation { return &o }

// TestHaltonDiscrepancy: the first 256 points of the 2-D scrambled sequence fill the square's
// 16x16 cells far more evenly than pseudo-random points do, for every seed tried, and two
// seeds give different designs.
func TestHaltonDiscrepancy(t *testing.T) {
	for seed := range uint64(5) {
		var cells [16][16]int
		for n := range uint64(256) {
			u := halton(2, seed, n)
			cells[int(u[0]*16)][int(u[1]*16)]++
		}
		empty := 0
		for i := range cells {
			for j := range cells[i] {
				if cells[i][j] == 0 {
					empty++
				}
			}
		}
		// 256 uniform points leave about 256/e = 94 of the 256 cells empty (sd about 5).
		if empty > 70 {
			t.Errorf("seed %d: %d of 256 cells empty", seed, empty)
		}
		// Each of the 16 columns holds exactly 16 points: base 2 stratifies perfectly.
		for i := range cells {
			sum := 0
			for j := range cells[i] {
				sum += cells[i][j]
			}
			if sum != 16 {
				t.Errorf("seed %d: column %d holds %d points", seed, i, sum)
			}
		}
	}
	if reflect.DeepEqual(halton(3, 1, 5), halton(3, 2, 5)) {
		t.Error("seeds 1 and 2 give the same point")
	}
}

func TestGrid(t *testing.T) {
	space := Space{Params: []Param{
		{Name: "a", Kind: Categorical, Choices: []any{"x", "y"}},
		{Name: "b", Kind: Int, Low: 1, High: 5, Step: 2},
		{Name: "c", Low: 0, High: 1, When: &Condition{Param: "a", Values: []any{"y"}}},
	}}
	s, err := New("grid", map[string]any{"points": 2.0})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for n := 0; ; n++ {
		ps, err := s.Suggest(Request{Space: space, Number: n})
		if errors.Is(err, ErrExhausted) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(ps))
	}
	want := []string{
		"map[a:x b:1]", "map[a:x b:3]", "map[a:x b:5]",
		"map[a:y b:1 c:0]", "map[a:y b:1 c:1]", "map[a:y b:3 c:0]", "map[a:y b:3 c:1]", "map[a:y b:5 c:0]", "map[a:y b:5 c:1]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("grid\n got %q\nwant %q", got, want)
	}
	// The option points covers a continuous float.
	if ps, err := s.Suggest(Request{Space: box("x"), Number: 1}); err != nil || ps["x"] != 5.0 {
		t.Errorf("grid with points: %v, %v; want x = 5", ps, err)
	}
	plain, _ := New("grid", nil)
	if _, err := plain.Suggest(Request{Space: box("x")}); err == nil {
		t.Error("a continuous float without step or points was accepted")
	}
}

func TestBest(t *testing.T) {
	min1 := []Objective{{Metric: "loss"}}
	hist := []Observation{
		{Number: 0, Values: []float64{3}},
		{Number: 1, Values: []float64{1}, Constraints: []float64{0.5}}, // infeasible
		{Number: 2, Values: []float64{2}},
		{Number: 3, Values: []float64{2}},
		{Number: 4, State: Failed},
		{Number: 5, State: Pruned, Values: []float64{0}},
	}
	if got := Best(min1, hist); !slices.Equal(got, []int{2}) {
		t.Errorf("Best = %v, want [2] (feasible first, lowest Number among equals)", got)
	}
	max1 := []Objective{{Metric: "acc", Direction: Maximize}}
	if got := Best(max1, hist); !slices.Equal(got, []int{0}) {
		t.Errorf("Best max = %v, want [0]", got)
	}
	if got := Best(min1, hist[1:2]); !slices.Equal(got, []int{1}) {
		t.Errorf("Best of only infeasible = %v, want the least violating [1]", got)
	}
	two := []Objective{{Metric: "a"}, {Metric: "b", Direction: Maximize}}
	mo := []Observation{
		{Number: 0, Values: []float64{1, 1}},
		{Number: 1, Values: []float64{2, 3}},
		{Number: 2, Values: []float64{2, 2}}, // dominated by 1
		{Number: 3, Values: []float64{0, 0}},
		{Number: 4, Values: []float64{3, 4}, Constraints: []float64{1}},
	}
	if got := Best(two, mo); !slices.Equal(got, []int{0, 1, 3}) {
		t.Errorf("Pareto front = %v, want [0 1 3]", got)
	}
	if Best(min1, nil) != nil {
		t.Error("Best of no history is not nil")
	}
}

func TestImportance(t *testing.T) {
	space := Space{Params: []Param{
		{Name: "noise", Low: 0, High: 1},
		{Name: "strong", Low: -1, High: 1},
		{Name: "opt", Kind: Categorical, Choices: []any{"a", "b", "c"}},
	}}
	s, _ := New("random", nil)
	f := func(ps Params) []float64 {
		v := ps["strong"].(float64)
		v = v * v // non-monotone: a rank correlation would miss it
		if ps["opt"] == "b" {
			v += 0.3
		}
		return []float64{v}
	}
	hist := optimise(t, s, space, []Objective{{Metric: "loss"}}, 1, 300, f)
	imp := Importance(space, []Objective{{Metric: "loss"}}, 0, hist, 9)
	if len(imp) != 3 || imp[0].Param != "strong" || imp[1].Param != "opt" || imp[2].Param != "noise" {
		t.Fatalf("importance order %+v, want strong, opt, noise", imp)
	}
	for _, p := range imp {
		if !(p.Low <= p.Value && p.Value <= p.High) && p.Value > 0 {
			t.Errorf("%s: %v outside its interval [%v, %v]", p.Param, p.Value, p.Low, p.High)
		}
	}
	if imp[2].Low > 0.02 {
		t.Errorf("noise's interval %v..%v does not reach 0", imp[2].Low, imp[2].High)
	}
	if imp[0].Low < 0.5 {
		t.Errorf("strong's interval %v..%v is low", imp[0].Low, imp[0].High)
	}
	again := Importance(space, []Objective{{Metric: "loss"}}, 0, hist, 9)
	if !reflect.DeepEqual(imp, again) {
		t.Error("Importance is not a function of its arguments")
	}
}

// TestFirstFronts: peeling fronts one at a time gives the fronts of the full sort.
func TestFirstFronts(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 3))
		n := 1 + r.IntN(60)
		obs := make([]Observation, n)
		pts := make([]scored, n)
		for i := range obs {
			obs[i] = Observation{Number: i, Values: []float64{float64(r.IntN(6)), float64(r.IntN(6)), r.Float64()}}
			if r.IntN(8) == 0 {
				obs[i].Constraints = []float64{float64(r.IntN(3))}
			}
			pts[i] = prepare([]Objective{{}, {}, {Direction: Maximize}}, &obs[i])
		}
		all := fronts(pts)
		need := r.IntN(n + 1)
		got := firstFronts(pts, need)
		if !reflect.DeepEqual(got, all[:len(got)]) {
			t.Fatalf("seed %d: firstFronts %v, fronts %v", seed, got, all)
		}
		if count := len(slices.Concat(got...)); count < need && len(got) < len(all) {
			t.Fatalf("seed %d: %d points in %d fronts, wanted %d", seed, count, len(got), need)
		}
	}
}

func TestWeightSum(t *testing.T) {
	for _, n := range []int{1, 24, 25, 26, 27, 100, 1000} {
		for lo := 0; lo <= n; lo += 1 + n/17 {
			for hi := lo; hi <= n; hi += 1 + n/13 {
				want := 0.0
				for i := lo; i < hi; i++ {
					want += weight(i, n)
				}
				if got := weightSum(lo, hi, n); math.Abs(got-want) > 1e-9*max(1, want) {
					t.Fatalf("weightSum(%d, %d, %d) = %v, want %v", lo, hi, n, got, want)
				}
			}
		}
	}
}

// TestTPEConditional: on a space whose branches have their own params, TPE settles in the
// better branch and tunes its param better than random search does.
func TestTPEConditional(t *testing.T) {
	space := Space{Params: []Param{
		{Name: "opt", Kind: Categorical, Choices: []any{"a", "b"}},
		{Name: "x", Low: -5, High: 5, When: &Condition{Param: "opt", Values: []any{"a"}}},
		{Name: "y", Low: -5, High: 5, When: &Condition{Param: "opt", Values: []any{"b"}}},
	}}
	f := func(ps Params) []float64 {
		if ps["opt"] == "a" {
			x := ps["x"].(float64)
			return []float64{(x - 2) * (x - 2)}
		}
		y := ps["y"].(float64)
		return []float64{1 + (y+1)*(y+1)}
	}
	objs := []Objective{{Metric: "loss"}}
	var tpeBest, randomBest []float64
	for seed := range uint64(10) {
		s, _ := New("tpe", nil)
		hist := optimise(t, s, space, objs, seed, 50, f)
		tpeBest = append(tpeBest, minValue(hist))
		inA := 0
		for _, o := range hist[25:] {
			if o.Params["opt"] == "a" {
				inA++
			}
		}
		if inA < 15 {
			t.Errorf("seed %d: %d of the last 25 trials in the better branch", seed, inA)
		}
		rs, _ := New("random", nil)
		randomBest = append(randomBest, minValue(optimise(t, rs, space, objs, seed, 50, f)))
	}
	if median(tpeBest) >= median(randomBest)/3 {
		t.Errorf("tpe median best %.4g, random %.4g", median(tpeBest), median(randomBest))
	}
}

// TestFirstFronts2: the sweep for two objectives finds the same fronts as peeling, with ties,
// infinities, signed zeros and constraint violations.
func TestFirstFronts2(t *testing.T) {
	values := []float64{math.Inf(-1), -1, negZero, 0, 0.5, 1, 2, math.Inf(1)}
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 5))
		n := 1 + r.IntN(80)
		obs := make([]Observation, n)
		pts := make([]scored, n)
		draw := func() float64 {
			if r.IntN(3) == 0 {
				return r.Float64()
			}
			return values[r.IntN(len(values))]
		}
		for i := range obs {
			obs[i] = Observation{Number: i, Values: []float64{draw(), draw()}}
			if r.IntN(5) == 0 {
				obs[i].Constraints = []float64{float64(r.IntN(3)), math.Inf(r.IntN(2)*2 - 1)}
			}
			pts[i] = prepare([]Objective{{}, {Direction: Maximize}}, &obs[i])
		}
		need := r.IntN(n + 2)
		want, got := peelFronts(pts, need), firstFronts2(pts, need)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d, need %d: firstFronts2 %v, peelFronts %v", seed, need, got, want)
		}
	}
}

// TestHistoryOrder: CMA-ES and NSGA-II read the history in Number order, so a history passed in
// another order gives the same suggestion as the sorted one (the sorted one is read in place).
func TestHistoryOrder(t *testing.T) {
	for _, name := range []string{"cmaes", "nsga2"} {
		req := benchRequest(3, 300, 4)
		want, err := mustNew(t, name).Suggest(req)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 1))
		shuffled := slices.Clone(req.History)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		req.History = shuffled
		got, err := mustNew(t, name).Suggest(req)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: shuffled history gives %v, sorted %v", name, got, want)
		}
		if slices.IsSortedFunc(req.History, func(a, b Observation) int { return a.Number - b.Number }) {
			t.Fatalf("%s: the caller's history was sorted in place", name)
		}
	}
}

func mustNew(t *testing.T, name string) Sampler {
	t.Helper()
	s, err := New(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
