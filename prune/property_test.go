package prune

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// randomCurves makes up to n curves of random length and values, some complete, some pruned,
// a few with NaN values or missing steps.
func randomCurves(rng *rand.Rand, n int) []Curve {
	cs := make([]Curve, n)
	for i := range cs {
		c := Curve{Number: i}
		steps := rng.IntN(30)
		var step int64
		for range steps {
			step += 1 + int64(rng.IntN(3)/2) // mostly every step, sometimes one skipped
			v := rng.Float64() * 10
			if rng.IntN(40) == 0 {
				v = math.NaN()
			}
			c.Points = append(c.Points, Point{step, v})
		}
		switch rng.IntN(4) {
		case 0:
			c.Done = true
		case 1:
			c.Pruned = true
		}
		cs[i] = c
	}
	return cs
}

// randomPruner makes a pruner with random options, and returns its warm-up and min_trials.
func randomPruner(rng *rand.Rand) (name string, p Pruner, warmup int64, minTrials int) {
	warmup = int64(rng.IntN(6))
	minTrials = 1 + rng.IntN(6)
	o := map[string]any{"warmup_steps": warmup, "min_trials": minTrials}
	switch rng.IntN(4) {
	case 0:
		name = "median"
		o["startup_trials"] = rng.IntN(4)
	case 1:
		name = "percentile"
		o["percentile"] = rng.Float64() * 100
		o["startup_trials"] = rng.IntN(4)
	case 2:
		name = "asha"
		o["min_resource"] = 1 + rng.IntN(3)
		o["reduction_factor"] = 2 + rng.IntN(3)
	default:
		name = "hyperband"
		o["max_resource"] = 10 + rng.IntN(30)
		o["reduction_factor"] = 2 + rng.IntN(3)
	}
	p, err := New(name, o)
	if err != nil {
		panic(fmt.Sprintf("%s %v: %v", name, o, err))
	}
	return name, p, warmup, minTrials
}

// TestProperties checks, on random curves and options, that every pruner is pure (the same
// answer again, and for the curves in another order), never prunes a final curve, never prunes
// during warm-up and never prunes with fewer than min_trials other curves.
func TestProperties(t *testing.T) {
	seed := uint64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for round := range 3000 {
		name, p, warmup, minTrials := randomPruner(rng)
		cs := randomCurves(rng, 1+rng.IntN(12))
		minimize := rng.IntN(2) == 0
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d round %d, %s: %s", seed, round, name, fmt.Sprintf(format, args...))
		}
		for _, c := range cs {
			stop, why := p.Prune(c.Number, cs, minimize)
			shuffled := append([]Curve(nil), cs...)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if stop2, why2 := p.Prune(c.Number, shuffled, minimize); stop2 != stop || why2 != why {
				fail("trial %d: %v %q, then %v %q with the curves in another order", c.Number, stop, why, stop2, why2)
			}
			if why == "" {
				fail("trial %d: no reason given", c.Number)
			}
			if !stop {
				continue
			}
			switch {
			case c.Done || c.Pruned:
				fail("trial %d is final but was pruned: %s", c.Number, why)
			case lastStep(&c) < warmup:
				fail("trial %d at step %d was pruned during warm-up (%d): %s", c.Number, lastStep(&c), warmup, why)
			case len(cs)-1 < minTrials:
				fail("trial %d was pruned with %d other curves, min_trials %d: %s", c.Number, len(cs)-1, minTrials, why)
			}
		}
	}
}
