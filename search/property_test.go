package search

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// randomSpace builds a space of 1-5 params of every kind, sometimes conditional.
func randomSpace(r *rand.Rand) Space {
	n := 1 + r.IntN(5)
	var ps []Param
	for i := range n {
		p := Param{Name: fmt.Sprintf("p%d", i)}
		switch r.IntN(5) {
		case 0:
			p.Low, p.High = r.Float64()*10-5, 0
			p.High = p.Low + r.Float64()*10
		case 1:
			p.Low = 1e-4 + r.Float64()
			p.High = p.Low * (1 + r.Float64()*1000)
			p.Log = true
		case 2:
			p.Kind = Int
			p.Low = float64(r.IntN(10) - 5)
			p.High = p.Low + float64(r.IntN(20))
			if r.IntN(3) == 0 && p.High > p.Low {
				p.Step = float64(1 + r.IntN(int(p.High-p.Low)))
			}
			if r.IntN(3) == 0 && p.Step == 0 {
				p.Low, p.High, p.Log = 1, 1+float64(r.IntN(1000)), true
			}
		case 3:
			p.Low, p.High, p.Step = 0, 1, 0.125
		case 4:
			p.Kind = Categorical
			all := []any{"a", "b", 1.5, int64(3), true}
			p.Choices = all[:1+r.IntN(len(all))]
		}
		ps = append(ps, p)
	}
	// Make a later param depend on an earlier categorical one now and then.
	for i := range ps {
		for j := i + 1; j < len(ps); j++ {
			if ps[i].Kind == Categorical && r.IntN(2) == 0 && ps[j].When == nil {
				ps[j].When = &Condition{Param: ps[i].Name, Values: []any{ps[i].Choices[0]}}
			}
		}
	}
	// Reverse half the time so that parents do not always come first.
	if r.IntN(2) == 0 {
		for i, j := 0, len(ps)-1; i < j; i, j = i+1, j-1 {
			ps[i], ps[j] = ps[j], ps[i]
		}
	}
	return Space{Params: ps}
}

// checkWithin reports how params fall outside the space, if they do.
func checkWithin(s Space, ps Params) error {
	g, err := compile(s)
	if err != nil {
		return err
	}
	seen := Params{}
	for _, i := range g.order {
		d := &g.dims[i]
		v, ok := ps[d.p.Name]
		if !g.active(i, seen) {
			if ok {
				return fmt.Errorf("%s is inactive but present", d.p.Name)
			}
			continue
		}
		if !ok {
			return fmt.Errorf("%s is active but absent", d.p.Name)
		}
		seen[d.p.Name] = v
		p := d.p
		switch p.Kind {
		case Categorical:
			if choiceIndex(p, v) < 0 {
				return fmt.Errorf("%s = %v is not a choice", p.Name, v)
			}
			continue
		case Int:
			if _, ok := v.(int64); !ok {
				return fmt.Errorf("%s = %v (%T) is not an int64", p.Name, v, v)
			}
		case Float:
			if _, ok := v.(float64); !ok {
				return fmt.Errorf("%s = %v (%T) is not a float64", p.Name, v, v)
			}
		}
		x, _ := number(v)
		if math.IsNaN(x) || x < p.Low || x > p.High {
			return fmt.Errorf("%s = %v is outside [%v, %v]", p.Name, x, p.Low, p.High)
		}
		if d.step > 0 {
			// As close to the grid as float64 allows at this magnitude.
			k := (x - p.Low) / d.step
			tol := 1e-9 + 4*max(math.Abs(x), math.Abs(p.Low))*0x1p-52/d.step
			if math.Abs(k-math.Round(k)) > tol {
				return fmt.Errorf("%s = %v is off the grid %v + k*%v", p.Name, x, p.Low, d.step)
			}
		}
	}
	if len(seen) != len(ps) {
		return fmt.Errorf("params %v has keys that are not params of the space", ps)
	}
	return nil
}

// fakeValue is a deterministic objective of any params, so histories can be built for any space.
func fakeValue(ps Params, k int) float64 {
	s := float64(k)
	for _, name := range sortedKeys(ps) {
		switch v := ps[name].(type) {
		case float64:
			s += math.Sin(v*1.7+float64(len(name))) * 3
		case int64:
			s += float64(v%7) * 0.3
		default:
			s += float64(len(fmt.Sprint(v)))
		}
	}
	return s
}

