package plan_test

import (
	"encoding/json"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner/core"
)

// TestAheadStartsAtOnce: with a trial suggested ahead, a search trial that ends lets the next
// one start in the same step, with no store write in between: it was suggested and journaled
// while every slot was busy. With the ask deferred (as the runner builds its core), the
// suggestion that replaces it comes in a step of its own, after that start. Without it, the next trial is suggested when one ends, and starts
// only once its pending record is stored, a durable write on the path from every end to the
// next start (what made a search of millisecond trials slower than the same grid).
func TestAheadStartsAtOnce(t *testing.T) {
	const trials, jobs = 20, 2
	src, _ := json.Marshal(map[string]any{"search": map[string]any{"name": "s", "cmd": "f {{x}} {{y}}", "objective": "loss", "sampler": "tpe",
		"space": map[string]any{"x": map[string]any{"low": -5, "high": 5}, "y": map[string]any{"low": -5, "high": 5}}, "trials": trials, "seed": 3}})
	exp, err := experiment.Parse("ahead.jsonnet", src)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ahead    int
		deferAsk bool
		want     int
	}{{0, false, 0}, {1, false, trials - jobs}, {1, true, trials - jobs}} {
		ahead := c.ahead
		w := newWorld(rand.New(rand.NewPCG(1, 1)), exp.Search, jobs, ahead)
		w.deferAsk = c.deferAsk
		w.boot()
		if err := w.step(core.Begin{At: w.now}); err != nil {
			t.Fatal(err)
		}
		atOnce := 0
		for !w.c.Done() {
			// Every record is written and every attempt has started: only an end is left.
			for len(w.queued) > 0 || slices.ContainsFunc(slices.Collect(maps.Values(w.attempts)), func(a *attempt) bool { return !a.started }) {
				for _, i := range slices.Sorted(maps.Keys(w.queued)) {
					p := w.queued[i]
					delete(w.queued, i)
					rec := *p.Record
					w.store[rec.Name] = &rec
					if err := w.step(core.Persisted{Trial: i, Version: p.Version, At: w.now}); err != nil {
						t.Fatal(err)
					}
				}
				for _, i := range slices.Sorted(maps.Keys(w.attempts)) {
					if at := w.attempts[i]; !at.started {
						at.started = true
						if err := w.step(core.Started{Trial: i, Attempt: at.n, Handle: "h", At: w.now}); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if w.c.Done() {
				break
			}
			if len(w.attempts) == 0 {
				t.Fatalf("ahead %d: nothing runs and the run is not done: %+v", ahead, w.c.Counts())
			}
			i := slices.Min(slices.Collect(maps.Keys(w.attempts)))
			at := w.attempts[i]
			delete(w.attempts, i)
			v, _ := objective(w.c.Trial(i).Params, 0)
			planned := w.c.Len()
			for _, a := range w.c.Step(core.Exited{Trial: i, Attempt: at.n, Values: map[string]float64{"loss": v}, At: w.now}) {
				if _, ok := a.(core.StartAttempt); ok {
					atOnce++
				}
				if err := w.apply(a); err != nil {
					t.Fatal(err)
				}
			}
			// With DeferAsk the planner thinks in a step of its own, after the start is on its way.
			if c.deferAsk && w.c.Len() > planned {
				t.Fatalf("ahead %d, deferred: the planner added a trial in the step a trial ended", ahead)
			}
			if err := w.step(core.Ask{At: w.now}); err != nil {
				t.Fatal(err)
			}
			if err := w.check(); err != nil {
				t.Fatalf("ahead %d: %v", ahead, err)
			}
		}
		if atOnce != c.want {
			t.Errorf("ahead %d (deferred ask %v): %d trials started in the step another ended, want %d", ahead, c.deferAsk, atOnce, c.want)
		}
	}
}
