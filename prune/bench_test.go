package prune

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkPrune asks each pruner about one running trial among 10,000 curves of 100 points
// (most complete), the history issue 27 asks the runner to handle without stalling.
func BenchmarkPrune(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	cs := make([]Curve, 10000)
	for i := range cs {
		c := Curve{Number: i, Done: i < 9000}
		steps := 100
		if !c.Done {
			steps = 1 + rng.IntN(100)
		}
		for s := range steps {
			c.Points = append(c.Points, Point{Step: int64(s + 1), Value: rng.Float64()})
		}
		cs[i] = c
	}
	for _, tc := range []struct {
		name string
		o    map[string]any
	}{
		{"median", nil},
		{"asha", map[string]any{"min_resource": 1, "reduction_factor": 3}},
		{"hyperband", map[string]any{"max_resource": 100}},
	} {
		p, err := New(tc.name, tc.o)
		if err != nil {
			b.Fatal(err)
		}
		// A trial that just reached step 27, a rung of both asha and hyperband's first bracket.
		cur := Curve{Number: len(cs)}
		for s := range 27 {
			cur.Points = append(cur.Points, Point{Step: int64(s + 1), Value: 0.5})
		}
		all := append(cs[:len(cs):len(cs)], cur)
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				p.Prune(cur.Number, all, true)
			}
		})
	}
}