func sortedKeys(ps Params) []string {
	keys := make([]string, 0, len(ps))
	for k := range ps {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func samplerOptions(name string) map[string]any {
	switch name {
	case "grid":
		return map[string]any{"points": 3.0}
	case "tpe":
		return map[string]any{"n_startup_trials": 4.0}
	case "cmaes":
		return map[string]any{"popsize": 4.0}
	case "nsga2":
		return map[string]any{"population_size": 6.0}
	}
	return nil
}

// TestSuggestIsPure checks, for random spaces and histories, that every sampler's answer is a
// function of the Request alone (the same from a fresh sampler, from a warm one, after an
// unrelated request, with copies of the history's maps) and lies within the space.
func TestSuggestIsPure(t *testing.T) {
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 7))
		space := randomSpace(r)
		for _, name := range Names() {
			objs := []Objective{{Metric: "loss", Direction: Minimize}}
			if name == "nsga2" || (name == "tpe" && seed%3 == 0) {
				objs = append(objs, Objective{Metric: "acc", Direction: Maximize})
			}
			warm, err := New(name, samplerOptions(name))
			if err != nil {
				t.Fatal(err)
			}
			var hist []Observation
			var pending []Params
			var pendingNum []int
			for n := range 30 {
				req := Request{Space: space, Objectives: objs, Seed: seed, Number: n, History: hist, Pending: pending}
				ps, err := warm.Suggest(req)
				if errors.Is(err, ErrExhausted) {
					break
				}
				if err != nil {
					t.Fatalf("seed %d %s trial %d: %v", seed, name, n, err)
				}
				if err := checkWithin(space, ps); err != nil {
					t.Fatalf("seed %d %s trial %d: %v (space %+v)", seed, name, n, err, space.Params)
				}
				fresh, _ := New(name, samplerOptions(name))
				again, _ := fresh.Suggest(req)
				cloned := req
				cloned.History = cloneHistory(hist)
				third, _ := warm.Suggest(cloned)
				back, _ := warm.Suggest(req)
				for what, other := range map[string]Params{"a fresh sampler": again, "cloned maps": third, "a warm sampler again": back} {
					if !reflect.DeepEqual(ps, other) {
						t.Fatalf("seed %d %s trial %d: %v, but %v from %s", seed, name, n, ps, other, what)
					}
				}
				// The same maps with other values, in new arrays: a warm sampler must not answer
				// from what it kept of the old ones.
				if len(hist) > 0 {
					changed := req
					changed.History = slices.Clone(hist)
					for i := range changed.History {
						o := &changed.History[i]
						o.Values = slices.Clone(o.Values)
						for k := range o.Values {
							o.Values[k] = -o.Values[k]
						}
						if i%2 == 0 {
							o.Constraints = []float64{1}
						}
					}
					fresh, _ := New(name, samplerOptions(name))
					want, _ := fresh.Suggest(changed)
					if got, _ := warm.Suggest(changed); !reflect.DeepEqual(got, want) {
						t.Fatalf("seed %d %s trial %d: with new values %v from a warm sampler, %v from a fresh one", seed, name, n, got, want)
					}
					if got, _ := warm.Suggest(req); !reflect.DeepEqual(got, ps) {
						t.Fatalf("seed %d %s trial %d: %v, then %v after other values", seed, name, n, ps, got)
					}
				}
				// Trials finish out of order: the one before last stays pending a while.
				pending, pendingNum = append(pending, ps), append(pendingNum, n)
				if len(pending) > 2 || n == 29 {
					done := pending[0]
					o := Observation{Number: pendingNum[0], Params: done}
					pending, pendingNum = pending[1:], pendingNum[1:]
					switch r.IntN(10) {
					case 0:
						o.State = Failed
					case 1:
						o.State = Pruned
					default:
						for k := range objs {
							o.Values = append(o.Values, fakeValue(done, k))
						}
						if r.IntN(5) == 0 {
							o.Constraints = []float64{r.Float64() - 0.5}
						}
					}
					hist = append(hist, o)
				}
			}
		}
	}
}

func cloneHistory(h []Observation) []Observation {
	out := make([]Observation, len(h))
	for i, o := range h {
		o.Params = maps.Clone(o.Params)
		out[i] = o
	}
	return out
}

// TestTPEWarmCacheChanges: a warm TPE answers as a fresh one when the history shrinks, when
// failed trials come and go, and when one gets a new map with a param missing.
func TestTPEWarmCacheChanges(t *testing.T) {
	req := benchRequest(3, 300, 4)
	warm, _ := New("tpe", nil)
	check := func(what string, r Request) {
		t.Helper()
		fresh, _ := New("tpe", nil)
		want, _ := fresh.Suggest(r)
		if got, _ := warm.Suggest(r); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: a warm sampler gives %v, a fresh one %v", what, got, want)
		}
	}
	check("all complete", req)
	failed := req
	failed.History = slices.Clone(req.History)
	for i := range failed.History {
		if i%9 == 4 {
			failed.History[i].State = Failed
		}
	}
	check("some failed", failed)
	check("all complete again", req)
	short := req
	short.History = failed.History[:150]
	check("shorter, some failed", short)
	check("all complete after the shorter", req)
	missing := req
	missing.History = slices.Clone(req.History)
	o := &missing.History[200]
	o.Params = maps.Clone(o.Params)
	delete(o.Params, "x01")
	check("a param missing", missing)
	check("all complete at the end", req)
}

// TestRowCacheCounts: the row cache's counts, kept up as entries come, change and go, are
// those of the history it last saw.
func TestRowCacheCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	req := benchRequest(2, 200, 0)
	g, err := compile(req.Space)
	if err != nil {
		t.Fatal(err)
	}
	var c rowCache
	hist := slices.Clone(req.History)
	for step := range 300 {
		switch r.IntN(4) {
		case 0: // shorter
			hist = hist[:r.IntN(len(hist)+1)]
		case 1: // longer
			for range r.IntN(20) {
				hist = append(hist, req.History[r.IntN(len(req.History))])
			}
		case 2: // some entries replaced: other trials, failed ones, a param missing
			hist = slices.Clone(hist)
			for range r.IntN(10) {
				if len(hist) == 0 {
					break
				}
				i := r.IntN(len(hist))
				o := req.History[r.IntN(len(req.History))]
				switch r.IntN(3) {
				case 0:
					o.State = Failed
				case 1:
					o.Params = maps.Clone(o.Params)
					delete(o.Params, "x00")
				}
				hist[i] = o
			}
		case 3: // the same
		}
		_, _, usable := c.coords(req.Space, req.Objectives, g, hist)
		failed, partial, descents := 0, 0, 0
		for i, o := range hist {
			if o.State == Failed {
				failed++
			}
			if o.State == Failed || len(o.Params) < 2 {
				partial++
			}
			if i > 0 && o.Number <= hist[i-1].Number {
				descents++
			}
		}
		if usable != len(hist)-failed || c.partial != partial || c.descents != descents {
			t.Fatalf("step %d: usable %d, partial %d, descents %d; want %d, %d, %d", step, usable, c.partial, c.descents, len(hist)-failed, partial, descents)
		}
	}
}
